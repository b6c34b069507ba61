package report

import (
	"errors"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/scenarios"
)

// TestInterruptedExplorationIsNoFailure pins issue 43 item 3: a row a
// signal stopped is interrupted, cites no decision and carries none of the
// "context canceled" problems the cancellation caused.
func TestInterruptedExplorationIsNoFailure(t *testing.T) {
	sc := &scenarios.Scenario{ID: "resume.x", Decisions: []string{"0002.D1"}}
	row := ExploreRow(sc, Exploration{Explored: 3, Interrupted: true, Source: "explore",
		Failures: []string{"before:x:1: resume lost the run: context canceled (0002.D3)"}, Baseline: errors.New("context canceled")}, 0)
	if row.Verdict != Interrupted {
		t.Fatalf("verdict %q, want %q", row.Verdict, Interrupted)
	}
	if len(row.Problems) != 0 || len(row.Decisions) != 0 {
		t.Fatalf("an interrupted row cites problems %v and decisions %v", row.Problems, row.Decisions)
	}
	rep := &Report{Rows: []Row{row}, Interrupted: true}
	if c := rep.Counts(); c.Interrupted != 1 || c.Failed != 0 {
		t.Fatalf("counts %+v, want 1 interrupted, 0 failed", c)
	}
	if strings.Contains(rep.Summary(), "0 interrupted") {
		t.Fatalf("summary %q", rep.Summary())
	}
}
