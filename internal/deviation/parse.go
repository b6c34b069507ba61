package deviation

import (
	"encoding/json"
	"strings"

	"github.com/polyloop/polyloop-conform/reference/action"
	"github.com/polyloop/polyloop-conform/reference/run"
)

// The wrappers around the parser that make the decisions of 0003.D5 to
// 0003.D7 and 0006.D6.no-parameters depart: each reads the output the way
// an honest port did.

// jsonOnly applies f to the parser of a request in the JSON action
// language and leaves a code request's parser alone.
func jsonOnly(f func(p action.Parser, c *run.RequestConfig) action.Parser) func(action.Parser, *run.RequestConfig) action.Parser {
	return func(p action.Parser, c *run.RequestConfig) action.Parser {
		if c.Language == run.LanguageCode {
			return p
		}
		return f(p, c)
	}
}

// partsMustBeStrings makes a reflection or plan that is not a string a
// decision failure (0003.D5.parts).
var partsMustBeStrings = jsonOnly(func(p action.Parser, _ *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if err == nil && !partsAreStrings(raw) {
			return action.Action{}, &action.ParseError{Reason: "the reflection or the plan is not a string"}
		}
		return a, err
	}
})

// partsAreStrings reports whether a reflection or plan present and not
// null is a string; output that is no JSON object passes.
func partsAreStrings(raw string) bool {
	var top map[string]any
	if json.Unmarshal([]byte(strings.TrimSpace(raw)), &top) != nil {
		return true
	}
	for _, key := range []string{"reflection", "plan"} {
		if v, ok := top[key]; ok && v != nil {
			if _, isString := v.(string); !isString {
				return false
			}
		}
	}
	return true
}

// duplicatesLastWin reads a key written twice as its last copy
// (0003.D6.duplicate-keys).
var duplicatesLastWin = jsonOnly(func(p action.Parser, _ *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if err != nil {
			if last, lerr := action.ParseJSONDuplicatesLastWin(raw); lerr == nil {
				return last, nil
			}
		}
		return a, err
	}
})

// actionsKeyTaken drops an "actions" field beside an action and takes a
// list of one call as the action (0003.D7.several.actions-key).
var actionsKeyTaken = jsonOnly(func(p action.Parser, _ *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if err != nil {
			if one, ok := oneAction(raw); ok {
				return p(one)
			}
		}
		return a, err
	}
})

// oneAction is the output without its "actions" field, holding the
// list's one call as "action" when it had no action.
func oneAction(raw string) (string, bool) {
	var top map[string]any
	if json.Unmarshal([]byte(strings.TrimSpace(raw)), &top) != nil {
		return "", false
	}
	list, isList := top["actions"].([]any)
	switch {
	case top["action"] != nil:
	case isList && len(list) == 1:
		top["action"] = list[0]
	default:
		return "", false
	}
	delete(top, "actions")
	b, err := json.Marshal(top)
	return string(b), err == nil
}

// jsonFenceAfterProse unfences a JSON action in the one fenced block of
// an output with prose around it (0003.D7).
var jsonFenceAfterProse = jsonOnly(func(p action.Parser, _ *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if err == nil {
			return a, nil
		}
		if blocks := action.FencedBlocks(strings.TrimSpace(raw)); len(blocks) == 1 {
			if inner, ierr := p(blocks[0]); ierr == nil {
				inner.Repairs = append([]string{action.RepairUnfence}, inner.Repairs...)
				return inner, nil
			}
		}
		return a, err
	}
})

// emptyFenceRunAsCode runs an empty fenced block as empty code
// (0003.D5.fence).
func emptyFenceRunAsCode(p action.Parser, c *run.RequestConfig) action.Parser {
	if c.Language != run.LanguageCode {
		return p
	}
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if err != nil && len(action.FencedBlocks(strings.TrimSpace(raw))) == 1 {
			return action.Action{Kind: action.KindCode, Repairs: []string{action.RepairUnfence}}, nil
		}
		return a, err
	}
}

// noParametersBareCall gives a bare call to a tool without parameters
// empty arguments, so it passes validation (0006.D6.no-parameters).
func noParametersBareCall(p action.Parser, c *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if err != nil || a.Kind != action.KindToolCall || a.HasArgs || c.Tools.Validate(a) == nil {
			return a, err
		}
		if spec, ok := c.Tools.Lookup(a.Tool); ok && spec.Parameters == nil {
			a.Arguments, a.HasArgs = map[string]any{}, true
		}
		return a, nil
	}
}
