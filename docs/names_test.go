package docs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestDesignCitesProtocolNames: where a decision record names a field
// "in docs/protocol.md", that field is a property of a protocol message
// (docs/protocol.schema.json). 0002.D5 named the damage `journal_damage`
// (the scenario's fault) where the protocol's resume message says
// `damage`; records and the wire say the same thing.
func TestDesignCitesProtocolNames(t *testing.T) {
	var schema any
	if err := json.Unmarshal(ProtocolSchema(), &schema); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if props, ok := x["properties"].(map[string]any); ok {
				for k := range props {
					names[k] = true
				}
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(schema)
	records, err := filepath.Glob(filepath.Join("design", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	cite := regexp.MustCompile("`([a-z_]+)` in `docs/protocol\\.md`")
	seen := 0
	for _, rec := range records {
		data, err := os.ReadFile(rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range cite.FindAllStringSubmatch(string(data), -1) {
			seen++
			if !names[m[1]] {
				t.Errorf("%s names `%s` in docs/protocol.md, which no protocol message has (docs/protocol.schema.json)", rec, m[1])
			}
		}
	}
	if seen == 0 {
		t.Fatal("no record cites a protocol field the way this test reads; the pattern is stale")
	}
}
