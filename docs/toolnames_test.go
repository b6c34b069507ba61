package docs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/docs"
	"github.com/polyloop/polyloop-conform/internal/cli"
	"github.com/polyloop/polyloop-conform/internal/docgen"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// toolNames is what the tool has: scenario IDs and families, every
// command's flags, the trajectory's field paths and the protocol's
// message types.
type toolNames struct {
	scenarios, families, flags, fields, messages map[string]bool
}

func loadToolNames(t *testing.T) toolNames {
	t.Helper()
	n := toolNames{map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}}
	all, err := scenarios.LoadAll(scenarios.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range all {
		n.scenarios[sc.ID] = true
		n.families[strings.SplitN(sc.ID, ".", 2)[0]] = true
		n.families[scenarios.Family(sc.ID)] = true
	}
	var help bytes.Buffer
	cli.Main(context.Background(), []string{"help"}, strings.NewReader(""), &help, &help)
	cmds := regexp.MustCompile(`(?m)^  ([a-z-]+)  `).FindAllStringSubmatch(help.String(), -1)
	if len(cmds) < 10 {
		t.Fatalf("polyloop-conform help lists %d commands; the pattern is stale:\n%s", len(cmds), help.String())
	}
	flagLine := regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`)
	for _, c := range cmds {
		var out bytes.Buffer
		cli.Main(context.Background(), []string{c[1], "-h"}, strings.NewReader(""), &out, &out)
		for _, f := range flagLine.FindAllStringSubmatch(out.String(), -1) {
			n.flags[f[1]] = true
		}
	}
	fields, err := trajectories.Fields()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fields {
		n.fields[f.Path] = true
	}
	var schema struct {
		Defs map[string]struct {
			Properties struct {
				Type struct {
					Const string   `json:"const"`
					Enum  []string `json:"enum"`
				} `json:"type"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(docs.ProtocolSchema(), &schema); err != nil {
		t.Fatal(err)
	}
	for _, d := range schema.Defs {
		if c := d.Properties.Type.Const; c != "" {
			n.messages[c] = true
		}
		for _, e := range d.Properties.Type.Enum {
			n.messages[e] = true
		}
	}
	if len(n.messages) < 10 || len(n.flags) < 20 {
		t.Fatalf("read %d message types and %d flags; the readers are stale", len(n.messages), len(n.flags))
	}
	return n
}

var (
	codeSpan    = regexp.MustCompile("`([^`\n]+)`")
	scenarioID  = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*(\.[a-z0-9]+(-[a-z0-9]+)*)+$`)
	fieldPath   = regexp.MustCompile(`^[a-z_]+(\[(\*|\d+)\])?(\.[a-z_]+(\[(\*|\d+)\])?)+$|^[a-z_]+\[(\*|\d+)\]`)
	messageType = regexp.MustCompile(`\{"type": ?"([a-z_]+)"`)
	fileName    = regexp.MustCompile(`\.(json|md|yaml|go|py|txt|jsonl)$`)
	// otherTools are flags the docs quote of tools other than
	// polyloop-conform, each with the tool.
	otherTools = map[string]string{"integration": "gremlins (mutants/run)"}
	// JSON Schema's own types, which docs write as {"type": "object"}.
	schemaTypes = map[string]bool{"object": true, "string": true, "integer": true, "number": true, "boolean": true, "array": true, "null": true}
)

// TestDocsNameWhatTheToolHas: every scenario ID, flag, trajectory field
// path and protocol message type that README.md or docs/*.md writes in
// code exists in the tool, so a port reading the docs never looks for a
// name the tool does not have.
func TestDocsNameWhatTheToolHas(t *testing.T) {
	n := loadToolNames(t)
	pages, err := docgen.Documents("..")
	if err != nil {
		t.Fatal(err)
	}
	tops := map[string]bool{}
	for f := range n.fields {
		tops[strings.FieldsFunc(f, func(r rune) bool { return r == '.' || r == '[' })[0]] = true
	}
	index := regexp.MustCompile(`\[\d+\]`)
	counts := map[string]int{}
	for _, page := range pages {
		data, err := os.ReadFile(filepath.Join("..", page))
		if err != nil {
			t.Fatal(err)
		}
		for ln, line := range strings.Split(string(data), "\n") {
			at := page + ":" + itoa(ln+1)
			for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
				word := strings.Fields(m[1])
				if len(word) == 0 {
					continue
				}
				w := word[0]
				switch {
				case strings.HasPrefix(w, "--") && len(w) > 2:
					name := strings.SplitN(strings.TrimPrefix(w, "--"), "=", 2)[0]
					counts["flag"]++
					if !n.flags[name] && otherTools[name] == "" {
						t.Errorf("%s: %s names the flag --%s, which no polyloop-conform command has", at, m[0], name)
					}
				case fileName.MatchString(w):
				case fieldPath.MatchString(w) && tops[strings.FieldsFunc(w, func(r rune) bool { return r == '.' || r == '[' })[0]]:
					counts["field"]++
					if p := index.ReplaceAllString(w, "[*]"); !n.fields[p] && !n.fields[strings.SplitN(p, ".", 2)[0]] {
						t.Errorf("%s: %s names the trajectory field %s, which trajectory.schema.json does not have", at, m[0], p)
					} else if !n.fields[p] && !belowObject(n.fields, p) {
						t.Errorf("%s: %s names the trajectory field %s, which trajectory.schema.json does not have", at, m[0], p)
					}
				case scenarioID.MatchString(w) && n.families[strings.SplitN(w, ".", 2)[0]] && len(word) == 1:
					counts["scenario"]++
					if !n.scenarios[w] && !n.families[w] {
						t.Errorf("%s: %s names the scenario %s, which the suite does not have", at, m[0], w)
					}
				}
			}
			for _, m := range messageType.FindAllStringSubmatch(line, -1) {
				counts["message"]++
				if !n.messages[m[1]] && !schemaTypes[m[1]] {
					t.Errorf("%s: a message of type %q, which docs/protocol.schema.json does not define", at, m[1])
				}
			}
		}
	}
	for _, k := range []string{"flag", "field", "scenario", "message"} {
		if counts[k] < 5 {
			t.Errorf("the docs name %d %ss the way this test reads them; the pattern is stale", counts[k], k)
		}
	}
}

// belowObject: p is a value inside a listed field whose value is an
// object the format leaves open (an argument inside action.arguments).
func belowObject(fields map[string]bool, p string) bool {
	for i := strings.LastIndex(p, "."); i > 0; i = strings.LastIndex(p[:i], ".") {
		if fields[p[:i]] && (strings.HasSuffix(p[:i], "arguments") || strings.HasSuffix(p[:i], "decision")) {
			return true
		}
	}
	return false
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
