package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// TestEvidence_trustedIsNeitherObservedNorSelfReported: a pass that takes
// on trust what no runner can observe is counted and listed as such, and
// --require observed fails only the self-reported one.
func TestEvidence_trustedIsNeitherObservedNorSelfReported(t *testing.T) {
	sc := &scenarios.Scenario{ID: "cancel.x"}
	r := New("impl", "0")
	r.Rows = []Row{
		RowOf(sc, engine.Result{Scenario: "cancel.x", Trusted: []string{"the cancellation"}}),
		RowOf(sc, engine.Result{Scenario: "events.y", Staged: []string{"faults.sink"}, Trusted: []string{"the refusal"}}),
		RowOf(sc, engine.Result{Scenario: "outcome.z"}),
	}
	if got := []Evidence{r.Rows[0].Evidence, r.Rows[1].Evidence, r.Rows[2].Evidence}; got[0] != Trusted || got[1] != SelfReported || got[2] != Observed {
		t.Fatalf("evidence %v, want trusted, self-reported, observed", got)
	}
	if s := r.Summary(); !strings.Contains(s, "(of the passes: 1 observed, 1 taken on trust, 1 self-reported)") {
		t.Errorf("summary %q", s)
	}
	var text bytes.Buffer
	if err := Text(&text, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Taken on trust (no runner can observe it") || !strings.Contains(text.String(), "the cancellation: 1\n    cancel.x") {
		t.Errorf("the text report does not list what it takes on trust:\n%s", text.String())
	}
	RequireObserved(r)
	if r.Rows[0].Verdict != Pass || r.Rows[1].Verdict != Fail || r.Rows[2].Verdict != Pass {
		t.Errorf("after --require observed: %s, %s, %s; want pass, fail, pass", r.Rows[0].Verdict, r.Rows[1].Verdict, r.Rows[2].Verdict)
	}
}
