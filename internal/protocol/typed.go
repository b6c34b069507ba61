package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

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
		if err := checkTrajectory(top["trajectory"]); err != nil {
			return nil, err
		}
		tr, err := decodeTrajectory(top["trajectory"])
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadMessage, err)
		}
		m.Trajectory = tr
	}
	return m, nil
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
	case "call", "pid":
		n, err := integer(raw, 1)
		if err != nil {
			return err
		}
		if key == "call" {
			m.Call = n
		} else {
			m.Pid = n
		}
	case "protocol":
		n, err := integer(raw, -1<<31)
		if err != nil {
			return err
		}
		m.Protocol = n
	case "phase":
		n, err := integer(raw, 0)
		if err != nil {
			return err
		}
		m.Phase = &n
	case "suite", "suite_version", "version", "spec_version", "name", "tool", "id", "message", "block", "text":
		s, err := str(raw)
		if err != nil {
			return err
		}
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
	case "capabilities":
		var caps []json.RawMessage
		if err := json.Unmarshal(raw, &caps); err != nil || raw[0] != '[' {
			return fieldErr("", "got %s, want array", kind(raw))
		}
		for i, c := range caps {
			s, err := str(c)
			if err != nil {
				err.at = fmt.Sprintf("/%d", i) + err.at
				return err
			}
			if !slices.Contains(capabilityNames, s) {
				return fieldErr(fmt.Sprintf("/%d", i), "value must be one of %s", quoted(capabilityNames))
			}
			if slices.Contains(m.Capabilities, s) {
				return fieldErr("", "items at %d and %d are equal", slices.Index(m.Capabilities, s), i)
			}
			m.Capabilities = append(m.Capabilities, s)
		}
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
		if _, err := object(raw); err != nil {
			return err
		}
		var e trajectories.Event
		if err := numbersAsWritten(raw, &e); err != nil {
			return fieldErr("", "%v", err)
		}
		m.Event = &e
	case "trajectory":
		if kind(raw) != "object" {
			return fieldErr("", "got %s, want object", kind(raw))
		}
	}
	return nil
}

// integer is a JSON integer of at least min, written without a fraction.
func integer(raw json.RawMessage, min int) (int, *fieldError) {
	if kind(raw) != "number" {
		return 0, fieldErr("", "got %s, want integer", kind(raw))
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fieldErr("", "got %s, want integer", kind(raw))
	}
	i, err := n.Int64()
	if err != nil {
		// Written as an integer, or refused: 1.0 would pass the schema
		// but is refused where it is decoded, so it is refused here too.
		return 0, fieldErr("", "got number %s, want an integer written without a fraction or exponent", n)
	}
	if i < int64(min) {
		return 0, fieldErr("", "minimum: got %d, want %d", i, min)
	}
	return int(i), nil
}

func str(raw json.RawMessage) (string, *fieldError) {
	if kind(raw) != "string" {
		return "", fieldErr("", "got %s, want string", kind(raw))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fieldErr("", "%v", err)
	}
	return s, nil
}

func object(raw json.RawMessage) (map[string]any, *fieldError) {
	if kind(raw) != "object" {
		return nil, fieldErr("", "got %s, want object", kind(raw))
	}
	var obj map[string]any
	if err := numbersAsWritten(raw, &obj); err != nil {
		return nil, fieldErr("", "%v", err)
	}
	return obj, nil
}

// keysOf decodes an object's keys and checks them (checkKeys).
func keysOf(raw json.RawMessage, required, optional []string) (map[string]json.RawMessage, *fieldError) {
	if kind(raw) != "object" {
		return nil, fieldErr("", "got %s, want object", kind(raw))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fieldErr("", "%v", err)
	}
	if err := checkKeys(obj, required, optional); err != nil {
		return nil, err
	}
	return obj, nil
}

