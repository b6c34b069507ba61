package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/polyloop/polyloop-conform/internal/schema"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// The implementation's messages are checked by their own Go code, one
// shape per type, instead of a generic JSON Schema walk on every line:
// the checks are the schema's (docs/protocol.schema.json stays the
// published contract), and TestTypedDecodeAgreesWithTheSchema feeds both a
// corpus of valid and broken messages and requires the same verdicts.
// The runner's own messages (run, answers, fork), which the runner builds
// from its types and reads back only from transcripts, keep the schema.

// shape is one message type's keys.
type shape struct {
	required []string
	optional []string
}

var shapes = map[string]shape{
	TypeHello:        {required: []string{"type", "protocol"}, optional: []string{"suite", "suite_version", "name", "version", "spec_version", "capabilities"}},
	TypeModelCall:    {required: []string{"type", "call", "phase", "input"}},
	TypeHandlerCall:  {required: []string{"type", "call", "phase", "tool"}, optional: []string{"arguments"}},
	TypeExecuteCall:  {required: []string{"type", "call", "phase", "action"}},
	TypeJournalPoint: {required: []string{"type", "call", "point"}, optional: []string{"phase"}},
	TypeReleased:     {required: []string{"type", "call"}},
	TypeResult:       {required: []string{"type", "id", "trajectory"}},
	TypeError:        {required: []string{"type", "message"}, optional: []string{"id"}},
	TypeEvent:        {required: []string{"type", "call", "phase", "event"}},
	TypeMeasureCall:  {required: []string{"type", "call", "phase", "block", "text"}},
	TypeForked:       {required: []string{"type", "pid"}},
}

var (
	capabilityNames = []string{"json-actions", "code-actions", "resume", "cancellation", "context-assembly", "events", "project-executor",
		WireSink, WireMeasure, JournalLines, ForkServer}
	blockTypes  = []string{"run_fragment", "injection", "goal_fragment", "model_output", "observation"}
	recordTypes = []string{"run_started", "model_output", "action_intent", "action_result", "run_end"}
)

// typedDecode checks and decodes one message of a type in shapes, from
// its top-level keys.
// Problems are written as the schema's are: the JSON pointer, then what
// is wrong.
func typedDecode(top map[string]json.RawMessage, typ string) (*Message, error) {
	sh := shapes[typ]
	bad := func(ptr, format string, args ...any) error {
		return fmt.Errorf("%w: does not match %s: at %s: %s", ErrBadMessage, SchemaFile, ptr, fmt.Sprintf(format, args...))
	}
	if err := checkKeys(top, sh.required, sh.optional); err != nil {
		return nil, bad("/", "%s", err.msg)
	}
	m := &Message{Type: typ}
	for k, raw := range top {
		if err := m.setField(typ, k, raw); err != nil {
			return nil, bad("/"+k+err.at, "%s", err.msg)
		}
	}
	if typ == TypeResult {
		tr, err := resultTrajectory(top["trajectory"])
		if err != nil {
			return nil, err
		}
		m.Trajectory = tr
	}
	return m, nil
}

// resultChecked decodes a result line in one pass when the line is its
// own encoding (type, id, trajectory, in that order: as the reference
// sends it), with the schema's checks done on the struct: the ID's pattern
// and trajectories.Conforms. ok false sends the line the long way
// (typedDecode), which decides and words any failure.
func resultChecked(line []byte) (*Message, bool) {
	var r struct {
		Type       string                   `json:"type"`
		ID         string                   `json:"id"`
		Trajectory *trajectories.Trajectory `json:"trajectory"`
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if dec.Decode(&r) != nil || r.Type != TypeResult || r.Trajectory == nil ||
		!scenarios.IDPattern.MatchString(r.ID) || !trajectories.Conforms(r.Trajectory) ||
		!trajectories.EncodesAs(&r, line) {
		return nil, false
	}
	return &Message{Type: TypeResult, ID: r.ID, Trajectory: r.Trajectory}, true
}

// resultTrajectory decodes a result's trajectory once, into its Go type,
// with the schema's checks done on the struct (trajectories.DecodeChecked);
// only a trajectory that path does not accept is validated against the
// schema, which then decides and words what is wrong, and decoded again.
func resultTrajectory(raw json.RawMessage) (*trajectories.Trajectory, error) {
	if tr, ok := trajectories.DecodeChecked(raw); ok {
		return tr, nil
	}
	if err := checkTrajectory(raw); err != nil {
		return nil, err
	}
	tr, err := decodeTrajectory(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadMessage, err)
	}
	return tr, nil
}

