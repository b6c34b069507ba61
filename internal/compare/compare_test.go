package compare

import (
	"encoding/json"
	"strings"
	"testing"
)

func doc(t *testing.T, s string) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDiff_paths(t *testing.T) {
	want := doc(t, `{"steps":[{"outcome":{"status":"NOT_EXECUTED"},"n":1},{"x":1}],"end":{"reason":"a"},"odd key":1}`)
	got := doc(t, `{"steps":[{"outcome":{"status":"EXECUTED"},"n":1},{"x":1},{"x":2}],"end":{"reason":"a","extra":true},"odd key":2}`)
	diffs, err := Diff(want, got, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, d := range diffs {
		lines = append(lines, d.String())
	}
	wantLines := []string{
		`["odd key"]: want 1, got 2`,
		`end.extra: want (absent), got true`,
		`steps[0].outcome.status: want NOT_EXECUTED, got EXECUTED`,
		`steps[2]: want (absent), got {"x":2}`,
	}
	if strings.Join(lines, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("diffs:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"))
	}
}

func TestDiff_ignore(t *testing.T) {
	want := doc(t, `{"steps":[{"context_size":1,"a":1},{"context_size":2,"a":1}],"events":[{"t":1}]}`)
	got := doc(t, `{"steps":[{"context_size":9,"a":1},{"context_size":9,"a":2}],"events":[]}`)
	diffs, _ := Diff(want, got, Options{Ignore: []string{"steps[*].context_size", "events.*", "events"}})
	if len(diffs) != 1 || diffs[0].Path != "steps[1].a" {
		t.Errorf("diffs = %v", diffs)
	}
}

func TestDiff_equalAndOrdering(t *testing.T) {
	a := doc(t, `{"steps":[`+strings.Repeat(`{"v":1},`, 11)+`{"v":1}]}`)
	b := doc(t, `{"steps":[`+strings.Repeat(`{"v":1},`, 11)+`{"v":2}]}`)
	if d, _ := Diff(a, a, Options{}); len(d) != 0 {
		t.Errorf("equal docs differ: %v", d)
	}
	d, _ := Diff(a, b, Options{})
	if len(d) != 1 || d[0].Path != "steps[11].v" {
		t.Errorf("diffs = %v", d)
	}
	if !lessPath("steps[2].x", "steps[10].x") {
		t.Error("numeric path order wrong")
	}
}

func TestLookup(t *testing.T) {
	d := doc(t, `{"a":{"b":[{"c":"x"}]},"odd key":{"k":1}}`)
	for path, want := range map[string]any{"a.b[0].c": "x", `["odd key"].k`: json.Number("1")} {
		v, ok, err := Lookup(d, path)
		if err != nil || !ok || v != want {
			t.Errorf("%s = %v %v %v", path, v, ok, err)
		}
	}
	if _, ok, _ := Lookup(d, "a.b[3].c"); ok {
		t.Error("out-of-range index found")
	}
	if _, _, err := Lookup(d, "a.b[x"); err == nil {
		t.Error("malformed path accepted")
	}
}

