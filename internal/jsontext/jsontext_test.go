package jsontext

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestMarshalKeepsTextAndNumbers(t *testing.T) {
	got, err := Marshal(map[string]any{"b": "<x> & “本市”", "a": json.Number("10.50")})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":10.50,"b":"<x> & “本市”"}`; string(got) != want {
		t.Errorf("Marshal = %s, want %s", got, want)
	}
	var buf bytes.Buffer
	if err := NewEncoder(&buf, "  ").Encode(map[string]int{"k": 1}); err != nil || buf.String() != "{\n  \"k\": 1\n}\n" {
		t.Errorf("indented: %q %v", buf.String(), err)
	}
}
