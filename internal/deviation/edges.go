package deviation

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/polyloop/polyloop-conform/reference/action"
	"github.com/polyloop/polyloop-conform/reference/assembly"
	"github.com/polyloop/polyloop-conform/reference/run"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

// The deviations of issue 52: mistakes at the edges of text and numbers
// that a port makes with its language's defaults (a JSON binder that folds
// case, a reader that makes every number a double, a string type that
// normalises), and two corners of the journal and context assembly.
const (
	IntentBeforeValidation Name = "intent-before-validation"
	FieldNamesFolded       Name = "field-names-case-insensitive"
	DeadlineEndsRun        Name = "deadline-ends-run"
	ToolNamesFolded        Name = "tool-names-case-insensitive"
	RestrictFirstUnknown   Name = "restrict-first-unknown-only"
	NumbersAsDoubles       Name = "numbers-read-as-doubles"
	ArgumentsNFC           Name = "arguments-normalised-nfc"
	ContextNFC             Name = "context-normalised-nfc"
	PlaceholderInData      Name = "placeholder-substituted-in-data"
	LoneSurrogateReplaced  Name = "lone-surrogate-replaced"
	InjectionsUTF16Order   Name = "injections-utf16-order"
	ContextSizeUTF16       Name = "context-size-utf16-units"
)

// edgeDeviations break the decisions of issue 52.
func edgeDeviations() []Deviation {
	return []Deviation{
		{IntentBeforeValidation, "0002.D1.no-intent-invalid", "the action intent is journalled before the call is validated, so an invalid call gets one",
			Wrap{Options: departure(func(d *run.Departures) { d.IntentBeforeValidation = true })}},
		{FieldNamesFolded, "0003.D7.key-case", `the decision's field names are read without case: "Action", "TOOL" and "Arguments" are the protocol's fields`,
			Wrap{Request: parser(fieldNamesFolded)}},
		{DeadlineEndsRun, "0004.D4.deadline.resume", "a passed deadline ends the run with reason cancelled, leaving the next holder nothing to resume",
			Wrap{Kernel: deadlineEndsRun}},
		{ToolNamesFolded, "0006.D6.names-exact", "a tool name the registry lacks is matched to a registered name without case or Unicode normalisation",
			Wrap{Request: parser(toolNamesFolded)}},
		{RestrictFirstUnknown, "0006.D6.restrict-unknown", "restrict_to's refusal names only the first unknown name of the list",
			Wrap{Restrict: restrictFirstUnknown}},
		{NumbersAsDoubles, "0006.D6.exact-numbers", "the arguments' numbers are read as binary64 doubles: 9007199254740993 reaches the handler as 9007199254740992",
			Wrap{Request: parser(numbersAsDoubles)}},
		{ArgumentsNFC, "0006.D6.no-coercion.text", "the arguments' strings are normalised to NFC before validation and the handler",
			Wrap{Request: parser(argumentsNFC)}},
		{ContextNFC, "0010.D2.verbatim", "the fragments, injections, model outputs and observations are normalised to NFC in the model input",
			Wrap{Request: before(contextNFC)}},
		{PlaceholderInData, "0010.D4.data", "the template is applied until no placeholder is left, so one inside the observation is substituted too",
			Wrap{Request: history(placeholderInData)}},
		{LoneSurrogateReplaced, "0003.D7.lone-surrogate", "a string escape of half a surrogate pair is read as U+FFFD, as Go's encoding/json does",
			Wrap{Request: parser(loneSurrogateReplaced)}},
		{InjectionsUTF16Order, "0010.D3", "injection channels are sorted by UTF-16 code units (JavaScript's, Java's and C#'s string order), not by bytes",
			Wrap{Request: layout{utf16Order: true}.wrap}},
		{ContextSizeUTF16, "0010.D5", "the context size counts UTF-16 code units (a string's length in JavaScript, Java and C#), not code points",
			Wrap{Request: after(sizeInUTF16)}},
	}
}

// decodeNumbers reads raw (unfenced when a fence wraps it) as a JSON
// object with its numbers kept as written; ok is false otherwise.
func decodeNumbers(raw string) (map[string]any, bool) {
	text := action.TrimJSONSpace(raw)
	if body, ok := action.Unfence(text); ok {
		text = body
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var top map[string]any
	return top, dec.Decode(&top) == nil && top != nil
}

// folded renames the keys of m that equal one of names without case to
// that name; changed reports whether any did.
func folded(m map[string]any, names ...string) (changed bool) {
	for k, v := range m {
		for _, n := range names {
			if k != n && strings.EqualFold(k, n) {
				delete(m, k)
				m[n], changed = v, true
			}
		}
	}
	return changed
}

// fieldNamesFolded reads the decision's keys without case, as a JSON
// binder with case-insensitive field matching does (0003.D7.key-case).
var fieldNamesFolded = jsonOnly(func(p action.Parser, _ *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		top, ok := decodeNumbers(raw)
		if !ok {
			return a, err
		}
		changed := folded(top, "action", "reflection", "plan", "actions")
		if act, isObject := top["action"].(map[string]any); isObject && folded(act, "tool", "arguments") {
			changed = true
		}
		if !changed {
			return a, err
		}
		return reparsed(p, top, a, err)
	}
})

