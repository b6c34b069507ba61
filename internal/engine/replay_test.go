package engine

import (
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// TestOneIntent: a process that replays a SAFE step reports no second
// action_intent point for it (0002.D4.one-intent); the intent the journal
// held, reported by the process that died, and a later step's intent are
// not a second one.
func TestOneIntent(t *testing.T) {
	sc, golden := load(t, "resume.safe-replayed")
	tr, _, err := trajectories.Parse(sc.ID, golden)
	if err != nil {
		t.Fatal(err)
	}
	first := []fakes.Call{
		{Kind: fakes.CallModel, Phase: 0, Step: 2},
		{Kind: fakes.CallPoint, Phase: -1, Step: 2, When: "after", Record: "action_intent", Points: true},
	}
	later := []fakes.Call{
		{Kind: fakes.CallModel, Phase: 0, Step: 3, Process: 1},
		{Kind: fakes.CallPoint, Phase: -1, Step: 3, When: "after", Record: "action_intent", Points: true, Process: 1},
	}
	second := []fakes.Call{{Kind: fakes.CallPoint, Phase: -1, Step: 2, When: "before", Record: "action_intent", Points: true, Process: 1}}
	for _, tc := range []struct {
		name string
		log  []fakes.Call
		want bool
	}{
		{"one intent", append(append([]fakes.Call{}, first...), later...), false},
		{"a second intent for the replayed step", append(append(append([]fakes.Call{}, first...), second...), later...), true},
	} {
		o := newObserver(sc, tr, fakes.Record{Log: tc.log, Process: 1})
		o.oneIntent()
		got := len(o.problems) > 0
		if got != tc.want || got && !strings.Contains(o.problems[0].Message, "no second one") {
			t.Errorf("%s: problems %v, want a problem: %v", tc.name, o.problems, tc.want)
		}
	}
}

// TestProbeLast: a request refused before the measure's place in the
// refusal order asked the measure nothing (0010.D5.probe-last); a refusal
// for the measure itself did.
func TestProbeLast(t *testing.T) {
	sc, _ := load(t, "context.probe-after-other-refusals")
	probe := []fakes.Call{{Kind: fakes.CallMeasure, Phase: 0, Block: "observation"}}
	for _, tc := range []struct {
		kind string
		log  []fakes.Call
		want bool
	}{
		{"template_without_placeholder", nil, false},
		{"template_without_placeholder", probe, true},
		{"missing_handler", probe, true},
		{"unmeasurable_block", probe, false},
	} {
		tr := &trajectories.Trajectory{AssemblyError: &trajectories.AssemblyError{Kind: tc.kind}}
		o := newObserver(sc, tr, fakes.Record{Log: tc.log})
		o.probeLast()
		if got := len(o.problems) > 0; got != tc.want {
			t.Errorf("%s with %d measure call(s): problems %v, want one: %v", tc.kind, len(tc.log), o.problems, tc.want)
		}
	}
}

// TestEvidenceOfAnUnaskedMeasure: a request refused before the probe
// asks the measure nothing (0010.D5.probe-last), so the runner that
// offered its measure and got no call played all there was: not staged.
// Without the offer the implementation staged the refusal itself.
func TestEvidenceOfAnUnaskedMeasure(t *testing.T) {
	sc, _ := load(t, "context.probe-after-other-refusals")
	offered := fakes.Record{Offered: map[string]bool{scenarios.PartMeasure: true}}
	if staged, _ := Evidence(sc, map[string]bool{}, offered); len(staged) > 0 {
		t.Errorf("offered and unasked: staged %v, want nothing", staged)
	}
	if staged, _ := Evidence(sc, map[string]bool{}, fakes.Record{}); len(staged) == 0 {
		t.Error("not offered: nothing staged, want the measure's refusal")
	}
	other, _ := load(t, "context.unknown-block-type")
	if staged, _ := Evidence(other, map[string]bool{}, offered); len(staged) == 0 {
		t.Error("an unmeasurable_block refusal the runner's measure never made: nothing staged, want the measure's refusal")
	}
}
