package trajectories

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/polyloop/polyloop-conform/internal/jsontext"
	"github.com/polyloop/polyloop-conform/internal/schema"
)

// SchemaFile is the schema's file name beside the goldens.
const SchemaFile = "trajectory.schema.json"

// MaxBytes bounds a trajectory file; larger input is refused before parsing.
const MaxBytes = 64 << 20

var compiled = sync.OnceValues(func() (*schema.Schema, error) {
	doc, err := embedded.ReadFile(SchemaFile)
	if err != nil {
		return nil, err
	}
	return schema.Compile(SchemaFile, doc)
})

// Schema returns the compiled trajectory schema.
func Schema() (*schema.Schema, error) { return compiled() }

var compiledLite = sync.OnceValues(func() (*schema.Lite, error) {
	doc, err := embedded.ReadFile(SchemaFile)
	if err != nil {
		return nil, err
	}
	return schema.CompileLite(SchemaFile, doc)
})

// LiteSchema returns the trajectory schema compiled for schema.Lite, the
// fast walk the runner applies to every result it receives; it gives the
// verdicts of Schema (TestLiteAgreesWithTheSchema).
func LiteSchema() (*schema.Lite, error) { return compiledLite() }

// InvalidError lists every schema problem of one trajectory file.
type InvalidError struct {
	Name     string
	Problems []schema.Problem
}

func (e *InvalidError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: not a valid %s trajectory (%d problems):", e.Name, Format, len(e.Problems))
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  %s", p)
	}
	return b.String()
}

// validate checks a decoded trajectory against the schema: the fast walk
// decides (it gives the general validator's verdicts, which
// TestLiteAgreesWithTheSchema holds it to), and only a trajectory it
// refuses goes through the general validator, whose problems are the ones
// reported, so no message changes with the speed.
func validate(name string, doc any) error {
	lite, err := LiteSchema()
	if err != nil {
		return err
	}
	if len(lite.Validate(doc)) == 0 {
		return nil
	}
	sch, err := Schema()
	if err != nil {
		return err
	}
	if probs := sch.Validate(doc); len(probs) > 0 {
		return &InvalidError{Name: name, Problems: probs}
	}
	return nil
}

// Parse validates data against the schema, then decodes it. name is used
// in errors (a file path, or "stdin").
func Parse(name string, data []byte) (*Trajectory, any, error) {
	if len(data) > MaxBytes {
		return nil, nil, fmt.Errorf("%s: %d bytes is over the %d-byte trajectory limit", name, len(data), MaxBytes)
	}
	doc, err := schema.DecodeJSON(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: not JSON: %w", name, err)
	}
	if err := jsontext.CheckDuplicateKeys(data); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := validate(name, doc); err != nil {
		return nil, nil, err
	}
	var t Trajectory
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&t); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	generic, err := ToGeneric(&t)
	if err != nil {
		return nil, nil, err
	}
	return &t, generic, nil
}

// ToGeneric renders a trajectory as plain JSON values (maps, slices,
// json.Number), the form comparison and expectations work on.
func ToGeneric(t *Trajectory) (any, error) {
	t.Normalize()
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Normalize replaces absent lists with empty ones, so a trajectory written
// with null and one written with [] compare equal.
func (t *Trajectory) Normalize() {
	if t.Steps == nil {
		t.Steps = []Step{}
	}
	if t.HandlerCalls == nil {
		t.HandlerCalls = []HandlerCall{}
	}
	if t.Events == nil {
		t.Events = []Event{}
	}
	if t.AssemblyError != nil && t.AssemblyError.Tools == nil {
		t.AssemblyError.Tools = []string{}
	}
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Action.Repairs == nil {
			s.Action.Repairs = []string{}
		}
		if s.ModelInput == nil {
			s.ModelInput = []Message{}
		}
	}
	for i := range t.HandlerCalls {
		if t.HandlerCalls[i].Arguments == nil {
			t.HandlerCalls[i].Arguments = map[string]any{}
		}
	}
}
