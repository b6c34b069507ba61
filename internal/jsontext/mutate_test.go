package jsontext

import (
	"encoding/json"
	"slices"
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
