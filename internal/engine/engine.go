// Package engine runs scenarios against a Driver and judges the result
// three ways: the trajectory must match the trajectory schema, the
// scenario's hand-written expectations, and the golden trajectory.
//
// The same engine serves the ginkgo suite, the CLI and the benchmarks, so
// a scenario means the same thing everywhere it runs.
package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/compare"
	"github.com/polyloop/polyloop-conform/internal/expect"
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

// Result is one scenario's outcome with everything needed to explain it.
// Verdicts (pass, fail, skip, known failing) are the report's to name; a
// Result says only whether it was skipped and what was wrong.
type Result struct {
	Scenario  string
	Decisions []string
	// Skipped says why the scenario did not run (capabilities the
	// implementation does not claim); "" when it ran.
	Skipped string
	// Problems are what is wrong, as data; empty means the scenario passed.
	Problems   []Problem
	Trajectory *trajectories.Trajectory
	Duration   time.Duration
	// ExpectOnly is set when the scenario had no golden and was judged by
	// its expect block alone (Suite.GoldensOptional).
	ExpectOnly bool
	// NotJudged lists the capabilities the implementation does not claim
	// whose fields differed in this scenario and were not judged (the
	// events of an implementation without events, …).
	NotJudged []string
	// Staged lists the parts of the scenario's faults the implementation
	// staged itself, the runner not playing them (Evidence): the verdict
	// takes the implementation's word for those.
	Staged []string
	// Trusted lists what no runner can observe in this scenario (Evidence):
	// the verdict takes it on trust, whatever the implementation offers.
	Trusted []string
	// ForkedResumes counts the resumes the implementation's fork server
	// forked onto a machine of their own, each seen isolated by the runner.
	ForkedResumes int
}

// Passed reports whether the scenario ran and nothing was wrong.
func (r Result) Passed() bool { return r.Skipped == "" && len(r.Problems) == 0 }

// Messages returns the problems' sentences, for people.
func (r Result) Messages() []string {
	out := make([]string, len(r.Problems))
	for i, p := range r.Problems {
		out[i] = p.Message
	}
	return out
}

// Suite is a set of scenarios with their goldens.
type Suite struct {
	Scenarios []*scenarios.Scenario
	// Goldens maps scenario IDs to golden file contents; nil skips golden
	// comparison (used while regenerating).
	Goldens map[string][]byte
	// Timeout bounds one scenario; zero means 10 seconds.
	Timeout time.Duration
	// GoldenDir is where Goldens came from, for messages; empty means the
	// built-in set, named trajectories/.
	GoldenDir string
	// Strict compares every field of the golden exactly, implementation
	// text included: the profile for the reference's own regression tests
	// and for ports that want byte equality. By default fields of class
	// text (trajectories.Fields) are checked by compare.TextRule only.
	Strict bool
	// GoldensOptional judges a scenario that has no golden by its expect
	// block alone (a team's own scenarios, written before any recording
	// was reviewed); otherwise a missing golden is a failure.
	GoldensOptional bool
	// GoldenOnly judges against the schema and the golden alone, without
	// the scenario's expect: for generated cases, whose only oracle is the
	// reference's trajectory (internal/generate).
	GoldenOnly bool

	mu    sync.Mutex
	cache map[string]*goldenInfo
}

