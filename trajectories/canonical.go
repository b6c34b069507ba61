package trajectories

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/polyloop/polyloop-conform/internal/jsontext"
	"github.com/polyloop/polyloop-conform/internal/schema"
)

// DecodeChecked is the one-pass path for a trajectory received over the
// wire: it decodes data into a Trajectory once (numbers as written) and
// reports ok only when the schema would accept data, proved on the struct
// instead of on a generic document:
//
//   - data is exactly the struct's own encoding (compact, keys in field
//     order, the encoder's escapes): so every key is a field of the struct,
//     each of which is a property of the schema, every required property
//     is present (required properties are fields without omitempty), no
//     key is spelled in another case or given twice, and every value has
//     its field's JSON type (a string is a string, an int an integer
//     written without a fraction, a bool a boolean, a null only where the
//     field is a nil pointer, slice or map);
//   - the struct meets the schema's other keywords: const, enum, pattern,
//     minimum, minLength, and "array" or "object" where a nil would encode
//     as a null the schema does not allow. Their values are read from
//     trajectory.schema.json itself (checks), so the two cannot drift.
//
// ok false says nothing either way (another implementation may order its
// keys differently, or write "é" as "\u00e9"): the caller then validates
// data against the schema, which decides and words the failure.
// TestDecodeCheckedAgreesWithTheSchema holds the two to the same verdicts;
// TestStructMatchesTheSchema holds the struct's fields to the schema's
// properties.
func DecodeChecked(data []byte) (*Trajectory, bool) {
	c, err := checks()
	if err != nil {
		return nil, false
	}
	var t Trajectory
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&t) != nil || !c.meets(&t) {
		return nil, false
	}
	if !EncodesAs(&t, data) {
		return nil, false
	}
	return &t, true
}

// Conforms reports whether t meets the schema's keywords that its
// encoding does not already prove (DecodeChecked): a caller that decodes a
// trajectory inside a larger message in one pass, and proves that message
// is its own encoding, checks the trajectory with it.
func Conforms(t *Trajectory) bool {
	c, err := checks()
	return err == nil && t != nil && c.meets(t)
}

// EncodesAs reports whether data is v's own encoding (jsontext's encoder,
// compact) up to insignificant white space.
func EncodesAs(v any, data []byte) bool {
	var buf bytes.Buffer
	buf.Grow(len(data) + 1)
	if jsontext.NewEncoder(&buf, "").Encode(v) != nil {
		return false
	}
	enc := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if bytes.Equal(enc, data) {
		return true
	}
	// The same text with insignificant white space (a pretty-printing
	// sender) is the same document.
	var compact bytes.Buffer
	return json.Compact(&compact, data) == nil && bytes.Equal(enc, compact.Bytes())
}

// structChecks are the schema's keyword values that the struct is tested
// against, each read from the schema at the pointer named beside it.
type structChecks struct {
	format                                       string
	scenario                                     func(string) bool
	assemblyKindMin                              int
	runErrorKinds, interruptedDuring, resumeFrom []string
	roles, actionKinds, statuses                 []string
	eventTypes, eventStatuses, reasons           []string
	detailDuring                                 []string
	// minimum of each integer field, by the field's pointer.
	min map[string]int
}

// Pointers of the integer fields' minimum, as minimum() names them.
const (
	minModelCalls        = "/properties/model_calls/minimum"
	minModelCallsRelease = "/properties/model_calls_released/minimum"
	minSinkFailures      = "/properties/event_sink_failures/minimum"
	minInterruptedStep   = "/properties/interrupted/properties/step/minimum"
	minReplayedStep      = "/properties/resume/properties/replayed_step/minimum"
	minStepIndex         = "/$defs/step/properties/index/minimum"
	minContextSize       = "/$defs/step/properties/context_size/minimum"
	minTruncated         = "/$defs/step/properties/outcome/properties/observation_truncated_chars/minimum"
	minEffective         = "/$defs/counters/properties/effective_steps/minimum"
	minTotal             = "/$defs/counters/properties/total_steps/minimum"
	minEventStep         = "/$defs/event/properties/step/minimum"
	minEndEffective      = "/$defs/end/properties/effective_steps/minimum"
	minEndTotal          = "/$defs/end/properties/total_steps/minimum"
	minDetailStep        = "/$defs/end/properties/detail/properties/step/minimum"
)

var checks = sync.OnceValues(func() (*structChecks, error) {
	data, err := embedded.ReadFile(SchemaFile)
	if err != nil {
		return nil, err
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	r := schemaReader{doc: doc}
	c := &structChecks{
		format:            r.str("/properties/format/const"),
		assemblyKindMin:   r.integer("/properties/assembly_error/oneOf/1/properties/kind/minLength"),
		runErrorKinds:     r.strs("/properties/run_error/properties/kind/enum"),
		interruptedDuring: r.strs("/properties/interrupted/properties/during/enum"),
		resumeFrom:        r.strs("/properties/resume/properties/from/enum"),
		roles:             r.strs("/$defs/message/properties/role/enum"),
		actionKinds:       r.strs("/$defs/step/properties/action/properties/kind/enum"),
		statuses:          r.strs("/$defs/step/properties/outcome/properties/status/enum"),
		eventTypes:        r.strs("/$defs/event/properties/type/enum"),
		eventStatuses:     r.strs("/$defs/event/properties/status/enum"),
		reasons:           r.strs("/$defs/reason/enum"),
		detailDuring:      r.strs("/$defs/end/properties/detail/properties/during/enum"),
		min:               map[string]int{},
	}
	for _, p := range []string{minModelCalls, minModelCallsRelease, minSinkFailures, minInterruptedStep, minReplayedStep,
		minStepIndex, minContextSize, minTruncated, minEffective, minTotal, minEventStep, minEndEffective, minEndTotal, minDetailStep} {
		c.min[p] = r.integer(p)
	}
	if r.err == nil {
		c.scenario, r.err = schema.CompilePattern(r.str("/$defs/scenarioId/pattern"))
	}
	if r.err != nil {
		return nil, fmt.Errorf("%s: %w", SchemaFile, r.err)
	}
	return c, nil
})

// schemaReader reads keyword values out of the decoded schema by JSON
// pointer; the first that is missing or of another type is its error.
type schemaReader struct {
	doc any
	err error
}

func (r *schemaReader) at(ptr string) any {
	v := r.doc
	for _, tok := range strings.Split(ptr, "/")[1:] {
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			var i int
			if _, err := fmt.Sscan(tok, &i); err != nil || i < 0 || i >= len(x) {
				v = nil
			} else {
				v = x[i]
			}
		default:
			v = nil
		}
	}
	if v == nil && r.err == nil {
		r.err = fmt.Errorf("no keyword at %s, which the struct checks read (trajectories/canonical.go)", ptr)
	}
	return v
}

