package expect

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/scenarios"
)

const traj = `{"assembly_error":null,"model_calls":2,"event_sink_failures":0,
"steps":[{"index":1,"outcome":{"status":"EXECUTED","observation":"ok text"},"action":{"kind":"tool_call","tool":"a","repairs":[]},"history_observation":"ok text","counters":{"effective_steps":1,"total_steps":1},"replayed":false}],
"handler_calls":[{"tool":"a","arguments":{}},{"tool":"a","arguments":{}}],
"events":[{"type":"model_step","step":1,"repairs":["unfence"]}],
"end":{"reason":"cancelled","effective_steps":1,"total_steps":1}}`

func TestCheck_failuresNamePaths(t *testing.T) {
	var doc any
	dec := json.NewDecoder(strings.NewReader(traj))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	n := func(i int) *int { return &i }
	b := func(v bool) *bool { return &v }
	sc := &scenarios.Scenario{Expect: scenarios.Expect{
		End:          &scenarios.ExpectEnd{Reason: "goal_reached_by_tool", TotalSteps: n(1)},
		Steps:        n(2),
		Step:         []scenarios.ExpectStep{{Index: 1, Status: "NOT_EXECUTED", ObservationContains: "ok", Replayed: b(false)}, {Index: 5}},
		HandlerCalls: map[string]int{"a": 1, "b": 0},
		ModelCalls:   n(2),
		Events:       []scenarios.ExpectEvent{{Type: "model_step", Repairs: []string{"unfence"}}, {Type: "run_ended"}},
		Fields:       map[string]any{"steps[0].action.tool": "a", "steps[0].counters.effective_steps": 2},
	}}
	var got []string
	for _, f := range Check(sc, doc) {
		got = append(got, f.String())
	}
	want := []string{
		"end.reason: want goal_reached_by_tool, got cancelled",
		"steps: want 2 steps, got 1",
		"steps[0].outcome.status: want NOT_EXECUTED, got EXECUTED",
		"steps: the trajectory has no step 5",
		"handler_calls[tool=a]: want 1 calls, got 2",
		`events: no event matches {"type":"run_ended"}`,
		"steps[0].counters.effective_steps: want 2, got 1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("failures:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCheck_eventsByPhaseReasonReplayedAndOrder: an event expectation can
// state phase, reason, tool and replayed (false: the key left out), and
// event_types fails on order, a missing and a duplicated event.
func TestCheck_eventsByPhaseReasonReplayedAndOrder(t *testing.T) {
	const evs = `{"assembly_error":null,"events":[{"type":"run_started","phase":"p"},{"type":"tool_call","phase":"p","step":1,"tool":"a","replayed":true},
{"type":"tool_call","phase":"p","step":2,"tool":"a"},{"type":"run_ended","phase":"p","reason":"goal_reached_by_tool"}]}`
	var doc any
	dec := json.NewDecoder(strings.NewReader(evs))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	b := func(v bool) *bool { return &v }
	for _, tc := range []struct {
		name   string
		expect scenarios.Expect
		fails  bool
	}{
		{"all match", scenarios.Expect{Events: []scenarios.ExpectEvent{
			{Type: "tool_call", Phase: "p", Step: 1, Tool: "a", Replayed: b(true)},
			{Type: "tool_call", Step: 2, Replayed: b(false)},
			{Type: "run_ended", Phase: "p", Reason: "goal_reached_by_tool"}},
			EventTypes: []string{"run_started", "tool_call", "tool_call", "run_ended"}}, false},
		{"wrong reason", scenarios.Expect{Events: []scenarios.ExpectEvent{{Type: "run_ended", Reason: "environment_error"}}}, true},
		{"wrong phase", scenarios.Expect{Events: []scenarios.ExpectEvent{{Type: "run_started", Phase: "q"}}}, true},
		{"replayed expected false", scenarios.Expect{Events: []scenarios.ExpectEvent{{Type: "tool_call", Step: 1, Replayed: b(false)}}}, true},
		{"order", scenarios.Expect{EventTypes: []string{"run_started", "tool_call", "run_ended", "tool_call"}}, true},
		{"duplicate", scenarios.Expect{EventTypes: []string{"run_started", "tool_call", "run_ended"}}, true},
	} {
		got := Check(&scenarios.Scenario{Expect: tc.expect}, doc)
		if (len(got) > 0) != tc.fails {
			t.Errorf("%s: failures %v, want failing=%v", tc.name, got, tc.fails)
		}
	}
}

// TestCheck_numbersByValue: an expected number matches the same value in
// another spelling (a port may write 2.0 as 2, 0006.D6.integer), and only
// the same value: past 2^53 too (0006.D6.exact-numbers).
func TestCheck_numbersByValue(t *testing.T) {
	var doc any
	dec := json.NewDecoder(strings.NewReader(`{"assembly_error":null,"steps":[{"index":1,"action":{"arguments":{"a":2.0,"b":9007199254740993.0,"c":9007199254740993}}}]}`))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	check := func(args map[string]any) []Failure {
		return Check(&scenarios.Scenario{Expect: scenarios.Expect{Step: []scenarios.ExpectStep{{Index: 1, Arguments: args}}}}, doc)
	}
	if f := check(map[string]any{"a": json.Number("2"), "b": json.Number("9007199254740993"), "c": json.Number("9007199254740993")}); len(f) > 0 {
		t.Errorf("same values, other spellings: %v", f)
	}
	if f := check(map[string]any{"a": json.Number("2"), "b": json.Number("9007199254740992"), "c": json.Number("9007199254740993")}); len(f) != 1 {
		t.Errorf("9007199254740993.0 against 9007199254740992: %v, want one failure", f)
	}
}
