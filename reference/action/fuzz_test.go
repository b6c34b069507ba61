package action

import (
	"strings"
	"testing"
)

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{
		`{"action":{"tool":"a","arguments":{"x":1}}}`,
		"```json\n{\"action\":{\"tool\":\"a\",\"x\":\"y\"}}\n```",
		`{"reflection":"r","plan":"p","action":{"tool":"a"}}`,
		`{"action":{"tool":"a","arguments":[1,2]}}`,
		`{"action":{"tool":"a","arguments":{"n":1e999}}}`,
		"```\n```",
		`{"action":` + strings.Repeat(`[`, 70),
		`{"a":"\u0000"}`,
		"",
	} {
		f.Add(s)
	}
	known := map[string]bool{RepairUnfence: true, RepairCollapseFlattened: true, RepairDropExtraKeys: true}
	f.Fuzz(func(t *testing.T, raw string) {
		a, err := ParseJSON(raw)
		if err != nil {
			if !IsParseError(err) {
				t.Fatalf("error is not a ParseError: %v", err)
			}
			return
		}
		if a.Tool == "" || a.Kind != KindToolCall {
			t.Fatalf("accepted without a tool: %+v", a)
		}
		if a.HasArgs != (a.Arguments != nil) {
			t.Fatalf("HasArgs %v with arguments %v", a.HasArgs, a.Arguments)
		}
		for _, r := range a.Repairs {
			if !known[r] {
				t.Fatalf("unnamed repair %q", r)
			}
		}
		// 0003.D6: a bare call is never collapsed into empty arguments.
		if a.HasArgs && len(a.Arguments) == 0 && len(a.Repairs) > 0 && a.Repairs[len(a.Repairs)-1] == RepairCollapseFlattened {
			t.Fatalf("collapsed nothing into arguments: %q", raw)
		}
		_ = CanonicalJSON(a.Arguments)
	})
}
