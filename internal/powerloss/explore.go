package powerloss

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/crashpoint"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// Options configure one scenario's exploration.
type Options struct {
	// Driver holds the reference's options (deviations, schema cache);
	// its JournalFS is replaced by the modelled disk.
	Driver refdriver.Options
	// LyingSync runs the journal on a disk whose syncs make nothing
	// durable (see Disk.LyingSync).
	LyingSync bool
}

// Result is what exploring one scenario found.
type Result struct {
	Scenario string
	Moments  int // power cuts tried: one after each disk operation
	States   int // disk states resumed from
	// NotStarted counts states without a journal to resume, in which no
	// handler had run: the run never durably started.
	NotStarted int
	Resumed    int // states resumed to a result that passed the judge
	Lost       int // states whose resume lost or changed a result
	Doubled    int // states after which a NEVER handler ran more often than uninterrupted
	Failures   []string
}

// dir is where every modelled run keeps its journal.
const dir = "/powerloss/run"

// Explore runs sc once on a modelled disk to count its disk operations and
// learn its journal points, then for each operation cuts the power after
// it, builds every state the disk may be left in, resumes from each in a
// new process (a fresh kernel over the same fakes) and judges the resume
// with crashpoint.Judge, at the kill point the state amounts to.
func Explore(ctx context.Context, sc *scenarios.Scenario, o Options) (Result, error) {
	res := Result{Scenario: sc.ID}
	plain := crashpoint.WithoutCrash(sc)
	disk := &Disk{LyingSync: o.LyingSync}
	env := fakes.New(plain, nil)
	var points []protocol.Point
	tr, err := refdriver.Process(ctx, plain, env, dir, collect(&points), false, o.driver(disk))
	if err != nil {
		return res, fmt.Errorf("%s: uninterrupted run: %w", sc.ID, err)
	}
	snap := env.Snapshot()
	tr.HandlerCalls, tr.ModelCalls = snap.HandlerCalls, snap.ModelCalls
	base, err := crashpoint.NewBaseline(tr, points, snap.HandlerCalls)
	if err != nil {
		return res, err
	}
	for cut := 1; cut <= disk.Ops(); cut++ {
		res.Moments++
		d, env, points := crashWith(ctx, plain, o, cut)
		states := d.States()
		for i, state := range states {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			if i > 0 {
				// The fakes hold what the crashed process did, and the
				// resume adds to them: each state resumes after its own
				// (identical, deterministic) crashed run.
				_, env, points = crashWith(ctx, plain, o, cut)
			}
			res.States++
			res.judge(ctx, plain, base, o, state, env, points, fmt.Sprintf("power cut after disk operation %d", cut))
		}
	}
	return res, nil
}

func (o Options) driver(d *Disk) refdriver.Options {
	do := o.Driver
	do.JournalFS = d
	return do
}

func collect(points *[]protocol.Point) journal.Hook {
	return func(p journal.Point) error {
		*points = append(*points, p)
		return nil
	}
}

// crashWith runs sc until the power goes off after cut disk operations
// and returns the disk as the process left it, the fakes holding what it
// did, and the journal points it passed.
func crashWith(ctx context.Context, sc *scenarios.Scenario, o Options, cut int) (*Disk, *fakes.Env, []protocol.Point) {
	d := &Disk{Cut: cut, LyingSync: o.LyingSync}
	env := fakes.New(sc, nil)
	var points []protocol.Point
	// The run stops at the cut with a journal write error; what it did
	// before is in env and on d.
	_, _ = refdriver.Process(ctx, sc, env, dir, collect(&points), false, o.driver(d))
	return d, env, points
}

// judge resumes from one state of a power cut, over the fakes of the
// crashed process, and tallies the verdict.
func (r *Result) judge(ctx context.Context, sc *scenarios.Scenario, base *crashpoint.Baseline, o Options, state State, env *fakes.Env, points []protocol.Point, where string) {
	if state.Note != "" {
		where += " (" + state.Note + ")"
	}
	data, present := state.Files[path.Join(dir, journal.FileName)]
	ran := len(env.Snapshot().HandlerCalls) > 0
	if !present {
		if !ran {
			r.NotStarted++
			return
		}
		r.Lost++
		r.Failures = append(r.Failures, where+": the journal is gone although handlers ran; the run's work is lost (0002.D1)")
		return
	}
	got, err := refdriver.Process(ctx, sc, env, dir, nil, true, o.driver(Restore(state)))
	if err != nil {
		r.Lost++
		r.Failures = append(r.Failures, where+": resume failed: "+err.Error()+" (0002.D3)")
		return
	}
	p := equivalentPoint(data, points)
	byTool, byStep := crashpoint.Tally(env.Snapshot())
	doc, err := trajectories.ToGeneric(got)
	if err != nil {
		r.Lost++
		r.Failures = append(r.Failures, where+": "+err.Error())
		return
	}
	var counts crashpoint.Counts
	fails := crashpoint.Judge(sc, base, p, got, doc, byTool, byStep, &counts)
	if len(fails) == 0 {
		r.Resumed++
		return
	}
	if doubledNever(sc, base, byTool) {
		r.Doubled++
	} else {
		r.Lost++
	}
	for _, f := range fails {
		r.Failures = append(r.Failures, fmt.Sprintf("%s, like a kill at %s: %s", where, p, f))
	}
}

// equivalentPoint is the kill point a disk state amounts to: the records
// that survived whole are the journal, and the process had either gone on
// to start the next record (before it) or not (after the last one).
func equivalentPoint(data []byte, points []protocol.Point) protocol.Point {
	c, err := journal.Parse(journal.FileName, data)
	var tail *journal.TailError
	if err != nil && !errors.As(err, &tail) {
		return protocol.Point{When: "before", Seq: 1, Record: journal.TypeRunStarted}
	}
	n := len(c.Records)
	for _, p := range points {
		if p.When == "before" && p.Seq == n+1 {
			return p
		}
	}
	for _, p := range points {
		if p.Seq == n {
			// Written but not yet synced when the power went off, and
			// kept: the process had gone no further than after it.
			p.When = "after"
			return p
		}
	}
	return protocol.Point{When: "before", Seq: 1, Record: journal.TypeRunStarted}
}

// doubledNever reports whether a NEVER tool's handler ran more often
// across both processes than in the uninterrupted run.
func doubledNever(sc *scenarios.Scenario, base *crashpoint.Baseline, byTool map[string]int) bool {
	want := map[string]int{}
	for _, c := range base.Trajectory.HandlerCalls {
		want[c.Tool]++
	}
	for _, t := range sc.Tools {
		if t.Replay != "SAFE" && byTool[t.Name] > want[t.Name] {
			return true
		}
	}
	return false
}
