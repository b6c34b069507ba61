package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/crashpoint"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/report"
	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
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
	format := fs.String("format", "text", "report format: text, json or junit")
	fs.StringVar(format, "report", "text", "alias of --format")
	outFile := fs.String("out", "", "write the report to `FILE` instead of standard output")
	timeout := fs.Duration("timeout", 30*time.Second, "time limit for one crash point (kill, new process, resume)")
	parallel := fs.Int("p", 2, "explore `N` crash points at once")
	handshake := fs.Duration("handshake-timeout", 10*time.Second, "time limit for a new process's hello")
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	switch {
	case fs.NArg() > 0:
		return setupError(s, fmt.Errorf("explore takes no arguments, got %q", fs.Args()))
	case *format != "text" && *format != "json" && *format != "junit":
		return setupError(s, fmt.Errorf("--format %q: choose text, json or junit", *format))
	case *timeout <= 0:
		return setupError(s, fmt.Errorf("--timeout %s: give a positive duration", *timeout))
	case *parallel < 1:
		return setupError(s, fmt.Errorf("-p %d: explore at least one point at a time", *parallel))
	}
	if *outFile != "" {
		if err := writableFile(*outFile); err != nil {
			return setupError(s, fmt.Errorf("--out: %w", err))
		}
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
	d, closeDriver, err := newDriver(ctx, cmdline, "", s.err, *handshake)
	if err != nil {
		return setupError(s, err)
	}
	defer closeDriver()
	client := d.(*protocol.Client)
	rep := &report.Report{Implementation: client.Name() + ", crash exploration"}
	var tally exploreTally
	var explored []*scenarios.Scenario
	for _, sc := range selected {
		if !crashpoint.Eligible(sc) {
			continue
		}
		if missing := missingOf(sc.Requires, append(client.Capabilities(), "resume")); len(missing) > 0 || !slices.Contains(client.Capabilities(), "resume") {
			rep.Rows = append(rep.Rows, report.Row{Scenario: sc.ID, Verdict: report.Skip, Decisions: sc.Decisions,
				Problems: []string{"implementation does not claim " + strings.Join(append(missing, "resume"), ", ")}})
			continue
		}
		explored = append(explored, sc)
	}
	rows := make([]report.Row, len(explored))
	g := new(errgroup.Group)
	g.SetLimit(max(1, *parallel))
	for i, sc := range explored {
		g.Go(func() error {
			rows[i] = exploreScenario(ctx, client, sc, *timeout, *parallel, &tally)
			return nil
		})
	}
	g.Wait()
	for _, r := range rows {
		if r.Scenario != "" {
			rep.Rows = append(rep.Rows, r)
		}
	}
	rep.Interrupted = ctx.Err() != nil
	rep.Errors = append(rep.Errors, client.Problems()...)
	applyKnownFailing(rep, kf, all)
	summary := fmt.Sprintf("explore: %d scenarios, %d crash points killed and resumed, %d SAFE replays, %d resume_outcome_unknown, %d failed points\n",
		len(explored), tally.points, tally.replays, tally.unknown, tally.failed)
	if err := writeReport(s, *format, *outFile, rep, summary); err != nil {
		return setupError(s, err)
	}
	if !rep.OK() {
		return ExitFail
	}
	return ExitOK
}

type exploreTally struct {
	mu                               sync.Mutex
	points, replays, unknown, failed int
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

// withoutCrash is sc with its own crash fault and torn tail removed, so
// exploration decides where the process dies.
func withoutCrash(sc *scenarios.Scenario) *scenarios.Scenario {
	c := *sc
	c.Faults.Crash, c.Faults.TornTail = nil, false
	return &c
}

func exploreScenario(ctx context.Context, client *protocol.Client, sc *scenarios.Scenario, timeout time.Duration, parallel int, t *exploreTally) report.Row {
	start := time.Now()
	row := report.Row{Scenario: sc.ID, Decisions: append([]string{"0002.D3", "0002.D4"}, sc.Decisions...)}
	plain := withoutCrash(sc)
	var mu sync.Mutex
	var points []journal.Point
	env := fakes.New(plain, nil)
	bctx, cancel := context.WithTimeout(ctx, timeout)
	tr, err := client.RunWith(bctx, plain, env, protocol.RunOptions{Points: true, OnPoint: func(p protocol.Point) {
		mu.Lock()
		points = append(points, journal.Point{Before: p.When == "before", Seq: p.Seq, Type: p.Record, Step: p.Step})
		mu.Unlock()
	}})
	cancel()
	if err == nil && tr != nil {
		snap := env.Snapshot()
		tr.HandlerCalls, tr.ModelCalls = snap.HandlerCalls, snap.ModelCalls
	}
	var base *crashpoint.Baseline
	if err == nil {
		base, err = crashpoint.NewBaseline(tr, points, env.Snapshot().HandlerCalls)
	}
	if err != nil {
		row.Verdict, row.Problems, row.Duration = report.Fail, []string{"the uninterrupted run: " + err.Error()}, time.Since(start)
		return row
	}
	var fails []string
	var fmu sync.Mutex
	var counts crashpoint.Report
	g := new(errgroup.Group)
	g.SetLimit(max(1, parallel))
	for _, p := range points {
		g.Go(func() error {
			if ctx.Err() != nil {
				return nil
			}
			when := "after"
			if p.Before {
				when = "before"
			}
			name := trajectories.CrashPointName(when, p.Type, p.Step)
			env := fakes.New(plain, nil)
			pctx, cancel := context.WithTimeout(ctx, timeout)
			got, err := client.RunWith(pctx, plain, env, protocol.RunOptions{CrashAt: &scenarios.CrashSpec{When: when, Record: p.Type, Step: p.Step}})
			cancel()
			var found []string
			var local crashpoint.Report
			if err != nil {
				found = []string{"resume lost the run: " + err.Error() + " (0002.D3)"}
			} else {
				snap := env.Snapshot()
				byTool := map[string]int{}
				for _, c := range snap.HandlerCalls {
					byTool[c.Tool]++
				}
				byStep := map[int]int{}
				for _, in := range snap.ModelInputs {
					byStep[fakes.StepOf(in)]++
				}
				doc, derr := trajectories.ToGeneric(got)
				if derr != nil {
					found = []string{derr.Error()}
				} else {
					found = crashpoint.Judge(plain, base, p, got, doc, byTool, byStep, &local)
				}
			}
			fmu.Lock()
			for _, f := range found {
				fails = append(fails, name+": "+f)
			}
			counts.Replays += local.Replays
			counts.Unknown += local.Unknown
			fmu.Unlock()
			t.mu.Lock()
			t.points++
			if len(found) > 0 {
				t.failed++
			}
			t.mu.Unlock()
			return nil
		})
	}
	g.Wait()
	t.mu.Lock()
	t.replays += counts.Replays
	t.unknown += counts.Unknown
	t.mu.Unlock()
	slices.Sort(fails)
	row.Verdict, row.Problems, row.Duration = report.Pass, fails, time.Since(start)
	if len(fails) > 0 {
		row.Verdict = report.Fail
	}
	row.Note = fmt.Sprintf("%d crash points", len(points))
	return row
}
