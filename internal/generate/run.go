package generate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/atomicfile"
	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// Options configure a generation run.
type Options struct {
	// Reference is the oracle (the reference in process); Impl is compared
	// with it.
	Reference, Impl engine.Driver
	Seed            uint64
	// Count stops after that many valid cases; Until stops at that time
	// (whichever comes first; zero means no limit of that kind).
	Count int
	Until time.Time
	// Out is where shrunk differences are written ("" writes nothing).
	Out string
	// Timeout bounds one run of one case.
	Timeout time.Duration
	// Stop ends the run at the first difference.
	Stop bool
	// Progress, when set, is called every so many cases.
	Progress func(Summary)
	// Shrunk bounds how many differences are shrunk (0: every one); the
	// others are reported as drawn, so a badly broken implementation
	// does not make a run's batch slow.
	Shrunk int
	// Sources are scenarios whose variants are drawn beside generated
	// cases (renamed tools, reordered registrations, new texts; nil: none).
	Sources []Source
	// Replay is the command line that draws the same cases again (with
	// --seed); each saved difference names it, so a difference found
	// under a fresh seed can be reproduced.
	Replay string
}

// Summary is what a generation run did.
type Summary struct {
	Cases     int // valid cases compared
	Discarded int // cases the reference itself could not run (an unreachable crash point …)
	Skipped   int // cases needing a capability the implementation does not claim
	Found     []Found
	Shrinks   int // accepted shrink steps, over all differences
	// Interrupted is the number of the case a signal (a cancelled
	// context) stopped before it was compared, 0 when none was: it is
	// neither a difference nor an agreement, so it is not among Cases.
	Interrupted int
}

// Found is one difference, shrunk.
type Found struct {
	Case  int // 1-based number of the case that first differed
	ID    string
	Steps int // model outputs scripted, after shrinking
	Tools int
	// Decisions are the decisions the difference breaks, in the order the
	// run met them (attribute.go): the first point where it diverged, the
	// source scenario's, the drawn features'.
	Decisions []string
	// Source is the scenario a variant was drawn from ("" for a drawn spec).
	Source   string
	Problems []string
	// Details are the same problems as data, for report rows.
	Details []engine.Problem
	File    string // the scenario written, if Out is set
	// Shrunk says whether the case was shrunk (see Options.Shrunk).
	Shrunk bool
	// ShrinkStopped says a signal stopped the shrinking: the case is the
	// smallest one that differed before the signal came.
	ShrinkStopped bool
	// YAML is the scenario, ready to add to a suite, and Golden the
	// reference's trajectory for it.
	YAML, Golden []byte
}

// caseID names case n of a seed.
func caseID(seed uint64, n int) string { return fmt.Sprintf("generated.s%d-c%d", seed, n) }

// Run generates cases from o.Seed and compares o.Impl with o.Reference on
// each; the same seed gives the same cases. It stops at the first
// difference when o.Stop is set, else at the count or the time.
func Run(ctx context.Context, o Options) (Summary, error) {
	var sum Summary
	r := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	for n := 1; ; n++ {
		if ctx.Err() != nil {
			return sum, ctx.Err()
		}
		if (o.Count > 0 && sum.Cases >= o.Count) || (!o.Until.IsZero() && time.Now().After(o.Until)) {
			return sum, nil
		}
		c := draw(r, o.Sources)
		id := caseID(o.Seed, n)
		cmp, err := compareCase(ctx, o, c, id)
		if err != nil {
			return sum, err
		}
		switch {
		case cmp.status == interrupted:
			// What the cancellation broke is no difference: the case is
			// reported as stopped, and nothing is saved.
			sum.Interrupted = n
			return sum, ctx.Err()
		case cmp.status == discarded:
			sum.Discarded++
			continue
		case cmp.status == skipped:
			sum.Skipped++
			continue
		case cmp.problems == nil:
			sum.Cases++
		default:
			sum.Cases++
			f, steps, err := shrink(ctx, o, c, id, n, cmp, o.Shrunk == 0 || len(sum.Found) < o.Shrunk)
			if err != nil {
				return sum, err
			}
			sum.Shrinks += steps
			sum.Found = append(sum.Found, f)
			if o.Stop {
				return sum, nil
			}
		}
		if o.Progress != nil && (sum.Cases+sum.Discarded)%200 == 0 {
			o.Progress(sum)
		}
	}
}

