package tools

import "testing"

// TestPatternPropertyNames: the `\p{…}` names a pattern may use are
// ECMA-262's, spelled as its tables spell them (0006.D6.pattern-properties).
// Each example of the record, one by one, so a change of engine that
// reads another dialect's property names fails here.
func TestPatternPropertyNames(t *testing.T) {
	compiles := []string{`\p{L}`, `\p{Lu}`, `\p{Letter}`, `\p{digit}`, `\P{L}`, `\p{Alphabetic}`, `\p{White_Space}`,
		`\p{ASCII}`, `\p{Any}`, `\p{Emoji}`, `\p{gc=Nd}`, `\p{General_Category=Letter}`, `\p{Script=Greek}`,
		`\p{sc=Grek}`, `\p{scx=Hira}`, `\p{Script_Extensions=Latin}`}
	refused := []string{`\pL`, `\p{letter}`, `\p{Greek}`, `\p{IsGreek}`, `\p{InBasicLatin}`, `\p{Block=Greek}`,
		`\p{Line_Break=AL}`, `\p{General_Category}`, `\p{ Lu}`, `\p{RGI_Emoji}`, `\p{Script=greek}`, `\p{L=Lu}`}
	for _, p := range compiles {
		if _, err := compileECMA(p); err != nil {
			t.Errorf("%s: ECMA-262 with the u flag compiles it; the engine refuses it: %v", p, err)
		}
	}
	for _, p := range refused {
		if _, err := compileECMA(p); err == nil {
			t.Errorf("%s: ECMA-262 with the u flag refuses it; the engine compiles it", p)
		}
	}
}
