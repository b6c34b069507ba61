package deviation

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/polyloop/polyloop-conform/reference/action"
	"github.com/polyloop/polyloop-conform/reference/run"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

// The deviations of a parameters schema read short of its dialect
// (0006.D6.keywords and the records under it): the validators a port
// writes by hand or takes from another dialect.
const (
	NestedRequiredIgnored     Name = "nested-required-ignored"
	ItemsUnchecked            Name = "items-unchecked"
	EnumComparedAsStrings     Name = "enum-compared-as-strings"
	IntegerValuedRefused      Name = "integer-valued-number-refused"
	PatternReadAsRE2          Name = "pattern-read-as-re2"
	PropertyNamesLoose        Name = "pattern-property-names-loose"
	UnadmittedKeywordIgnored  Name = "unadmitted-keyword-ignored"
	ExclusiveBoundsInclusive  Name = "exclusive-bounds-inclusive"
	AdditionalSchemaIgnored   Name = "additional-properties-schema-ignored"
	OneOfReadAsAnyOf          Name = "one-of-read-as-any-of"
	RefSiblingsIgnored        Name = "ref-siblings-ignored"
	NestedAdditionalUnchecked Name = "nested-additional-properties-ignored"
)

// schemaDeviations break how a tool's parameters are read (0006.D6.*).
func schemaDeviations() []Deviation {
	return []Deviation{
		{NestedRequiredIgnored, "0006.D6.depth", "required is checked at the top of the arguments only; a nested object's own required is ignored",
			Wrap{Specs: rewriteSchemas(func(m map[string]any, depth int) { dropBelowTop(m, depth, "required") })}},
		{NestedAdditionalUnchecked, "0006.D6.depth", "additionalProperties is checked at the top of the arguments only",
			Wrap{Specs: rewriteSchemas(func(m map[string]any, depth int) { dropBelowTop(m, depth, "additionalProperties") })}},
		{ItemsUnchecked, "0006.D6.depth", "an array's elements are not checked: items and prefixItems are ignored",
			Wrap{Specs: rewriteSchemas(func(m map[string]any, _ int) { delete(m, "items"); delete(m, "prefixItems") })}},
		{EnumComparedAsStrings, "0006.D6.enum", "enum and const compare the text of values, so 1 passes for \"1\" and \"2\" for 2",
			Wrap{Specs: rewriteSchemas(enumAsText)}},
		{IntegerValuedRefused, "0006.D6.integer", "a number written with a fraction or an exponent (2.0, 1e0) is not an integer",
			Wrap{Request: parser(integerValuedAsText)}},
		{PatternReadAsRE2, "0006.D6.pattern", "pattern is read as a Go (RE2) regular expression: lookahead does not compile, \\pL does",
			Wrap{Specs: patternAsRE2}},
		{PropertyNamesLoose, "0006.D6.pattern-properties", "a \\p{…} name ECMA-262 does not list (\\p{IsGreek}, \\p{letter}) is read as a letter class, as another engine reads its own names",
			Wrap{Specs: patternLooseProperties}},
		{UnadmittedKeywordIgnored, "0006.D6.keywords", "a 2020-12 keyword the records leave out is ignored instead of refused",
			Wrap{Specs: rewriteSchemas(dropUnadmitted)}},
		{ExclusiveBoundsInclusive, "0006.D6.keywords", "exclusiveMinimum and exclusiveMaximum are read as inclusive bounds",
			Wrap{Specs: rewriteSchemas(exclusiveInclusive)}},
		{AdditionalSchemaIgnored, "0006.D6.keywords", "additionalProperties is honoured only as false; a schema there asserts nothing",
			Wrap{Specs: rewriteSchemas(func(m map[string]any, _ int) {
				if _, isBool := m["additionalProperties"].(bool); !isBool {
					delete(m, "additionalProperties")
				}
			})}},
		{OneOfReadAsAnyOf, "0006.D6.keywords", "oneOf passes when more than one branch matches",
			Wrap{Specs: rewriteSchemas(func(m map[string]any, _ int) {
				if v, ok := m["oneOf"]; ok {
					delete(m, "oneOf")
					m["anyOf"] = v
				}
			})}},
		{RefSiblingsIgnored, "0006.D6.keywords", "a $ref replaces its schema, as in drafts before 2019-09: the keywords beside it are ignored",
			Wrap{Specs: rewriteSchemas(func(m map[string]any, _ int) {
				if ref, ok := m["$ref"]; ok {
					anchor, hasAnchor := m["$anchor"]
					clear(m)
					m["$ref"] = ref
					if hasAnchor {
						m["$anchor"] = anchor
					}
				}
			})}},
	}
}

// rewriteSchemas copies each spec's parameters and calls f on every
// subschema (a JSON object reached through the keywords that hold
// schemas), with its depth in objects below the arguments: 0 for the
// arguments' own schema, 1 for a property's, and so on.
func rewriteSchemas(f func(m map[string]any, depth int)) func([]tools.ToolSpec, *tools.SchemaCache) []tools.ToolSpec {
	return func(specs []tools.ToolSpec, _ *tools.SchemaCache) []tools.ToolSpec {
		out := slices.Clone(specs)
		for i, s := range out {
			if s.Parameters != nil {
				out[i].Parameters = rewriteSchema(s.Parameters, 0, f).(map[string]any)
			}
		}
		return out
	}
}

