package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
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
func hasDuplicateKey(data []byte) bool {
	type scope struct {
		object bool
		keys   []string        // the object's keys so far
		set    map[string]bool // the same, once there are many
	}
	var stack []scope
	for i := 0; i < len(data); {
		switch data[i] {
		case '{':
			stack = append(stack, scope{object: true})
			i++
		case '[':
			stack = append(stack, scope{})
			i++
		case '}', ']':
			stack = stack[:len(stack)-1]
			i++
		case '"':
			j, escaped := i+1, false
			for data[j] != '"' {
				if data[j] == '\\' {
					escaped = true
					j++
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
			key := string(raw[1 : len(raw)-1])
			if escaped {
				if err := json.Unmarshal(raw, &key); err != nil {
					return true // let the walk report it
				}
			}
			sc := &stack[top]
			if sc.set != nil {
				if sc.set[key] {
					return true
				}
				sc.set[key] = true
				continue
			}
			if slices.Contains(sc.keys, key) {
				return true
			}
			sc.keys = append(sc.keys, key)
			if len(sc.keys) > 16 {
				// A long object: a set, so a line of many keys stays linear.
				sc.set = make(map[string]bool, 2*len(sc.keys))
				for _, k := range sc.keys {
					sc.set[k] = true
				}
			}
		default:
			i++
		}
	}
	return false
}