// fieldError is a problem below one key: at is the pointer below it.
type fieldError struct{ at, msg string }

func fieldErr(at, format string, args ...any) *fieldError {
	return &fieldError{at: at, msg: fmt.Sprintf(format, args...)}
}

// setField checks one key's value and stores it in the message.
func (m *Message) setField(typ, key string, raw json.RawMessage) *fieldError {
	switch key {
	case "type":
		return nil
	case "call", "pid", "protocol", "phase":
		return m.setInteger(key, raw)
	case "suite", "suite_version", "version", "spec_version", "name", "tool", "id", "message", "block", "text":
		s, err := str(raw)
		if err != nil {
			return err
		}
		return m.setString(typ, key, s)
	case "capabilities":
		caps, err := capabilitiesOf(raw)
		if err != nil {
			return err
		}
		m.Capabilities = caps
	case "input":
		in, err := messagesOf(raw)
		if err != nil {
			return err
		}
		m.Input = &in
	case "arguments":
		obj, err := object(raw)
		if err != nil {
			return err
		}
		m.Arguments = obj
	case "action":
		a, err := actionOf(raw)
		if err != nil {
			return err
		}
		m.Action = a
	case "point":
		p, err := pointOf(raw)
		if err != nil {
			return err
		}
		m.Point = p
	case "event":
		e, err := eventOf(raw)
		if err != nil {
			return err
		}
		m.Event = e
	case "trajectory":
		if kind(raw) != "object" {
			return fieldErr("", "got %s, want object", kind(raw))
		}
	}
	return nil
}

// setInteger stores one of the integer keys: call and pid from 1, phase
// from 0, protocol from 1 (a version; 0 would not survive the round trip
// through omitempty, and no version 0 exists).
func (m *Message) setInteger(key string, raw json.RawMessage) *fieldError {
	least := 1 // call, pid, protocol
	switch key {
	case "call", "pid":
		least = 1
	case "phase":
		least = 0
	}
	n, err := integer(raw, least)
	if err != nil {
		return err
	}
	switch key {
	case "call":
		m.Call = n
	case "pid":
		m.Pid = n
	case "protocol":
		m.Protocol = n
	case "phase":
		m.Phase = &n
	}
	return nil
}

// setString stores one of the string keys, with the checks some of them
// carry (a name not empty, a result's ID shaped like a scenario ID, a
// known block type).
func (m *Message) setString(typ, key, s string) *fieldError {
	switch key {
	case "suite":
		m.Suite = s
	case "suite_version":
		m.SuiteVersion = s
	case "version":
		m.Version = s
	case "spec_version":
		m.SpecVersion = s
	case "name":
		if s == "" {
			return fieldErr("", "minLength: got 0, want 1")
		}
		m.Name = s
	case "tool":
		m.Tool = s
	case "id":
		if typ == TypeResult && !scenarios.IDPattern.MatchString(s) {
			return fieldErr("", "'%s' does not match pattern '%s'", s, scenarios.IDPattern)
		}
		m.ID = s
	case "message":
		m.Message = s
	case "block":
		if !slices.Contains(blockTypes, s) {
			return fieldErr("", "value must be one of %s", quoted(blockTypes))
		}
		m.Block = s
	case "text":
		m.Text = &s
	}
	return nil
}

// checkTrajectory validates a result's trajectory as sent against
// trajectories/trajectory.schema.json: no unknown key dropped, no missing
// one zero-filled before judging.
func checkTrajectory(raw json.RawMessage) error {
	doc, err := schema.DecodeJSON(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadMessage, err)
	}
	tsch, err := trajectories.LiteSchema()
	if err != nil {
		return err
	}
	if probs := tsch.Validate(doc); len(probs) > 0 {
		return fmt.Errorf("%w: the result's trajectory does not match trajectories/%s: %s", ErrBadMessage, trajectories.SchemaFile, join(probs, "/trajectory"))
	}
	return nil
}

func decodeTrajectory(raw json.RawMessage) (*trajectories.Trajectory, error) {
	var t trajectories.Trajectory
	if err := numbersAsWritten(raw, &t); err != nil {
		return nil, err
	}
	return &t, nil
}
