package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
