package trajectories

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFormatDocVocabulary keeps docs/trajectory-format.md's hand-written
// vocabulary equal to the schema's enums: every value the schema allows
// is explained in "Suite vocabulary", the stop reasons listed are exactly
// the schema's, and the events table has one row per event type, no more.
func TestFormatDocVocabulary(t *testing.T) {
	doc, err := os.ReadFile(docFile)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := embedded.ReadFile(SchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	enum := func(path ...string) []string {
		var n any = schema
		for _, p := range path {
			n = n.(map[string]any)[p]
		}
		var out []string
		for _, v := range n.(map[string]any)["enum"].([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	section := func(from, to string) string {
		s := string(doc)
		i, j := strings.Index(s, from), strings.Index(s, to)
		if i < 0 || j < i {
			t.Fatalf("%s: no section between %q and %q", docFile, from, to)
		}
		return s[i:j]
	}
	backticked := regexp.MustCompile("`([a-z_]+)`")
	words := func(s string) []string {
		var out []string
		for _, m := range backticked.FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
		return out
	}
	vocab := section("## Suite vocabulary", "## Events")
	for _, field := range [][]string{
		{"properties", "run_error", "properties", "kind"},
		{"properties", "resume", "properties", "from"},
		{"$defs", "step", "properties", "action", "properties", "kind"},
		{"$defs", "event", "properties", "type"},
	} {
		for _, v := range enum(field...) {
			if !slices.Contains(words(vocab), v) {
				t.Errorf("%s: the schema allows %s = %q, which \"Suite vocabulary\" does not explain", docFile, strings.Join(field, "/"), v)
			}
		}
	}
	reasons := regexp.MustCompile(`(?s)Stop reasons \(` + "`end.reason`" + `, (.*?)\) are spelled`).FindStringSubmatch(vocab)
	if reasons == nil {
		t.Fatalf("%s: no stop-reason paragraph", docFile)
	}
	if got, want := words(reasons[1]), enum("$defs", "reason"); !slices.Equal(got, want) {
		t.Errorf("%s: stop reasons listed %v; the schema's are %v", docFile, got, want)
	}
	var rows []string
	for _, line := range strings.Split(section("## Events", "## Every field"), "\n") {
		if m := regexp.MustCompile("^\\| `([a-z_]+)` \\|").FindStringSubmatch(line); m != nil && m[1] != "type" {
			rows = append(rows, m[1])
		}
	}
	want := enum("$defs", "event", "properties", "type")
	slices.Sort(rows)
	slices.Sort(want)
	if !slices.Equal(rows, want) {
		t.Errorf("%s: the events table has rows %v; the schema's event types are %v", docFile, rows, want)
	}
}
