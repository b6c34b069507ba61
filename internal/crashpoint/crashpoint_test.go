package crashpoint

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/polyloop/polyloop-conform/scenarios"
)

func TestMain(m *testing.M) {
	if ChildMain() {
		return
	}
	os.Exit(m.Run())
}

// TestCrashPoints kills a real child process at every journal write point
// of every resume scenario and checks the resume invariants (0002.D1-D5).
func TestCrashPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns hundreds of processes")
	}
	scs, err := scenarios.LoadAll(scenarios.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	total, replays, unknown, explored := 0, 0, 0, 0
	for _, sc := range scs {
		if !slices.Contains(sc.Requires, "resume") || !Eligible(sc) {
			continue
		}
		explored++
		t.Run(sc.ID, func(t *testing.T) {
			rep, err := Explore(context.Background(), exe, sc, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			total += rep.Points
			replays += rep.Replays
			unknown += rep.Unknown
			t.Logf("%s: %d crash points, %d SAFE replays, %d resume_outcome_unknown", sc.ID, rep.Points, rep.Replays, rep.Unknown)
			for _, f := range rep.Failures {
				t.Error(f)
			}
		})
	}
	if explored == 0 || total == 0 {
		t.Fatal("no crash point was explored: the resume scenarios are missing")
	}
	// Printed unconditionally so CI logs show the harness's reach.
	fmt.Printf("crash-point harness: %d scenarios, %d crash points killed and resumed, %d SAFE replays, %d resume_outcome_unknown\n", explored, total, replays, unknown)
}
