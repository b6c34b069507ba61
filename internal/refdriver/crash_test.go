package refdriver

import (
	"errors"
	"testing"

	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/scenarios"
)

func TestCrashInjector(t *testing.T) {
	ci := ForSpec(&scenarios.CrashSpec{When: "after", Record: "action_intent", Step: 2})
	points := []struct {
		before bool
		typ    string
		step   int
	}{{true, "action_intent", 1}, {false, "action_intent", 1}, {true, "action_intent", 2}, {false, "action_intent", 2}, {false, "action_intent", 2}}
	var errs []error
	for i, p := range points {
		errs = append(errs, ci.Hook(pt(i+1, p.before, p.typ, p.step)))
	}
	if errs[0] != nil || errs[1] != nil || errs[2] != nil || !errors.Is(errs[3], ErrCrash) || errs[4] != nil {
		t.Errorf("errors = %v (fires once, at after:action_intent:step2)", errs)
	}
	if p, ok := ci.Fired(); !ok || p.Step != 2 || p.When != journal.After {
		t.Errorf("fired at %v %v", p, ok)
	}
	at := AtIndex(1)
	if at.Hook(pt(1, true, "run_started", 0)) != nil || !errors.Is(at.Hook(pt(1, false, "run_started", 0)), ErrCrash) {
		t.Error("AtIndex(1) did not fire at the second point")
	}
}

func pt(seq int, before bool, typ string, step int) journal.Point {
	return journal.Point{Seq: seq, When: map[bool]string{true: journal.Before, false: journal.After}[before], Record: typ, Step: step}
}
