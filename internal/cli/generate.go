package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/polyloop/polyloop-conform/internal/generate"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/internal/report"
	"github.com/polyloop/polyloop-conform/reference/tools"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// generateCmd compares an implementation with the reference on scenarios
// generated from a seed, and writes each difference, shrunk, as a
// scenario with the reference's trajectory.
func generateCmd(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(s.err)
	impl := fs.String("impl", "", "the implementation to compare with the reference, as a shell `CMD` speaking the protocol (required)")
	seed := fs.Uint64("seed", 0, "the `SEED`: the same seed gives the same cases (default: a fresh one each run, named in the report)")
	count := fs.Int("count", 0, "stop after `N` cases (default 1000 when --seconds is not given)")
	seconds := fs.Int("seconds", 0, "stop after `S` seconds")
	out := fs.String("save", "generated", "write each shrunk difference to `DIR` as <id>.yaml and <id>.json")
	// --out names the report's file in run and every other command; here it
	// once named the folder of differences, and still does, saying so
	// (savedDir). The report's file is --report-out.
	oldOut := fs.String("out", "", "the old name of --save `DIR` (kept working; in run and the other commands --out is the report's file)")
	var report reportFlags
	report.registerAs(fs, false, "report-out")
	timeout := fs.Duration("timeout", 10*time.Second, "time limit for one run of one case")
	first := fs.Bool("first", false, "stop at the first difference")
	from := fs.String("from", "", "also draw variants of the scenarios in `DIR` (renamed tools, reordered registrations, new texts), beside the suite's own")
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	if err := checkImplFlag(fs); err != nil {
		return setupError(s, err)
	}
	if err := savedDir(fs, out, *oldOut, s.err); err != nil {
		return setupError(s, err)
	}
	if *impl == "" {
		return setupError(s, fmt.Errorf("generate needs --impl CMD, the implementation to compare with the reference (try --impl \"polyloop-conform serve-reference\")"))
	}
	if *count < 0 || *seconds < 0 {
		return setupError(s, fmt.Errorf("--count and --seconds must not be negative"))
	}
	if *count == 0 && *seconds == 0 {
		*count = 1000
	}
	if err := resolveSeed(fs, seed); err != nil {
		return setupError(s, err)
	}
	if err := report.check(); err != nil {
		return setupError(s, err)
	}
	sources, err := generateSources(*from)
	if err != nil {
		return setupError(s, err)
	}
	d, closeDriver, err := newDriver(ctx, driverConfig{impl: *impl, logs: io.Discard})
	if err != nil {
		return setupError(s, err)
	}
	defer closeDriver()
	o := generate.Options{
		Reference: refdriver.Driver{Schemas: &tools.SchemaCache{}}, Impl: d,
		Seed: *seed, Count: *count, Out: *out, Timeout: *timeout, Stop: *first, Sources: sources, Replay: seededCommand("generate", args, *seed),
		Progress: func(sum generate.Summary) {
			fmt.Fprintf(s.err, "\r%d cases, %d differences", sum.Cases, len(sum.Found))
		},
	}
	if *seconds > 0 {
		o.Until = time.Now().Add(time.Duration(*seconds) * time.Second)
	}
	start := time.Now()
	sum, err := generate.Run(ctx, o)
	fmt.Fprintln(s.err)
	if err != nil && ctx.Err() == nil {
		return setupError(s, err)
	}
	elapsed := time.Since(start)
	rep := newReport(d.Name(), "generate", args)
	// A difference is rerun as the saved scenario it became.
	rep.Rerun = fmt.Sprintf("polyloop-conform run --impl %q --scenarios %s --goldens %s", *impl, *out, *out)
	rep.Seed = *seed
	rep.Rows = generateRows(sum, *seed, *out, elapsed, o.Replay)
	rep.Interrupted = ctx.Err() != nil
	if rep.Interrupted && *count > 0 {
		// The cases never drawn; with --seconds alone there is no count.
		rep.NotRun = max(0, *count-sum.Cases-min(sum.Interrupted, 1))
	}
	summary := fmt.Sprintf("seed %d: %d cases (%.0f/s), %d discarded, %d skipped, %d differences, %d shrink steps\n",
		*seed, sum.Cases, float64(sum.Cases)/max(elapsed.Seconds(), 1e-9), sum.Discarded, sum.Skipped, len(sum.Found), sum.Shrinks)
	if err := report.emit(s, rep, summary); err != nil {
		return setupError(s, err)
	}
	if ctx.Err() != nil {
		return ExitFail // the signal handler turns it into 130 or 143
	}
	if len(sum.Found) > 0 || sum.Cases == 0 {
		return ExitFail
	}
	return ExitOK
}

