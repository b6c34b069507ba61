package cli

import (
	"context"
	"errors"
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
	"github.com/polyloop/polyloop-conform/internal/fsrecord"
	"github.com/polyloop/polyloop-conform/internal/implproc"
	"github.com/polyloop/polyloop-conform/internal/isolate"
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
	recorder           *string
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
	f.recorder = fs.String("recorder", "auto", "with --power-loss, what records the writes: `fuse` (the runner's file system over journal_dir), strace, or auto (fuse where it can be mounted)")
	f.powerLoss = fs.Bool("power-loss", false, "cut the power instead of killing: record the implementation's writes and syncs (the runner's FUSE file system over journal_dir, else strace) and resume from the disk states a power cut leaves")
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
	case *f.recorder != "auto" && *f.recorder != "fuse" && *f.recorder != "strace":
		return fmt.Errorf("--recorder %q: give auto, fuse or strace", *f.recorder)
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
	// The recorder is mounted before the implementation starts: a process
	// in mount namespaces of its own sees only the mounts made before it,
	// and every machine carries it, as the one volume the journals are on.
	var disk diskRecorder
	var volumes []string
	var syncs func(isolate.SyncCall)
	if *f.powerLoss {
		disk = mountDisk(*f.recorder)
		defer disk.close()
		if disk.rec != nil {
			volumes, syncs = []string{disk.rec.Mountpoint()}, disk.synced
		}
	}
	d, closeDriver, err := newDriver(ctx, driverConfig{impl: cmdline, logs: s.err, handshake: *f.handshake, noFork: *f.noFork, carry: f.carry, volumes: volumes, syncs: syncs})
	if err != nil {
		return setupError(s, err)
	}
	defer closeDriver()
	client := d.(*implproc.Client)
	kind := ", crash exploration"
	if *f.powerLoss {
		// Every format carries the title: it names the recorder that judged.
		kind = ", power-loss exploration recorded by strace"
		if disk.rec != nil {
			kind = ", power-loss exploration recorded by the runner's FUSE file system"
			if client.SyncsUnobserved() != "" {
				// Known once the first process started: every format
				// carries it, not only the summary line.
				kind += " (syncfs and sync not observed)"
			}
		}
	}
	rep := newReport(client.Name()+kind+report.ShardSuffix(sh.String()), "explore", args)
	rep.Selection = *f.pattern
	explored := eligible(rep, selected, client.Capabilities())
	var summary string
	if *f.powerLoss {
		summary = explorePowerLoss(ctx, rep, explored, f, client, cmdline, sh, disk, s)
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
// summary. The journal lives on the runner's file-system recorder where
// FUSE can be mounted; elsewhere the implementation runs under strace; with
// neither, every scenario is skipped with the reason. A run that judged no
// disk state is an error, never a pass.
func explorePowerLoss(ctx context.Context, rep *report.Report, explored []*scenarios.Scenario, f exploreFlags, client *implproc.Client, cmdline string, sh shard.Shard, disk diskRecorder, s stdio) string {
	var mine []*scenarios.Scenario
	for _, sc := range explored {
		if sh.Has(sc.ID) {
			mine = append(mine, sc)
		}
	}
	explore, recorder, err := powerLossRecorder(ctx, f, client, cmdline, disk, s)
	if err != nil {
		for _, sc := range mine {
			rep.Rows = append(rep.Rows, report.SkipRow(sc, err.Error()))
		}
		rep.Errors = append(rep.Errors, "explore --power-loss judged no disk state: "+err.Error())
		return "explore --power-loss: skipped: " + err.Error() + "\n"
	}
	states, failed, skipped := 0, 0, 0
	for i, sc := range mine {
		start := time.Now()
		r := explore(sc)
		if ctx.Err() != nil {
			// What the signal broke is no finding (see crashpoint.Result.Interrupted),
			// and the scenarios after it never started.
			rep.Rows = append(rep.Rows, report.ExploreRow(sc, report.Exploration{Explored: r.States, Interrupted: true}, time.Since(start)))
			rep.NotRun += len(mine) - i - 1
			break
		}
		if r.Skipped != "" {
			skipped++
			rep.Rows = append(rep.Rows, report.SkipRow(sc, r.Skipped))
			continue
		}
		states, failed = states+r.States, failed+len(r.Failures)
		rep.Rows = append(rep.Rows, report.ExploreRow(sc, report.Exploration{Explored: r.States, Baseline: r.Baseline, Failures: r.Failures, Source: "power-loss"}, time.Since(start)))
	}
	if states == 0 && ctx.Err() == nil && (len(mine) > 0 || sh.String() == "") {
		// A shard that holds none of the selection shows nothing and
		// claims nothing; merge judges the whole.
		why := fmt.Sprintf("%d scenarios in this shard, %d skipped", len(mine), skipped)
		if len(mine) == 0 {
			why = "no scenario the implementation can journal is in this selection (--run, --shard, the capabilities it claims)"
		}
		rep.Errors = append(rep.Errors, "explore --power-loss judged no disk state ("+why+"): a power-loss run that shows nothing durable is not a pass")
	}
	if why := client.SyncsUnobserved(); why != "" && disk.rec != nil {
		// The kernel never tells FUSE of syncfs or sync: unheard, they
		// make nothing durable, and a journal kept by them alone fails.
		recorder += "; syncfs and sync not observed: " + why
	}
	return fmt.Sprintf("explore --power-loss: %d scenarios, %d disk states resumed, %d failed; recorder: %s\n", len(mine), states, failed, recorder)
}

// diskRecorder is the runner's FUSE recorder, or why there is none.
type diskRecorder struct {
	rec      *fsrecord.Recorder
	err      error
	required bool // --recorder fuse: no fallback
}

// mountDisk mounts the recorder at an ordinary directory of random name
// (under /var/lib, or the home directory): not the temporary directory,
// and no name of the runner's, so nothing can be keyed on it.
func mountDisk(choice string) diskRecorder {
	if choice == "strace" {
		return diskRecorder{err: errors.New("--recorder strace")}
	}
	if err := fsrecord.Available(); err != nil {
		return diskRecorder{err: err, required: choice == "fuse"}
	}
	parent := "/var/lib"
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		home, err := os.UserHomeDir()
		if err != nil {
			return diskRecorder{err: err}
		}
		parent = home
	}
	backing, err := os.MkdirTemp("", "polyloop-conform-disk-*")
	if err != nil {
		return diskRecorder{err: err}
	}
	mount := filepath.Join(parent, powerloss.RandomName())
	rec, err := fsrecord.Mount(mount, backing)
	if err != nil {
		os.Remove(mount)
		os.RemoveAll(backing)
		return diskRecorder{err: err, required: choice == "fuse"}
	}
	return diskRecorder{rec: rec}
}

// synced records a syncfs of the recorder's file system, or a sync, that
// a process on a machine made (the kernel sends neither to FUSE; the
// machine's init stops them for the runner). A syncfs of another file
// system (/dev/shm) syncs nothing of the journal's.
func (d diskRecorder) synced(c isolate.SyncCall) {
	if c.All || c.Dev == d.rec.Dev() {
		d.rec.SyncedBy(c.PidNS)
	}
}

func (d diskRecorder) close() {
	if d.rec == nil {
		return
	}
	d.rec.Unmount()
	os.Remove(d.rec.Mountpoint())
	os.RemoveAll(d.rec.Backing())
}

// powerLossRecorder picks what records the implementation's writes: the
// runner's FUSE recorder, or else strace. It returns the exploration of
// one scenario and the recorder's name for the report.
func powerLossRecorder(ctx context.Context, f exploreFlags, client *implproc.Client, cmdline string, disk diskRecorder, s stdio) (func(*scenarios.Scenario) powerloss.TracedResult, string, error) {
	if disk.rec != nil {
		explore := func(sc *scenarios.Scenario) powerloss.TracedResult {
			return powerloss.ExploreRecorded(ctx, client, sc, powerloss.RecordedOptions{Timeout: *f.timeout, Parallel: *f.parallel, Recorder: disk.rec})
		}
		return explore, "fuse (the runner's file system, mounted over journal_dir)", nil
	}
	if disk.required {
		return nil, "", fmt.Errorf("--recorder fuse: %w", disk.err)
	}
	if err := systrace.Available(); err != nil {
		return nil, "", fmt.Errorf("%v; and %w", disk.err, err)
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
	explore := func(sc *scenarios.Scenario) powerloss.TracedResult {
		return powerloss.ExploreTraced(ctx, client, sc, powerloss.TracedOptions{Timeout: *f.timeout, Parallel: *f.parallel, Traced: traced})
	}
	return explore, "strace (" + disk.err.Error() + ")", nil
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
