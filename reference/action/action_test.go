package action

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseJSON_0003_D6(t *testing.T) {
	cases := []struct {
		name    string
		raw     string
		tool    string
		args    map[string]any
		hasArgs bool
		repairs []string
		wantErr string
	}{
		{name: "plain", raw: `{"action":{"tool":"a","arguments":{"x":1}}}`, tool: "a", args: map[string]any{"x": json.Number("1")}, hasArgs: true},
		{name: "fenced with tag", raw: "```json\n{\"action\":{\"tool\":\"a\",\"arguments\":{}}}\n```", tool: "a", args: map[string]any{}, hasArgs: true, repairs: []string{RepairUnfence}},
		{name: "fenced without tag", raw: "```\n{\"action\":{\"tool\":\"a\",\"arguments\":{}}}\n```", tool: "a", args: map[string]any{}, hasArgs: true, repairs: []string{RepairUnfence}},
		{name: "flattened", raw: `{"action":{"tool":"a","x":"y"}}`, tool: "a", args: map[string]any{"x": "y"}, hasArgs: true, repairs: []string{RepairCollapseFlattened}},
		{name: "keys beside arguments are dropped, and said", raw: `{"action":{"tool":"a","arguments":{"x":1},"note":"hi"}}`, tool: "a", args: map[string]any{"x": json.Number("1")}, hasArgs: true, repairs: []string{RepairDropExtraKeys}},
		{name: "0003.D6.bare-call stays bare", raw: `{"action":{"tool":"a"}}`, tool: "a", hasArgs: false},
		{name: "explicit null arguments is not an object", raw: `{"action":{"tool":"a","arguments":null}}`, wantErr: "not an object"},
		{name: "no action", raw: `{"tool":"a"}`, wantErr: `no "action"`},
		{name: "action not object", raw: `{"action":"a"}`, wantErr: "not an object"},
		{name: "empty tool", raw: `{"action":{"tool":""}}`, wantErr: "action.tool"},
		{name: "prose", raw: `I will read the file.`, wantErr: "expected a JSON object"},
		{name: "trailing text", raw: `{"action":{"tool":"a","arguments":{}}} thanks`, wantErr: "text follows"},
		{name: "truncated", raw: `{"action":{"tool":"a"`, wantErr: "invalid JSON"},
		{name: "0003.D5.parts reflection and plan of any type", raw: `{"reflection":1,"plan":["a","b"],"action":{"tool":"a","arguments":{}}}`, tool: "a", args: map[string]any{}, hasArgs: true},
		{name: "0003.D6.duplicate-keys in the action", raw: `{"action":{"tool":"a","tool":"b","arguments":{}}}`, wantErr: "/action/tool appears twice"},
		{name: "0003.D6.duplicate-keys in the arguments", raw: `{"action":{"tool":"a","arguments":{"x":1,"x":2}}}`, wantErr: "/action/arguments/x appears twice"},
		{name: "0003.D7.several.actions-key beside action", raw: `{"action":{"tool":"a","arguments":{}},"actions":[]}`, wantErr: `"actions" field`},
		{name: "0003.D7.several.actions-key of one call", raw: `{"actions":[{"tool":"a","arguments":{}}]}`, wantErr: `"actions" field`},
		{name: "deep", raw: `{"action":{"tool":"a","arguments":{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}}`, wantErr: "nests deeper"},
		{name: "brackets in strings do not count as depth", raw: `{"action":{"tool":"a","arguments":{"x":"` + strings.Repeat("[", 100) + `"}}}`, tool: "a", args: map[string]any{"x": strings.Repeat("[", 100)}, hasArgs: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ParseJSON(tc.raw)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !IsParseError(err) {
					t.Fatalf("err = %v, want a ParseError containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Tool != tc.tool || a.HasArgs != tc.hasArgs || a.Kind != KindToolCall {
				t.Errorf("got tool %q hasArgs %v kind %s", a.Tool, a.HasArgs, a.Kind)
			}
			if tc.hasArgs && !cmp.Equal(a.Arguments, tc.args) {
				t.Errorf("args: %s", cmp.Diff(tc.args, a.Arguments))
			}
			if !cmp.Equal(a.Repairs, tc.repairs) {
				t.Errorf("repairs = %v, want %v", a.Repairs, tc.repairs)
			}
		})
	}
}

