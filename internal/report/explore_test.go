package report

import (
	"errors"
	"slices"
	"testing"

	"github.com/polyloop/polyloop-conform/scenarios"
)

func TestExploreRow(t *testing.T) {
	sc := &scenarios.Scenario{ID: "resume.x", Level: "MUST", Decisions: []string{"0002.D5"}}
	pass := ExploreRow(sc, Exploration{Explored: 4, Source: "explore"}, 0)
	if pass.Verdict != Pass || pass.CrashPoints != 4 || pass.Note != "4 crash points" {
		t.Fatalf("clean exploration: %+v", pass)
	}
	fail := ExploreRow(sc, Exploration{Explored: 4, Failures: []string{"after:run_started: lost"}, Source: "power-loss"}, 0)
	if fail.Verdict != Fail || len(fail.Problems) != 1 || fail.Problems[0].Source != "power-loss" ||
		!slices.Equal(fail.Problems[0].Decisions, []string{"0002.D1", "0002.D3", "0002.D4", "0002.D5"}) {
		t.Fatalf("failing point: %+v", fail)
	}
	// A scenario citing a resume decision itself cites it once.
	twice := ExploreRow(&scenarios.Scenario{ID: "resume.y", Decisions: []string{"0002.D4", "0003.D1"}}, Exploration{Explored: 2, Source: "power-loss"}, 0)
	if !slices.Equal(twice.Decisions, []string{"0002.D1", "0002.D3", "0002.D4", "0003.D1"}) || twice.Note != "2 disk states" {
		t.Fatalf("power-loss row: decisions %v, note %q", twice.Decisions, twice.Note)
	}
	base := ExploreRow(sc, Exploration{Baseline: errors.New("no result"), Failures: []string{"ignored"}}, 0)
	if base.Verdict != Fail || len(base.Problems) != 1 || base.Problems[0].Source != "run" {
		t.Fatalf("failed baseline: %+v", base)
	}
}
