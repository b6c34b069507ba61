package generate

import (
	"math/rand/v2"
	"slices"
)

// The schema shapes issue 45 found slipping through: validation below the
// top of the arguments (0006.D6.depth), enum and const of mixed JSON types
// (0006.D6.enum), and integer-valued numbers written with a fraction or an
// exponent (0006.D6.integer). A port that checks required at the top only,
// leaves array elements unchecked, compares enum values as text or
// refuses 2.0 as an integer disagrees with the reference on these.

// rawJSON is an argument value as the model writes it, kept as written:
// a nested object, an array, or a number such as 2.0 whose text matters.
type rawJSON string

// richSchema is one property whose schema is more than a type name, with
// the values that satisfy it and the values that break it (below the top
// of the arguments, for the nested and array shapes), each as written.
type richSchema struct {
	class   string // the class TestDrawsEveryClass counts
	schema  map[string]any
	valid   []rawJSON
	invalid []rawJSON
}

// richSchemas are the shapes drawn; each holds valid values that a
// mistaken port refuses and invalid ones it lets through.
var richSchemas = []richSchema{
	{
		class: "a nested object with its own required",
		schema: map[string]any{"type": "object",
			"properties": map[string]any{"name": map[string]any{"type": "string"}, "size": map[string]any{"type": "integer"}},
			"required":   []any{"name", "size"}},
		valid:   []rawJSON{`{"name": "a", "size": 2}`, `{"name": "本市", "size": 0, "note": "x"}`},
		invalid: []rawJSON{`{"name": "a"}`, `{"name": "a", "size": "2"}`, `{"size": 1}`},
	},
	{
		class: "a nested object closed by additionalProperties",
		schema: map[string]any{"type": "object",
			"properties":           map[string]any{"on": map[string]any{"type": "boolean"}},
			"additionalProperties": false},
		valid:   []rawJSON{`{"on": true}`, `{}`},
		invalid: []rawJSON{`{"on": true, "off": false}`, `{"on": 1}`},
	},
	{
		class:   "an array with items",
		schema:  map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "minItems": 1},
		valid:   []rawJSON{`[1, 2]`, `[0]`, `[3, 2.0]`},
		invalid: []rawJSON{`[1, "2"]`, `[]`, `[1, 2.5]`, `[true]`},
	},
	{
		class: "an array of objects",
		schema: map[string]any{"type": "array", "items": map[string]any{"type": "object",
			"properties": map[string]any{"id": map[string]any{"type": "integer"}}, "required": []any{"id"}}},
		valid:   []rawJSON{`[{"id": 1}, {"id": 2}]`, `[]`},
		invalid: []rawJSON{`[{"id": 1}, {}]`, `[{"id": "1"}]`, `[1]`},
	},
	{
		class: "a tuple with prefixItems",
		schema: map[string]any{"type": "array",
			"prefixItems": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}, "items": false},
		valid:   []rawJSON{`["a", 1.5]`, `["x"]`},
		invalid: []rawJSON{`["a", "b"]`, `["a", 1, 2]`, `[1, 1]`},
	},
	{
		class:   "an enum of mixed types",
		schema:  map[string]any{"enum": []any{"1", 2, nil, true, "auto"}},
		valid:   []rawJSON{`"1"`, `2`, `2.0`, `null`, `true`, `"auto"`},
		invalid: []rawJSON{`1`, `"2"`, `"true"`, `"null"`, `false`, `"Auto"`},
	},
	{
		class:   "a const number",
		schema:  map[string]any{"const": 3},
		valid:   []rawJSON{`3`, `3.0`},
		invalid: []rawJSON{`"3"`, `3.5`},
	},
	{
		class:   "an integer written with a fraction or an exponent",
		schema:  map[string]any{"type": "integer", "minimum": 0},
		valid:   []rawJSON{`2.0`, `1e0`, `10.0`, `3E1`},
		invalid: []rawJSON{`2.5`, `"2"`, `-1.0`},
	},
	// Issue 52: lengths in code points with text outside the BMP and
	// decomposed text (0006.D6.no-coercion.text), and bounds past 2^53
	// compared exactly (0006.D6.exact-numbers). Each invalid value is one a
	// port counting UTF-16 units, normalising to NFC or comparing doubles
	// accepts, and each valid one a value such a port refuses.
	{
		class:   "a string whose length counts code points",
		schema:  map[string]any{"type": "string", "minLength": 2, "maxLength": 3},
		valid:   []rawJSON{"\"\U0001F600\U0001F600\U0001F600\"", "\"e\u0301\"", `"\ud83d\ude00\ud83d\ude00"`, "\"\U00020000\U00020001\""},
		invalid: []rawJSON{"\"\U0001F600\"", "\"e\u0301e\u0301\"", `"\u0041\u030a\u0041\u030a"`, `"a"`},
	},
	{
		class:   "an integer bounded past 2^53",
		schema:  map[string]any{"type": "integer", "minimum": 9007199254740993, "maximum": uint64(18446744073709551615)},
		valid:   []rawJSON{`9007199254740993`, `18446744073709551615`, `9007199254740995`},
		invalid: []rawJSON{`9007199254740992`, `18446744073709551616`, `9007199254740993.5`},
	},
}

// drawRich gives a drawn tool one property of a rich shape, 40% of the
// time, required half of that; the shape is chosen uniformly.
func drawRich(r *rand.Rand, t *tool) {
	if !chance(r, 0.4) {
		return
	}
	i := r.IntN(len(richSchemas))
	name := pick(r, "items", "filter", "options", "mode", "rows", "point", "tags", "level", "size", "条目")
	for _, p := range t.props {
		if p.name == name {
			return
		}
	}
	t.props = append(t.props, prop{name: name, typ: "rich", rich: &richSchemas[i]})
	if chance(r, 0.5) {
		t.required = append(t.required, name)
	}
}

// breakBelowTop makes one model output, in 40% of the cases with a rich
// property and JSON actions, a call to that property's tool that is valid
// at the top of the arguments and wrong inside the property (a nested
// required member missing, an element of the wrong type, 1 for "1", 2.5
// for an integer): the call a port validating the top level only runs.
func (s *spec) breakBelowTop(r *rand.Rand) {
	if s.code || len(s.model) == 0 || !chance(r, 0.4) {
		return
	}
	var withRich []tool
	for _, t := range s.tools {
		if slices.ContainsFunc(t.props, func(p prop) bool { return p.rich != nil }) {
			withRich = append(withRich, t)
		}
	}
	if len(withRich) == 0 {
		return
	}
	t := pick(r, withRich...)
	args := validArgs(r, t)
	rich := slices.DeleteFunc(slices.Clone(t.props), func(p prop) bool { return p.rich == nil })
	p := pick(r, rich...)
	args[p.name] = invalidRich(r, p)
	out := call(t.name, args)
	s.model[r.IntN(len(s.model))] = out
	s.note(out, whyBelowTop...)
}

// propToBreak picks the property an invalid call breaks: a rich one
// three times in four when the tool has one, so values invalid below the
// top of the arguments come in every batch.
func propToBreak(r *rand.Rand, t tool) prop {
	var rich []prop
	for _, p := range t.props {
		if p.rich != nil {
			rich = append(rich, p)
		}
	}
	if len(rich) > 0 && chance(r, 0.75) {
		return pick(r, rich...)
	}
	return pick(r, t.props...)
}

// validRich and invalidRich draw a value of the property's shape.
func validRich(r *rand.Rand, p prop) rawJSON   { return pick(r, p.rich.valid...) }
func invalidRich(r *rand.Rand, p prop) rawJSON { return pick(r, p.rich.invalid...) }
