package tools_test

import (
	"testing"

	"github.com/polyloop/polyloop-conform/reference/tools"
)

// A tool whose name cannot stand in a URL as it is (generate draws Chinese
// names) still compiles a schema with a local $ref: the compiler once
// percent-encoded the resource's URL and could not load it back
// (generate, seed 1, case 2293).
func TestNewRegistry_nonASCIINameWithLocalRef(t *testing.T) {
	params := map[string]any{
		"type":       "object",
		"$defs":      map[string]any{"page": map[string]any{"type": "integer", "minimum": 1}},
		"properties": map[string]any{"page": map[string]any{"$ref": "#/$defs/page"}},
	}
	for _, name := range []string{"归档批次", "two words", "ascii_name"} {
		if _, err := tools.NewRegistry(tools.ToolSpec{Name: name, Parameters: params}); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
}
