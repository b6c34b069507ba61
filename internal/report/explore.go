package report

import (
	"fmt"
	"slices"
	"time"

	"github.com/polyloop/polyloop-conform/scenarios"
)

// Exploration is what exploring one scenario's crash points (or power
// cuts) found, as a report row needs it.
type Exploration struct {
	Explored int      // points killed (or states) resumed
	Baseline error    // the uninterrupted run failed: nothing explored
	Failures []string // one sentence per failing point, its name first
	// Forked counts the resumes forked onto a machine of their own and
	// seen so (Row.ForkedResumes).
	Forked int
	// Source names the exploration in each problem: "explore" or
	// "power-loss".
	Source string
	// Interrupted: a signal stopped the exploration; the row is
	// interrupted, with no problem and no decision cited.
	Interrupted bool
}

// ExploreRow is the verdict of one scenario's exploration: a failure of
// the uninterrupted run, or one problem per failing point, each citing the
// resume decisions (and 0002.D1, durability, for a power cut) and the
// scenario's own, each once.
func ExploreRow(sc *scenarios.Scenario, e Exploration, took time.Duration) Row {
	if e.Interrupted {
		return Row{Scenario: sc.ID, Level: sc.Level, Requires: sc.Requires, Verdict: Interrupted, Duration: took, CrashPoints: e.Explored, Note: "stopped by a signal"}
	}
	decs := []string{"0002.D3", "0002.D4"}
	if e.Source == "power-loss" {
		decs = []string{"0002.D1", "0002.D3", "0002.D4"} // a record reported written is durable
	}
	for _, d := range sc.Decisions {
		if !slices.Contains(decs, d) {
			decs = append(decs, d)
		}
	}
	row := Row{Scenario: sc.ID, Level: sc.Level, Requires: sc.Requires, Decisions: decs, Duration: took, CrashPoints: e.Explored, ForkedResumes: e.Forked}
	if e.Baseline != nil {
		row.Verdict = Fail
		row.Problems = []Problem{{Source: "run", Message: "the uninterrupted run: " + e.Baseline.Error(), Decisions: decs}}
		return row
	}
	row.Verdict, row.Note = Pass, CrashPointsNote(e.Explored)
	if e.Source == "power-loss" {
		row.Note = fmt.Sprintf("%d disk states", e.Explored)
	}
	for _, f := range e.Failures {
		row.Problems = append(row.Problems, Problem{Source: e.Source, Message: f, Decisions: decs})
	}
	if len(row.Problems) > 0 {
		row.Verdict = Fail
	}
	return row
}

// SkipRow is a scenario an exploration skips, with the reason.
func SkipRow(sc *scenarios.Scenario, note string) Row {
	return Row{Scenario: sc.ID, Level: sc.Level, Requires: sc.Requires, Verdict: Skip, Decisions: sc.Decisions, Note: note}
}
