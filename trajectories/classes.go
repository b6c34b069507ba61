package trajectories

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/polyloop/polyloop-conform/internal/compare"
)

// Field is one field of the trajectory format with its comparison class,
// as trajectory.schema.json declares it in "x-compare" and "description".
// Path is a pattern: "[*]" stands for any array position.
type Field struct {
	Path string
	// Class is the declared class: normative, vocabulary, text, or
	// text-if-synthetic (text where the golden marks the observation
	// synthetic, normative elsewhere).
	Class   string
	Meaning string
	// Required is true when the schema requires the field wherever its
	// parent is present; Nullable when it allows null.
	Required, Nullable bool
}

// ClassTextIfSynthetic is the one conditional class: an observation is the
// executor's own sentence (text) when its outcome is synthetic, and the
// environment's or handler's words (normative) otherwise.
const ClassTextIfSynthetic = "text-if-synthetic"

var fields = sync.OnceValues(func() ([]Field, error) {
	doc, err := embedded.ReadFile(SchemaFile)
	if err != nil {
		return nil, err
	}
	return readFields(doc)
})

// Fields returns every field of the format, in schema order, with its
// declared class. It fails when a field has no class: every field added to
// the format must say how it is compared.
func Fields() ([]Field, error) { return fields() }

func readFields(doc []byte) ([]Field, error) {
	var root map[string]any
	if err := json.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", SchemaFile, err)
	}
	defs, _ := root["$defs"].(map[string]any)
	w := &fieldWalker{defs: defs}
	w.object("", root, 0)
	if w.err != nil {
		return nil, w.err
	}
	return w.out, nil
}

type fieldWalker struct {
	defs map[string]any
	out  []Field
	err  error
}

// resolve follows a local $ref and, for "null or object" unions, picks the
// branch that has properties or items.
func (w *fieldWalker) resolve(s map[string]any) map[string]any {
	for range 8 {
		if ref, ok := s["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/$defs/")
			d, ok := w.defs[name].(map[string]any)
			if !ok {
				return s
			}
			s = d
			continue
		}
		if one, ok := s["oneOf"].([]any); ok {
			for _, b := range one {
				if bm, ok := b.(map[string]any); ok && (bm["properties"] != nil || bm["$ref"] != nil || bm["items"] != nil) {
					s = bm
					break
				}
			}
			if s["oneOf"] != nil {
				return s
			}
			continue
		}
		return s
	}
	return s
}

func (w *fieldWalker) object(prefix string, s map[string]any, depth int) {
	if depth > 16 || w.err != nil {
		return
	}
	props, _ := s["properties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
	}
	// Sorted by name: decoding into maps loses the file's order, and a
	// stable order keeps the generated field table reviewable.
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		sub, _ := props[name].(map[string]any)
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		class, _ := sub["x-compare"].(string)
		if class == "" {
			w.err = fmt.Errorf("%s: field %s has no x-compare class; every field must say how it is compared", SchemaFile, path)
			return
		}
		if class != ClassTextIfSynthetic {
			if _, err := compare.ParseClass(class); err != nil {
				w.err = fmt.Errorf("%s: field %s: %v", SchemaFile, path, err)
				return
			}
		}
		meaning, _ := sub["description"].(string)
		w.out = append(w.out, Field{Path: path, Class: class, Meaning: meaning, Required: required[name], Nullable: nullable(sub)})
		w.children(path, w.resolve(sub), depth)
	}
}

// nullable reports whether a field's schema allows null: a type list with
// "null", or a oneOf with a null branch.
func nullable(s map[string]any) bool {
	switch t := s["type"].(type) {
	case string:
		return t == "null"
	case []any:
		for _, x := range t {
			if x == "null" {
				return true
			}
		}
	}
	one, _ := s["oneOf"].([]any)
	for _, b := range one {
		if bm, ok := b.(map[string]any); ok && bm["type"] == "null" {
			return true
		}
	}
	return false
}

func (w *fieldWalker) children(path string, s map[string]any, depth int) {
	if s["properties"] != nil {
		w.object(path, s, depth+1)
		return
	}
	if items, ok := s["items"].(map[string]any); ok {
		it := w.resolve(items)
		if it["properties"] != nil {
			w.object(path+"[*]", it, depth+1)
		}
	}
}

// Classifier returns the class of each concrete path (steps[2].outcome.status)
// of a trajectory compared against golden, a golden trajectory as plain JSON
// values. A path below a declared field (an argument inside
// action.arguments) takes the class of that field. text-if-synthetic is
// resolved against the golden: the observation of a step whose golden
// outcome is synthetic, and the executor_observation of an event whose
// step's golden outcome is synthetic, are Text; otherwise Normative.
func Classifier(golden any) (func(path string) compare.Class, error) {
	fs, err := Fields()
	if err != nil {
		return nil, err
	}
	declared := make(map[string]string, len(fs))
	for _, f := range fs {
		declared[f.Path] = f.Class
	}
	synthetic := syntheticSteps(golden)
	return func(path string) compare.Class {
		pattern, ok := declaredAncestor(declared, path)
		if !ok {
			return compare.Normative
		}
		class := declared[pattern]
		if class != ClassTextIfSynthetic {
			c, _ := compare.ParseClass(class)
			return c
		}
		if synthetic[stepKeyOf(golden, path)] {
			return compare.Text
		}
		return compare.Normative
	}, nil
}

