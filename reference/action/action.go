package action

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/polyloop/polyloop-conform/internal/jsontext"
)

// Kind says which action language a decision is in.
type Kind string

// The action kinds a trajectory may record.
const (
	KindToolCall Kind = "tool_call"
	KindCode     Kind = "code"
	KindNone     Kind = "none"
)

// Repair names, recorded in the order they were applied so that audit can
// see every change made to what the model wrote (0003.D6).
const (
	RepairUnfence           = "unfence"
	RepairCollapseFlattened = "collapse_flattened_arguments"
	// RepairDropExtraKeys: keys beside both "tool" and an "arguments"
	// object are left out, and saying so keeps the repair visible.
	RepairDropExtraKeys = "drop_keys_beside_arguments"
)

// Action is one step's decision: either a tool call or a piece of code.
// Arguments keep the exact JSON values the model wrote; numbers stay
// json.Number so that nothing is coerced on the way to a handler.
type Action struct {
	Kind       Kind
	Tool       string
	Arguments  map[string]any
	HasArgs    bool
	Code       string
	Reflection string
	Plan       string
	Repairs    []string
}

// Parser reads a model's output as an action: ParseJSON and ParseCode are
// the two the design defines (0003.D5).
type Parser func(raw string) (Action, error)

// ParseError is a decision failure: the model's output could not be read as
// an action. The run settles it like an invalid call (0003.D7).
type ParseError struct {
	Reason string
}

func (e *ParseError) Error() string { return "model output is not a valid action: " + e.Reason }

// MaxOutputBytes bounds what the parser will look at; larger outputs are a
// decision failure rather than a memory problem.
const MaxOutputBytes = 1 << 20

// MaxDepth bounds JSON nesting in a decision.
const MaxDepth = 64

// ParseJSON reads the JSON action protocol: an object with optional
// "reflection" and "plan" strings and an "action" object holding "tool" and
// "arguments".
func ParseJSON(raw string) (Action, error) { return parseJSON(raw, true) }

// ParseJSONDuplicatesLastWin is ParseJSON reading a duplicated key as most
// JSON readers do, its last copy winning. Deviation duplicate-keys-last-wins
// keeps it, to prove the suite notices (0003.D6.duplicate-keys).
func ParseJSONDuplicatesLastWin(raw string) (Action, error) { return parseJSON(raw, false) }

func parseJSON(raw string, refuseDuplicates bool) (Action, error) {
	if len(raw) > MaxOutputBytes {
		return Action{}, &ParseError{Reason: fmt.Sprintf("output is %d bytes, over the %d-byte limit", len(raw), MaxOutputBytes)}
	}
	var repairs []string
	text := TrimJSONSpace(raw)
	if body, ok := Unfence(text); ok {
		text = body
		repairs = append(repairs, RepairUnfence)
	}
	if !strings.HasPrefix(text, "{") {
		return Action{}, &ParseError{Reason: "expected a JSON object"}
	}
	if err := checkDepth(text); err != nil {
		return Action{}, err
	}
	if err := checkSurrogates(text); err != nil {
		return Action{}, err
	}
	// A key written twice is two values for one thing: taking either is a
	// silent choice, and parsers differ in which (0003.D6.duplicate-keys).
	var dup *jsontext.DuplicateKeyError
	if err := jsontext.CheckDuplicateKeys([]byte(text)); refuseDuplicates && errors.As(err, &dup) {
		return Action{}, &ParseError{Reason: fmt.Sprintf("the key at %s appears twice in one object", dup.Pointer)}
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return Action{}, &ParseError{Reason: "invalid JSON: " + err.Error()}
	}
	// Anything after the object, a stray closing brace included, is not
	// dropped silently (0003.D6: every repair is named; GovDoc 六: 禁止静默
	// 修复). Decoder.More would not see a trailing '}' or ']'.
	if rest := TrimJSONSpace(text[dec.InputOffset():]); rest != "" {
		return Action{}, &ParseError{Reason: "text follows the JSON object"}
	}
	a := Action{Kind: KindToolCall}
	// The reflection and the plan are the model's prose for itself, of any
	// JSON type; the seed asks for tolerance and gives them no type
	// (0003.D5.parts). They are kept only when they are strings.
	a.Reflection, _ = top["reflection"].(string)
	a.Plan, _ = top["plan"].(string)
	if _, several := top["actions"]; several {
		// The batch form, whatever it holds and whatever stands beside it
		// (0003.D7.several.actions-key).
		return Action{}, &ParseError{Reason: `the object has an "actions" field: several calls in one output are not an action`}
	}
	rawAction, ok := top["action"]
	if !ok {
		return Action{}, &ParseError{Reason: `the object has no "action" field`}
	}
	act, ok := rawAction.(map[string]any)
	if !ok {
		return Action{}, &ParseError{Reason: `"action" is not an object`}
	}
	tool, ok := act["tool"].(string)
	if !ok || tool == "" {
		return Action{}, &ParseError{Reason: `"action.tool" is missing or not a non-empty string`}
	}
	a.Tool = tool
	if args, present := act["arguments"]; present {
		m, ok := args.(map[string]any)
		if !ok {
			return Action{}, &ParseError{Reason: `"action.arguments" is not an object`}
		}
		a.Arguments, a.HasArgs = m, true
		if len(act) > 2 {
			repairs = append(repairs, RepairDropExtraKeys)
		}
	} else {
		// Collapse only when something besides the tool name is there:
		// a bare tool name must stay a missing-arguments failure (0003.D6).
		flat := map[string]any{}
		for k, v := range act {
			if k != "tool" {
				flat[k] = v
			}
		}
		if len(flat) > 0 {
			a.Arguments, a.HasArgs = flat, true
			repairs = append(repairs, RepairCollapseFlattened)
		}
	}
	a.Repairs = repairs
	return a, nil
}

