package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/polyloop/polyloop-conform/internal/crashpoint"
	"github.com/polyloop/polyloop-conform/internal/implproc"
	"github.com/polyloop/polyloop-conform/internal/powerloss"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/report"
	"github.com/polyloop/polyloop-conform/internal/shard"
	"github.com/polyloop/polyloop-conform/internal/systrace"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// exploreFlags are explore's options.
type exploreFlags struct {
	src                sources
	out                reportFlags
	impl, pattern      *string
	kfFile, shardFlag  *string
	timeout, handshake *time.Duration
	parallel           *int
	seed               *int64
	noFork, powerLoss  *bool
	carry              carryFlag
}

func (f *exploreFlags) register(fs *flag.FlagSet) {
	f.src.register(fs)
	f.impl = fs.String("impl", "", "the implementation's command line (default: this binary's serve-reference)")
	f.pattern = fs.String("run", "", "only scenarios whose id matches one of these comma-separated `GLOB`s")
	f.kfFile = fs.String("known-failing", "", "`FILE` of scenario-id globs expected to fail, each with a # reason")
	f.out.register(fs, false)
	f.timeout = fs.Duration("timeout", 30*time.Second, "time limit for one crash point (kill, new process, resume)")
	f.parallel = fs.Int("p", 2, "explore `N` crash points at once")
	f.handshake = fs.Duration("handshake-timeout", 10*time.Second, "time limit for a new process's hello")
	f.noFork = fs.Bool("no-fork", false, "start a new process for each kill and resume even when the implementation offers a fork server")
	fs.Var(&f.carry, "carry", carryUsage)
	f.shardFlag = fs.String("shard", "", "explore only shard `K/N` of the crash points (a stable partition; join the shards' JSON reports with merge)")
	f.seed = fs.Int64("seed", 1, "picks the crash points whose journal is handed over after a decoy kill elsewhere (`N`)")
	f.powerLoss = fs.Bool("power-loss", false, "cut the power instead of killing: trace the implementation's writes and syncs (strace) and resume from every disk state a power cut leaves")
}

func (f *exploreFlags) check(fs *flag.FlagSet) error {
	if err := checkImplFlag(fs); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("explore takes no arguments, got %q", fs.Args())
	case *f.timeout <= 0:
		return fmt.Errorf("--timeout %s: give a positive duration", *f.timeout)
	case *f.parallel < 1:
		return fmt.Errorf("-p %d: explore at least one point at a time", *f.parallel)
	}
	return f.out.check()
}

// exploreCmd kills an implementation at every journal write point of every
// scenario it can journal (or cuts its power, --power-loss), resumes in a
// new process, and judges each resume against the uninterrupted run (0002).
func exploreCmd(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	fs.SetOutput(s.err)
	var f exploreFlags
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	if err := f.check(fs); err != nil {
		return setupError(s, err)
	}
	sh, err := shard.Parse(*f.shardFlag)
	if err != nil {
		return setupError(s, err)
	}
	all, _, err := f.src.load()
	if err != nil {
		return setupError(s, err)
	}
	selected, err := selectScenarios(all, *f.pattern)
	if err != nil {
		return setupError(s, err)
	}
	kf, err := loadKnownFailing(*f.kfFile)
	if err != nil {
		return setupError(s, err)
	}
	cmdline := *f.impl
	if cmdline == "" {
		exe, err := os.Executable()
		if err != nil {
			return setupError(s, err)
		}
		cmdline = exe + " serve-reference"
	}
	d, closeDriver, err := newDriver(ctx, driverConfig{impl: cmdline, logs: s.err, handshake: *f.handshake, noFork: *f.noFork, carry: f.carry})
	if err != nil {
		return setupError(s, err)
	}
	defer closeDriver()
	client := d.(*implproc.Client)
	kind := ", crash exploration"
	if *f.powerLoss {
		kind = ", power-loss exploration"
	}
	rep := newReport(client.Name()+kind+report.ShardSuffix(sh.String()), "explore", args)
	rep.Selection = *f.pattern
	explored := eligible(rep, selected, client.Capabilities())
	var summary string
	if *f.powerLoss {
		summary = explorePowerLoss(ctx, rep, explored, f, client, cmdline, s)
	} else {
		summary = exploreKills(ctx, rep, explored, f, client, sh)
	}
	rep.Interrupted = ctx.Err() != nil
	rep.Errors = append(rep.Errors, client.Problems()...)
	report.ApplyKnownFailing(rep, kf, ids(all))
	if err := f.out.emit(s, rep, summary); err != nil {
		return setupError(s, err)
	}
	if !rep.OK() {
		return ExitFail
	}
	return ExitOK
}

// eligible returns the scenarios to explore, with a skipped row in rep for
// each one whose capabilities the implementation does not claim.
func eligible(rep *report.Report, selected []*scenarios.Scenario, have []string) []*scenarios.Scenario {
	var out []*scenarios.Scenario
	for _, sc := range selected {
		if !crashpoint.Eligible(sc) {
			continue
		}
		if missing := missingOf(append(slices.Clone(sc.Requires), "resume"), have); len(missing) > 0 {
			rep.Rows = append(rep.Rows, report.SkipRow(sc, "implementation does not claim "+strings.Join(missing, ", ")))
			continue
		}
		out = append(out, sc)
	}
	return out
}

