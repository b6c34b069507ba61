package jsontext

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSameNumber(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"2", "2", true},
		{"2", "2.0", true},
		{"1e0", "1.0", true},
		{"1E+0", "1", true},
		{"10", "10.000", true},
		{"-0.5e+3", "-500", true},
		{"0", "-0", true},
		{"0.1", "1e-1", true},
		{"2", "2.5", false},
		{"1", "-1", false},
		{"9007199254740993", "9007199254740992", false}, // exact, not float64
		{"1e999999", "1e999999", true},                  // out of range: by text
		{"1e999999", "1e999998", false},
	} {
		if got := SameNumber(json.Number(c.a), json.Number(c.b)); got != c.same {
			t.Errorf("SameNumber(%s, %s) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

func TestCanonical(t *testing.T) {
	var v any
	dec := json.NewDecoder(strings.NewReader(`{"w":2.0,"h":1e0,"a":[3E1,-0.5e+3,0.25,1e-7],"s":"1e0","big":1e30,"n":null}`))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	got, err := Marshal(Canonical(v))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":[30,-500,0.25,1e-7],"big":1e+30,"h":1,"n":null,"s":"1e0","w":2}`
	if string(got) != want {
		t.Errorf("Canonical:\n got %s\nwant %s", got, want)
	}
	// The input is left as it was.
	if m := v.(map[string]any); m["w"] != json.Number("2.0") {
		t.Errorf("Canonical changed its input: w = %v", m["w"])
	}
}
