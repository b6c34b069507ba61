package generate

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestMarshalYAML_tabs: a text that starts a line with a tab (a fenced
// action indented by a tab, drawn by the whitespace variants) reads back
// as written.
func TestMarshalYAML_tabs(t *testing.T) {
	want := []string{"\t```json\n{\"a\": 1}\n  ```\n", "a\tb", "plain\nlines\n",
		"\n\n```json\n{}\n```", "\u00a0```json\n{}\n```", "```json\n{}\n```\u3000", " lead\nx"}
	model := make([]any, len(want))
	for i, w := range want {
		model[i] = w
	}
	data, err := marshalYAML(map[string]any{"req": map[string]any{"model": model}, "ids": []string{"x\ty"}})
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Req struct{ Model []string }
		IDs []string `yaml:"ids"`
	}
	if err := yaml.Unmarshal(data, &back); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	for i := range want {
		if back.Req.Model[i] != want[i] {
			t.Errorf("model[%d] = %q, want %q", i, back.Req.Model[i], want[i])
		}
	}
	if len(back.IDs) != 1 || back.IDs[0] != "x\ty" {
		t.Errorf("ids = %q", back.IDs)
	}
}