// DiffRuns compares two trajectories of one implementation, as plain JSON
// values, field by field by class, the first taking the golden's part (it
// resolves text-if-synthetic): every comparison between two runs of one
// implementation (run --repeat, explore's resume against the run it
// interrupted) judges them as a run is judged against its golden. A text
// field keeps the text rule in the default profile; under strict it is
// compared word for word, except for the directory the runner drew for
// each run (compare.Verbatim), which is the runner's choice.
func DiffRuns(first, second any, strict bool, ignore ...string) ([]compare.Difference, error) {
	class, err := Classifier(first)
	if err != nil {
		return nil, err
	}
	o := compare.Options{Class: class, Ignore: ignore}
	if strict {
		o.TextEqual = compare.Verbatim
	}
	return compare.Diff(first, second, o)
}

// DeclaredClass returns the declared class (as Field.Class writes it) of a
// path or path pattern, taking the nearest declared ancestor's class for a
// path below a declared field; ok is false for a path outside the format.
func DeclaredClass(path string) (class string, ok bool, err error) {
	fs, err := Fields()
	if err != nil {
		return "", false, err
	}
	declared := make(map[string]string, len(fs))
	for _, f := range fs {
		declared[f.Path] = f.Class
	}
	p, ok := declaredAncestor(declared, path)
	return declared[p], ok, nil
}

var position = regexp.MustCompile(`\[\d+\]`)

// declaredAncestor finds the declared field pattern for path, or for the
// nearest ancestor of path that is declared.
func declaredAncestor(declared map[string]string, path string) (string, bool) {
	p := position.ReplaceAllString(path, "[*]")
	for p != "" {
		if _, ok := declared[p]; ok {
			return p, true
		}
		i := strings.LastIndexAny(p, ".[")
		if i <= 0 {
			return "", false
		}
		p = p[:i]
	}
	return "", false
}

// stepKey identifies a step across the steps and events lists.
type stepKey struct {
	phase string
	index string
}

// syntheticSteps lists the steps whose golden outcome is synthetic.
func syntheticSteps(golden any) map[stepKey]bool {
	out := map[stepKey]bool{}
	top, _ := golden.(map[string]any)
	steps, _ := top["steps"].([]any)
	for _, s := range steps {
		m, _ := s.(map[string]any)
		oc, _ := m["outcome"].(map[string]any)
		if oc["observation_is_synthetic"] == true {
			out[stepKey{phase: str(m["phase"]), index: str(m["index"])}] = true
		}
	}
	return out
}

// stepKeyOf names the step a steps[i]… or events[i]… path belongs to, as
// the golden has it.
func stepKeyOf(golden any, path string) stepKey {
	top, _ := golden.(map[string]any)
	for _, list := range []string{"steps", "events"} {
		if !strings.HasPrefix(path, list+"[") {
			continue
		}
		end := strings.IndexByte(path, ']')
		i, err := strconv.Atoi(path[len(list)+1 : end])
		if err != nil {
			return stepKey{}
		}
		items, _ := top[list].([]any)
		if i < 0 || i >= len(items) {
			return stepKey{}
		}
		m, _ := items[i].(map[string]any)
		key := "index"
		if list == "events" {
			key = "step"
		}
		return stepKey{phase: str(m["phase"]), index: str(m[key])}
	}
	return stepKey{}
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// Pattern turns a concrete path (steps[2].outcome.status) into the
// format's pattern for it (steps[*].outcome.status).
func Pattern(path string) string { return position.ReplaceAllString(path, "[*]") }

var decisionID = regexp.MustCompile(`\b\d{4}\.D\d+(?:\.[a-z][a-z0-9-]*)*`)

// FieldDecisions returns the decisions that govern a path's field, as the
// format's field descriptions cite them: the field's own citations, or
// those of its nearest ancestor that cites any. A report groups failures
// by them, since a wrong field is a wrong decision whichever scenario
// showed it. It returns nil for a field nothing cites.
func FieldDecisions(path string) []string {
	fs, err := Fields()
	if err != nil {
		return nil
	}
	cites := make(map[string][]string, len(fs))
	for _, f := range fs {
		cites[f.Path] = decisionID.FindAllString(f.Meaning, -1)
	}
	p := Pattern(path)
	for p != "" {
		if ids := cites[p]; len(ids) > 0 {
			return ids
		}
		i := strings.LastIndexAny(p, ".[")
		if i <= 0 {
			return nil
		}
		p = p[:i]
	}
	return nil
}