func rewriteSchema(v any, depth int, f func(map[string]any, int)) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	m = maps.Clone(m)
	for k, val := range m {
		switch k {
		case "items", "additionalProperties", "not":
			m[k] = rewriteSchema(val, depth+1, f)
		case "prefixItems":
			m[k] = rewriteList(val, depth+1, f)
		case "allOf", "anyOf", "oneOf":
			m[k] = rewriteList(val, depth, f)
		case "properties", "$defs":
			subs, _ := val.(map[string]any)
			next := map[string]any{}
			for name, sub := range subs {
				next[name] = rewriteSchema(sub, depth+1, f)
			}
			m[k] = next
		}
	}
	f(m, depth)
	return m
}

func rewriteList(v any, depth int, f func(map[string]any, int)) any {
	list, _ := v.([]any)
	out := make([]any, len(list))
	for i, e := range list {
		out[i] = rewriteSchema(e, depth, f)
	}
	return out
}

func dropBelowTop(m map[string]any, depth int, keyword string) {
	if depth > 0 {
		delete(m, keyword)
	}
}

// enumAsText lets each enum or const value also stand for the value its
// text reads as: 1 for "1", "2" for 2, true for "true".
func enumAsText(m map[string]any, _ int) {
	if c, ok := m["const"]; ok {
		delete(m, "const")
		m["enum"] = []any{c}
	}
	values, ok := m["enum"].([]any)
	if !ok {
		return
	}
	out := slices.Clone(values)
	for _, v := range values {
		switch x := v.(type) {
		case string:
			var parsed any
			dec := json.NewDecoder(strings.NewReader(x))
			dec.UseNumber()
			if dec.Decode(&parsed) == nil && !dec.More() {
				if _, isObj := parsed.(map[string]any); !isObj {
					out = append(out, parsed)
				}
			}
		case json.Number:
			out = append(out, x.String())
		case float64, int, bool:
			b, _ := json.Marshal(x)
			out = append(out, string(b))
		}
	}
	m["enum"] = out
}

// integerValuedAsText makes every whole number written with a fraction or
// an exponent a string before validation, as a port that decodes 2.0 to a
// float and asks for an int type refuses it.
func integerValuedAsText(p action.Parser, _ *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if err != nil || a.Kind != action.KindToolCall || a.Arguments == nil {
			return a, err
		}
		a.Arguments = textFloats(a.Arguments).(map[string]any)
		return a, nil
	}
}

func textFloats(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = textFloats(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = textFloats(e)
		}
		return out
	case json.Number:
		if s := x.String(); strings.ContainsAny(s, ".eE") {
			if f, err := x.Float64(); err == nil && f == float64(int64(f)) {
				return s
			}
		}
	}
	return v
}

// patternAsRE2 reads each pattern with Go's regexp: one RE2 cannot
// compile breaks the schema (it is replaced by an unclosed class, which
// no engine compiles), and one RE2 compiles but ECMA-262 refuses is
// replaced by a pattern that matches everything, as RE2 would accept it.
func patternAsRE2(specs []tools.ToolSpec, cache *tools.SchemaCache) []tools.ToolSpec {
	return rewriteSchemas(func(m map[string]any, _ int) {
		p, ok := m["pattern"].(string)
		if !ok {
			return
		}
		if _, err := regexp.Compile(p); err != nil {
			m["pattern"] = "["
			return
		}
		probe := tools.ToolSpec{Name: "probe", Parameters: map[string]any{"type": "string", "pattern": p}}
		if _, err := tools.NewRegistryWithCache(cache, probe); err != nil {
			m["pattern"] = ""
		}
	})(specs, cache)
}

// propertyEscape is one \p{…} or \P{…} escape of a pattern.
var propertyEscape = regexp.MustCompile(`\\[pP]\{[^}]*\}`)

// patternLooseProperties replaces each property escape ECMA-262 refuses
// by \p{L}, as a port whose own engine knows other names (.NET's IsGreek,
// Java's InBasicLatin, loose case) would accept the pattern.
func patternLooseProperties(specs []tools.ToolSpec, cache *tools.SchemaCache) []tools.ToolSpec {
	return rewriteSchemas(func(m map[string]any, _ int) {
		p, ok := m["pattern"].(string)
		if !ok {
			return
		}
		m["pattern"] = propertyEscape.ReplaceAllStringFunc(p, func(esc string) string {
			probe := tools.ToolSpec{Name: "probe", Parameters: map[string]any{"type": "string", "pattern": esc}}
			if _, err := tools.NewRegistryWithCache(cache, probe); err != nil {
				return `\p{L}`
			}
			return esc
		})
	})(specs, cache)
}

// dropUnadmitted deletes the 2020-12 keywords 0006.D6.keywords leaves
// out, and a $ref that is not a fragment of the schema, as a validator
// that knows no such keyword passes over it.
func dropUnadmitted(m map[string]any, _ int) {
	for _, k := range []string{"patternProperties", "propertyNames", "dependentRequired", "dependentSchemas",
		"minProperties", "maxProperties", "uniqueItems", "contains", "minContains", "maxContains",
		"if", "then", "else", "unevaluatedProperties", "unevaluatedItems", "$id", "$dynamicRef", "$dynamicAnchor", "$vocabulary"} {
		delete(m, k)
	}
	if ref, ok := m["$ref"].(string); ok && !strings.HasPrefix(ref, "#") {
		delete(m, "$ref")
	}
}

// exclusiveInclusive reads the exclusive bounds as inclusive ones.
func exclusiveInclusive(m map[string]any, _ int) {
	for ex, in := range map[string]string{"exclusiveMinimum": "minimum", "exclusiveMaximum": "maximum"} {
		if v, ok := m[ex]; ok {
			delete(m, ex)
			m[in] = v
		}
	}
}