// checkKeys refuses an object's keys that are neither required nor
// optional, and requires the required ones, in the schema's words.
func checkKeys(obj map[string]json.RawMessage, required, optional []string) *fieldError {
	var extra, missing []string
	for k := range obj {
		if !slices.Contains(required, k) && !slices.Contains(optional, k) {
			extra = append(extra, k)
		}
	}
	for _, k := range required {
		if _, ok := obj[k]; !ok {
			missing = append(missing, k)
		}
	}
	sort.Strings(extra)
	switch {
	case len(extra) > 0:
		return fieldErr("", "additional properties '%s' not allowed", strings.Join(extra, "', '"))
	case len(missing) == 1:
		return fieldErr("", "missing property '%s'", missing[0])
	case len(missing) > 1:
		return fieldErr("", "missing properties '%s'", strings.Join(missing, "', '"))
	}
	return nil
}

func messagesOf(raw json.RawMessage) ([]trajectories.Message, *fieldError) {
	if kind(raw) != "array" {
		return nil, fieldErr("", "got %s, want array", kind(raw))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fieldErr("", "%v", err)
	}
	out := make([]trajectories.Message, 0, len(items))
	for i, it := range items {
		at := fmt.Sprintf("/%d", i)
		obj, err := keysOf(it, []string{"role", "content"}, nil)
		if err != nil {
			err.at = at + err.at
			return nil, err
		}
		role, err := str(obj["role"])
		if err == nil && !slices.Contains([]string{"user", "assistant", "system"}, role) {
			err = fieldErr("", "value must be one of 'user', 'assistant', 'system'")
		}
		if err != nil {
			err.at = at + "/role" + err.at
			return nil, err
		}
		content, err := str(obj["content"])
		if err != nil {
			err.at = at + "/content" + err.at
			return nil, err
		}
		out = append(out, trajectories.Message{Role: role, Content: content})
	}
	return out, nil
}

func actionOf(raw json.RawMessage) (*ActionView, *fieldError) {
	obj, err := keysOf(raw, []string{"kind"}, []string{"tool", "arguments", "code"})
	if err != nil {
		return nil, err
	}
	a := &ActionView{}
	for k, v := range obj {
		switch k {
		case "kind":
			a.Kind, err = str(v)
			if err == nil && !slices.Contains([]string{"tool_call", "code", "none"}, a.Kind) {
				err = fieldErr("", "value must be one of 'tool_call', 'code', 'none'")
			}
		case "tool":
			a.Tool, err = str(v)
		case "code":
			a.Code, err = str(v)
		case "arguments":
			var args map[string]any
			args, err = object(v)
			a.Arguments = args
		}
		if err != nil {
			err.at = "/" + k + err.at
			return nil, err
		}
	}
	return a, nil
}

func pointOf(raw json.RawMessage) (*Point, *fieldError) {
	obj, err := keysOf(raw, []string{"when", "seq", "record"}, []string{"step"})
	if err != nil {
		return nil, err
	}
	p := &Point{}
	for k, v := range obj {
		switch k {
		case "when":
			p.When, err = str(v)
			if err == nil && p.When != "before" && p.When != "after" {
				err = fieldErr("", "value must be one of 'before', 'after'")
			}
		case "seq":
			p.Seq, err = integer(v, 1)
		case "record":
			p.Record, err = str(v)
			if err == nil && !slices.Contains(recordTypes, p.Record) {
				err = fieldErr("", "value must be one of %s", quoted(recordTypes))
			}
		case "step":
			p.Step, err = integer(v, 0)
		}
		if err != nil {
			err.at = "/" + k + err.at
			return nil, err
		}
	}
	return p, nil
}

// kind is the JSON type of a raw value, as the schema names it.
func kind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func quoted(vs []string) string {
	return "'" + strings.Join(vs, "', '") + "'"
}

// numbersAsWritten decodes with numbers kept as json.Number, so that 10
// and 10.000 stay different (0003.D4, no coercion).
func numbersAsWritten(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
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
