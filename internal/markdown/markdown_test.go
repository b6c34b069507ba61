package markdown

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestSections(t *testing.T) {
	doc := "intro\n## A1 — one\nbody 1\n\r\n### sub\nkept\n## other\nleft out\n## A2 — two\nlast\r\n"
	start := regexp.MustCompile(`^## (A[0-9]) — (.*)$`)
	ends := func(line string) bool { return strings.HasPrefix(line, "## ") }
	got, err := Sections([]byte(doc), start, ends)
	if err != nil {
		t.Fatal(err)
	}
	want := []Section{
		{Match: []string{"## A1 — one", "A1", "one"}, Line: 2, Lines: []string{"## A1 — one", "body 1", "", "### sub", "kept"}},
		{Match: []string{"## A2 — two", "A2", "two"}, Line: 9, Lines: []string{"## A2 — two", "last"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
}

func TestSectionsRefusesOverlongLine(t *testing.T) {
	doc := "## A1 — x\n" + strings.Repeat("y", MaxLine+1) + "\n"
	if _, err := Sections([]byte(doc), regexp.MustCompile(`^## (A1)`), func(string) bool { return false }); err == nil {
		t.Error("a line over MaxLine passed")
	}
}
