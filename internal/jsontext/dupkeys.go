package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DuplicateKeyError is an object that names one key twice. encoding/json
// keeps the last copy and a JSON Schema validator may judge the first, so
// a document with a duplicate key means two different things to two
// readers; the suite refuses it instead of picking one.
type DuplicateKeyError struct {
	// Pointer is the RFC 6901 pointer of the second occurrence.
	Pointer string
}

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("duplicate key at %s: an object names this key twice, and readers disagree on which copy counts; send each key once", e.Pointer)
}

// CheckDuplicateKeys reports the first object key that appears twice in
// one object of data, as a *DuplicateKeyError with its JSON pointer. Data
// that is not valid JSON is left to the caller's decoder: only a syntax
// error is returned then, without a pointer.
func CheckDuplicateKeys(data []byte) error {
	if json.Valid(data) && !hasDuplicateKey(data) {
		// The common case, on every protocol line: one pass over the
		// bytes, no tokens. Only a duplicate (or invalid JSON) takes the
		// walk, which knows where it is.
		return nil
	}
	return checkByWalk(data)
}

// CheckDuplicateKeysOfValid is CheckDuplicateKeys for data the caller
// has already checked with json.Valid: one scan less.
func CheckDuplicateKeysOfValid(data []byte) error {
	if !hasDuplicateKey(data) {
		return nil
	}
	return checkByWalk(data)
}

// checkByWalk is CheckDuplicateKeys token by token, with the pointer.
func checkByWalk(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var path []string
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		switch d {
		case '{':
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				path = append(path, k)
				if seen[k] {
					return &DuplicateKeyError{Pointer: Pointer(path)}
				}
				seen[k] = true
				if err := walk(); err != nil {
					return err
				}
				path = path[:len(path)-1]
			}
		case '[':
			for i := 0; dec.More(); i++ {
				path = append(path, strconv.Itoa(i))
				if err := walk(); err != nil {
					return err
				}
				path = path[:len(path)-1]
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	if err := walk(); err != nil {
		if errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

// Pointer renders path as an RFC 6901 JSON pointer ("" is the root).
func Pointer(path []string) string {
	var b strings.Builder
	for _, t := range path {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// hasDuplicateKey scans valid JSON for an object that names a key twice.
// Keys are compared as decoded: "a" and "\u0061" are the same key.
//
// It runs on every protocol line, so it allocates almost nothing: a key
// without escapes is compared in place, as a slice of data, and the keys
// of all open objects share one stack (an object's keys are the segment
// from its start to the next open object's, dropped when it closes).
func hasDuplicateKey(data []byte) bool {
	type scope struct {
		object bool
		start  int             // where its keys begin in keys
		set    map[string]bool // its keys, once there are many
	}
	var scopeBuf [16]scope
	var keyBuf [64][]byte
	stack, keys := scopeBuf[:0], keyBuf[:0]
	for i := 0; i < len(data); {
		switch data[i] {
		case '{', '[':
			stack = append(stack, scope{object: data[i] == '{', start: len(keys)})
			i++
		case '}', ']':
			keys = keys[:stack[len(stack)-1].start]
			stack = stack[:len(stack)-1]
			i++
		case '"':
			j, escaped, high := i+1, false, false
			for data[j] != '"' {
				if data[j] == '\\' {
					escaped = true
					j++
				} else if data[j] >= utf8.RuneSelf {
					high = true
				}
				j++
			}
			raw := data[i : j+1]
			i = j + 1
			k := i
			for k < len(data) && (data[k] == ' ' || data[k] == '\t' || data[k] == '\n' || data[k] == '\r') {
				k++
			}
			top := len(stack) - 1
			if top < 0 || !stack[top].object || k >= len(data) || data[k] != ':' {
				continue // a value, not a key
			}
			key := raw[1 : len(raw)-1]
			// A reader decodes escapes, and turns each byte of invalid
			// UTF-8 into U+FFFD: "\xff" and "\xe1" are then one key.
			if escaped || (high && !utf8.Valid(key)) {
				var decoded string
				if err := json.Unmarshal(raw, &decoded); err != nil {
					return true // let the walk report it
				}
				key = []byte(decoded)
			}
			sc := &stack[top]
			if sc.set != nil {
				if sc.set[string(key)] {
					return true
				}
				sc.set[string(key)] = true
				continue
			}
			for _, seen := range keys[sc.start:] {
				if bytes.Equal(seen, key) {
					return true
				}
			}
			keys = append(keys, key)
			if len(keys)-sc.start > 16 {
				// A long object: a set, so a line of many keys stays linear.
				sc.set = make(map[string]bool, 2*(len(keys)-sc.start))
				for _, seen := range keys[sc.start:] {
					sc.set[string(seen)] = true
				}
				keys = keys[:sc.start]
			}
		default:
			i++
		}
	}
	return false
}
