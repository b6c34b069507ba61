package crashpoint

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/shard"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// Runner runs one scenario on an implementation, optionally reporting
// journal points or killing the process at one and resuming in a new one.
// *implproc.Client is the Runner of every implementation, the reference
// included (over serve-reference).
type Runner interface {
	RunWith(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env, o protocol.RunOptions) (*trajectories.Trajectory, error)
}

// VolumeOf is the directory r makes journal directories in, when it says
// (implproc.Client.Volume): the only one its processes' machines carry
// (internal/isolate). Otherwise "", the system's temporary directory.
func VolumeOf(r Runner) string {
	if v, ok := r.(interface{ Volume() string }); ok {
		return v.Volume()
	}
	return ""
}

// Options bound one scenario's exploration.
type Options struct {
	// Timeout limits one run: the uninterrupted one, or one crash point
	// (kill, new process, resume).
	Timeout time.Duration
	// Parallel is how many crash points are explored at once.
	Parallel int
	// Shard keeps only this shard's crash points; the zero Shard keeps all.
	Shard shard.Shard
	// JournalLines: the implementation keeps its journal as one record per
	// line (the journal-lines option). At each point before a record the
	// runner then also leaves half of that record, as the uninterrupted
	// run wrote it, after the killed process's last whole record: the
	// torn tail a crash during that write leaves (0002.D5).
	JournalLines bool
	// Seed picks the crash points whose journal is handed over after
	// another process of the scenario was killed elsewhere (see decoy).
	Seed int64
}

// Result is what exploring one scenario found.
type Result struct {
	Scenario string
	Points   int // crash points of the uninterrupted run
	Explored int // crash points killed and resumed (this shard's)
	Counts
	Torn    int // crash points resumed from a torn record
	Decoyed int // crash points resumed after a decoy's kill elsewhere
	// Failures are sentences for people, each starting with the crash
	// point's name (before:action_result:2), sorted.
	Failures []string
	// Baseline is set when the uninterrupted run itself failed; no crash
	// point was explored then.
	Baseline error
	// Interrupted: ctx was cancelled (a signal) before the exploration
	// ended. What the cancellation broke is no finding, so Failures and
	// Baseline are cleared then: the row is interrupted, not failed.
	Interrupted bool
}

// WithoutCrash is sc with its own crash fault and torn tail removed, so
// exploration decides where the process dies.
func WithoutCrash(sc *scenarios.Scenario) *scenarios.Scenario {
	c := *sc
	c.Faults.Crash, c.Faults.TornTail, c.Faults.JournalDamage = nil, false, ""
	return &c
}

// Explore runs sc once uninterrupted with journal points reported, then,
// for each point of this shard, kills the implementation there, resumes it
// in a new process and judges the resume against the uninterrupted run.
func Explore(ctx context.Context, r Runner, sc *scenarios.Scenario, o Options) Result {
	res := Result{Scenario: sc.ID}
	plain := WithoutCrash(sc)
	var mu sync.Mutex
	var points []protocol.Point
	env := fakes.New(plain, nil)
	bctx, cancel := context.WithTimeout(ctx, o.Timeout)
	journal, err := os.MkdirTemp(VolumeOf(r), "polyloop-conform-baseline-*")
	if err != nil {
		res.Baseline = err
		cancel()
		return res
	}
	defer os.RemoveAll(journal)
	tr, err := r.RunWith(bctx, plain, env, protocol.RunOptions{Points: true, JournalDir: filepath.Join(journal, "run"), OnPoint: func(p protocol.Point) {
		mu.Lock()
		points = append(points, p)
		mu.Unlock()
	}})
	cancel()
	var records map[int][][]byte
	if err == nil && o.JournalLines {
		records, err = baselineRecords(filepath.Join(journal, "run"), len(sc.Runs()))
	}
	var base *Baseline
	if err == nil {
		snap := env.Snapshot()
		tr.HandlerCalls, tr.ModelCalls = snap.HandlerCalls, snap.ModelCalls
		base, err = NewBaseline(tr, points, snap.HandlerCalls)
	}
	if err != nil {
		res.Baseline = err
		return interrupted(ctx, res)
	}
	res.Points = len(points)
	g := new(errgroup.Group)
	g.SetLimit(max(1, o.Parallel))
	for _, p := range points {
		name := trajectories.CrashPointName(p.When, p.Record, p.Step)
		if sc.Request == nil {
			name = sc.Phases[p.Phase].Name + ":" + name
		}
		if !o.Shard.Has(sc.ID + " " + name) {
			continue
		}
		g.Go(func() error {
			if ctx.Err() != nil {
				return nil
			}
			var c Counts
			h := handover{torn: tornRecord(records, p)}
			if sc.Request == nil {
				h.dir = strconv.Itoa(p.Phase)
			}
			if o.picks(sc.ID, name) {
				h.decoy = decoyPoint(points, p)
			}
			found := explorePoint(ctx, r, plain, base, p, o.Timeout, h, &c)
			mu.Lock()
			defer mu.Unlock()
			if h.torn != nil {
				res.Torn++
			}
			if h.decoy != nil {
				res.Decoyed++
			}
			res.Explored++
			res.Replays += c.Replays
			res.Unknown += c.Unknown
			res.Forked += c.Forked
			for _, f := range found {
				res.Failures = append(res.Failures, name+": "+f)
			}
			return nil
		})
	}
	_ = g.Wait() // the workers report through res, never through an error
	slices.Sort(res.Failures)
	return interrupted(ctx, res)
}

