package crashpoint

import (
	"fmt"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/compare"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// judgePhased judges the resume of a phased scenario killed at p, a point
// of phase k: the resumed trajectory starts at phase k (the phases before
// it ended in the killed process and are not reported again); phase k is
// judged by Judge as a run of its own, against the uninterrupted run's
// phase k; every later phase runs as it did uninterrupted.
func judgePhased(sc *scenarios.Scenario, base *Baseline, p protocol.Point, got *trajectories.Trajectory, snap fakes.Record, c *Counts) []string {
	runs := sc.Runs()
	k := p.Phase
	index := map[string]int{}
	for i, r := range runs {
		index[r.Name] = i
	}
	var fails []string
	for _, s := range got.Steps {
		if index[s.Phase] < k {
			fails = append(fails, fmt.Sprintf("step %d of phase %s is reported, but that phase ended before the kill in phase %s; the resumed trajectory starts at the resumed phase (0002.D3)", s.Index, s.Phase, runs[k].Name))
		}
	}
	for j := k; j < len(runs); j++ {
		name := runs[j].Name
		want, have := onePhase(base.Trajectory, name), onePhase(got, name)
		byTool, byStep := phaseTally(snap, name, j)
		if j > k {
			fails = append(fails, samePhase(name, want, have, byTool)...)
			continue
		}
		var points []protocol.Point
		for _, q := range base.Points {
			if q.Phase == k {
				points = append(points, q)
			}
		}
		bk, err := NewBaseline(want, points, want.HandlerCalls)
		doc, derr := trajectories.ToGeneric(have)
		if err != nil || derr != nil {
			return append(fails, fmt.Sprint(err, derr))
		}
		one := *sc
		one.Request, one.Phases = &runs[k], nil
		for _, f := range Judge(&one, bk, p, have, doc, byTool, byStep, c) {
			fails = append(fails, "phase "+name+": "+f)
		}
	}
	return fails
}

// onePhase is tr's account of one phase: its steps, its end and the
// handler calls made in it.
func onePhase(tr *trajectories.Trajectory, name string) *trajectories.Trajectory {
	out := &trajectories.Trajectory{Format: tr.Format, Scenario: tr.Scenario, Resume: tr.Resume}
	for _, s := range tr.Steps {
		if s.Phase == name {
			out.Steps = append(out.Steps, s)
		}
	}
	for _, pe := range tr.Phases {
		if pe.Name == name {
			end := pe.End
			out.End = &end
		}
	}
	for _, hc := range tr.HandlerCalls {
		if hc.Phase == name {
			out.HandlerCalls = append(out.HandlerCalls, hc)
		}
	}
	return out
}

// phaseTally counts, across both processes, one phase's handler calls per
// tool and model calls per step.
func phaseTally(snap fakes.Record, name string, index int) (byTool map[string]int, byStep map[int]int) {
	byTool, byStep = map[string]int{}, map[int]int{}
	for _, hc := range snap.HandlerCalls {
		if hc.Phase == name {
			byTool[hc.Tool]++
		}
	}
	for _, call := range snap.Log {
		if call.Kind == fakes.CallModel && call.Phase == index {
			byStep[call.Step]++
		}
	}
	return byTool, byStep
}

// samePhase holds a phase after the resumed one to the uninterrupted run:
// the same steps, the same end, its handlers run as often.
func samePhase(name string, want, have *trajectories.Trajectory, byTool map[string]int) []string {
	var fails []string
	wd, _ := trajectories.ToGeneric(want)
	hd, _ := trajectories.ToGeneric(have)
	ws, _, _ := compare.Lookup(wd, "steps")
	hs, _, _ := compare.Lookup(hd, "steps")
	diffs, _ := compare.Diff(ws, hs, compare.Options{Ignore: []string{"[*].replayed"}})
	for _, d := range diffs {
		fails = append(fails, "phase "+name+": steps"+d.String()+" (0002.D3, 0003.D1)")
	}
	if d := endDiff(want.End, have.End); d != "" {
		fails = append(fails, "phase "+name+": end: "+d+" (0003.D1)")
	}
	wantTool := map[string]int{}
	for _, hc := range want.HandlerCalls {
		wantTool[hc.Tool]++
	}
	for t, n := range wantTool {
		if byTool[t] != n {
			fails = append(fails, fmt.Sprintf("phase %s: handler %s ran %d times across both processes, want %d (0002.D3)", name, t, byTool[t], n))
		}
	}
	return fails
}

// JudgeResume judges the resume of sc killed at p, over the fakes of both
// processes (snap): a single request by Judge, a phased scenario by the
// rules of judgePhased. Power-loss exploration judges its cuts with it.
func JudgeResume(sc *scenarios.Scenario, base *Baseline, p protocol.Point, got *trajectories.Trajectory, snap fakes.Record, c *Counts) []string {
	if sc.Request == nil {
		return judgePhased(sc, base, p, got, snap, c)
	}
	doc, err := trajectories.ToGeneric(got)
	if err != nil {
		return []string{err.Error()}
	}
	byTool, byStep := Tally(snap)
	return Judge(sc, base, p, got, doc, byTool, byStep, c)
}