func (r *schemaReader) str(ptr string) string {
	s, ok := r.at(ptr).(string)
	if !ok && r.err == nil {
		r.err = fmt.Errorf("%s is not a string", ptr)
	}
	return s
}

func (r *schemaReader) strs(ptr string) []string {
	vs, _ := r.at(ptr).([]any)
	var out []string
	for _, v := range vs {
		s, ok := v.(string)
		if !ok && r.err == nil {
			r.err = fmt.Errorf("%s holds a value that is not a string", ptr)
		}
		out = append(out, s)
	}
	if len(out) == 0 && r.err == nil {
		r.err = fmt.Errorf("%s is not a list of strings", ptr)
	}
	return out
}

func (r *schemaReader) integer(ptr string) int {
	n, ok := r.at(ptr).(json.Number)
	i, err := n.Int64()
	if (!ok || err != nil) && r.err == nil {
		r.err = fmt.Errorf("%s is not an integer", ptr)
	}
	return int(i)
}

// meets reports whether t keeps every keyword of the schema that its
// encoding does not already prove (DecodeChecked).
func (c *structChecks) meets(t *Trajectory) bool {
	in := slices.Contains[[]string]
	atLeast := func(n int, ptr string) bool { return n >= c.min[ptr] }
	// omitempty: a zero is not sent, so only a value sent is checked.
	optionalAtLeast := func(n int, ptr string) bool { return n == 0 || n >= c.min[ptr] }
	optionalIn := func(vs []string, s string) bool { return s == "" || in(vs, s) }
	if t.Format != c.format || !c.scenario(t.Scenario) ||
		!atLeast(t.ModelCalls, minModelCalls) || !optionalAtLeast(t.ModelCallsReleased, minModelCallsRelease) ||
		!atLeast(t.EventSinkFailures, minSinkFailures) {
		return false
	}
	if a := t.AssemblyError; a != nil && utf8.RuneCountInString(a.Kind) < c.assemblyKindMin {
		return false
	}
	for i := range t.Steps {
		if !c.stepMeets(&t.Steps[i]) {
			return false
		}
	}
	for i := range t.Events {
		e := &t.Events[i]
		if !in(c.eventTypes, e.Type) || !optionalAtLeast(e.Step, minEventStep) ||
			!optionalIn(c.eventStatuses, e.Status) || !optionalIn(c.reasons, e.Reason) {
			return false
		}
	}
	if t.End != nil && !c.endMeets(t.End) {
		return false
	}
	for i := range t.Phases {
		if !c.endMeets(&t.Phases[i].End) {
			return false
		}
	}
	if e := t.RunError; e != nil && !in(c.runErrorKinds, e.Kind) {
		return false
	}
	if x := t.Interrupted; x != nil && (!atLeast(x.Step, minInterruptedStep) || !in(c.interruptedDuring, x.During)) {
		return false
	}
	if r := t.Resume; r != nil && (!in(c.resumeFrom, r.From) || !optionalAtLeast(r.ReplayedStep, minReplayedStep)) {
		return false
	}
	return true
}

func (c *structChecks) stepMeets(s *Step) bool {
	// model_input is "array" only: a nil slice would be sent as null.
	if s.ModelInput == nil || s.Index < c.min[minStepIndex] || s.ContextSize < c.min[minContextSize] ||
		!slices.Contains(c.actionKinds, s.Action.Kind) || !slices.Contains(c.statuses, s.Outcome.Status) ||
		s.Outcome.ObservationTruncatedChars < c.min[minTruncated] ||
		s.Counters.EffectiveSteps < c.min[minEffective] || s.Counters.TotalSteps < c.min[minTotal] {
		return false
	}
	// arguments is "object"; decoded into an interface it may hold any
	// JSON value (nil is not sent: omitempty).
	if s.Action.Arguments != nil {
		if _, ok := s.Action.Arguments.(map[string]any); !ok {
			return false
		}
	}
	for _, m := range s.ModelInput {
		if !slices.Contains(c.roles, m.Role) {
			return false
		}
	}
	return true
}

func (c *structChecks) endMeets(e *End) bool {
	if !slices.Contains(c.reasons, e.Reason) || e.EffectiveSteps < c.min[minEndEffective] || e.TotalSteps < c.min[minEndTotal] {
		return false
	}
	if d := e.Detail; d != nil && (d.Step < c.min[minDetailStep] || (d.During != "" && !slices.Contains(c.detailDuring, d.During))) {
		return false
	}
	return true
}
