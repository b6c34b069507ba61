// Package engine runs scenarios against a Driver and judges the result
// three ways: the trajectory must match the trajectory schema, the
// scenario's hand-written expectations, and the golden trajectory.
//
// The same engine serves the ginkgo suite, the CLI and the benchmarks, so
// a scenario means the same thing everywhere it runs.
package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/compare"
	"github.com/polyloop/polyloop-conform/internal/expect"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// Driver runs one scenario on one implementation.
type Driver interface {
	// Name identifies the implementation in reports.
	Name() string
	// Capabilities lists what the implementation claims; scenarios whose
	// requires are not all claimed are skipped.
	Capabilities() []string
	// Run executes sc against env and returns the implementation's
	// trajectory. handler_calls and model_calls are filled by the engine.
	Run(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env) (*trajectories.Trajectory, error)
}

// Reference is the in-process reference kernel.
type Reference struct{}

// Name implements Driver.
func (Reference) Name() string { return "reference (in process)" }

// Capabilities implements Driver.
func (Reference) Capabilities() []string { return refdriver.Capabilities }

// Run implements Driver.
func (Reference) Run(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env) (*trajectories.Trajectory, error) {
	return refdriver.Run(ctx, sc, env, refdriver.Options{})
}

// Status is a scenario's verdict.
type Status string

// Verdicts.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Result is one scenario's verdict with everything needed to explain it.
type Result struct {
	Scenario   string
	Decisions  []string
	Status     Status
	Problems   []string
	Trajectory *trajectories.Trajectory
	// Generic is Trajectory as plain JSON values (nil when the run failed).
	Generic  any
	Duration time.Duration
}

// Suite is a set of scenarios with their goldens.
type Suite struct {
	Scenarios []*scenarios.Scenario
	// Goldens maps scenario IDs to golden file contents; nil skips golden
	// comparison (used while regenerating).
	Goldens map[string][]byte
	// Timeout bounds one scenario; zero means 10 seconds.
	Timeout time.Duration
}

// Missing reports scenarios without a golden and goldens without a
// scenario, both of which fail the suite.
func (s *Suite) Missing() []string {
	var out []string
	ids := map[string]bool{}
	for _, sc := range s.Scenarios {
		ids[sc.ID] = true
		if _, ok := s.Goldens[sc.ID]; !ok {
			out = append(out, fmt.Sprintf("scenario %s has no golden trajectories/%s.json; generate it with the update flag and review it", sc.ID, sc.ID))
		}
	}
	for id := range s.Goldens {
		if !ids[id] {
			out = append(out, fmt.Sprintf("golden trajectories/%s.json has no scenario; delete it or restore scenarios/%s.yaml", id, id))
		}
	}
	slices.Sort(out)
	return out
}

// Run executes one scenario and judges it.
func (s *Suite) Run(ctx context.Context, d Driver, sc *scenarios.Scenario) Result {
	res := Result{Scenario: sc.ID, Decisions: sc.Decisions}
	if missing := missingCaps(sc.Requires, d.Capabilities()); len(missing) > 0 {
		res.Status = Skip
		res.Problems = []string{"implementation does not claim " + strings.Join(missing, ", ")}
		return res
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	start := time.Now()
	tctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	defer cancelTimeout()
	runCtx, cancelRun := context.WithCancel(tctx)
	defer cancelRun()
	env := fakes.New(sc, cancelRun)
	tr, err := d.Run(runCtx, sc, env)
	res.Duration = time.Since(start)
	if err != nil {
		res.Status = Fail
		if errors.Is(tctx.Err(), context.DeadlineExceeded) {
			res.Problems = []string{fmt.Sprintf("timed out after %s: %v", timeout, err)}
		} else {
			res.Problems = []string{"the implementation could not run the scenario: " + err.Error()}
		}
		return res
	}
	snap := env.Snapshot()
	tr.HandlerCalls = snap.HandlerCalls
	tr.ModelCalls = snap.ModelCalls
	res.Trajectory = tr
	res.Problems = s.Judge(sc, tr)
	res.Generic, _ = trajectories.ToGeneric(tr)
	res.Status = Pass
	if len(res.Problems) > 0 {
		res.Status = Fail
	}
	return res
}

// Judge checks a trajectory against the schema, the expect block and the
// golden, returning every problem found.
func (s *Suite) Judge(sc *scenarios.Scenario, tr *trajectories.Trajectory) []string {
	var problems []string
	cite := " (" + strings.Join(sc.Decisions, ", ") + ")"
	data, err := trajectories.Marshal(tr)
	if err != nil {
		return []string{"trajectory cannot be encoded: " + err.Error()}
	}
	_, got, err := trajectories.Parse(sc.ID, data)
	if err != nil {
		return []string{"trajectory does not match trajectories/trajectory.schema.json: " + err.Error()}
	}
	if tr.Scenario != sc.ID {
		problems = append(problems, fmt.Sprintf("scenario: want %s, got %s", sc.ID, tr.Scenario))
	}
	for _, f := range expect.Check(sc, got) {
		problems = append(problems, "expect: "+f.String()+cite)
	}
	if s.Goldens == nil {
		return problems
	}
	golden, ok := s.Goldens[sc.ID]
	if !ok {
		return append(problems, fmt.Sprintf("no golden trajectories/%s.json", sc.ID))
	}
	_, want, err := trajectories.Parse("trajectories/"+sc.ID+".json", golden)
	if err != nil {
		return append(problems, "golden: "+err.Error())
	}
	for _, f := range expect.Check(sc, want) {
		problems = append(problems, "golden contradicts expect (a bug in the golden, not a new truth): "+f.String()+cite)
	}
	diffs, err := compare.Diff(want, got, compare.Options{})
	if err != nil {
		return append(problems, err.Error())
	}
	for _, d := range diffs {
		problems = append(problems, "golden: "+d.String()+cite)
	}
	return problems
}

func missingCaps(req, have []string) []string {
	var out []string
	for _, r := range req {
		if !slices.Contains(have, r) {
			out = append(out, r)
		}
	}
	return out
}