func TestDiff_textClass(t *testing.T) {
	class := func(p string) Class {
		if strings.HasSuffix(p, ".message") {
			return Text
		}
		return Normative
	}
	want := doc(t, `{"a":{"message":"tool \"nope\" does not exist","kind":"x"},"list":[{"message":"m"}]}`)
	for _, tc := range []struct {
		name, got string
		diffs     []string
	}{
		{"own words pass", `{"a":{"message":"unknown tool 'nope'","kind":"x"},"list":[{"message":"other"}]}`, nil},
		{"normative still exact", `{"a":{"message":"fine","kind":"y"},"list":[{"message":"m"}]}`, []string{"a.kind: want x, got y"}},
		{"empty sentence", `{"a":{"message":"","kind":"x"},"list":[{"message":"m"}]}`,
			[]string{"a.message: implementation text: want a non-empty sentence (its wording is the implementation's), got an empty string"}},
		{"stack trace", `{"a":{"message":"Traceback (most recent call last):\n  File \"x.py\", line 3","kind":"x"},"list":[{"message":"m"}]}`,
			[]string{`a.message: implementation text must not carry a stack trace (Python's), got "Traceback (most recent call last):\n  File \"x.py\", line 3"`}},
		{"not a string", `{"a":{"message":3,"kind":"x"},"list":[{"message":"m"}]}`, []string{"a.message: implementation text must be a string, got 3"}},
		{"absent is a difference", `{"a":{"kind":"x"},"list":[{"message":"m"}]}`, []string{`a.message: want "tool \"nope\" does not exist", got (absent)`}},
		{"length change aligned by go-cmp", `{"a":{"message":"x","kind":"x"},"list":[{"message":"m"},{"message":"n"}]}`, []string{`list[1]: want (absent), got {"message":"n"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diffs, err := Diff(want, doc(t, tc.got), Options{Class: class})
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, d := range diffs {
				lines = append(lines, d.String())
			}
			if strings.Join(lines, "\n") != strings.Join(tc.diffs, "\n") {
				t.Errorf("diffs:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(tc.diffs, "\n"))
			}
			strict, _ := Diff(want, doc(t, tc.got), Options{})
			if tc.name == "own words pass" && len(strict) != 2 {
				t.Errorf("strict profile (no Class) should see both rewordings, got %v", strict)
			}
		})
	}
}

// TestDiff_textEqual: with TextEqual (the strict profile) a text field is
// compared word for word and its difference keeps the class Text with no
// rule, so a report can say it is wording; an equal one is no difference.
func TestDiff_textEqual(t *testing.T) {
	want := doc(t, `{"msg":"disk full","list":["a"],"n":1}`)
	got := doc(t, `{"msg":"no space left","list":["a","b"],"n":1}`)
	class := func(p string) Class {
		if p == "msg" || strings.HasPrefix(p, "list") {
			return Text
		}
		return Normative
	}
	d, err := Diff(want, got, Options{Class: class, TextEqual: Verbatim})
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 2 || d[0].Path != "list[1]" || d[1].Path != "msg" || d[1].Class != Text || d[1].Rule != "" || !d[1].Wording || d[0].Wording || d[1].String() != `msg: want "disk full", got "no space left"` {
		t.Errorf("strict diffs = %+v", d)
	}
	// A sentence that breaks the text rule is more than wording, strict
	// or not.
	empty := doc(t, `{"msg":"","list":["a"],"n":1}`)
	if d, _ := Diff(want, empty, Options{Class: class, TextEqual: Verbatim}); len(d) != 1 || d[0].Wording || d[0].Rule == "" {
		t.Errorf("an empty sentence under strict: %+v", d)
	}
	if d, _ := Diff(want, got, Options{Class: class}); len(d) != 1 || d[0].Path != "list[1]" {
		t.Errorf("default diffs = %v (the text rule accepts other words)", d)
	}
	if d, _ := Diff(want, want, Options{Class: class, TextEqual: Verbatim}); len(d) != 0 {
		t.Errorf("equal docs differ under strict: %v", d)
	}
}

// TestVerbatim: the directory the runner draws for each run is
// masked, and nothing else is.
func TestVerbatim(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"write of /tmp/polyloop-conform-journal-1234/run/journal.jsonl failed", "write of /tmp/polyloop-conform-journal-98765/run/journal.jsonl failed", true},
		{`open "/var/folders/x/polyloop-journal-42/run": EIO`, `open "/var/folders/x/polyloop-journal-7/run": EIO`, true},
		{"write of /tmp/polyloop-conform-journal-1/run/journal.jsonl failed", "write of /tmp/polyloop-conform-journal-2/run/journal.jsonl: failed", false},
		{"record 4 failed", "record 5 failed", false},
		{"/tmp/polyloop-conform-journal-1/run", "/var/polyloop-conform-journal-1/run", false},
		{"process 41", "process 42", false},
	} {
		if got := Verbatim(tc.a, tc.b); got != tc.same {
			t.Errorf("Verbatim(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
	if Verbatim("a", nil) || !Verbatim(nil, nil) {
		t.Error("a non-string is compared exactly")
	}
}