func TestParseJSON_0003_D7_limits(t *testing.T) {
	if _, err := ParseJSON(strings.Repeat(" ", MaxOutputBytes+1)); err == nil || !IsParseError(err) {
		t.Errorf("oversized output accepted: %v", err)
	}
}

func TestParseCode_0003_D5(t *testing.T) {
	a, err := ParseCode("```python\nprint(1)\n```")
	if err != nil || a.Code != "print(1)" || a.Kind != KindCode || !cmp.Equal(a.Repairs, []string{RepairUnfence}) {
		t.Errorf("fenced code: %+v %v", a, err)
	}
	a, err = ParseCode("x = 1")
	if err != nil || a.Code != "x = 1" || a.Repairs != nil {
		t.Errorf("bare code: %+v %v", a, err)
	}
	if _, err := ParseCode("   "); err == nil {
		t.Error("empty code accepted")
	}
}

// TestParseCode_0003_D5_fence_verbatim: code is handed over as written,
// whitespace included; only unfence changes the output (issue 45).
func TestParseCode_0003_D5_fence_verbatim(t *testing.T) {
	for _, tc := range []struct {
		name, raw, code string
		repairs         []string
	}{
		{"bare, padded", "  print(1)  \n", "  print(1)  \n", nil},
		{"bare, indented lines", "\tif x:\n\t\ty()\n", "\tif x:\n\t\ty()\n", nil},
		{"fenced, first line indented", "```python\n    x = 1\n    print(x)\n```", "    x = 1\n    print(x)", []string{RepairUnfence}},
		{"fenced, blank lines kept", "```\n\nls\n\n```", "\nls\n", []string{RepairUnfence}},
		{"fenced after prose, trailing spaces kept", "I list.\n```sh\nls -l  \n```\n", "ls -l  ", []string{RepairUnfence}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ParseCode(tc.raw)
			if err != nil {
				t.Fatalf("ParseCode(%q): %v", tc.raw, err)
			}
			if a.Code != tc.code || !cmp.Equal(a.Repairs, tc.repairs) {
				t.Errorf("ParseCode(%q) = code %q repairs %v, want %q %v", tc.raw, a.Code, a.Repairs, tc.code, tc.repairs)
			}
		})
	}
}

func TestCanonicalJSON_keepsNumbersAsWritten(t *testing.T) {
	a, _ := ParseJSON(`{"action":{"tool":"a","arguments":{"b":1.50,"a":"<x>"}}}`)
	if got := CanonicalJSON(a.Arguments); got != `{"a":"<x>","b":1.50}` {
		t.Errorf("CanonicalJSON = %s", got)
	}
}

// TestParseJSON_0003_D7_shapes: every shape of 0003.D7.shapes is a
// decision failure, none of them repaired into a call.
func TestParseJSON_0003_D7_shapes(t *testing.T) {
	for name, raw := range map[string]string{
		"arguments null":           `{"action": {"tool": "t", "arguments": null}}`,
		"arguments array":          `{"action": {"tool": "t", "arguments": [1]}}`,
		"arguments encoded object": `{"action": {"tool": "t", "arguments": "{\"a\": 1}"}}`,
		"arguments number":         `{"action": {"tool": "t", "arguments": 3}}`,
		"arguments boolean":        `{"action": {"tool": "t", "arguments": true}}`,
		"action encoded":           `{"action": "{\"tool\": \"t\", \"arguments\": {}}"}`,
		"action null":              `{"action": null}`,
		"action empty":             `{"action": {}}`,
		"top-level array of one":   `[{"action": {"tool": "t", "arguments": {}}}]`,
		"top-level array of two":   `[{"action": {"tool": "t", "arguments": {}}}, {"action": {"tool": "t", "arguments": {}}}]`,
		"top-level encoded":        `"{\"action\": {\"tool\": \"t\", \"arguments\": {}}}"`,
		"top-level number":         `3`,
		"top-level null":           `null`,
		"top-level boolean":        `false`,
		"empty object":             `{}`,
	} {
		t.Run(name, func(t *testing.T) {
			a, err := ParseJSON(raw)
			if !IsParseError(err) {
				t.Errorf("ParseJSON(%s) = %+v, %v; want a decision failure", raw, a, err)
			}
		})
	}
}

