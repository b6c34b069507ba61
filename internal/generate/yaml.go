package generate

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// marshalYAML writes a generated scenario. A string that holds a tab is
// written double-quoted (a tab escaped as \t): the encoder would put it in
// a literal block, where a line that starts with a tab does not read back
// (a tab is no indentation in YAML), and a generated scenario must load as
// written.
func marshalYAML(v any) ([]byte, error) {
	return yaml.Marshal(quoteTabs(v))
}

// quoteTabs returns v with every string that holds a tab replaced by a
// double-quoted scalar node; maps and slices are copied.
func quoteTabs(v any) any {
	switch x := v.(type) {
	case string:
		if strings.ContainsRune(x, '\t') {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x, Style: yaml.DoubleQuotedStyle}
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = quoteTabs(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = quoteTabs(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = quoteTabs(e)
		}
		return out
	}
	return v
}
