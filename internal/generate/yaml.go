package generate

import (
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// marshalYAML writes a generated scenario. A string that holds a tab, or
// another white-space character than the space and the line feed (a
// no-break space, U+3000), is written double-quoted (escaped), and so is one that starts with white
// space: the encoder
// would put it in a literal block, where a line that starts with a tab
// does not read back (a tab is no indentation in YAML) and one that starts
// with a no-break space does not either, and a generated scenario must
// load as written.
func marshalYAML(v any) ([]byte, error) {
	return yaml.Marshal(quoteTabs(v))
}

// needsQuotes reports whether the encoder's own choice of style for x may
// not read back: x holds a tab or another white-space character than the
// space and the line feed, or starts with white space (a block scalar
// with an indentation indicator under a nested sequence does not).
func needsQuotes(x string) bool {
	return strings.ContainsFunc(x, func(c rune) bool { return unicode.IsSpace(c) && c != ' ' && c != '\n' }) ||
		strings.HasPrefix(x, "\n") || strings.HasPrefix(x, " ")
}

// quoteTabs returns v with every string that holds a tab or another
// unusual white-space character replaced by a double-quoted scalar node;
// maps and slices are copied.
func quoteTabs(v any) any {
	switch x := v.(type) {
	case string:
		if needsQuotes(x) {
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
