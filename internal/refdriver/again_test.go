package refdriver

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/scenarios"
)

func loadEmbedded(t *testing.T, file string) *scenarios.Scenario {
	t.Helper()
	data, err := fs.ReadFile(scenarios.Embedded(), file)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse(file, data)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestCrashOnResume: with faults.crash_on_resume the run is resumed twice
// (three processes), the trajectory is the third's and names the second
// crash point; a second point the resumed run never reaches is an error.
func TestCrashOnResume(t *testing.T) {
	sc := loadEmbedded(t, "resume.crash-again-after-resume.yaml")
	restarts := 0
	tr, err := Run(context.Background(), sc, fakes.New(sc, nil), Options{Restarted: func() { restarts++ }})
	if err != nil {
		t.Fatal(err)
	}
	if restarts != 2 {
		t.Errorf("restarts = %d, want 2 (three processes)", restarts)
	}
	if tr.Resume == nil || tr.Resume.CrashPoint != "before:action_result:step2" {
		t.Errorf("resume = %+v, want the second crash point", tr.Resume)
	}
	if tr.End == nil || tr.End.Reason != "resume_outcome_unknown" {
		t.Errorf("end = %+v", tr.End)
	}

	never := *sc
	faults := sc.Faults
	faults.CrashOnResume = &scenarios.CrashSpec{When: "after", Record: "action_result", Step: 9}
	never.Faults = faults
	_, err = Run(context.Background(), &never, fakes.New(&never, nil), Options{})
	if err == nil || !strings.Contains(err.Error(), "crash_on_resume point was never reached") {
		t.Errorf("err = %v, want the unreached crash_on_resume point named", err)
	}
}
