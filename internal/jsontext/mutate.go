package jsontext

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"unicode"
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

// InPlaceMutations returns compact, valid JSON data broken in one place each, keys kept in
// their order: for every object member down to the first element of every
// list, the member removed, its key's first letter upper-cased, the
// member doubled, an unknown key after it, and its value replaced by each
// of values. Unlike Mutations, which re-encodes a decoded document (keys
// sorted), the text around each change stays as it was: a decoder that
// takes a fast path only for one key order is judged on that path.
func InPlaceMutations(data []byte, values []string) [][]byte {
	var members []member
	scanValue(data, 0, &members)
	var out [][]byte
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, m := range members {
		before, after := data[:m.start], data[m.end:]
		whole, key := data[m.start:m.end], data[m.start:m.colon]
		switch {
		case len(after) > 0 && after[0] == ',':
			out = append(out, cat(before, after[1:]))
		case len(before) > 0 && before[len(before)-1] == ',':
			out = append(out, cat(before[:len(before)-1], after))
		default:
			out = append(out, cat(before, after))
		}
		upper := []rune(string(key[1:]))
		upper[0] = unicode.ToUpper(upper[0])
		out = append(out,
			cat(before, []byte(`"`+string(upper)), data[m.colon:]),
			cat(before, whole, []byte(","), whole, after),
			cat(before, whole, []byte(`,"zzz":1`), after))
		for _, v := range values {
			out = append(out, cat(data[:m.colon+1], []byte(v), after))
		}
	}
	return out
}

// member is one object member of a compact JSON text: the key from start,
// its colon, the value to end.
type member struct{ start, colon, end int }

// scanValue returns the end of the JSON value of compact, valid data at
// i, appending the members it holds to out (for a list, only those of its
// first element; out nil records nothing).
func scanValue(data []byte, i int, out *[]member) int {
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{':
		i++
		for data[i] != '}' {
			start := i
			colon := skipString(data, i)
			end := scanValue(data, colon+1, out)
			if out != nil {
				*out = append(*out, member{start, colon, end})
			}
			i = end
			if data[i] == ',' {
				i++
			}
		}
		return i + 1
	case '[':
		i++
		for first := true; data[i] != ']'; first = false {
			rec := out
			if !first {
				rec = nil
			}
			i = scanValue(data, i, rec)
			if data[i] == ',' {
				i++
			}
		}
		return i + 1
	}
	for i < len(data) && !strings.ContainsRune(",}]", rune(data[i])) {
		i++
	}
	return i
}

func skipString(data []byte, i int) int {
	for i++; data[i] != '"'; i++ {
		if data[i] == '\\' {
			i++
		}
	}
	return i + 1
}