// savedDir settles generate's folder of differences: --save DIR, or the
// old --out DIR, which keeps working with a note that names the new flag,
// since --out is the report's file in run and every other command.
func savedDir(fs *flag.FlagSet, save *string, old string, errw io.Writer) error {
	if old == "" {
		return nil
	}
	saveSet := false
	fs.Visit(func(f *flag.Flag) { saveSet = saveSet || f.Name == "save" })
	if saveSet {
		return fmt.Errorf("generate: --out %s and --save %s both name the folder of differences; give --save alone (the report's file is --report-out)", old, *save)
	}
	fmt.Fprintf(errw, "generate: --out %s is the old name of --save %s, the folder of differences; use --save (in run and the other commands --out is the report's file; here the report's file is --report-out)\n", old, old)
	*save = old
	return nil
}

// generateRows are generate's verdicts as report rows, the same as run's:
// one failing row per difference (its problems, its decisions, its seed,
// where it was saved, and replay, the command that draws it again), an
// interrupted row for the case a signal stopped, and one passing row for
// the cases that agreed with the reference, so a report of a clean run
// shows what it compared.
func generateRows(sum generate.Summary, seed uint64, dir string, took time.Duration, replay string) []report.Row {
	var rows []report.Row
	for _, f := range sum.Found {
		how := "shrunk to"
		switch {
		case f.ShrinkStopped:
			how = "shrinking stopped by a signal at"
		case !f.Shrunk:
			how = "not shrunk,"
		}
		note := fmt.Sprintf("DIFFERENCE case %d of seed %d, %s %d step(s) and %d tool(s)", f.Case, seed, how, f.Steps, f.Tools)
		if f.File != "" {
			note += fmt.Sprintf("; saved as %s (and .json) in %s", f.ID+".yaml", dir)
		}
		note += "; replay: " + replay
		rows = append(rows, report.Row{Scenario: f.ID, Source: f.Source, Verdict: report.Fail, Decisions: f.Decisions, Evidence: report.Observed,
			Problems: f.Details, Note: note, ScenarioYAML: string(f.YAML)})
	}
	if sum.Interrupted > 0 {
		// What the signal stopped is no finding: no problem, no decision
		// cited, nothing saved (issue 43).
		rows = append(rows, report.Row{Scenario: fmt.Sprintf("generated.s%d-c%d", seed, sum.Interrupted), Verdict: report.Interrupted,
			Note: fmt.Sprintf("case %d of seed %d: stopped by a signal before it was compared; replay: %s", sum.Interrupted, seed, replay)})
	}
	if agreed := sum.Cases - len(sum.Found); agreed > 0 {
		rows = append(rows, report.Row{Scenario: fmt.Sprintf("generated.s%d", seed), Verdict: report.Pass, Evidence: report.Observed, Duration: took,
			Note: fmt.Sprintf("%d generated case(s) gave the reference's trajectory (%d discarded, %d skipped)", agreed, sum.Discarded, sum.Skipped)})
	}
	return rows
}

// generateSources are the scenarios whose variants generate draws: the
// suite's own, and with --from DIR a team's as well.
func generateSources(from string) ([]generate.Source, error) {
	sources, err := generate.LoadSources(scenarios.Embedded())
	if err != nil || from == "" {
		return sources, err
	}
	if err := inputDir("from", from, "*.yaml"); err != nil {
		return nil, err
	}
	theirs, err := generate.LoadSources(os.DirFS(from))
	if err != nil {
		return nil, fmt.Errorf("--from %s: %w", from, err)
	}
	return append(sources, theirs...), nil
}
