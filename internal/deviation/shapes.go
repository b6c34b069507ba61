package deviation

import (
	"encoding/json"
	"strings"

	"github.com/polyloop/polyloop-conform/reference/action"
	"github.com/polyloop/polyloop-conform/reference/run"
)

// The deviations of issue 45: the shapes of a decision a port repairs
// silently (0003.D7.shapes), code it trims (0003.D5.fence) and the caps
// it checks in the first request only (0004.D1.min).
const (
	ArgumentsNullAbsent    Name = "arguments-null-absent"
	EncodedJSONDecoded     Name = "encoded-json-decoded"
	TopLevelArrayUnwrapped Name = "top-level-array-unwrapped"
	CodeActionTrimmed      Name = "code-action-trimmed"
	CapsFirstRequestOnly   Name = "caps-first-request-only"
)

// shapeDeviations break the shapes of a decision, the code action's text
// and the caps of later requests.
func shapeDeviations() []Deviation {
	return []Deviation{
		{ArgumentsNullAbsent, "0003.D7.shapes", `"arguments": null is read as a call without arguments`,
			Wrap{Request: parser(argumentsNullAbsent)}},
		{EncodedJSONDecoded, "0003.D7.shapes", "a string holding a JSON object, where the decision, the action or the arguments should be an object, is decoded and used",
			Wrap{Request: parser(encodedJSONDecoded)}},
		{TopLevelArrayUnwrapped, "0003.D7.shapes", "a top-level array holding one decision is unwrapped and the decision run",
			Wrap{Request: parser(topLevelArrayUnwrapped)}},
		{CodeActionTrimmed, "0003.D5.fence", "a code action is trimmed of the whitespace around it (a fenced body loses its first line's indentation), naming no repair",
			Wrap{Request: parser(codeActionTrimmed)}},
		{CapsFirstRequestOnly, "0004.D1.min", "a cap below 1 is refused in the first request only; a later phase's is accepted",
			Wrap{Request: capsFirstRequestOnly}},
	}
}

// decoded reads raw, unfenced when one fence wraps it, as any JSON value;
// ok is false when it is no JSON.
func decoded(raw string) (any, bool) {
	text := strings.TrimSpace(raw)
	if body, ok := action.Unfence(text); ok {
		text = body
	}
	var v any
	return v, json.Unmarshal([]byte(text), &v) == nil
}

// reparsed parses v written back as JSON; it keeps the first parse's
// result when v cannot be written.
func reparsed(p action.Parser, v any, a action.Action, err error) (action.Action, error) {
	b, merr := json.Marshal(v)
	if merr != nil {
		return a, err
	}
	return p(string(b))
}

// argumentsNullAbsent drops an "arguments" that is null, as a port whose
// JSON reader cannot tell null from absent does (0003.D7.shapes).
var argumentsNullAbsent = jsonOnly(func(p action.Parser, _ *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if err == nil {
			return a, nil
		}
		v, _ := decoded(raw)
		top, _ := v.(map[string]any)
		act, _ := top["action"].(map[string]any)
		if args, present := act["arguments"]; !present || args != nil {
			return a, err
		}
		delete(act, "arguments")
		return reparsed(p, top, a, err)
	}
})

// encodedJSONDecoded decodes a string holding JSON where an object is
// expected: the whole decision, the action or the arguments
// (0003.D7.shapes).
var encodedJSONDecoded = jsonOnly(func(p action.Parser, _ *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if err == nil {
			return a, nil
		}
		v, ok := decoded(raw)
		if !ok {
			return a, err
		}
		if s, isString := v.(string); isString {
			if inner, ok := decoded(s); ok {
				v = inner
			}
		}
		top, _ := v.(map[string]any)
		if top == nil {
			return a, err
		}
		if s, isString := top["action"].(string); isString {
			if inner, ok := decoded(s); ok {
				top["action"] = inner
			}
		}
		if act, isObject := top["action"].(map[string]any); isObject {
			if s, isString := act["arguments"].(string); isString {
				if inner, ok := decoded(s); ok {
					act["arguments"] = inner
				}
			}
		}
		return reparsed(p, top, a, err)
	}
})

// topLevelArrayUnwrapped runs the one decision of a top-level array
// (0003.D7.shapes).
var topLevelArrayUnwrapped = jsonOnly(func(p action.Parser, _ *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if err == nil {
			return a, nil
		}
		v, _ := decoded(raw)
		if list, isList := v.([]any); isList && len(list) == 1 {
			return reparsed(p, list[0], a, err)
		}
		return a, err
	}
})

// codeActionTrimmed trims the code the parser took, as the reference did
// before issue 45 (0003.D5.fence).
func codeActionTrimmed(p action.Parser, c *run.RequestConfig) action.Parser {
	if c.Language != run.LanguageCode {
		return p
	}
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if err == nil && a.Kind == action.KindCode {
			a.Code = strings.TrimSpace(a.Code)
		}
		return a, err
	}
}

// capsFirstRequestOnly accepts the caps of a later request unchecked: a
// request whose budget is not the first request's is a later one, since
// the first request is itself checked (0004.D1.min, 0003.D1).
func capsFirstRequestOnly(c *run.RequestConfig, first run.RequestConfig) error {
	if c.Budget == first.Budget {
		return nil
	}
	return zeroCapsAccepted(c, first)
}