// deadlineEndsRun ends a run whose deadline passed with reason cancelled
// instead of stopping it resumable (0004.D4.deadline.resume).
func deadlineEndsRun(k Kernel) Kernel { return interruptEndsRun(k, context.DeadlineExceeded) }

// toolNamesFolded runs a call of a name the registry lacks as the first
// registered tool whose name equals it without case or after NFKC
// (0006.D6.names-exact).
func toolNamesFolded(p action.Parser, c *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if err != nil || a.Kind != action.KindToolCall || c.Tools == nil {
			return a, err
		}
		if _, ok := c.Tools.Lookup(a.Tool); ok {
			return a, nil
		}
		want := strings.ToLower(norm.NFKC.String(a.Tool))
		for _, n := range c.Tools.Names() {
			if strings.ToLower(norm.NFKC.String(n)) == want {
				a.Tool = n
				break
			}
		}
		return a, nil
	}
}

// restrictFirstUnknown keeps the known names and the first unknown one,
// so the refusal names that one only (0006.D6.restrict-unknown).
func restrictFirstUnknown(full *tools.ToolRegistry, names []string) []string {
	seen := false
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool {
		if _, ok := full.Lookup(n); ok {
			return false
		}
		drop := seen
		seen = true
		return drop
	})
}

// mapStrings returns v with f applied to every string and every number
// inside it; maps and slices are copied.
func mapValues(v any, str func(string) string, num func(json.Number) json.Number) any {
	switch x := v.(type) {
	case string:
		return str(x)
	case json.Number:
		return num(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = mapValues(e, str, num)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mapValues(e, str, num)
		}
		return out
	}
	return v
}

// withArguments is a parser whose tool calls' arguments go through f.
func withArguments(f func(map[string]any) map[string]any) func(action.Parser, *run.RequestConfig) action.Parser {
	return jsonOnly(func(p action.Parser, _ *run.RequestConfig) action.Parser {
		return func(raw string) (action.Action, error) {
			a, err := p(raw)
			if err == nil && a.Kind == action.KindToolCall && a.Arguments != nil {
				a.Arguments = f(a.Arguments)
			}
			return a, err
		}
	})
}

func same(s string) string                 { return s }
func sameNumber(n json.Number) json.Number { return n }

// numbersAsDoubles rounds every number of the arguments to the nearest
// binary64 double, as a JSON reader without big numbers does
// (0006.D6.exact-numbers).
var numbersAsDoubles = withArguments(func(args map[string]any) map[string]any {
	return mapValues(args, same, func(n json.Number) json.Number {
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return n
		}
		if strings.ContainsAny(string(n), ".eE") {
			return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
		}
		return json.Number(strconv.FormatFloat(f, 'f', 0, 64))
	}).(map[string]any)
})

// argumentsNFC normalises the arguments' strings to NFC
// (0006.D6.no-coercion.text).
var argumentsNFC = withArguments(func(args map[string]any) map[string]any {
	return mapValues(args, norm.NFC.String, sameNumber).(map[string]any)
})

// contextNFC normalises every text of the context to NFC (0010.D2.verbatim).
func contextNFC(in *assembly.Input) {
	in.RunFragment, in.GoalFragment = norm.NFC.String(in.RunFragment), norm.NFC.String(in.GoalFragment)
	inj := make(map[string][]string, len(in.Injections))
	for ch, entries := range in.Injections {
		for _, e := range entries {
			inj[ch] = append(inj[ch], norm.NFC.String(e))
		}
	}
	in.Injections = inj
	hist := make([]assembly.Turn, len(in.History))
	for i, t := range in.History {
		hist[i] = assembly.Turn{ModelOutput: norm.NFC.String(t.ModelOutput), Observation: norm.NFC.String(t.Observation)}
	}
	in.History = hist
}

// placeholderInData substitutes until no placeholder is left, at most four
// passes so the loop ends, reading the observation as template text
// (0010.D4.data).
func placeholderInData(t assembly.Turn, tmpl string) []turnBlock {
	obs := tmpl
	for i := 0; i < 4 && strings.Contains(obs, assembly.Placeholder); i++ {
		obs = strings.ReplaceAll(obs, assembly.Placeholder, t.Observation)
	}
	return []turnBlock{
		{assembly.BlockModelOutput, assembly.RoleAssistant, t.ModelOutput},
		{assembly.BlockObservation, assembly.RoleUser, obs},
	}
}

// loneSurrogateReplaced reads an output refused for a lone surrogate
// escape as encoding/json does, with U+FFFD in its place
// (0003.D7.lone-surrogate).
var loneSurrogateReplaced = jsonOnly(func(p action.Parser, _ *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if err == nil || !strings.Contains(err.Error(), "surrogate") {
			return a, err
		}
		top, ok := decodeNumbers(raw)
		if !ok {
			return a, err
		}
		return reparsed(p, top, a, err)
	}
})

// sizeInUTF16 adds to the size one more for each character outside the
// Basic Multilingual Plane, which UTF-16 writes as two units (0010.D5).
func sizeInUTF16(msgs []assembly.Message, size int, _ *run.RequestConfig, _ assembly.Measure) ([]assembly.Message, int, error) {
	for _, m := range msgs {
		size += len(utf16.Encode([]rune(m.Content))) - utf8.RuneCountInString(m.Content)
	}
	return msgs, size, nil
}
