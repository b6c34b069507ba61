package crashpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/compare"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// Report is what exploring one scenario found.
type Report struct {
	Scenario string
	Points   int
	Replays  int // crash points after which a SAFE action ran again
	Unknown  int // crash points that ended resume_outcome_unknown
	Failures []string
}

// Eligible reports whether a scenario can be explored: one request, a
// journal-capable run, and no faults that fight the kill.
func Eligible(sc *scenarios.Scenario) bool {
	if sc.Request == nil || sc.Faults.JournalError != nil || sc.Faults.Cancel != nil || sc.Faults.ModelFailure != nil || sc.Faults.Resume || sc.Expect.AssemblyError != nil {
		return false
	}
	for _, m := range sc.Request.Model {
		if m.Block {
			return false
		}
	}
	for _, t := range sc.Tools {
		for _, b := range t.Handler {
			if b.Block {
				return false
			}
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
	Points     []journal.Point
	byTool     map[string]int
	intents    map[int]string // step → tool of steps that wrote an intent
}

// NewBaseline records an uninterrupted run: its trajectory, the journal
// points it passed, and the handler calls it made per tool.
func NewBaseline(tr *trajectories.Trajectory, points []journal.Point, handlerCalls []trajectories.HandlerCall) (*Baseline, error) {
	b := &Baseline{Trajectory: tr, Points: points, byTool: map[string]int{}, intents: map[int]string{}}
	for _, c := range handlerCalls {
		b.byTool[c.Tool]++
	}
	for _, p := range points {
		if p.Type == journal.TypeActionIntent {
			b.intents[p.Step] = stepTool(tr, p.Step)
		}
	}
	var err error
	b.doc, err = trajectories.ToGeneric(tr)
	return b, err
}

func runBaseline(ctx context.Context, sc *scenarios.Scenario, work string) (*Baseline, error) {
	env := fakes.New(sc, nil)
	rec := &fakes.CrashInjector{}
	tr, err := refdriver.Process(ctx, sc, env, filepath.Join(work, "baseline"), rec.Hook, false, refdriver.Options{})
	if err != nil {
		return nil, fmt.Errorf("uninterrupted run: %w", err)
	}
	return NewBaseline(tr, rec.Seen(), env.Snapshot().HandlerCalls)
}

func stepTool(tr *trajectories.Trajectory, step int) string {
	for _, s := range tr.Steps {
		if s.Index == step {
			return s.Action.Tool
		}
	}
	return ""
}

// Explore kills exe (a binary whose main calls ChildMain, such as
// crashchild) at every journal write point of sc and checks each resume.
// work is a scratch directory; parallel bounds how many points are
// explored at once (process start-up, not the kernel, is the cost).
func Explore(ctx context.Context, exe string, sc *scenarios.Scenario, work string, parallel int) (*Report, error) {
	base, err := runBaseline(ctx, sc, work)
	if err != nil {
		return nil, err
	}
	if parallel < 1 {
		parallel = 1
	}
	rep := &Report{Scenario: sc.ID, Points: len(base.Points)}
	var mu sync.Mutex
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				fails, replay, unknown := explorePoint(ctx, exe, sc, base, k, work)
				mu.Lock()
				rep.Failures = append(rep.Failures, fails...)
				rep.Replays += replay
				rep.Unknown += unknown
				mu.Unlock()
			}
		}()
	}
	for k := range base.Points {
		jobs <- k
	}
	close(jobs)
	wg.Wait()
	sort.Strings(rep.Failures)
	return rep, nil
}

func explorePoint(ctx context.Context, exe string, sc *scenarios.Scenario, base *Baseline, k int, work string) (fails []string, replays, unknown int) {
	p := base.Points[k]
	dir := filepath.Join(work, strconv.Itoa(k))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return []string{err.Error()}, 0, 0
	}
	if err := spawn(ctx, exe, sc.ID, dir, strconv.Itoa(k), true); err != nil {
		return []string{fmt.Sprintf("%s: first process: %v", p, err)}, 0, 0
	}
	if err := spawn(ctx, exe, sc.ID, dir, "resume", false); err != nil {
		return []string{fmt.Sprintf("%s: resume lost the run: %v", p, err)}, 0, 0
	}
	var counts Report
	for _, f := range check(sc, base, p, dir, &counts) {
		fails = append(fails, fmt.Sprintf("%s: %s", p, f))
	}
	return fails, counts.Replays, counts.Unknown
}

func spawn(ctx context.Context, exe, id, dir, point string, expectKill bool) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), EnvScenario+"="+id, EnvDir+"="+dir, EnvPoint+"="+point)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case expectKill && errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return nil
		}
		if ee.ExitCode() == ExitNotReached {
			return errors.New("finished without reaching the crash point")
		}
		return fmt.Errorf("%v: %s", err, out)
	case expectKill:
		return fmt.Errorf("exited normally instead of being killed: %s", out)
	case err != nil:
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// check applies the resume invariants to one crash point.
func check(sc *scenarios.Scenario, base *Baseline, p journal.Point, dir string, rep *Report) []string {
	data, err := os.ReadFile(filepath.Join(dir, ResultFile))
	if err != nil {
		return []string{"no result after resume: " + err.Error()}
	}
	got, gotDoc, err := trajectories.Parse(ResultFile, data)
	if err != nil {
		return []string{err.Error()}
	}
	calls, err := ReadCalls(filepath.Join(dir, CallsFile))
	if err != nil {
		return []string{err.Error()}
	}
	counted := tally(calls)
	return Judge(sc, base, p, got, gotDoc, counted.handlers, counted.modelSteps, rep)
}

// Judge applies the resume invariants to one crash point: got (and gotDoc,
// the same as plain JSON) is the resumed run's trajectory, byTool the
// handler calls of both processes per tool, byStep the model calls per
// step. It counts SAFE replays and unknown outcomes into rep and returns
// what is wrong, each sentence for people.
func Judge(sc *scenarios.Scenario, base *Baseline, p journal.Point, got *trajectories.Trajectory, gotDoc any, byTool map[string]int, byStep map[int]int, rep *Report) []string {
	var fails []string
	// Which action, if any, was cut between its intent and its result?
	interrupted := 0
	if _, ok := base.intents[p.Step]; ok {
		if (p.Type == journal.TypeActionIntent && !p.Before) || (p.Type == journal.TypeActionResult && p.Before) {
			interrupted = p.Step
		}
	}
	handlerRan := interrupted != 0 && p.Type == journal.TypeActionResult && dispatchesToHandler(sc, base.intents[interrupted])
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
		lost := p.Before && p.Type == journal.TypeModelOutput && p.Step == step
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
	wantSteps, _, _ := compare.Lookup(base.doc, "steps")
	gotSteps, _, _ := compare.Lookup(gotDoc, "steps")
	diffs, _ := compare.Diff(wantSteps.([]any)[:compareSteps], gotSteps, compare.Options{Ignore: []string{"[*].replayed"}})
	for _, d := range diffs {
		fails = append(fails, "steps"+d.String()+" (0002.D3)")
	}
	return fails
}

// dispatchesToHandler reports whether an executed call of tool reaches a
// fake handler (and so the call log), rather than the project executor.
func dispatchesToHandler(sc *scenarios.Scenario, tool string) bool {
	if tool == "" || sc.Request.Executor == scenarios.ExecutorProject {
		return false
	}
	for _, t := range sc.Tools {
		if t.Name == tool {
			return len(t.Handler) > 0
		}
	}
	return false
}

func replayOf(sc *scenarios.Scenario, tool string) string {
	for _, t := range sc.Tools {
		if t.Name == tool {
			return t.Replay
		}
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
