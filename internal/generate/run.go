package generate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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
}

// Summary is what a generation run did.
type Summary struct {
	Cases     int // valid cases compared
	Discarded int // cases the reference itself could not run (an unreachable crash point …)
	Skipped   int // cases needing a capability the implementation does not claim
	Found     []Found
	Shrinks   int // accepted shrink steps, over all differences
}

// Found is one difference, shrunk.
type Found struct {
	Case      int // 1-based number of the case that first differed
	ID        string
	Steps     int // model outputs scripted, after shrinking
	Tools     int
	Decisions []string // the decisions governing the differing fields
	Problems  []string
	// Details are the same problems as data, for report rows.
	Details []engine.Problem
	File    string // the scenario written, if Out is set
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
		s := newSpec(r)
		id := caseID(o.Seed, n)
		c, err := compareCase(ctx, o, s, id)
		if err != nil {
			return sum, err
		}
		switch {
		case c.status == discarded:
			sum.Discarded++
			continue
		case c.status == skipped:
			sum.Skipped++
			continue
		case c.problems == nil:
			sum.Cases++
		default:
			sum.Cases++
			f, steps, err := shrink(ctx, o, s, id, n, c)
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

type status int

const (
	compared  status = iota
	discarded        // the reference itself cannot run the case
	skipped          // the implementation does not claim a capability it needs
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

func compareCase(ctx context.Context, o Options, s *spec, id string) (comparison, error) {
	_, sc, err := s.render(id, []string{"0004.D2"}, nil)
	if err != nil {
		return comparison{status: discarded}, &loadError{id: id, err: err}
	}
	ref := (&engine.Suite{Scenarios: []*scenarios.Scenario{sc}, Timeout: o.Timeout, GoldenOnly: true}).Run(ctx, o.Reference, sc)
	if ref.Skipped != "" || !ref.Passed() || ref.Trajectory == nil || exhausted(ref.Trajectory) {
		return comparison{status: discarded}, nil
	}
	golden, err := trajectories.Marshal(ref.Trajectory)
	if err != nil {
		return comparison{status: discarded}, err
	}
	res := (&engine.Suite{Scenarios: []*scenarios.Scenario{sc}, Goldens: map[string][]byte{id: golden}, Timeout: o.Timeout, GoldenOnly: true}).Run(ctx, o.Impl, sc)
	if res.Skipped != "" {
		return comparison{status: skipped}, nil
	}
	return comparison{status: compared, problems: res.Problems, ref: ref.Trajectory, golden: golden}, nil
}

// decisionsOf lists the decisions governing the differing fields, or the
// problems' own decisions for a problem without a path.
func decisionsOf(probs []engine.Problem) []string {
	var out []string
	for _, p := range probs {
		ds := trajectories.FieldDecisions(p.Path)
		if p.Path == "" || len(ds) == 0 {
			ds = p.Decisions
		}
		for _, d := range ds {
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	slices.Sort(out)
	return out
}

// shrink makes the case smaller while the implementation still differs
// from the reference, then writes it. It returns the accepted steps.
func shrink(ctx context.Context, o Options, s *spec, id string, n int, first comparison) (Found, int, error) {
	cur, curCmp, steps := s, first, 0
	for changed := true; changed && steps < 200; {
		changed = false
		for _, c := range candidates(cur) {
			cmp, err := compareCase(ctx, o, c, id)
			var le *loadError
			if errors.As(err, &le) {
				continue // a smaller variant that is not a valid scenario
			}
			if err != nil {
				return Found{}, steps, err
			}
			if cmp.status == compared && cmp.problems != nil {
				cur, curCmp, changed = c, cmp, true
				steps++
				break
			}
		}
	}
	f := Found{Case: n, ID: id, Steps: cur.steps(), Tools: cur.toolCount(), Decisions: decisionsOf(curCmp.problems)}
	for _, p := range curCmp.problems {
		f.Problems = append(f.Problems, p.Message)
	}
	f.Details = curCmp.problems
	if o.Out == "" {
		return f, steps, nil
	}
	f.File = filepath.Join(o.Out, f.ID+".yaml")
	return f, steps, write(o, cur, f, curCmp)
}

// write saves the shrunk case: the scenario, citing the decisions of the
// differing fields, and the reference's trajectory as its golden.
func write(o Options, s *spec, f Found, c comparison) error {
	decisions := f.Decisions
	if len(decisions) == 0 {
		decisions = []string{"0004.D2"}
	}
	// The saved expect says only how the reference's run ended, which
	// the loader requires; the rest is for a person to write.
	data, _, err := s.render(f.ID, decisions, ending(c.ref))
	if err != nil {
		return err
	}
	header := fmt.Sprintf("# Generated by polyloop-conform generate (seed %d, case %d) and shrunk.\n"+
		"# The implementation differed from the reference on: %v.\n"+
		"# expect is left for a person to write from the design records it cites.\n", o.Seed, f.Case, f.Decisions)
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	if err := atomicfile.Write(f.File, append([]byte(header), data...)); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(o.Out, f.ID+".json"), c.golden)
}

// ending is an expect block holding only how a run ended.
func ending(tr *trajectories.Trajectory) map[string]any {
	switch {
	case tr.AssemblyError != nil:
		return map[string]any{"assembly_error": map[string]any{"kind": tr.AssemblyError.Kind}}
	case tr.RunError != nil:
		return map[string]any{"run_error": tr.RunError.Kind}
	case tr.Interrupted != nil:
		return map[string]any{"interrupted": map[string]any{"step": tr.Interrupted.Step, "during": tr.Interrupted.During}}
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
