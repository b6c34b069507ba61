package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/polyloop/polyloop-conform/internal/crashpoint"
	"github.com/polyloop/polyloop-conform/internal/implproc"
	"github.com/polyloop/polyloop-conform/internal/report"
	"github.com/polyloop/polyloop-conform/internal/shard"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// exploreCmd kills an implementation at every journal write point of every
// scenario it can journal, resumes in a new process, and judges each
// resume against the uninterrupted run (0002).
func exploreCmd(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	fs.SetOutput(s.err)
	var src sources
	src.register(fs)
	impl := fs.String("impl", "", "the implementation's command line (default: this binary's serve-reference)")
	pattern := fs.String("run", "", "only scenarios whose id matches one of these comma-separated `GLOB`s")
	kfFile := fs.String("known-failing", "", "`FILE` of scenario-id globs expected to fail, each with a # reason")
	var out reportFlags
	out.register(fs, false)
	timeout := fs.Duration("timeout", 30*time.Second, "time limit for one crash point (kill, new process, resume)")
	parallel := fs.Int("p", 2, "explore `N` crash points at once")
	handshake := fs.Duration("handshake-timeout", 10*time.Second, "time limit for a new process's hello")
	noFork := fs.Bool("no-fork", false, "start a new process for each kill and resume even when the implementation offers a fork server")
	shardFlag := fs.String("shard", "", "explore only shard `K/N` of the crash points (a stable partition; join the shards' JSON reports with merge)")
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	if err := checkImplFlag(fs); err != nil {
		return setupError(s, err)
	}
	switch {
	case fs.NArg() > 0:
		return setupError(s, fmt.Errorf("explore takes no arguments, got %q", fs.Args()))
	case *timeout <= 0:
		return setupError(s, fmt.Errorf("--timeout %s: give a positive duration", *timeout))
	case *parallel < 1:
		return setupError(s, fmt.Errorf("-p %d: explore at least one point at a time", *parallel))
	}
	if err := out.check(); err != nil {
		return setupError(s, err)
	}
	sh, err := shard.Parse(*shardFlag)
	if err != nil {
		return setupError(s, err)
	}
	all, _, err := src.load()
	if err != nil {
		return setupError(s, err)
	}
	selected, err := selectScenarios(all, *pattern)
	if err != nil {
		return setupError(s, err)
	}
	kf, err := loadKnownFailing(*kfFile)
	if err != nil {
		return setupError(s, err)
	}
	cmdline := *impl
	if cmdline == "" {
		exe, err := os.Executable()
		if err != nil {
			return setupError(s, err)
		}
		cmdline = exe + " serve-reference"
	}
	d, closeDriver, err := newDriver(ctx, driverConfig{impl: cmdline, logs: s.err, handshake: *handshake, noFork: *noFork})
	if err != nil {
		return setupError(s, err)
	}
	defer closeDriver()
	client := d.(*implproc.Client)
	rep := newReport(client.Name()+", crash exploration"+report.ShardSuffix(sh.String()), "explore", args)
	rep.Selection = *pattern
	var explored []*scenarios.Scenario
	for _, sc := range selected {
		if !crashpoint.Eligible(sc) {
			continue
		}
		if missing := missingOf(append(slices.Clone(sc.Requires), "resume"), client.Capabilities()); len(missing) > 0 {
			rep.Rows = append(rep.Rows, report.Row{Scenario: sc.ID, Level: sc.Level, Requires: sc.Requires, Verdict: report.Skip, Decisions: sc.Decisions,
				Note: "implementation does not claim " + strings.Join(missing, ", ")})
			continue
		}
		explored = append(explored, sc)
	}
	rows := make([]report.Row, len(explored))
	results := make([]crashpoint.Result, len(explored))
	g := new(errgroup.Group)
	g.SetLimit(max(1, *parallel))
	for i, sc := range explored {
		g.Go(func() error {
			start := time.Now()
			results[i] = crashpoint.Explore(ctx, client, sc, crashpoint.Options{Timeout: *timeout, Parallel: *parallel, Shard: sh})
			rows[i] = exploreRow(results[i], sc, time.Since(start))
			return nil
		})
	}
	_ = g.Wait() // each worker reports through its row
	var points, replays, unknown, failed int
	for i, r := range results {
		points += r.Explored
		replays += r.Replays
		unknown += r.Unknown
		failed += len(r.Failures)
		if rows[i].Scenario != "" && (r.Explored > 0 || r.Baseline != nil) {
			rep.Rows = append(rep.Rows, rows[i])
		}
	}
	rep.Interrupted = ctx.Err() != nil
	rep.Errors = append(rep.Errors, client.Problems()...)
	seen, baselines := 0, 0
	for _, r := range results {
		seen += r.Points
		if r.Baseline == nil {
			baselines++
		}
	}
	if baselines > 0 && seen == 0 && !rep.Interrupted {
		rep.Errors = append(rep.Errors, fmt.Sprintf("the implementation claims resume, yet its uninterrupted runs of %d scenario(s) sent no journal_point: with report_journal_points it must send one before and after every journal write (docs/protocol.md, Crash and resume), or nothing can be explored", baselines))
	} else if sh.String() == "" {
		rep.RequireEvidence()
	}
	report.ApplyKnownFailing(rep, kf, ids(all))
	summary := fmt.Sprintf("explore: %d scenarios, %d crash points killed and resumed, %d SAFE replays, %d resume_outcome_unknown, %d failed points\n",
		len(explored), points, replays, unknown, failed)
	if err := out.emit(s, rep, summary); err != nil {
		return setupError(s, err)
	}
	if !rep.OK() {
		return ExitFail
	}
	return ExitOK
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

// exploreRow turns one scenario's exploration into a report row: each
// failing crash point is one problem, citing the resume decisions.
func exploreRow(res crashpoint.Result, sc *scenarios.Scenario, took time.Duration) report.Row {
	decs := append([]string{"0002.D3", "0002.D4"}, sc.Decisions...)
	row := report.Row{Scenario: sc.ID, Level: sc.Level, Requires: sc.Requires, Decisions: decs, Duration: took, CrashPoints: res.Explored}
	if res.Baseline != nil {
		row.Verdict = report.Fail
		row.Problems = []report.Problem{{Source: "run", Message: "the uninterrupted run: " + res.Baseline.Error(), Decisions: decs}}
		return row
	}
	row.Verdict, row.Note = report.Pass, report.CrashPointsNote(res.Explored)
	for _, f := range res.Failures {
		row.Problems = append(row.Problems, report.Problem{Source: "explore", Message: f, Decisions: decs})
	}
	if len(row.Problems) > 0 {
		row.Verdict = report.Fail
	}
	return row
}