// interrupted is the one place where an exploration's errors caused by
// cancellation become an interruption: once ctx is done, a failed resume
// says "context canceled", not that the implementation lost the run.
func interrupted(ctx context.Context, res Result) Result {
	if ctx.Err() == nil {
		return res
	}
	res.Interrupted, res.Failures, res.Baseline = true, nil, nil
	return res
}

// Tally counts what the fakes saw across both processes of a crash point:
// handler calls per tool and model calls per step, as Judge takes them.
func Tally(snap fakes.Record) (byTool map[string]int, byStep map[int]int) {
	byTool, byStep = map[string]int{}, map[int]int{}
	for _, call := range snap.HandlerCalls {
		byTool[call.Tool]++
	}
	for _, in := range snap.ModelInputs {
		byStep[fakes.StepOf(in)]++
	}
	return byTool, byStep
}

func explorePoint(ctx context.Context, r Runner, sc *scenarios.Scenario, base *Baseline, p protocol.Point, timeout time.Duration, h handover, c *Counts) []string {
	env := fakes.New(sc, nil)
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	got, err := r.RunWith(pctx, sc, env, protocol.RunOptions{CrashAt: crashAt(sc, p), Handover: h.fill(pctx, r, sc)})
	if err != nil {
		return []string{"resume lost the run: " + err.Error() + " (0002.D3)"}
	}
	var torn []string
	if h.torn != nil && (got.Resume == nil || !got.Resume.TornTail) {
		torn = append(torn, "the journal ended in half a record (what a crash during that write leaves), and the resume did not report torn_tail: resume notices a torn tail, drops it and goes on (0002.D5)")
	}
	snap := env.Snapshot()
	c.Forked += snap.ResumesOnMachine
	byTool, byStep := Tally(snap)
	// What crossed the wire across the kill and the resume, held to the
	// resumed trajectory: a model input, a handler's arguments, an action
	// sent to the project executor twice (0002.D4: an action runs once).
	var wire []string
	for _, pr := range engine.Observed(sc, got, engine.Claimed{}, snap) {
		wire = append(wire, pr.Statement+" ("+strings.Join(pr.Decisions, ", ")+")")
	}
	doc, err := trajectories.ToGeneric(got)
	if err != nil {
		return []string{err.Error()}
	}
	if sc.Request == nil {
		return append(append(torn, wire...), judgePhased(sc, base, p, got, snap, c)...)
	}
	return append(append(torn, wire...), Judge(sc, base, p, got, doc, byTool, byStep, c)...)
}

// crashAt is the crash spec of point p: in a phased scenario, in the phase
// whose journal p writes.
func crashAt(sc *scenarios.Scenario, p protocol.Point) *scenarios.CrashSpec {
	c := &scenarios.CrashSpec{When: p.When, Record: p.Record, Step: p.Step}
	if sc.Request == nil {
		c.Phase = sc.Phases[p.Phase].Name
	}
	return c
}