// exploreKills runs the crash-point exploration and returns its summary.
func exploreKills(ctx context.Context, rep *report.Report, explored []*scenarios.Scenario, f exploreFlags, client *implproc.Client, sh shard.Shard) string {
	rows := make([]report.Row, len(explored))
	results := make([]crashpoint.Result, len(explored))
	opts := crashpoint.Options{Timeout: *f.timeout, Parallel: *f.parallel, Shard: sh, Seed: *f.seed,
		JournalLines: slices.Contains(client.Capabilities(), protocol.JournalLines)}
	g := new(errgroup.Group)
	g.SetLimit(max(1, *f.parallel))
	for i, sc := range explored {
		g.Go(func() error {
			start := time.Now()
			r := crashpoint.Explore(ctx, client, sc, opts)
			results[i] = r
			rows[i] = report.ExploreRow(sc, report.Exploration{Explored: r.Explored, Baseline: r.Baseline, Failures: r.Failures, Forked: r.Forked, Source: "explore", Interrupted: r.Interrupted}, time.Since(start))
			return nil
		})
	}
	_ = g.Wait() // each worker reports through its row
	var points, replays, unknown, failed, torn, decoyed, seen, baselines, forked int
	for i, r := range results {
		points, replays, unknown, failed = points+r.Explored, replays+r.Replays, unknown+r.Unknown, failed+len(r.Failures)
		forked += r.Forked
		torn, decoyed, seen = torn+r.Torn, decoyed+r.Decoyed, seen+r.Points
		if r.Baseline == nil {
			baselines++
		}
		if r.Explored > 0 || r.Baseline != nil {
			rep.Rows = append(rep.Rows, rows[i])
		} else if r.Interrupted {
			rep.NotRun++ // the signal came before any of its points
		}
	}
	// A signal is no finding: a stopped exploration asks for no evidence.
	rep.Interrupted = ctx.Err() != nil
	if baselines > 0 && seen == 0 && ctx.Err() == nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("the implementation claims resume, yet its uninterrupted runs of %d scenario(s) sent no journal_point: with report_journal_points it must send one before and after every journal write (docs/protocol.md, Crash and resume), or nothing can be explored", baselines))
	} else if sh.String() == "" {
		rep.RequireEvidence()
	}
	onMachines := ""
	if forked > 0 {
		onMachines = fmt.Sprintf("; %d resumes forked onto machines of their own, each seen so", forked)
	}
	return fmt.Sprintf("explore: %d scenarios, %d crash points killed and resumed (%d from a torn record, %d after a decoy's kill), %d SAFE replays, %d resume_outcome_unknown, %d failed points%s\n",
		len(explored), points, torn, decoyed, replays, unknown, failed, onMachines)
}

// explorePowerLoss runs the power-loss exploration and returns its
// summary; without tracing, every scenario is skipped with the reason.
func explorePowerLoss(ctx context.Context, rep *report.Report, explored []*scenarios.Scenario, f exploreFlags, client *implproc.Client, cmdline string, s stdio) string {
	if err := systrace.Available(); err != nil {
		for _, sc := range explored {
			rep.Rows = append(rep.Rows, report.SkipRow(sc, err.Error()))
		}
		return "explore --power-loss: skipped: " + err.Error() + "\n"
	}
	traced := func(trace string) (crashpoint.Runner, func(), error) {
		c := &implproc.Client{Command: func() *exec.Cmd { return systrace.Command(exec.Command("/bin/sh", "-c", cmdline), trace) },
			Logs: s.err, HandshakeTimeout: *f.handshake, NoFork: true,
			// strace writes its trace, and the baseline its journal, in
			// the directory of the trace: the traced machine carries it.
			Carry: []string{filepath.Dir(trace)}, Shared: f.carry}
		if err := c.Start(ctx); err != nil {
			return nil, nil, fmt.Errorf("start the implementation under strace: %w", err)
		}
		return c, c.Close, nil
	}
	states, failed := 0, 0
	for i, sc := range explored {
		start := time.Now()
		r := powerloss.ExploreTraced(ctx, client, sc, powerloss.TracedOptions{Timeout: *f.timeout, Parallel: *f.parallel, Traced: traced})
		if ctx.Err() != nil {
			// What the signal broke is no finding (see crashpoint.Result.Interrupted),
			// and the scenarios after it never started.
			rep.Rows = append(rep.Rows, report.ExploreRow(sc, report.Exploration{Explored: r.States, Interrupted: true}, time.Since(start)))
			rep.NotRun += len(explored) - i - 1
			break
		}
		if r.Skipped != "" {
			rep.Rows = append(rep.Rows, report.SkipRow(sc, r.Skipped))
			continue
		}
		states, failed = states+r.States, failed+len(r.Failures)
		rep.Rows = append(rep.Rows, report.ExploreRow(sc, report.Exploration{Explored: r.States, Baseline: r.Baseline, Failures: r.Failures, Source: "power-loss"}, time.Since(start)))
	}
	return fmt.Sprintf("explore --power-loss: %d scenarios, %d disk states resumed, %d failed\n", len(explored), states, failed)
}

func missingOf(req, have []string) []string {
	var out []string
	for _, r := range req {
		if !slices.Contains(have, r) {
			out = append(out, r)
		}
	}
	return out
}
