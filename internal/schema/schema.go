// Package schema compiles this project's JSON Schemas and reports
// validation failures as JSON pointers with one readable sentence each.
package schema

import (
	"bytes"
	"errors"
	"fmt"
	"sort"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/polyloop/polyloop-conform/internal/jsontext"
)

// Schema is a compiled JSON Schema.
type Schema struct {
	s *jsonschema.Schema
}

// Compile compiles a schema document. name is used only in errors.
func Compile(name string, doc []byte) (*Schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("schema %s is not JSON: %w", name, err)
	}
	url := "mem:///" + name
	c := jsonschema.NewCompiler()
	c.UseRegexpEngine(regexpEngine)
	if err := c.AddResource(url, v); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema %s does not compile: %w", name, err)
	}
	return &Schema{s: s}, nil
}

// Problem is one validation failure.
type Problem struct {
	Pointer string // JSON pointer into the instance, "" for the root
	Message string
}

func (p Problem) String() string {
	ptr := p.Pointer
	if ptr == "" {
		ptr = "/"
	}
	return ptr + ": " + p.Message
}

var printer = message.NewPrinter(language.English)

// Validate checks an instance (decoded with encoding/json or DecodeJSON)
// and returns the leaf failures sorted by pointer. An empty result means
// the instance is valid.
func (s *Schema) Validate(instance any) []Problem {
	err := s.s.Validate(instance)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{Message: err.Error()}}
	}
	var out []Problem
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Problem{Pointer: jsontext.Pointer(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(printer)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return dedupe(out)
}

func dedupe(ps []Problem) []Problem {
	var out []Problem
	seen := map[Problem]bool{}
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// DecodeJSON decodes JSON the way the validator expects (numbers kept
// exact).
func DecodeJSON(data []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}
