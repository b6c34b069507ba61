package report

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// describeRunes is how much of a sentence Describe shows.
const describeRunes = 60

// Describe says what a trajectory value is in a few words: the one
// description of a value for every format, the text report's sentences
// ("want a tool_call of search, got the end goal_reached_by_tool") and the
// HTML timeline's cells alike. A name (one word: a status, a stop reason)
// is shown bare, a sentence quoted and cut; the JSON of the value is in
// the row's details.
func Describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		if x != "" && !strings.ContainsAny(x, " \t\r\n\"") && len([]rune(x)) <= describeRunes {
			return x
		}
		return strconv.Quote(cutRunes(x))
	case []any:
		return describeList(x)
	case map[string]any:
		return describeObject(x)
	}
	return cutRunes(fmt.Sprint(v))
}

func cutRunes(s string) string {
	if r := []rune(s); len(r) > describeRunes {
		return string(r[:describeRunes]) + "…"
	}
	return s
}

func describeList(x []any) string {
	if len(x) == 0 {
		return "none"
	}
	if m, ok := x[len(x)-1].(map[string]any); ok {
		if role, ok := m["role"].(string); ok {
			return fmt.Sprintf("%d message(s), the last from %s: %q", len(x), role, cutRunes(fmt.Sprint(m["content"])))
		}
		if t, ok := m["type"].(string); ok {
			return fmt.Sprintf("%d event(s), the last %s", len(x), t)
		}
	}
	return fmt.Sprintf("a list of %d", len(x))
}

// describeObject names an object of the format by the fields that say
// what it is: an end, counters, what was in flight, an action, an
// outcome, an event, a message.
func describeObject(x map[string]any) string {
	switch {
	case x["reason"] != nil:
		return fmt.Sprintf("the end %v", x["reason"])
	case x["effective_steps"] != nil && x["total_steps"] != nil:
		return fmt.Sprintf("%v effective / %v total", x["effective_steps"], x["total_steps"])
	case x["during"] != nil && x["tool"] != nil:
		return fmt.Sprintf("a %v of %v in flight at step %v", x["during"], x["tool"], x["step"])
	case x["during"] != nil:
		return fmt.Sprintf("a %v in flight at step %v", x["during"], x["step"])
	case x["kind"] != nil && x["tool"] != nil:
		return fmt.Sprintf("a %v of %v", x["kind"], x["tool"])
	case x["kind"] != nil:
		return fmt.Sprintf("a %v", x["kind"])
	case x["status"] != nil:
		return fmt.Sprintf("an outcome %v", x["status"])
	case x["type"] != nil:
		return fmt.Sprintf("a %v", x["type"])
	case x["role"] != nil:
		return fmt.Sprintf("a %v message: %q", x["role"], cutRunes(fmt.Sprint(x["content"])))
	}
	keys := slices.Sorted(maps.Keys(x))
	if len(keys) > 4 {
		keys = append(keys[:4], "…")
	}
	return "an object with " + strings.Join(keys, ", ")
}