// drawnCase is a case to compare: a generated spec, or a variant of a
// source scenario.
type drawnCase interface {
	render(id string, decisions []string, expect map[string]any) ([]byte, *scenarios.Scenario, error)
}

// draw draws the next case: a variant of a source scenario a quarter of
// the time when there are sources, a generated spec otherwise.
func draw(r *rand.Rand, sources []Source) drawnCase {
	if len(sources) > 0 && chance(r, 0.25) {
		return newVariant(r, sources[r.IntN(len(sources))])
	}
	return newSpec(r)
}

type status int

const (
	compared  status = iota
	discarded        // the reference itself cannot run the case
	skipped          // the implementation does not claim a capability it needs
	// interrupted: the context was cancelled while a side ran, so the
	// runs say nothing (a run cut short differs from any golden).
	interrupted
)

// comparison is one case run on both sides: problems is nil when the
// implementation agrees with the reference, and holds the differences
// otherwise; ref and golden are the reference's trajectory, kept so a
// difference is saved without running the reference again.
type comparison struct {
	status   status
	problems []engine.Problem
	ref      *trajectories.Trajectory
	golden   []byte
}

func compareCase(ctx context.Context, o Options, s drawnCase, id string) (comparison, error) {
	_, sc, err := s.render(id, placeholder, nil)
	if _, isVariant := s.(*variant); err != nil && isVariant {
		// A team's scenario may name its tools where a variant does not
		// rename them; such a variant is not a case.
		return comparison{status: discarded}, nil
	}
	if err != nil {
		return comparison{status: discarded}, &loadError{id: id, err: err}
	}
	if ctx.Err() != nil {
		return comparison{status: interrupted}, nil
	}
	ref := (&engine.Suite{Scenarios: []*scenarios.Scenario{sc}, Timeout: o.Timeout, GoldenOnly: true}).Run(ctx, o.Reference, sc)
	if ctx.Err() != nil {
		return comparison{status: interrupted}, nil
	}
	if ref.Skipped != "" || !ref.Passed() || ref.Trajectory == nil || exhausted(ref.Trajectory) {
		return comparison{status: discarded}, nil
	}
	golden, err := trajectories.Marshal(ref.Trajectory)
	if err != nil {
		return comparison{status: discarded}, err
	}
	res := (&engine.Suite{Scenarios: []*scenarios.Scenario{sc}, Goldens: map[string][]byte{id: golden}, Timeout: o.Timeout, GoldenOnly: true}).Run(ctx, o.Impl, sc)
	if ctx.Err() != nil {
		return comparison{status: interrupted}, nil
	}
	if res.Skipped != "" {
		return comparison{status: skipped}, nil
	}
	return comparison{status: compared, problems: res.Problems, ref: ref.Trajectory, golden: golden}, nil
}

