package golden

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/trajectories"
)

func traj(steps int) *trajectories.Trajectory {
	t := &trajectories.Trajectory{Format: trajectories.Format, Scenario: "a.b", End: &trajectories.End{Reason: "total_budget_exhausted"}}
	for i := 1; i <= steps; i++ {
		t.Steps = append(t.Steps, trajectories.Step{Index: i, ModelInput: []trajectories.Message{}, Action: trajectories.Action{Kind: "none", Repairs: []string{}},
			Outcome: trajectories.Outcome{Status: "NOT_EXECUTED"}})
	}
	return t
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	ch, err := Write(dir, traj(2), false)
	if err != nil || !ch.Created {
		t.Fatalf("create: %+v %v", ch, err)
	}
	ch, err = Write(dir, traj(2), false)
	if err != nil || ch.Changed() {
		t.Fatalf("rewrite of the same content: %+v %v", ch, err)
	}
	grown := traj(3)
	ch, err = Write(dir, grown, false)
	if err != nil || !ch.Changed() || !strings.Contains(ch.String(), "steps[2]") {
		t.Fatalf("growth: %v %v", ch, err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "a.b.json"))
	_, err = Write(dir, traj(1), false)
	if !errors.Is(err, ErrShrink) {
		t.Fatalf("shrink without permission: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "a.b.json"))
	if string(before) != string(after) {
		t.Error("a refused update still changed the golden")
	}
	if _, err := Write(dir, traj(1), true); err != nil {
		t.Fatalf("shrink with permission: %v", err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestWrite_refusesHostileIDs(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"../evil", "a/b.c", "..", "A.B", ""} {
		tr := traj(0)
		tr.Scenario = id
		if _, err := Write(dir, tr, true); err == nil {
			t.Errorf("id %q accepted", id)
		}
	}
	entries, _ := os.ReadDir(dir)
	parent, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 0 {
		t.Errorf("files written: %v (parent has %d entries)", entries, len(parent))
	}
}
