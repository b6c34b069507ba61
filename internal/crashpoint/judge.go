package crashpoint

import (
	"fmt"
	"slices"

	"github.com/polyloop/polyloop-conform/internal/compare"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// The journal record types and point sides the judge reasons about, as the
// protocol spells them (journal_point messages, docs/protocol.md).
const (
	recordIntent      = "action_intent"
	recordResult      = "action_result"
	recordModelOutput = "model_output"
	before            = "before"
	after             = "after"
)

// Counts is what the judge tallies over crash points besides failures.
type Counts struct {
	Replays int // crash points after which a SAFE action ran again
	Unknown int // crash points that ended resume_outcome_unknown
	// Forked counts the resumes the implementation's fork server forked
	// onto a machine of their own, each seen so by the runner.
	Forked int
}

// Eligible reports whether a scenario can be explored: a journal-capable
// run (one request, or phases, each killed at every point of its own
// journal), and no faults that fight the kill.
func Eligible(sc *scenarios.Scenario) bool {
	if sc.Faults.JournalError != nil || sc.Faults.Cancel != nil || sc.Faults.Deadline != nil || sc.Faults.ModelFailure != nil || sc.Faults.Resume || sc.Expect.AssemblyError != nil {
		return false
	}
	for _, r := range sc.Runs() {
		if slices.ContainsFunc(r.Model, func(m scenarios.ModelTurn) bool { return m.Block }) {
			return false
		}
	}
	for _, t := range sc.Tools {
		if slices.ContainsFunc(t.Handler, func(b scenarios.Behaviour) bool { return b.Block }) {
			return false
		}
	}
	return true
}

// Baseline is what the uninterrupted run of a scenario shows: its
// trajectory, its journal points, its handler calls per tool and the
// tool of each step that journalled an intent.
type Baseline struct {
	Trajectory *trajectories.Trajectory
	doc        any
	Points     []protocol.Point
	byTool     map[string]int
	intents    map[int]string // step → tool of steps that wrote an intent
}

// NewBaseline records an uninterrupted run: its trajectory, the journal
// points it passed, and the handler calls it made.
func NewBaseline(tr *trajectories.Trajectory, points []protocol.Point, handlerCalls []trajectories.HandlerCall) (*Baseline, error) {
	b := &Baseline{Trajectory: tr, Points: points, byTool: map[string]int{}, intents: map[int]string{}}
	for _, c := range handlerCalls {
		b.byTool[c.Tool]++
	}
	for _, p := range points {
		if p.Record == recordIntent {
			b.intents[p.Step] = stepTool(tr, p.Step)
		}
	}
	var err error
	b.doc, err = trajectories.ToGeneric(tr)
	return b, err
}

func stepTool(tr *trajectories.Trajectory, step int) string {
	for _, s := range tr.Steps {
		if s.Index == step {
			return s.Action.Tool
		}
	}
	return ""
}

// Judge applies the resume invariants to one crash point: got (and gotDoc,
// the same as plain JSON) is the resumed run's trajectory, byTool the
// handler calls of both processes per tool, byStep the model calls per
// step. It counts SAFE replays and unknown outcomes into rep and returns
// what is wrong, each sentence for people.
func Judge(sc *scenarios.Scenario, base *Baseline, p protocol.Point, got *trajectories.Trajectory, gotDoc any, byTool map[string]int, byStep map[int]int, rep *Counts) []string {
	var fails []string
	// Which action, if any, was cut between its intent and its result?
	interrupted := 0
	if _, ok := base.intents[p.Step]; ok {
		if (p.Record == recordIntent && p.When == after) || (p.Record == recordResult && p.When == before) {
			interrupted = p.Step
		}
	}
	handlerRan := interrupted != 0 && p.Record == recordResult && dispatchesToHandler(sc, base.intents[interrupted])
	wantByTool := map[string]int{}
	for t, n := range base.byTool {
		wantByTool[t] = n
	}
	compareSteps := len(base.Trajectory.Steps)
	wantEnd := base.Trajectory.End
	if interrupted != 0 {
		tool := base.intents[interrupted]
		policy := replayOf(sc, tool)
		if policy == "SAFE" {
			rep.Replays++
			if handlerRan {
				wantByTool[tool]++
			}
			for _, s := range got.Steps {
				if s.Replayed != (s.Index == interrupted) {
					fails = append(fails, fmt.Sprintf("step %d replayed = %v; only the interrupted SAFE step %d may be replayed (0002.D4)", s.Index, s.Replayed, interrupted))
				}
			}
		} else {
			rep.Unknown++
			wantEnd = &trajectories.End{Reason: "resume_outcome_unknown", EffectiveSteps: countersBefore(base.Trajectory, interrupted).EffectiveSteps,
				TotalSteps: countersBefore(base.Trajectory, interrupted).TotalSteps, Detail: &trajectories.EndDetail{Step: interrupted, Tool: tool}}
			compareSteps = interrupted - 1
			// Later steps never happen; their handlers never run.
			wantByTool = map[string]int{}
			for _, s := range base.Trajectory.Steps[:interrupted-1] {
				if s.Outcome.Status != "NOT_EXECUTED" && dispatchesToHandler(sc, s.Action.Tool) {
					wantByTool[s.Action.Tool]++
				}
			}
			if handlerRan {
				wantByTool[tool]++
			}
		}
	} else {
		for _, s := range got.Steps {
			if s.Replayed {
				fails = append(fails, fmt.Sprintf("step %d replayed although no action was interrupted (0002.D3)", s.Index))
			}
		}
	}
	for t, n := range wantByTool {
		if byTool[t] != n {
			fails = append(fails, fmt.Sprintf("handler %s ran %d times across both processes, want %d (0002.D4: a NEVER action is never run again, an interrupted SAFE one once more; 0002.D3: completed work is not redone)", t, byTool[t], n))
		}
	}
	for t, n := range byTool {
		if _, ok := wantByTool[t]; !ok && n > 0 {
			fails = append(fails, fmt.Sprintf("handler %s ran %d times, want 0 (0002.D3, 0002.D4)", t, n))
		}
	}
	for step, n := range byStep {
		lost := p.When == before && p.Record == recordModelOutput && p.Step == step
		if n > 1 && !(lost && n == 2) {
			fails = append(fails, fmt.Sprintf("the model was asked %d times for step %d, whose output was already journalled (0002.D3)", n, step))
		}
	}
	if d := endDiff(wantEnd, got.End); d != "" {
		fails = append(fails, "end: "+d+" (0002.D2, 0002.D4)")
	}
	if len(got.Steps) != compareSteps {
		fails = append(fails, fmt.Sprintf("%d steps after resume, want %d (0002.D3)", len(got.Steps), compareSteps))
		return fails
	}
	// The steps both processes took, compared by class as a run is
	// compared with its golden: a sentence the design leaves to the
	// implementation may be worded anew by the resumed process.
	wantSteps, _, _ := compare.Lookup(base.doc, "steps")
	gotSteps, _, _ := compare.Lookup(gotDoc, "steps")
	diffs, err := trajectories.DiffRuns(map[string]any{"steps": wantSteps.([]any)[:compareSteps]}, map[string]any{"steps": gotSteps}, false, "steps[*].replayed")
	if err != nil {
		return append(fails, err.Error())
	}
	for _, d := range diffs {
		fails = append(fails, d.String()+" (0002.D3)")
	}
	return fails
}

// dispatchesToHandler reports whether an executed call of tool reaches a
// fake handler (and so the call log), rather than the project executor.
func dispatchesToHandler(sc *scenarios.Scenario, tool string) bool {
	if tool == "" || sc.Request.Executor == scenarios.ExecutorProject {
		return false
	}
	t := sc.Tool(tool)
	return t != nil && len(t.Handler) > 0
}

func replayOf(sc *scenarios.Scenario, tool string) string {
	if t := sc.Tool(tool); t != nil {
		return t.Replay
	}
	return ""
}

func countersBefore(tr *trajectories.Trajectory, step int) trajectories.Counters {
	if step <= 1 {
		return trajectories.Counters{}
	}
	return tr.Steps[step-2].Counters
}

func endDiff(want, got *trajectories.End) string {
	w, _ := trajectories.ToGeneric(&trajectories.Trajectory{End: want})
	g, _ := trajectories.ToGeneric(&trajectories.Trajectory{End: got})
	wv, _, _ := compare.Lookup(w, "end")
	gv, _, _ := compare.Lookup(g, "end")
	diffs, _ := compare.Diff(wv, gv, compare.Options{})
	if len(diffs) == 0 {
		return ""
	}
	return diffs[0].String()
}