// shrink makes the case smaller while the implementation still differs
// from the reference (a generated spec, when reduce is set), then renders
// it and writes it to o.Out. It returns the accepted steps. A signal
// stops the shrinking, not the difference: the first comparison came
// before it, so the smallest case that differed so far is kept.
func shrink(ctx context.Context, o Options, c drawnCase, id string, n int, first comparison, reduce bool) (Found, int, error) {
	cur, curCmp, steps := c, first, 0
	s, isSpec := c.(*spec)
	stopped := false
	for changed := reduce && isSpec; changed && steps < 200 && !stopped; {
		changed = false
		for _, c := range candidates(s) {
			cmp, err := compareCase(ctx, o, c, id)
			var le *loadError
			if errors.As(err, &le) {
				continue // a smaller variant that is not a valid scenario
			}
			if err != nil {
				return Found{}, steps, err
			}
			if cmp.status == interrupted {
				stopped = true
				break
			}
			if cmp.status == compared && cmp.problems != nil {
				s, cur, curCmp, changed = c, c, cmp, true
				steps++
				break
			}
		}
	}
	f := Found{Case: n, ID: id, Details: cite(curCmp.problems), Shrunk: reduce && isSpec, ShrinkStopped: stopped, Golden: curCmp.golden}
	f.Decisions, f.Source = attribution(cur, curCmp.problems, curCmp.golden)
	f.Steps, f.Tools = size(cur)
	for _, p := range f.Details {
		f.Problems = append(f.Problems, p.Message)
	}
	var err error
	if f.YAML, err = scenarioYAML(o.Seed, o.Replay, cur, f, curCmp.ref); err != nil {
		return f, steps, err
	}
	if o.Out == "" {
		return f, steps, nil
	}
	f.File = filepath.Join(o.Out, f.ID+".yaml")
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return f, steps, err
	}
	if err := atomicfile.Write(f.File, f.YAML); err != nil {
		return f, steps, err
	}
	return f, steps, atomicfile.Write(filepath.Join(o.Out, f.ID+".json"), f.Golden)
}

// size is the number of model outputs scripted and of tools registered.
func size(c drawnCase) (steps, tools int) {
	if s, ok := c.(*spec); ok {
		return s.steps(), s.toolCount()
	}
	v := c.(*variant)
	return v.steps(), v.toolCount()
}

// scenarioYAML renders the case as a scenario ready to add, citing the
// decisions of the differing fields; its expect says only how the
// reference's run ended (the loader requires it), the rest is for a
// person to write.
func scenarioYAML(seed uint64, replay string, c drawnCase, f Found, ref *trajectories.Trajectory) ([]byte, error) {
	decisions := f.Decisions
	if len(decisions) == 0 {
		decisions = []string{"0004.D2"}
	}
	data, _, err := c.render(f.ID, decisions, ending(ref))
	if err != nil {
		return nil, err
	}
	how := "and shrunk"
	if !f.Shrunk {
		how = "(not shrunk)"
	}
	header := fmt.Sprintf("# Generated by polyloop-conform generate (seed %d, case %d) %s.\n"+
		"# The implementation differed from the reference on: %v.\n"+
		"# expect is left for a person to write from the design records it cites.\n", seed, f.Case, how, f.Decisions)
	if replay != "" {
		header += "# Drawn again by: " + replay + "\n"
	}
	return append([]byte(header), data...), nil
}

// ending is an expect block holding only how a run ended.
func ending(tr *trajectories.Trajectory) map[string]any {
	switch {
	case tr.AssemblyError != nil:
		return map[string]any{"assembly_error": map[string]any{"kind": tr.AssemblyError.Kind}}
	case tr.RunError != nil:
		return map[string]any{"run_error": tr.RunError.Kind}
	case tr.Interrupted != nil:
		in := map[string]any{"step": tr.Interrupted.Step, "during": tr.Interrupted.During}
		if tr.Interrupted.Phase != "" {
			in["phase"] = tr.Interrupted.Phase // a phased case names the phase in flight
		}
		return map[string]any{"interrupted": in}
	case tr.End != nil:
		return map[string]any{"end": map[string]any{"reason": tr.End.Reason}}
	}
	return map[string]any{}
}

// loadError is a case that is not a valid scenario: a bug in the
// generator for a drawn case, an invalid variant while shrinking.
type loadError struct {
	id  string
	err error
}

func (e *loadError) Error() string {
	return fmt.Sprintf("generated case %s does not load (a bug in the generator): %v", e.id, e.err)
}

// exhausted reports a run that asked the model for a step the case does
// not script (a shrunk model script): in process the fake's refusal is a
// failed model call, over the protocol the runner stops the scenario, so
// such a case says nothing about the implementation.
func exhausted(tr *trajectories.Trajectory) bool {
	return tr.RunError != nil && strings.Contains(tr.RunError.Message, fakes.ErrScriptExhausted.Error())
}