// TestFenceTag: a fence's language tag is any run of characters but white
// space, the backtick and the braces, never read (0003.D6.fence-tag), for a
// JSON action's fence and a code action's block alike.
func TestFenceTag(t *testing.T) {
	call := `{"action": {"tool": "t", "arguments": {}}}`
	for _, tag := range []string{"", "json", "JSON", "json5", "application/json", "c++", "中文"} {
		if _, ok := Unfence("```" + tag + "\n" + call + "\n```"); !ok {
			t.Errorf("tag %q: no fence, want one", tag)
		}
		if n := len(FencedBlocks("```" + tag + "\nx = 1\n```")); n != 1 {
			t.Errorf("tag %q: %d code blocks, want 1", tag, n)
		}
	}
	for _, tag := range []string{"json x", "`json", "json\u00a0x", "{", "json}"} {
		if _, ok := Unfence("```" + tag + "\n" + call + "\n```"); ok {
			t.Errorf("tag %q: a fence, want none", tag)
		}
		if n := len(FencedBlocks("```" + tag + "\nx = 1\n```")); n != 0 {
			t.Errorf("tag %q: %d code blocks, want none", tag, n)
		}
	}
}

// 0003.D6.unfence-whitespace.set: JSON's four white-space characters are
// padding around a JSON action; a no-break space or an ideographic space
// is not, wherever it stands.
func TestParseJSON_0003_D6_whitespaceSet(t *testing.T) {
	const obj = `{"action": {"tool": "t", "arguments": {}}}`
	for _, raw := range []string{
		"\r\n```json\r\n" + obj + "\r\n```\r\n",
		" \t\n" + obj + "\n\r",
		"```json \t\n" + obj + "\n```",
	} {
		if _, err := ParseJSON(raw); err != nil {
			t.Errorf("ParseJSON(%q) = %v, want an action", raw, err)
		}
	}
	for _, raw := range []string{
		"\u00a0```json\n" + obj + "\n```",
		"```json\n" + obj + "\n```\u3000",
		"\u0085" + obj,
		obj + "\u00a0",
		"```json\n\u2003" + obj + "\n```",
	} {
		if _, err := ParseJSON(raw); !IsParseError(err) {
			t.Errorf("ParseJSON(%q) = %v, want a decision failure", raw, err)
		}
	}
}

// 0003.D7.lone-surrogate: an escape of half a surrogate pair is a decision
// failure wherever it stands; a pair, an escaped backslash before "u" and
// a surrogate-looking text outside strings are not.
func TestParseJSON_0003_D7_loneSurrogate(t *testing.T) {
	for _, raw := range []string{
		`{"action": {"tool": "t", "arguments": {"s": "\ud83d"}}}`,
		`{"action": {"tool": "t", "arguments": {"s": "\uDE00x"}}}`,
		`{"action": {"tool": "t", "arguments": {"\ud800": 1}}}`,
		`{"action": {"tool": "t", "arguments": {"s": "\ud83d\u0041"}}}`,
		`{"action": {"tool": "t", "arguments": {"s": "\ud83d\ud83d\ude00"}}}`,
	} {
		if _, err := ParseJSON(raw); !IsParseError(err) {
			t.Errorf("ParseJSON(%s) = %v, want a decision failure", raw, err)
		}
	}
	for raw, want := range map[string]string{
		`{"action": {"tool": "t", "arguments": {"s": "\ud83d\ude00"}}}`: "\U0001F600",
		`{"action": {"tool": "t", "arguments": {"s": "\\ud83d"}}}`:      `\ud83d`,
		`{"action": {"tool": "t", "arguments": {"s": "\u00e9\\"}}}`:     "\u00e9\\",
	} {
		a, err := ParseJSON(raw)
		if err != nil || a.Arguments["s"] != want {
			t.Errorf("ParseJSON(%s) = %q, %v; want %q", raw, a.Arguments["s"], err, want)
		}
	}
}
