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
