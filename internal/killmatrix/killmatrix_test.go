package killmatrix

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/deviation"
	"github.com/polyloop/polyloop-conform/internal/report"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// TestMatrixVerdicts: a deviation caught by a scenario citing its decision
// passes; one caught only by a scenario citing another decision fails, and
// so does one nobody catches; a MUST scenario that catches nothing is a
// run error when every deviation was checked, and only listed otherwise.
func TestMatrixVerdicts(t *testing.T) {
	cites := &scenarios.Scenario{ID: "a.cites", Level: "MUST", Decisions: []string{"0004.D3"}}
	other := &scenarios.Scenario{ID: "a.other", Level: "MUST", Decisions: []string{"0010.D2"}}
	idle := &scenarios.Scenario{ID: "a.idle", Level: "MUST", Decisions: []string{"0002.D1"}}
	scs := []*scenarios.Scenario{cites, other, idle}
	devs := []deviation.Deviation{
		{Name: "caught-right", Decision: "0004.D3.order"},
		{Name: "caught-wrong", Decision: "0008.D4"},
		{Name: "uncaught", Decision: "0003.D3"},
	}
	fails := map[deviation.Name][]*scenarios.Scenario{"caught-right": {cites}, "caught-wrong": {other}}
	m, err := Build(context.Background(), devs, 2, func(_ context.Context, set deviation.Set) ([]*scenarios.Scenario, error) {
		for name := range set {
			return fails[name], nil
		}
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, everything := range []bool{true, false} {
		rep := &report.Report{}
		m.Fill(rep, scs, everything)
		got := map[string]report.Verdict{}
		for _, r := range rep.Rows {
			got[r.Scenario] = r.Verdict
		}
		if got["deviation.caught-right"] != report.Pass || got["deviation.caught-wrong"] != report.Fail || got["deviation.uncaught"] != report.Fail {
			t.Errorf("verdicts %v", got)
		}
		if idleErr := len(rep.Errors) == 1 && strings.Contains(rep.Errors[0], "a.idle"); idleErr != everything {
			t.Errorf("everything=%v: errors %v", everything, rep.Errors)
		}
	}
	var buf bytes.Buffer
	m.Write(&buf, scs, true)
	if !strings.Contains(buf.String(), "3 deviations, 2 killed, 3 problems; 1 of 3 MUST scenarios catch none") {
		t.Errorf("matrix text:\n%s", buf.String())
	}
}

// TestASignalIsNeitherCaughtNorMissed: a deviation whose run a signal cut
// short (every scenario of it failing, as a cancelled run's do) is an
// interrupted row citing no decision, not caught; the deviations after it
// are not run, and no MUST scenario is judged idle on the part that ran.
func TestASignalIsNeitherCaughtNorMissed(t *testing.T) {
	cites := &scenarios.Scenario{ID: "a.cites", Level: "MUST", Decisions: []string{"0004.D3"}}
	idle := &scenarios.Scenario{ID: "a.idle", Level: "MUST", Decisions: []string{"0002.D1"}}
	scs := []*scenarios.Scenario{cites, idle}
	devs := []deviation.Deviation{
		{Name: "ran", Decision: "0004.D3.order"},
		{Name: "stopped", Decision: "0002.D1"},
		{Name: "later", Decision: "0002.D1"},
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	m, err := Build(ctx, devs, 1, func(_ context.Context, set deviation.Set) ([]*scenarios.Scenario, error) {
		if set["stopped"] {
			cancel() // the signal comes while this deviation runs
			return scs, nil
		}
		return []*scenarios.Scenario{cites}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rep := &report.Report{}
	m.Fill(rep, scs, true)
	got := map[string]report.Row{}
	for _, r := range rep.Rows {
		got[r.Scenario] = r
	}
	if r := got["deviation.stopped"]; r.Verdict != report.Interrupted || len(r.Decisions)+len(r.Problems) > 0 {
		t.Errorf("the stopped deviation: %+v", r)
	}
	if got["deviation.ran"].Verdict != report.Pass || len(rep.Rows) != 2 || !rep.Interrupted || rep.NotRun != 1 || len(rep.Errors) > 0 {
		t.Errorf("rows %v, interrupted %v, %d not run, errors %v", got, rep.Interrupted, rep.NotRun, rep.Errors)
	}
	var buf bytes.Buffer
	m.Write(&buf, scs, true)
	text := buf.String()
	if !strings.Contains(text, "INTERRUPTED") || !strings.Contains(text, "3 deviations, 1 killed, 0 problems, 1 interrupted, 1 not run") || strings.Contains(text, "FAIL") {
		t.Errorf("matrix text:\n%s", text)
	}
}
