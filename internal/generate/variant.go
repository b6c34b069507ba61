package generate

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/polyloop/polyloop-conform/scenarios"
)

// Source is a scenario whose variants generate draws: the suite's own,
// or a team's (generate --from DIR).
type Source struct {
	ID        string
	decisions []string
	raw       []byte
}

// LoadSources reads the scenarios of fsys (every *.yaml at its root).
// Each must load as a scenario; the first that does not is the error.
func LoadSources(fsys fs.FS) ([]Source, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, err
	}
	var out []Source
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		sc, err := scenarios.Parse(name, data)
		if err != nil {
			return nil, fmt.Errorf("%s does not load as a scenario: %w", name, err)
		}
		out = append(out, Source{ID: sc.ID, decisions: sc.Decisions, raw: data})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scenario (*.yaml) to draw variants from")
	}
	return out, nil
}

// variant is a source scenario with its tools renamed, its registrations
// reordered and its texts replaced by others of the same kind (empty
// stays empty, white space stays white space, several lines stay
// several lines): the same decisions under names and words no
// implementation can recognise.
type variant struct {
	source string
	// decisions are the source scenario's: a variant keeps what it
	// decides, so a difference on it breaks them.
	decisions []string
	doc       map[string]any
}

func newVariant(r *rand.Rand, src Source) *variant {
	var doc map[string]any
	if err := yaml.Unmarshal(src.raw, &doc); err != nil {
		panic(fmt.Sprintf("generate: source %s was loaded once and no longer decodes: %v", src.ID, err))
	}
	v := &variant{source: src.ID, decisions: src.decisions, doc: doc}
	written := string(src.raw)
	tools, _ := doc["tools"].([]any)
	names := map[string]string{}
	for _, t := range tools {
		if m, ok := t.(map[string]any); ok {
			old, _ := m["name"].(string)
			if _, done := names[old]; !done {
				names[old] = freshName(r, names, written)
			}
			m["name"] = names[old]
			if d, ok := m["description"].(string); ok {
				m["description"] = like(r, d)
			}
			if h, ok := m["handler"]; ok {
				m["handler"] = newTexts(r, h)
			}
		}
	}
	r.Shuffle(len(tools), func(i, j int) { tools[i], tools[j] = tools[j], tools[i] })
	if def, ok := doc["definition"].(map[string]any); ok {
		if f, ok := def["run_fragment"].(string); ok {
			def["run_fragment"] = like(r, f)
		}
	}
	for _, req := range v.requests() {
		v.renameIn(req, names)
		if g, ok := req["goal_fragment"].(string); ok {
			req["goal_fragment"] = like(r, g)
		}
		for _, k := range []string{"injections", "project_executor"} {
			if x, ok := req[k]; ok {
				req[k] = newTexts(r, x)
			}
		}
	}
	return v
}

// freshName is a vocabulary name no tool of the source and no renamed
// tool has, written nowhere in the source.
func freshName(r *rand.Rand, taken map[string]string, written string) string {
	for {
		name := toolName(r)
		clash := false
		for old, renamed := range taken {
			clash = clash || old == name || renamed == name
		}
		if !clash && !strings.Contains(written, name) {
			return name
		}
	}
}

// requests are the variant's request, or its phases.
func (v *variant) requests() []map[string]any {
	if req, ok := v.doc["request"].(map[string]any); ok {
		return []map[string]any{req}
	}
	var out []map[string]any
	phases, _ := v.doc["phases"].([]any)
	for _, p := range phases {
		if m, ok := p.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// renameIn renames the tools a request names: its visible tools, and
// the model's calls (a JSON string in a JSON action, a function called
// in a code action).
func (v *variant) renameIn(req map[string]any, names map[string]string) {
	if vis, ok := req["visible_tools"].([]any); ok {
		for i, x := range vis {
			if s, ok := x.(string); ok && names[s] != "" {
				vis[i] = names[s]
			}
		}
	}
	model, _ := req["model"].([]any)
	for i, turn := range model {
		out, ok := turn.(string)
		if !ok {
			continue
		}
		for old, renamed := range names {
			if old == "" {
				continue
			}
			out = strings.ReplaceAll(out, jsonText(old), jsonText(renamed))
			out = strings.ReplaceAll(out, old+"(", renamed+"(")
		}
		model[i] = out
	}
}

// newTexts replaces every text in x (a handler, injections, a project
// executor's script) by another of its kind, keeping keys, types and the
// long texts some decisions measure.
func newTexts(r *rand.Rand, x any) any {
	switch t := x.(type) {
	case string:
		return like(r, t)
	case []any:
		for i := range t {
			t[i] = newTexts(r, t[i])
		}
	case map[string]any:
		for k, e := range t {
			if k == "type" || k == "status" {
				continue // an exception type, an outcome status: decisions, not texts
			}
			t[k] = newTexts(r, e)
		}
	}
	return x
}

// like is a text of the same kind as s: empty, white space only,
// several lines, or one line; a long text is kept, since its length may
// be what a decision measures.
func like(r *rand.Rand, s string) string {
	switch {
	case s == "":
		return ""
	case strings.TrimSpace(s) == "":
		return s // white space stays as written: its kind is its point
	case len(s) > 200:
		return s
	case strings.Contains(strings.TrimRight(s, "\n"), "\n"):
		return pick(r, multiLine...)
	}
	for {
		if t := text(r); !strings.Contains(strings.TrimRight(t, "\n"), "\n") {
			return t
		}
	}
}

func (v *variant) render(id string, decisions []string, expect map[string]any) ([]byte, *scenarios.Scenario, error) {
	compared := expect == nil
	if compared {
		expect = map[string]any{"end": map[string]any{"reason": "goal_reached_by_tool"}}
	}
	v.doc["id"], v.doc["title"], v.doc["decisions"], v.doc["expect"] = id, "A variant of "+v.source, decisions, expect
	delete(v.doc, "description")
	data, err := marshalYAML(v.doc)
	if err != nil {
		return nil, nil, err
	}
	sc, err := scenarios.Parse(path.Base(id)+".yaml", data)
	if err == nil && compared {
		sc.Expect = scenarios.Expect{}
	}
	return data, sc, err
}

// steps and toolCount are the variant's size.
func (v *variant) steps() int {
	n := 0
	for _, req := range v.requests() {
		m, _ := req["model"].([]any)
		n += len(m)
	}
	return n
}

func (v *variant) toolCount() int {
	tools, _ := v.doc["tools"].([]any)
	return len(tools)
}
