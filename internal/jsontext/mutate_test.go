package jsontext

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestMutations(t *testing.T) {
	doc := decode([]byte(`{"a":1,"b":[{"c":2}],"d":{"e":3}}`))
	got := Mutations(doc, []string{`null`}, func(k string) bool { return k == "d" })
	var lines []string
	for _, m := range got {
		b, _ := json.Marshal(m)
		lines = append(lines, string(b))
	}
	want := []string{
		`{"b":[{"c":2}],"d":{"e":3}}`, `{"a":null,"b":[{"c":2}],"d":{"e":3}}`, // a
		`{"a":1,"d":{"e":3}}`, `{"a":1,"b":null,"d":{"e":3}}`, // b
		`{"a":1,"b":[{"c":2}],"d":{"e":3}}`, `{"a":1,"b":[null],"d":{"e":3}}`, // b[0]: kept when removed
		`{"a":1,"b":[{}],"d":{"e":3}}`, `{"a":1,"b":[{"c":null}],"d":{"e":3}}`, // b[0].c
		`{"a":1,"b":[{"c":2}]}`, `{"a":1,"b":[{"c":2}],"d":null}`, // d, not below it
	}
	if !slices.Equal(lines, want) {
		t.Errorf("mutations:\n%v\nwant\n%v", lines, want)
	}
}

func TestInPlaceMutations(t *testing.T) {
	got := InPlaceMutations([]byte(`{"b":[{"x":1},{"y":2}],"a":"s"}`), []string{`null`})
	var texts []string
	for _, g := range got {
		texts = append(texts, string(g))
	}
	// Keys keep their order; the second list element is never changed.
	want := []string{
		`{"b":[{},{"y":2}],"a":"s"}`, `{"b":[{"X":1},{"y":2}],"a":"s"}`, `{"b":[{"x":1,"x":1},{"y":2}],"a":"s"}`, `{"b":[{"x":1,"zzz":1},{"y":2}],"a":"s"}`, `{"b":[{"x":null},{"y":2}],"a":"s"}`,
		`{"a":"s"}`, `{"B":[{"x":1},{"y":2}],"a":"s"}`, `{"b":[{"x":1},{"y":2}],"b":[{"x":1},{"y":2}],"a":"s"}`, `{"b":[{"x":1},{"y":2}],"zzz":1,"a":"s"}`, `{"b":null,"a":"s"}`,
		`{"b":[{"x":1},{"y":2}]}`, `{"b":[{"x":1},{"y":2}],"A":"s"}`, `{"b":[{"x":1},{"y":2}],"a":"s","a":"s"}`, `{"b":[{"x":1},{"y":2}],"a":"s","zzz":1}`, `{"b":[{"x":1},{"y":2}],"a":null}`,
	}
	if strings.Join(texts, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(texts, "\n"), strings.Join(want, "\n"))
	}
}
