package tools_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/reference/action"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

// suiteDir holds the files taken from json-schema-org's
// JSON-Schema-Test-Suite (its README names the commit).
const suiteDir = "testdata/json-schema-test-suite"

// suiteKeyword is the keyword each taken file judges, which every invalid
// case of that file must name among its failing keywords. Files whose
// cases fail through whatever keyword the referenced schema holds ($ref,
// $defs, $anchor, and the optional regex and bignum files, which judge
// other keywords' reading) name "" and must only fail as a schema
// mismatch.
var suiteKeyword = map[string]string{
	"additionalProperties.json": "additionalProperties",
	"allOf.json":                "allOf",
	"anchor.json":               "",
	"anyOf.json":                "anyOf",
	"bignum.json":               "",
	"const.json":                "const",
	"defs.json":                 "",
	"ecmascript-regex.json":     "",
	"enum.json":                 "enum",
	"exclusiveMaximum.json":     "exclusiveMaximum",
	"exclusiveMinimum.json":     "exclusiveMinimum",
	"items.json":                "items",
	"maxItems.json":             "maxItems",
	"maxLength.json":            "maxLength",
	"maximum.json":              "maximum",
	"minItems.json":             "minItems",
	"minLength.json":            "minLength",
	"minimum.json":              "minimum",
	"multipleOf.json":           "multipleOf",
	"non-bmp-regex.json":        "",
	"not.json":                  "not",
	"oneOf.json":                "oneOf",
	"pattern.json":              "pattern",
	"prefixItems.json":          "prefixItems",
	"properties.json":           "properties",
	"ref.json":                  "",
	"required.json":             "required",
	"type.json":                 "type",
}

// suiteOther names, for the groups whose invalid cases fail through a
// sibling keyword the group combines with its file's keyword (a base
// schema beside anyOf, a required beside enum properties), the keywords
// such a case may name instead.
var suiteOther = map[string][]string{
	"allOf.json / allOf with base schema":                                               {"required"},
	"allOf.json / allOf combined with anyOf, oneOf":                                     {"anyOf", "oneOf"},
	"anyOf.json / anyOf with base schema":                                               {"type"},
	"enum.json / enums in properties":                                                   {"required"},
	"items.json / items and subitems":                                                   {"prefixItems"},
	"oneOf.json / oneOf with base schema":                                               {"type"},
	"properties.json / properties, patternProperties, additionalProperties interaction": {"patternProperties", "additionalProperties"},
}

type suiteGroup struct {
	Description string `json:"description"`
	Schema      any    `json:"schema"`
	Tests       []struct {
		Description string `json:"description"`
		Data        any    `json:"data"`
		Valid       bool   `json:"valid"`
	} `json:"tests"`
}

// TestJSONSchemaTestSuite_0006_D6_keywords runs every taken case of the
// dialect's own test suite through the registry as a tool call: the
// case's schema is the schema of the one argument `value` (an embedded
// resource, so its own `#/$defs/...` references resolve inside it), its
// data is that argument, nested one level below the top as a model's
// arguments are. A valid case must pass Validate, so its handler would
// run; an invalid one must be refused as a schema mismatch naming the
// keyword its file judges. Every case runs: none is skipped.
func TestJSONSchemaTestSuite_0006_D6_keywords(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(suiteDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	var want []string
	for n := range suiteKeyword {
		want = append(want, n)
	}
	sort.Strings(want)
	if !slices.Equal(names, want) {
		t.Fatalf("the taken files are %v; suiteKeyword names %v: name each taken file's keyword", names, want)
	}
	total, invalid := 0, 0
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(suiteDir, name))
		if err != nil {
			t.Fatal(err)
		}
		var groups []suiteGroup
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&groups); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, g := range groups {
			reg, err := tools.NewRegistry(tools.ToolSpec{Name: "case", Parameters: wrapCase(g.Schema)})
			if err != nil {
				t.Errorf("%s / %s: the schema does not compile: %v", name, g.Description, err)
				continue
			}
			for _, c := range g.Tests {
				total++
				err := reg.Validate(action.Action{Kind: action.KindToolCall, Tool: "case", Arguments: map[string]any{"value": c.Data}, HasArgs: true})
				where := name + " / " + g.Description + " / " + c.Description
				if c.Valid {
					if err != nil {
						t.Errorf("%s: valid, refused: %v", where, err)
					}
					continue
				}
				invalid++
				ve, ok := err.(*tools.ValidationError)
				if !ok || ve.Kind != "schema" {
					t.Errorf("%s: invalid, got %v, want a schema mismatch", where, err)
					continue
				}
				if kw := suiteKeyword[name]; kw != "" && !namesKeyword(ve.Keywords, append([]string{kw}, suiteOther[name+" / "+g.Description]...)) {
					t.Errorf("%s: refused, but the failing keywords %v do not name %q", where, ve.Keywords, kw)
				}
			}
		}
	}
	if total < 600 || invalid < 250 {
		t.Fatalf("%d cases, %d invalid: fewer than the taken files hold", total, invalid)
	}
	t.Logf("%d cases from %d files, %d invalid, every verdict the suite's", total, len(names), invalid)
}

// wrapCase makes a case's schema the schema of the argument `value`.
// Given an `$id` of its own when it has none, it is a resource of its
// own, and a reference such as `#/$defs/x` in it resolves against it.
func wrapCase(schema any) map[string]any {
	if m, ok := schema.(map[string]any); ok {
		if _, has := m["$id"]; !has {
			m["$id"] = "mem://case/schema.json"
		}
	}
	return map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"value": schema},
		"required":             []any{"value"},
		"additionalProperties": false,
	}
}

// namesKeyword reports whether one failing keyword location has one of
// kws as a segment below the wrapper's /properties/value.
func namesKeyword(locations []string, kws []string) bool {
	for _, loc := range locations {
		segs := strings.Split(strings.TrimPrefix(loc, "/properties/value"), "/")
		for _, kw := range kws {
			if slices.Contains(segs, kw) {
				return true
			}
		}
	}
	return false
}