// Missing reports scenarios without a golden and goldens without a
// scenario, both of which fail the suite.
func (s *Suite) Missing() []string {
	var out []string
	ids := map[string]bool{}
	for _, sc := range s.Scenarios {
		ids[sc.ID] = true
		if _, ok := s.Goldens[sc.ID]; !ok && !s.GoldensOptional {
			out = append(out, fmt.Sprintf("scenario %s has no golden trajectories/%s.json; generate it with go test ./conformance -args -update and review it", sc.ID, sc.ID))
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
		res.Skipped = "implementation does not claim " + strings.Join(missing, ", ")
		return res
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	start := time.Now()
	tctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	defer cancelTimeout()
	runCtx, cancelRun, expire := fakes.RunContext(tctx)
	defer cancelRun()
	// A fake that blocks stands for the call in flight when the run's
	// caller stops it: by cancelling it, or by its deadline passing
	// (faults.deadline).
	var env *fakes.Env
	env = fakes.New(sc, func() {
		if env.Deadline() {
			expire()
		} else {
			cancelRun()
		}
	})
	tr, err := d.Run(runCtx, sc, env)
	res.Duration = time.Since(start)
	if err == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		// The implementation stopped because the deadline cancelled its run:
		// that is a timeout, not a cancelled scenario.
		err = errors.New("the run was still going when the time limit cancelled it")
	}
	if err != nil {
		var msg string
		switch {
		case errors.Is(tctx.Err(), context.DeadlineExceeded):
			msg = fmt.Sprintf("timed out after %s (--timeout): %v", timeout, err)
		case errors.Is(err, fakes.ErrScriptExhausted):
			hint := "the run did not stop where the scenario expects"
			if e := sc.Expect.End; e != nil {
				hint += fmt.Sprintf(" (expected end: %s)", e.Reason)
			}
			msg = fmt.Sprintf("%s: %v (%s)", hint, err, strings.Join(sc.Decisions, ", "))
		default:
			msg = "the implementation could not run the scenario: " + err.Error()
		}
		res.Problems = []Problem{{Source: "run", Message: msg, Decisions: sc.Decisions}}
		return res
	}
	snap := env.Snapshot()
	claimed := ClaimedOf(tr)
	tr.HandlerCalls = snap.HandlerCalls
	tr.ModelCalls = snap.ModelCalls
	tr.ModelCallsReleased = snap.ModelCallsReleased
	res.Trajectory = tr
	o := observe(sc, tr, claimed, snap)
	o.plainSizes()
	res.Problems = append(o.problems, s.Judge(sc, tr)...)
	res.Problems, res.NotJudged = dropUnclaimed(res.Problems, d.Capabilities())
	res.Staged, res.Trusted = Evidence(sc, env.Played(), snap)
	res.ForkedResumes = snap.ResumesOnMachine
	if _, ok := s.Goldens[sc.ID]; !ok && s.GoldensOptional {
		res.ExpectOnly = true
	}
	return res
}

// Problem is one reason a scenario failed: the fields for tools and for
// the report's grouping, Message a full sentence for people.
type Problem struct {
	// Source is where the problem was found: run (the implementation
	// could not run the scenario), schema, expect (the scenario's own
	// oracle), golden (the golden trajectory), or golden-expect (the golden
	// contradicts the expect block: a bug in the golden).
	Source string `json:"source"`
	Path   string `json:"path,omitempty"`
	Want   any    `json:"want,omitempty"`
	Got    any    `json:"got,omitempty"`
	// Class is the class of the field at Path (golden problems only).
	Class string `json:"class,omitempty"`
	// Wording marks a difference in words alone: a field of class text
	// that differs from the reference's wording under strict and keeps
	// the text rule. It breaks no decision; the default profile accepts it.
	Wording bool `json:"wording,omitempty"`
	// Statement is what is wrong at Path ("path: want X, got Y"), without
	// the oracle and the citation that Message adds around it.
	Statement string   `json:"statement,omitempty"`
	Message   string   `json:"message"`
	Decisions []string `json:"decisions,omitempty"`
}

// Judge checks a trajectory against the schema, the expect block and the
// golden, returning every problem found.
func (s *Suite) Judge(sc *scenarios.Scenario, tr *trajectories.Trajectory) []Problem {
	cite := " (" + strings.Join(sc.Decisions, ", ") + ")"
	data, err := trajectories.MarshalCompact(tr)
	if err != nil {
		return []Problem{{Source: "schema", Message: "trajectory cannot be encoded: " + err.Error()}}
	}
	var problems []Problem
	if tr.Scenario != sc.ID {
		problems = append(problems, Problem{Source: "schema", Path: "scenario", Want: sc.ID, Got: tr.Scenario, Message: fmt.Sprintf("scenario: want %s, got %s", sc.ID, tr.Scenario)})
	}
	var g *goldenInfo
	if s.Goldens != nil {
		golden, ok := s.Goldens[sc.ID]
		switch {
		case !ok && s.GoldensOptional && sc.Expect.Empty():
			problems = append(problems, Problem{Source: "expect", Message: "the scenario has no golden and an empty expect block: nothing judges it; write its expect from the design records it cites"})
		case !ok && s.GoldensOptional:
			// Judged by expect alone, below.
		case !ok:
			problems = append(problems, Problem{Source: "golden", Message: "no golden " + s.goldenPath(sc.ID)})
		default:
			g = s.golden(sc, golden, cite)
			if g.compact != nil && bytes.Equal(data, g.compact) {
				// Byte-identical to the golden: the schema and expect checks of
				// the golden, done once per suite, are this trajectory's checks.
				return append(problems, g.selfProblems...)
			}
		}
	}
	_, got, err := trajectories.Parse(sc.ID, data)
	if err != nil {
		return append(problems, Problem{Source: "schema", Message: "trajectory does not match trajectories/trajectory.schema.json: " + err.Error()})
	}
	problems = append(problems, s.expectProblems(sc, got, "expect", "expect: ", cite)...)
	if g == nil {
		return problems
	}
	problems = append(problems, g.goldenProblems...)
	if g.doc == nil {
		return problems
	}
	// Strict compares text word for word too, and still labels each
	// difference with its class, so a report tells wording apart.
	opts := compare.Options{Class: g.class}
	if s.Strict {
		opts.TextEqual = compare.Verbatim
	}
	diffs, err := compare.Diff(g.doc, got, opts)
	if err != nil {
		return append(problems, Problem{Source: "golden", Message: err.Error()})
	}
	for _, d := range diffs {
		p := Problem{Source: "golden", Path: d.Path, Want: d.Want, Got: d.Got, Class: d.Class.String(), Wording: d.Wording, Statement: d.String(), Message: "golden: " + d.String() + cite, Decisions: sc.Decisions}
		problems = append(problems, p)
	}
	return problems
}

func (s *Suite) expectProblems(sc *scenarios.Scenario, doc any, source, prefix, cite string) []Problem {
	if s.GoldenOnly {
		return nil
	}
	var out []Problem
	for _, f := range expect.Check(sc, doc) {
		out = append(out, Problem{Source: source, Path: f.Path, Want: f.Want, Got: f.Got, Statement: f.String(), Message: prefix + f.String() + cite, Decisions: sc.Decisions})
	}
	return out
}

// goldenInfo is what a suite learns from a golden once.
type goldenInfo struct {
	doc     any
	class   func(string) compare.Class // the fields' classes, resolved against doc
	compact []byte                     // the golden as MarshalCompact writes it
	// goldenProblems are the golden's own faults (unreadable, or
	// contradicting expect); selfProblems are the problems a trajectory
	// byte-identical to the golden has.
	goldenProblems []Problem
	selfProblems   []Problem
}

func (s *Suite) golden(sc *scenarios.Scenario, golden []byte, cite string) *goldenInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.cache[sc.ID]; ok {
		return g
	}
	g := &goldenInfo{}
	_, doc, err := trajectories.Parse(s.goldenPath(sc.ID), golden)
	if err != nil {
		g.goldenProblems = []Problem{{Source: "golden", Message: "golden: " + err.Error()}}
		g.selfProblems = []Problem{{Source: "schema", Message: "trajectory does not match trajectories/trajectory.schema.json: " + err.Error()}}
	} else {
		g.doc = doc
		if g.class, err = trajectories.Classifier(doc); err != nil {
			g.goldenProblems = []Problem{{Source: "golden", Message: "golden: " + err.Error()}}
		}
		var buf bytes.Buffer
		if json.Compact(&buf, golden) == nil {
			g.compact = append(buf.Bytes(), '\n')
		}
		g.goldenProblems = s.expectProblems(sc, doc, "golden-expect", "golden contradicts expect (a bug in the golden, not a new truth): ", cite)
		g.selfProblems = append(s.expectProblems(sc, doc, "expect", "expect: ", cite), g.goldenProblems...)
	}
	if s.cache == nil {
		s.cache = map[string]*goldenInfo{}
	}
	s.cache[sc.ID] = g
	return g
}

func (s *Suite) goldenPath(id string) string {
	dir := s.GoldenDir
	if dir == "" {
		dir = "trajectories"
	}
	return filepath.Join(dir, id+".json")
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
