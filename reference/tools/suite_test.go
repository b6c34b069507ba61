package tools_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// suiteRefused names the groups whose schema uses what 0006.D6.keywords
// leaves out, with the keyword the construction error must name: their
// cases are not run, the registry is refused.
var suiteRefused = map[string]string{
	"additionalProperties.json / additionalProperties being false does not allow other properties": "patternProperties",
	"additionalProperties.json / non-ASCII pattern with additionalProperties":                      "patternProperties",
	"additionalProperties.json / additionalProperties with propertyNames":                          "propertyNames",
	"additionalProperties.json / dependentSchemas with additionalProperties":                       "dependentSchemas",
	"anchor.json / Location-independent identifier with absolute URI":                              "$id",
	"anchor.json / Location-independent identifier with base URI change in subschema":              "$id",
	"anchor.json / same $anchor with different base uri":                                           "$id",
	"defs.json / validate definition against metaschema":                                           "$ref",
	"ecmascript-regex.json / patterns always use unicode semantics with patternProperties":         "patternProperties",
	"ecmascript-regex.json / \\w in patternProperties matches [A-Za-z0-9_], not unicode letters":   "patternProperties",
	"ecmascript-regex.json / patternProperties with ASCII ranges":                                  "patternProperties",
	"ecmascript-regex.json / \\d in patternProperties matches [0-9], not unicode digits":           "patternProperties",
	"ecmascript-regex.json / patternProperties with non-ASCII digits":                              "patternProperties",
	"non-bmp-regex.json / Proper UTF-16 surrogate pair handling: patternProperties":                "patternProperties",
	"not.json / collect annotations inside a 'not', even if collection is disabled":                "unevaluatedProperties",
	"properties.json / properties, patternProperties, additionalProperties interaction":            "patternProperties",
	"ref.json / remote ref, containing refs itself":                                                "$ref",
	"ref.json / Recursive references between schemas":                                              "$id",
	"ref.json / ref creates new scope when adjacent to keywords":                                   "unevaluatedProperties",
	"ref.json / refs with relative uris and defs":                                                  "$id",
	"ref.json / relative refs with absolute uris and defs":                                         "$id",
	"ref.json / $id must be resolved against nearest parent, not just immediate parent":            "$id",
	"ref.json / order of evaluation: $id and $ref":                                                 "$id",
	"ref.json / order of evaluation: $id and $anchor and $ref":                                     "$id",
	"ref.json / order of evaluation: $id and $ref on nested schema":                                "$id",
	"ref.json / simple URN base URI with $ref via the URN":                                         "$id",
	"ref.json / simple URN base URI with JSON pointer":                                             "$id",
	"ref.json / URN base URI with NSS":                                                             "$id",
	"ref.json / URN base URI with r-component":                                                     "$id",
	"ref.json / URN base URI with q-component":                                                     "$id",
	"ref.json / URN base URI with URN and JSON pointer ref":                                        "$id",
	"ref.json / URN base URI with URN and anchor ref":                                              "$id",
	"ref.json / URN ref with nested pointer ref":                                                   "$id",
	"ref.json / ref to if":                                           "$ref",
	"ref.json / ref to then":                                         "$ref",
	"ref.json / ref to else":                                         "$ref",
	"ref.json / ref with absolute-path-reference":                    "$id",
	"ref.json / $id with file URI still resolves pointers - *nix":    "$id",
	"ref.json / $id with file URI still resolves pointers - windows": "$id",
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
// keyword its file judges. A group whose schema uses a keyword the records
// leave out is refused at construction naming it (suiteRefused); every
// other case runs.
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
	total, invalid, refused := 0, 0, 0
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
			group := name + " / " + g.Description
			reg, err := tools.NewRegistry(tools.ToolSpec{Name: "case", Parameters: wrapCase(g.Schema)})
			if kw, out := suiteRefused[group]; out {
				var re *tools.RegistryError
				if !errors.As(err, &re) || re.Kind != "invalid_schema" || !strings.Contains(err.Error(), fmt.Sprintf("keyword %q", kw)) {
					t.Errorf("%s: uses %s, which 0006.D6.keywords leaves out; got %v, want invalid_schema naming it", group, kw, err)
				}
				refused++
				continue
			}
			if err != nil {
				t.Errorf("%s: the schema does not compile: %v", group, err)
				continue
			}
			for _, c := range g.Tests {
				total++
				err := reg.Validate(action.Action{Kind: action.KindToolCall, Tool: "case", Arguments: map[string]any{"value": c.Data}, HasArgs: true})
				where := group + " / " + c.Description
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
	if refused != len(suiteRefused) {
		t.Errorf("%d groups refused, suiteRefused names %d: a group it names is gone", refused, len(suiteRefused))
	}
	if total < 550 || invalid < 250 {
		t.Fatalf("%d cases, %d invalid: fewer than the taken files hold", total, invalid)
	}
	t.Logf("%d cases from %d files, %d invalid, every verdict the suite's; %d groups refused at construction, each naming its keyword", total, len(names), invalid, refused)
}

// wrapCase makes a case's schema the schema of the argument `value`: its
// references into itself (`#/$defs/x`, `#` for the whole) are moved to
// where it now sits, `#/properties/value/$defs/x`; anchors need no move.
func wrapCase(schema any) map[string]any {
	return map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"value": moveRefs(schema)},
		"required":             []any{"value"},
		"additionalProperties": false,
	}
}

func moveRefs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if ref, ok := e.(string); ok && k == "$ref" && (ref == "#" || strings.HasPrefix(ref, "#/")) {
				out[k] = "#/properties/value" + strings.TrimPrefix(ref, "#")
				continue
			}
			if slices.Contains([]string{"enum", "const", "default", "examples"}, k) {
				out[k] = e // values, not schemas
				continue
			}
			out[k] = moveRefs(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = moveRefs(e)
		}
		return out
	}
	return v
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