// ParseCode reads a code action (0003.D5, 0003.D5.fence): the body of the
// one fenced block in the output, whatever prose stands around it, or the
// whole output when it has no fenced block. An output with several fenced
// blocks is no action: running the first (or the last) would run code the
// model may have meant as an example, so it is a decision failure, as
// several tool calls are (0003.D7.several).
//
// The code is taken verbatim: nothing is trimmed from the whole output or
// from a fenced body, since trimming would be a repair no record names and
// indentation is syntax in the code models write (0003.D5.fence).
func ParseCode(raw string) (Action, error) {
	text := raw
	var repairs []string
	switch blocks := FencedBlocks(text); {
	case len(blocks) > 1:
		return Action{}, &ParseError{Reason: fmt.Sprintf("the output holds %d fenced code blocks; a code action is one", len(blocks))}
	case len(blocks) == 1:
		text = blocks[0]
		repairs = append(repairs, RepairUnfence)
	}
	if strings.TrimSpace(text) == "" {
		return Action{}, &ParseError{Reason: "the code action is empty"}
	}
	return Action{Kind: KindCode, Code: text, Repairs: repairs}, nil
}

// FencedBlocks returns the bodies of the complete Markdown code blocks in
// text: an opening line of three backticks and an optional language tag
// without spaces, up to a line of three backticks. A body is the lines
// between the two fence lines as written, indentation kept, without the
// line break before the closing fence. An opening fence that is never
// closed is not a block.
func FencedBlocks(text string) []string {
	var out []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		open := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(open, "```") || !FenceTag(open[3:]) {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) == "```" {
				out = append(out, strings.Join(lines[i+1:j], "\n"))
				i = j
				break
			}
		}
	}
	return out
}

// FenceTag reports whether tag may stand after a fence's three backticks
// as its language tag (0003.D6.fence-tag): empty, or any characters but
// white space, the backtick and the braces. The tag is never read.
func FenceTag(tag string) bool {
	return !strings.ContainsFunc(tag, unicode.IsSpace) && !strings.ContainsAny(tag, "`{}")
}

// Unfence strips one Markdown code fence around the whole text, with or
// without a language tag; ok is false when no fence wraps the whole text.
func Unfence(text string) (body string, ok bool) {
	if !strings.HasPrefix(text, "```") || !strings.HasSuffix(text, "```") || len(text) < 6 {
		return "", false
	}
	inner := text[3 : len(text)-3]
	nl := strings.IndexByte(inner, '\n')
	if nl < 0 {
		return "", false
	}
	if !FenceTag(TrimJSONSpace(inner[:nl])) {
		return "", false
	}
	return TrimJSONSpace(inner[nl+1:]), true
}

// jsonSpace is the white space JSON allows between tokens (RFC 8259 §2).
const jsonSpace = " \t\n\r"

// TrimJSONSpace cuts JSON's white space, and only it, from both ends of
// text: the padding a JSON action may carry around its fence and its
// object (0003.D6.unfence-whitespace.set). strings.TrimSpace would also cut
// U+00A0, U+0085 and the other Unicode spaces, which a JSON reader refuses
// and which each language's trim function takes differently.
func TrimJSONSpace(text string) string { return strings.Trim(text, jsonSpace) }

// checkDepth refuses deeply nested JSON before decoding it, so hostile
// output cannot make the decoder recurse without bound.
func checkDepth(text string) error {
	depth, inString, escaped := 0, false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString:
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > MaxDepth {
				return &ParseError{Reason: fmt.Sprintf("JSON nests deeper than %d levels", MaxDepth)}
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// checkSurrogates refuses a \u escape of a UTF-16 surrogate that is not
// one half of a pair, anywhere in a JSON string (0003.D7.lone-surrogate):
// it names no code point, and decoding it would silently make it U+FFFD
// (Go, Rust) or keep an unencodable half (Python, JavaScript).
func checkSurrogates(text string) error {
	inString := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\' && i+1 < len(text) && text[i+1] == 'u':
			u, ok := hex4(text, i+2)
			switch {
			case !ok || u < 0xD800 || u > 0xDFFF:
				i++
			case u <= 0xDBFF && i+11 < len(text) && text[i+6] == '\\' && text[i+7] == 'u' && isLow(text, i+8):
				i += 11
			default:
				return &ParseError{Reason: fmt.Sprintf("the string escape %s is half of a UTF-16 surrogate pair: no character", text[i:i+6])}
			}
		case c == '\\':
			i++
		}
	}
	return nil
}

// hex4 reads four hex digits at text[at:].
func hex4(text string, at int) (rune, bool) {
	if at+4 > len(text) {
		return 0, false
	}
	var u rune
	for _, c := range text[at : at+4] {
		var d rune
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		u = u<<4 | d
	}
	return u, true
}

// isLow reports whether text[at:] starts with the four hex digits of a
// low surrogate.
func isLow(text string, at int) bool {
	u, ok := hex4(text, at)
	return ok && u >= 0xDC00 && u <= 0xDFFF
}

// IsParseError reports whether err is a decision failure.
func IsParseError(err error) bool {
	var pe *ParseError
	return errors.As(err, &pe)
}

// CanonicalJSON renders arguments the way trajectories store them: keys
// sorted, numbers exactly as the model wrote them.
func CanonicalJSON(v any) string {
	b, err := jsontext.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}
