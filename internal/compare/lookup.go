package compare

import (
	"fmt"
	"strconv"
	"strings"
)

// Lookup returns the value at a path (steps[0].outcome.status) inside a
// plain JSON value; ok is false when some step of the path is absent.
func Lookup(doc any, path string) (v any, ok bool, err error) {
	toks, err := parsePath(path)
	if err != nil {
		return nil, false, err
	}
	cur := doc
	for _, t := range toks {
		switch c := cur.(type) {
		case map[string]any:
			if t.isIndex {
				return nil, false, nil
			}
			cur, ok = c[t.key]
			if !ok {
				return nil, false, nil
			}
		case []any:
			if !t.isIndex || t.index < 0 || t.index >= len(c) {
				return nil, false, nil
			}
			cur = c[t.index]
		default:
			return nil, false, nil
		}
	}
	return cur, true, nil
}

type token struct {
	key     string
	index   int
	isIndex bool
}

func parsePath(p string) ([]token, error) {
	var out []token
	i := 0
	for i < len(p) {
		switch p[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("path %q: unclosed [", p)
			}
			inner := p[i+1 : i+end]
			if strings.HasPrefix(inner, `"`) {
				s, err := strconv.Unquote(inner)
				if err != nil {
					return nil, fmt.Errorf("path %q: bad quoted key %s", p, inner)
				}
				out = append(out, token{key: s})
			} else {
				n, err := strconv.Atoi(inner)
				if err != nil {
					return nil, fmt.Errorf("path %q: %q is not an array position", p, inner)
				}
				out = append(out, token{index: n, isIndex: true})
			}
			i += end + 1
		default:
			j := i
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			out = append(out, token{key: p[i:j]})
			i = j
		}
	}
	return out, nil
}
