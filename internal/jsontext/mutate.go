package jsontext

import (
	"bytes"
	"encoding/json"
	"sort"
)

// Mutations returns the documents that differ from doc (decoded JSON, with
// UseNumber) in one place: each key removed, and each value replaced by
// each of values (JSON texts). It walks objects and the first element of
// every array; below a key for which skip returns true it does not go
// (the key itself is still removed and replaced). Tests use it to feed a
// corpus of broken documents to two validators that must agree.
func Mutations(doc any, values []string, skip func(key string) bool) []any {
	var out []any
	for _, path := range keyPaths(doc, nil, skip) {
		out = append(out, edit(doc, path, nil, true))
		for _, v := range values {
			out = append(out, edit(doc, path, decode([]byte(v)), false))
		}
	}
	return out
}

func keyPaths(v any, prefix []string, skip func(string) bool) [][]string {
	var out [][]string
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := append(append([]string(nil), prefix...), k)
			out = append(out, p)
			if skip == nil || !skip(k) {
				out = append(out, keyPaths(x[k], p, skip)...)
			}
		}
	case []any:
		if len(x) > 0 {
			p := append(append([]string(nil), prefix...), "0")
			out = append(out, p)
			out = append(out, keyPaths(x[0], p, skip)...)
		}
	}
	return out
}

// edit returns a copy of doc with the value at path replaced, or its key
// removed (an array element is never removed).
func edit(doc any, path []string, value any, remove bool) any {
	data, _ := json.Marshal(doc)
	cp := decode(data)
	cur := cp
	for i, k := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case map[string]any:
			switch {
			case last && remove:
				delete(c, k)
			case last:
				c[k] = value
			default:
				cur = c[k]
			}
		case []any:
			switch {
			case last && !remove:
				c[0] = value
			case !last:
				cur = c[0]
			}
		}
	}
	return cp
}

func decode(data []byte) any {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}
