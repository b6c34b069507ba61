package docgen

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Generator writes the text of every block that bears its name.
type Generator struct {
	Name string
	// Source says what the text is computed from, for the reader of
	// docs/README's list and of a stale block's message.
	Source string
	Make   func(*Env) (string, error)
	// Runs says the generator builds the CLI and runs it over the
	// protocol (minutes on 2 cores, not seconds): a product check, which
	// Refresh leaves to the long tier unless asked (Options.Runs).
	Runs bool
}

// Generators is the registry: every name a block may carry.
func Generators() []Generator {
	return []Generator{
		{"suite-size", "the embedded scenarios and goldens (scenarios.LoadAll, trajectories.Goldens)", suiteSize, false},
		{"evidence", "two runs of the whole suite over the protocol, `serve-reference` and `serve-reference --plain` (report counts, transcripts)", evidence, true},
		{"evidence-short", "the same two runs, the counts only", evidenceShort, true},
		{"crash-points", "`explore --impl \"polyloop-conform serve-reference\" --run 'resume.*'`'s summary", crashPoints, true},
		{"trajectory-fields", "trajectories/trajectory.schema.json (trajectories.Fields)", trajectoryFields, false},
		{"trajectory-presence", "the presence table in internal/docgen/presence.go, each condition held to every golden", trajectoryPresence, false},
	}
}

// Env is what generators share during one refresh: the module's root,
// and the built CLI and the runs made with it, each made once.
type Env struct {
	Ctx  context.Context
	Root string
	Tmp  string

	buildOnce sync.Once
	bin       string
	buildErr  error

	evOnce sync.Once
	ev     evidenceCounts
	evErr  error
}

// Binary builds cmd/polyloop-conform once and returns its path.
func (e *Env) Binary() (string, error) {
	e.buildOnce.Do(func() {
		e.bin = filepath.Join(e.Tmp, "polyloop-conform")
		cmd := exec.CommandContext(e.Ctx, "go", "build", "-o", e.bin, "./cmd/polyloop-conform")
		cmd.Dir = e.Root
		if out, err := cmd.CombinedOutput(); err != nil {
			e.buildErr = fmt.Errorf("go build ./cmd/polyloop-conform: %v\n%s", err, out)
		}
	})
	return e.bin, e.buildErr
}

// Stale is a block whose text differs from what its generator writes now.
type Stale struct {
	File string
	Line int
	Name string
	Have string
	Want string
}

func (s Stale) String() string {
	return fmt.Sprintf("%s:%d: generated block %q is stale; run %s and review the diff\nit says:\n%sthe tool gives:\n%s", s.File, s.Line, s.Name, Command, s.Have, s.Want)
}

// Documents lists the pages that may hold generated blocks, relative to
// the module's root: README.md and docs/*.md (not the design records,
// which are decisions, not measurements).
func Documents(root string) ([]string, error) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	out := []string{"README.md"}
	for _, p := range pages {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil, err
		}
		out = append(out, rel)
	}
	sort.Strings(out[1:])
	return out, nil
}

// Options says what one Refresh does.
type Options struct {
	// Write rewrites the stale blocks in place.
	Write bool
	// Runs recomputes the blocks whose generator runs the CLI
	// (Generator.Runs); without it their blocks are only checked to name
	// a generator, and Refresh reports them in Unchecked.
	Runs bool
}

// Result is what one Refresh found.
type Result struct {
	Stale []Stale
	// Unchecked names the blocks left alone without Options.Runs, as
	// file:line (name).
	Unchecked []string
}

// Refresh recomputes every generated block of the documents under root
// and returns the stale ones; with opt.Write, it also rewrites them in
// place. A block naming no generator is an error naming file:line and
// the known names.
func Refresh(ctx context.Context, root string, opt Options) (Result, error) {
	tmp, err := os.MkdirTemp("", "polyloop-docgen-*")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(tmp)
	env := &Env{Ctx: ctx, Root: root, Tmp: tmp}
	gens := map[string]Generator{}
	var names []string
	for _, g := range Generators() {
		gens[g.Name] = g
		names = append(names, g.Name)
	}
	made := map[string]string{}
	docs, err := Documents(root)
	if err != nil {
		return Result{}, err
	}
	var res Result
	for _, doc := range docs {
		data, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			return Result{}, err
		}
		blocks, err := Blocks(doc, data)
		if err != nil {
			return Result{}, err
		}
		texts := make([]string, len(blocks))
		changed := false
		for i, b := range blocks {
			g, ok := gens[b.Name]
			if !ok {
				return Result{}, fmt.Errorf("%s:%d: no generator is named %q; the registry (internal/docgen, Generators) has %s", doc, b.Line, b.Name, strings.Join(names, ", "))
			}
			if g.Runs && !opt.Runs {
				texts[i] = b.Text(data)
				res.Unchecked = append(res.Unchecked, fmt.Sprintf("%s:%d (%s)", doc, b.Line, b.Name))
				continue
			}
			text, ok := made[b.Name]
			if !ok {
				if text, err = g.Make(env); err != nil {
					return Result{}, fmt.Errorf("%s:%d: generator %q: %w", doc, b.Line, b.Name, err)
				}
				made[b.Name] = text
			}
			texts[i] = text
			if have := b.Text(data); have != text {
				changed = true
				res.Stale = append(res.Stale, Stale{File: doc, Line: b.Line, Name: b.Name, Have: have, Want: text})
			}
		}
		if opt.Write && changed {
			if err := writeFile(filepath.Join(root, doc), Replace(data, blocks, texts)); err != nil {
				return Result{}, err
			}
		}
	}
	return res, nil
}
