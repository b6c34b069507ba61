package generate

import (
	"math/rand/v2"
	"strings"
)

// The draws of issue 45 that are not schemas: the JSON shapes of a
// decision that are no action (0003.D7.shapes), code whose whitespace is
// part of it (0003.D5.fence), a later phase's cap below one (0004.D1.min,
// 0003.D1) and one text under several block types (0010.D5).

// shapeOutput draws one decision in a shape 0003.D7.shapes calls a
// decision failure, for tool t: each would run t if a kernel repaired it
// silently.
func shapeOutput(r *rand.Rand, t tool) string {
	name := jsonText(t.name)
	args := compact(validArgs(r, t))
	one := call(t.name, validArgs(r, t))
	// One of four groups first, each as likely as the others, so every
	// group is met in every batch.
	switch r.IntN(4) {
	case 0: // arguments that are no object
		return pick(r,
			`{"action": {"tool": `+name+`, "arguments": null}}`,
			`{"action": {"tool": `+name+`, "arguments": `+jsonText(args)+`}}`, // JSON-encoded
			`{"action": {"tool": `+name+`, "arguments": [`+args+`]}}`,
			`{"action": {"tool": `+name+`, "arguments": `+pick(r, "1", "true")+`}}`)
	case 1: // an action that is no object
		return pick(r,
			`{"action": `+jsonText(`{"tool": `+name+`, "arguments": `+args+`}`)+`}`, // JSON-encoded
			`{"action": `+pick(r, "null", "7", "{}")+`}`)
	case 2: // a top-level array of one decision or two
		return pick(r, "["+one+"]", "["+one+", "+one+"]")
	}
	// a top-level scalar: the decision JSON-encoded, a number, a boolean,
	// null, or an empty object
	return pick(r, jsonText(one), "42", "true", "null", "{}")
}

// codeShapes are code actions whose whitespace a trimming parser would
// change, and JSON shapes that the code language takes as code.
func codeShapes(t tool) []string {
	return []string{
		"  print(1)  \n",
		"```python\n    x = 1\n    print(x)\n```",
		"print(" + t.name + "('a'))   \n\n",
		`{"action": {"tool": ` + jsonText(t.name) + `, "arguments": null}}`,
		"[" + call(t.name, map[string]any{}) + "]",
	}
}

// drawShapes gives a drawn spec the cases above that are not model
// outputs: a later phase's cap below one, and a goal fragment that is the
// run fragment's text (two block types, one text, measured twice).
func (s *spec) drawShapes(r *rand.Rand) {
	if strings.TrimSpace(s.runFragment) != "" && chance(r, 0.06) {
		s.goal = s.runFragment
	}
	if s.second != nil && chance(r, 0.35) {
		if chance(r, 0.5) {
			s.second.eff = pick(r, 0, -1)
		} else {
			s.second.total = pick(r, 0, -2)
		}
		if s.crash != nil && s.crash.phase == "second" || s.cancel != nil && s.cancel.phase == "second" {
			s.clearFaults() // the refused phase calls nothing to stop
		}
	}
}
