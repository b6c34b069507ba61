package knownfail

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	l, err := Parse("kf.txt", []byte("# header\n\nparse.*   # parser lacks fences\nresume.never-*#no journal\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 2 || l.Entries[0].Line != 3 || l.Entries[1].Reason != "no journal" {
		t.Fatalf("entries = %+v", l.Entries)
	}
	if e, ok := l.Match("parse.fenced-json"); !ok || e.Pattern != "parse.*" {
		t.Error("glob did not match")
	}
	if _, ok := l.Match("outcome.env-error"); ok {
		t.Error("matched an unlisted id")
	}
	if un := l.Unmatched([]string{"parse.a"}); len(un) != 1 || un[0].Pattern != "resume.never-*" {
		t.Errorf("unmatched = %+v", un)
	}
	for body, want := range map[string]string{
		"parse.*\n":        "kf.txt:1: \"parse.*\" has no reason",
		"parse.*  #  \n":   "has no reason",
		"a b # two\n":      "holds white space",
		"parse.[  # bad\n": "not a valid glob",
	} {
		if _, err := Parse("kf.txt", []byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", body, err, want)
		}
	}
}
