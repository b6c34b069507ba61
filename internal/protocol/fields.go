package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/polyloop/polyloop-conform/internal/jsontext"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// integer is a JSON integer of at least min, written without a fraction.
func integer(raw json.RawMessage, min int) (int, *fieldError) {
	if kind(raw) != "number" {
		return 0, fieldErr("", "got %s, want integer", kind(raw))
	}
	// raw is one valid JSON number (the line was parsed whole before its
	// keys are checked), so it is its own json.Number.
	n := json.Number(bytes.TrimSpace(raw))
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
	// Without escapes and in valid UTF-8 the text between the quotes is
	// the string (a valid JSON line holds no raw control characters).
	raw = bytes.TrimSpace(raw)
	if body := raw[1 : len(raw)-1]; bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body), nil
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

// roles are the schema's values of a model input message's role.
var roles = []string{"user", "assistant", "system"}

func messagesOf(raw json.RawMessage) ([]trajectories.Message, *fieldError) {
	if ms, ok := messagesChecked(raw); ok {
		return ms, nil
	}
	if kind(raw) != "array" {
		return nil, fieldErr("", "got %s, want array", kind(raw))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fieldErr("", "%v", err)
	}
	out := make([]trajectories.Message, 0, len(items))
	for i, it := range items {
		at := func() string { return "/" + strconv.Itoa(i) } // only for a problem
		obj, err := keysOf(it, []string{"role", "content"}, nil)
		if err != nil {
			err.at = at() + err.at
			return nil, err
		}
		role, err := str(obj["role"])
		if err == nil && !slices.Contains(roles, role) {
			err = fieldErr("", "value must be one of 'user', 'assistant', 'system'")
		}
		if err != nil {
			err.at = at() + "/role" + err.at
			return nil, err
		}
		content, err := str(obj["content"])
		if err != nil {
			err.at = at() + "/content" + err.at
			return nil, err
		}
		out = append(out, trajectories.Message{Role: role, Content: content})
	}
	return out, nil
}

// messagesChecked is messagesOf in one decode, for input that is exactly
// the encoding of the messages it decodes to (the keys role and content,
// in that order, each a string, and nothing else) with known roles; ok
// false sends the input to the checks above, which decide and word it.
func messagesChecked(raw json.RawMessage) ([]trajectories.Message, bool) {
	var ms []trajectories.Message
	if json.Unmarshal(raw, &ms) != nil || ms == nil {
		return nil, false
	}
	for _, m := range ms {
		if !slices.Contains(roles, m.Role) {
			return nil, false
		}
	}
	enc, err := jsontext.Marshal(ms)
	return ms, err == nil && bytes.Equal(enc, raw)
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

// capabilitiesOf is a hello's capabilities: known names, each once.
func capabilitiesOf(raw json.RawMessage) ([]string, *fieldError) {
	var caps []json.RawMessage
	if err := json.Unmarshal(raw, &caps); err != nil || raw[0] != '[' {
		return nil, fieldErr("", "got %s, want array", kind(raw))
	}
	var out []string
	for i, c := range caps {
		s, err := str(c)
		if err != nil {
			err.at = fmt.Sprintf("/%d", i) + err.at
			return nil, err
		}
		if !slices.Contains(capabilityNames, s) {
			return nil, fieldErr(fmt.Sprintf("/%d", i), "value must be one of %s", quoted(capabilityNames))
		}
		if slices.Contains(out, s) {
			return nil, fieldErr("", "items at %d and %d are equal", slices.Index(out, s), i)
		}
		out = append(out, s)
	}
	return out, nil
}

// eventOf is an event message's event: an object, numbers as written.
func eventOf(raw json.RawMessage) (*trajectories.Event, *fieldError) {
	if _, err := object(raw); err != nil {
		return nil, err
	}
	var e trajectories.Event
	if err := numbersAsWritten(raw, &e); err != nil {
		return nil, fieldErr("", "%v", err)
	}
	return &e, nil
}
