package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/polyloop/polyloop-conform/internal/atomicfile"
	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/generate"
	"github.com/polyloop/polyloop-conform/internal/knownfail"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/record"
	"github.com/polyloop/polyloop-conform/internal/report"
	"github.com/polyloop/polyloop-conform/internal/shard"
	"github.com/polyloop/polyloop-conform/internal/suiteversion"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// sources are the flags every command that reads scenarios shares.
type sources struct {
	scenarioDir string
	goldenDir   string
}

// goldensOptional says whether a scenario may lack a golden: a team's own
// scenarios (--scenarios) are judged by their expect block until a
// reviewed recording becomes their golden; the built-in suite never is.
func (s *sources) goldensOptional() bool { return s.scenarioDir != "" }

func (s *sources) register(fs *flag.FlagSet) {
	fs.StringVar(&s.scenarioDir, "scenarios", "", "read scenarios from `DIR` instead of the built-in set")
	fs.StringVar(&s.goldenDir, "goldens", "", "read golden trajectories from `DIR` instead of the built-in set")
}

// inputDir checks that a directory given by a flag exists and holds at
// least one file matching glob, so a wrong path is one set-up error, not
// a run with nothing in it or a page of unrelated failures.
func inputDir(flagName, dir, glob string) error {
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("--%s %s: %w", flagName, dir, errors.Unwrap(err))
	case !st.IsDir():
		return fmt.Errorf("--%s %s: not a directory", flagName, dir)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, glob)); glob != "" && len(m) == 0 {
		return fmt.Errorf("--%s %s: no %s files in it; is it the right directory?", flagName, dir, glob)
	}
	return nil
}

func (s *sources) load() ([]*scenarios.Scenario, map[string][]byte, error) {
	load := scenarios.LoadEmbedded // the built-in suite is parsed once per process
	if s.scenarioDir != "" {
		if err := inputDir("scenarios", s.scenarioDir, "*.yaml"); err != nil {
			return nil, nil, err
		}
		fsys := os.DirFS(s.scenarioDir)
		load = func() ([]*scenarios.Scenario, error) { return scenarios.LoadAll(fsys) }
	}
	if s.goldenDir != "" {
		glob := "*.json"
		if s.scenarioDir != "" {
			// A team's own scenarios may have no golden yet: an empty
			// directory is theirs to start from (judged by expect).
			glob = ""
		}
		if err := inputDir("goldens", s.goldenDir, glob); err != nil {
			return nil, nil, err
		}
	}
	scs, err := load()
	if err != nil {
		return nil, nil, fmt.Errorf("cannot load scenarios:\n%w", err)
	}
	var g map[string][]byte
	switch {
	case s.goldenDir != "":
		g, err = trajectories.GoldensFromDir(s.goldenDir)
	default:
		g, err = trajectories.Goldens()
	}
	if err == nil && s.scenarioDir != "" && s.goldenDir == "" {
		// Own scenarios without --goldens: a built-in scenario copied there
		// keeps its golden, the team's own are judged by expect alone.
		ids := map[string]bool{}
		for _, sc := range scs {
			ids[sc.ID] = true
		}
		for id := range g {
			if !ids[id] {
				delete(g, id)
			}
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cannot load goldens: %w", err)
	}
	return scs, g, nil
}

func selectScenarios(all []*scenarios.Scenario, pattern string) ([]*scenarios.Scenario, error) {
	if pattern == "" {
		// A copy: callers filter the selection in place (--shard), and
		// the whole set must stay whole (it panicked: docs/sharding.md).
		return slices.Clone(all), nil
	}
	pats := strings.Split(pattern, ",")
	for _, p := range pats {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("--run %q: not a valid glob: %v", p, err)
		}
	}
	var out []*scenarios.Scenario
	used := make([]bool, len(pats))
	for _, sc := range all {
		picked := false
		for i, p := range pats {
			if ok, _ := path.Match(p, sc.ID); ok {
				used[i] = true
				if !picked {
					out = append(out, sc)
					picked = true
				}
			}
		}
	}
	// Every pattern must match, as in a known-failing list: a typo in one
	// of several patterns would otherwise drop scenarios silently.
	for i, p := range pats {
		if !used[i] {
			return nil, fmt.Errorf("--run: pattern %q matches no scenario; 'polyloop-conform list' shows the ids", p)
		}
	}
	return out, nil
}

// runFlags are run's options. They are one struct so that checking them
// (check) and reading what they name (load) live apart from runCmd, which
// only sequences the run.
type runFlags struct {
	src         sources
	out         reportFlags
	evidence    evidenceFlags
	batch       batchFlags
	impl        string
	pattern     string
	kfFile      string
	shard       string
	timeout     time.Duration
	parallel    int
	transcripts string
	strict      bool
	recordDir   string
	repeat      int
	seed        uint64
	handshake   time.Duration
	noFork      bool
	carry       carryFlag
	since       string
}

func (f *runFlags) register(fs *flag.FlagSet) {
	f.src.register(fs)
	fs.StringVar(&f.impl, "impl", "", "run this command line as the implementation under test over the stdio protocol (default: the built-in reference, in process)")
	fs.StringVar(&f.pattern, "run", "", "only scenarios whose id matches one of these comma-separated `GLOB`s")
	fs.StringVar(&f.kfFile, "known-failing", "", "`FILE` of scenario-id globs expected to fail, each with a # reason")
	f.out.register(fs, true)
	fs.StringVar(&f.shard, "shard", "", "run only shard `K/N` of the scenarios (a stable partition; join the shards' JSON reports with merge)")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "time limit for one scenario")
	fs.IntVar(&f.parallel, "p", 1, "run `N` scenarios at once")
	fs.StringVar(&f.transcripts, "transcripts", "", "write each scenario's protocol exchange to `DIR` (with --impl)")
	fs.BoolVar(&f.strict, "strict", false, "compare implementation text (executor sentences, parse errors, error messages) word for word, as the reference writes it")
	fs.StringVar(&f.recordDir, "record", "", "write each scenario's trajectory to `DIR`/<id>.json, for diff and verify later")
	fs.IntVar(&f.repeat, "repeat", 1, "run each selected scenario `N` times, each on a new process, in a seeded random order; repetitions that differ fail as nondeterministic")
	fs.Uint64Var(&f.seed, "seed", 0, "the `SEED` of the generated batch and of --repeat's order, to replay a run (default: a fresh one each run, named in the report)")
	f.evidence.register(fs)
	fs.DurationVar(&f.handshake, "handshake-timeout", 10*time.Second, "time limit for a new implementation process's hello (with --impl); it does not count against --timeout")
	fs.BoolVar(&f.noFork, "no-fork", false, "start every process from --impl even when the implementation offers a fork server")
	fs.Var(&f.carry, "carry", carryUsage)
	f.batch.register(fs)
	fs.StringVar(&f.since, "since", "", "mark each failure whose scenario or cited decision is new or changed since suite `VERSION` (e.g. 0.1.0; docs/versioning.md)")
}

// check refuses flags that cannot make a run, in the order a user reads
// them, before any scenario is loaded. It resolves --seed (a fresh one
// when not given), --shard, --since (nil without it) and --generate.
func (f *runFlags) check(fs *flag.FlagSet) (shard.Shard, *suiteversion.Changes, error) {
	if err := checkImplFlag(fs); err != nil {
		return shard.Shard{}, nil, err
	}
	if fs.NArg() > 0 {
		return shard.Shard{}, nil, fmt.Errorf("run takes no arguments, got %q", fs.Args())
	}
	if err := f.out.check(); err != nil {
		return shard.Shard{}, nil, err
	}
	sh, err := shard.Parse(f.shard)
	if err != nil {
		return shard.Shard{}, nil, err
	}
	if f.timeout <= 0 {
		return shard.Shard{}, nil, fmt.Errorf("--timeout %s: give a positive duration, e.g. 10s", f.timeout)
	}
	if err := f.evidence.check(); err != nil {
		return shard.Shard{}, nil, err
	}
	if f.repeat < 1 {
		return shard.Shard{}, nil, fmt.Errorf("--repeat %d: run each scenario at least once", f.repeat)
	}
	if f.parallel < 1 {
		return shard.Shard{}, nil, fmt.Errorf("-p %d: run at least one scenario at a time", f.parallel)
	}
	if err := resolveSeed(fs, &f.seed); err != nil {
		return shard.Shard{}, nil, err
	}
	var moved *suiteversion.Changes
	if f.since != "" {
		if moved, err = sinceChanges(f.since); err != nil {
			return shard.Shard{}, nil, err
		}
	}
	if err := f.batch.resolve(f.pattern != "" || f.src.scenarioDir != "", f.seed); err != nil {
		return shard.Shard{}, nil, fmt.Errorf("--generate: %w", err)
	}
	return sh, moved, nil
}

// runInputs are what run reads before it starts anything.
type runInputs struct {
	all      []*scenarios.Scenario // the whole suite: missing goldens, known-failing ids
	selected []*scenarios.Scenario // --run's scenarios in this --shard
	goldens  map[string][]byte
	kf       *knownfail.List
}

// load reads the scenarios, goldens and known-failing list, selects this
// shard's scenarios, and checks the output directories, so every input
// or output problem is a set-up error before the first scenario runs.
func (f *runFlags) load(sh shard.Shard) (*runInputs, error) {
	var in runInputs
	var err error
	if in.all, in.goldens, err = f.src.load(); err != nil {
		return nil, err
	}
	if in.selected, err = selectScenarios(in.all, f.pattern); err != nil {
		return nil, err
	}
	in.selected = slices.DeleteFunc(in.selected, func(sc *scenarios.Scenario) bool { return !sh.Has(sc.ID) })
	if in.kf, err = loadKnownFailing(f.kfFile); err != nil {
		return nil, err
	}
	// Output directories are checked before anything runs: a directory
	// silently not written is worse than a refusal to start.
	for _, d := range []struct{ flag, dir string }{{"transcripts", f.transcripts}, {"record", f.recordDir}} {
		if d.dir == "" {
			continue
		}
		if err := writableDir(d.dir); err != nil {
			return nil, fmt.Errorf("--%s: %w", d.flag, err)
		}
	}
	return &in, nil
}

// runCmd runs the selected scenarios (and a --generate batch) against the
// implementation and writes one report. It exits ExitSetup when it cannot
// run or write, ExitFail when a scenario fails, ExitOK otherwise.
func runCmd(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(s.err)
	var f runFlags
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	sh, moved, err := f.check(fs)
	if err != nil {
		return setupError(s, err)
	}
	in, err := f.load(sh)
	if err != nil {
		return setupError(s, err)
	}
	jobs := in.selected
	if f.repeat > 1 {
		jobs = shuffled(in.selected, f.repeat, f.seed)
		fmt.Fprintf(s.err, "polyloop-conform: %d runs (--repeat %d) in the order of --seed %d\n", len(jobs), f.repeat, f.seed)
	}
	driver, closeDriver, err := newDriver(ctx, driverConfig{impl: f.impl, transcripts: f.transcripts, logs: s.err, handshake: f.handshake, trace: f.out.trace, fresh: f.repeat > 1, noFork: f.noFork, carry: f.carry})
	if err != nil {
		return setupError(s, err)
	}
	defer closeDriver()
	rep := f.newRunReport(driver, sh, in, args)
	progress := newProgress(s.err, len(in.selected))
	recordErr := f.runScenarios(ctx, rep, driver, sh, in, jobs, progress.tick, args, s.err)
	progress.done()
	f.conclude(ctx, rep, driver, sh, in, moved)

	if err := f.out.emit(s, rep, ""); err != nil {
		return setupError(s, err)
	}
	if recordErr != nil {
		return setupError(s, fmt.Errorf("--record: %w; the report above is complete, the recording is not", recordErr))
	}
	if !rep.OK() {
		return ExitFail
	}
	return ExitOK
}

// newRunReport starts run's report before anything runs: its
// implementation (with the shard), the capabilities no scenario judges,
// the selection, the seed when the run drew with it, and the suite's
// missing goldens as errors.
func (f *runFlags) newRunReport(driver engine.Driver, sh shard.Shard, in *runInputs, args []string) *report.Report {
	rep := newReport(driver.Name()+report.ShardSuffix(sh.String()), "run", args)
	if uj := engine.Unjudged(driver.Capabilities()); len(uj) > 0 {
		rep.NotJudged = uj
	}
	rep.Selection = f.pattern
	if f.repeat > 1 || f.batch.runs(sh) {
		rep.Seed = f.seed // what the run drew with it; --seed replays it
	}
	rep.Errors = append(rep.Errors, (&engine.Suite{Scenarios: in.all, Goldens: in.goldens, GoldensOptional: f.src.goldensOptional()}).Missing()...)
	return rep
}

// runScenarios runs jobs and the --generate batch into rep's rows, folds
// --repeat's repetitions into one row per scenario, and writes the
// --record manifest. It returns the first error recording, which fails
// the run only after the report is written.
func (f *runFlags) runScenarios(ctx context.Context, rep *report.Report, driver engine.Driver, sh shard.Shard, in *runInputs, jobs []*scenarios.Scenario, tick func(string), args []string, logs io.Writer) error {
	suite := &engine.Suite{Scenarios: in.selected, Goldens: in.goldens, GoldenDir: f.src.goldenDir, Timeout: f.timeout, Strict: f.strict, GoldensOptional: f.src.goldensOptional()}
	var recordErr error
	var recorded []string
	rep.Rows, rep.NotRun, recorded, recordErr = runAll(ctx, suite, driver, jobs, f.parallel, tick, f.recordDir, f.repeat > 1)
	if f.repeat > 1 {
		rep.Rows = mergeRepeats(rep.Rows, f.strict)
		rep.NotRun = len(in.selected) - len(rep.Rows)
	}
	if rows, err := f.batch.run(ctx, driver, sh, f.timeout, seededCommand("run", args, f.seed)); err != nil {
		rep.Errors = append(rep.Errors, err.Error())
	} else {
		rep.Rows = append(rep.Rows, rows...)
	}
	if f.recordDir != "" && recordErr == nil {
		recordErr = record.Write(f.recordDir, record.Manifest{SuiteVersion: protocol.SuiteVersion, Implementation: driver.Name(),
			RecordedAt: time.Now().UTC().Truncate(time.Second), Selection: f.pattern, Scenarios: recorded})
		if stale := staleRecords(f.recordDir, recorded); len(stale) > 0 {
			fmt.Fprintf(logs, "polyloop-conform: --record %s also holds %d trajectories this run did not write (%s); verify reports them as stale\n", f.recordDir, len(stale), strings.Join(stale[:min(len(stale), 5)], ", "))
		}
	}
	return recordErr
}

// mergeRepeats numbers each scenario's repetitions in the order they ran
// and merges them into one row per scenario (report.MergeRepetitions:
// repetitions that differ fail as nondeterministic).
func mergeRepeats(rows []report.Row, strict bool) []report.Row {
	seen := map[string]int{}
	reps := make([]report.Repetition, len(rows))
	for i, row := range rows {
		seen[row.Scenario]++
		reps[i] = report.Repetition{Row: row, N: seen[row.Scenario]}
	}
	return report.MergeRepetitions(reps, strict)
}

// conclude judges the finished run: whether a signal stopped it, the
// driver's own problems, --require and --capabilities, the known-failing
// list and --since's marks. An implementation that claims no capability
// is an error; otherwise a whole run (not a shard: merge judges the
// whole) must show that something passed.
func (f *runFlags) conclude(ctx context.Context, rep *report.Report, driver engine.Driver, sh shard.Shard, in *runInputs, moved *suiteversion.Changes) {
	rep.Interrupted = ctx.Err() != nil
	if c, ok := driver.(interface{ Problems() []string }); ok {
		rep.Errors = append(rep.Errors, c.Problems()...)
	}
	f.evidence.apply(rep, driver.Capabilities())
	report.ApplyKnownFailing(rep, in.kf, ids(in.all))
	if moved != nil {
		report.MarkSince(rep.Rows, moved)
	}
	if len(driver.Capabilities()) == 0 {
		rep.Errors = append(rep.Errors, "the implementation claims no capability (its hello's capabilities list is empty), so no scenario can test it; claim what it implements (docs/protocol.md, Handshake)")
	} else if sh.String() == "" {
		// A shard may hold nothing it can run; merge asks for evidence
		// of the whole.
		rep.RequireEvidence()
	}
}

// runAll runs scs with up to parallel workers. When ctx is cancelled (a
// signal) it starts no more scenarios; those that were running stop with
// it. It returns the rows of the scenarios that ran, how many never
// started, and the first error writing a --record file.
func runAll(ctx context.Context, suite *engine.Suite, d engine.Driver, scs []*scenarios.Scenario, parallel int, tick func(string), record string, keepTrajectories bool) (_ []report.Row, _ int, recorded []string, _ error) {
	rows := make([]report.Row, len(scs))
	ran := make([]bool, len(scs))
	stderr, _ := d.(interface{ Stderr(id string) string })
	traces, _ := d.(interface{ Transcript(id string) string })
	var recordMu sync.Mutex
	var recordErr error
	rec := recorder{written: map[string]bool{}, firstOnly: keepTrajectories}
	g := new(errgroup.Group)
	g.SetLimit(parallel)
	for i := range scs {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if ctx.Err() != nil {
				return nil
			}
			res := suite.Run(ctx, d, scs[i])
			row := report.RowOf(scs[i], res)
			if row.Verdict == report.Fail && ctx.Err() != nil {
				// Stopped by the signal, not judged: neither a pass nor
				// a failure of the implementation.
				// What the cancellation broke is no finding: no problem,
				// no decision cited.
				row.Verdict, row.Note = report.Interrupted, "interrupted by a signal before it finished"
				row.Problems, row.Decisions = nil, nil
			}
			if row.Verdict == report.Fail || row.Verdict == report.Interrupted || keepTrajectories {
				if res.Trajectory != nil {
					row.Trajectory, _ = trajectories.MarshalCompact(res.Trajectory)
				}
				if traces != nil {
					row.Transcript = traces.Transcript(res.Scenario)
				}
			}
			if stderr != nil {
				row.Stderr = stderr.Stderr(res.Scenario)
			}
			if record != "" && res.Trajectory != nil {
				if err := rec.write(record, scs[i].ID, res.Trajectory); err != nil {
					recordMu.Lock()
					recordErr = cmp.Or(recordErr, err)
					recordMu.Unlock()
				}
			}
			rows[i], ran[i] = row, true
			tick(res.Scenario)
			return nil
		})
	}
	g.Wait()
	var out []report.Row
	for i, ok := range ran {
		if ok {
			out = append(out, rows[i])
		}
	}
	recorded = rec.ids()
	return out, len(scs) - len(out), recorded, recordErr
}

// loadKnownFailing reads a --known-failing file; "" means none.
func loadKnownFailing(file string) (*knownfail.List, error) {
	if file == "" {
		return nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--known-failing: %w", err)
	}
	return knownfail.Parse(file, data)
}

// writableDir creates dir if needed and checks that it takes a new file.
func writableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return atomicfile.Probe(filepath.Join(dir, "x"))
}

// ids lists the scenarios' ids.
func ids(scs []*scenarios.Scenario) []string {
	out := make([]string, len(scs))
	for i, sc := range scs {
		out[i] = sc.ID
	}
	return out
}

// progress prints a one-line counter on a terminal and nothing elsewhere.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	n     int
	on    bool
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total}
	if f, ok := w.(*os.File); ok && total > 20 {
		// A character device is a terminal for our purpose; pipes and
		// files (CI logs) get no carriage-return noise.
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.on = true
		}
	}
	return p
}

func (p *progress) tick(id string) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	fmt.Fprintf(p.w, "\r\033[K[%d/%d] %s", p.n, p.total, id)
}

func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// recorder writes --record files, each scenario's trajectory under the
// scenario's own ID (not the trajectory's scenario field, which an
// implementation may get wrong), and never two for one name.
type recorder struct {
	mu        sync.Mutex
	written   map[string]bool
	firstOnly bool
}

func (r *recorder) write(dir, id string, tr *trajectories.Trajectory) error {
	if !scenarios.IDPattern.MatchString(id) {
		return fmt.Errorf("refusing to write a trajectory for scenario id %q", id)
	}
	r.mu.Lock()
	twice := r.written[id]
	r.written[id] = true
	r.mu.Unlock()
	if twice && r.firstOnly {
		return nil // --repeat records the first repetition
	}
	if twice {
		return fmt.Errorf("a second trajectory for %s in one run; each scenario is recorded once", id)
	}
	data, err := trajectories.Marshal(tr)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, id+".json"), data)
}

func (r *recorder) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.written))
	for id := range r.written {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// staleRecords lists the trajectories in dir that the run did not write.
func staleRecords(dir string, recorded []string) []string {
	matches, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var out []string
	for _, m := range matches {
		id := strings.TrimSuffix(filepath.Base(m), ".json")
		if _, found := slices.BinarySearch(recorded, id); !found {
			out = append(out, filepath.Base(m))
		}
	}
	return out
}

// resolveSeed settles --seed: the seed given, which must not be 0, or a
// fresh one drawn for this run (generate.NewSeed), so that no kernel can
// know the generated cases before the run that draws them.
func resolveSeed(fs *flag.FlagSet, seed *uint64) error {
	if !flagGiven(fs, "seed") {
		*seed = generate.NewSeed()
		return nil
	}
	if *seed == 0 {
		return fmt.Errorf("--seed 0: give a positive seed (a report names the seed of its run), or leave --seed out to draw a fresh one")
	}
	return nil
}

// flagGiven says whether the command line set the flag.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// seededCommand is the command line that replays a run with its seed:
// the rerun command without any --seed, plus --seed seed.
func seededCommand(command string, args []string, seed uint64) string {
	var kept []string
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if strings.HasPrefix(args[i], "-") && name == "seed" {
			if !hasValue {
				i++
			}
			continue
		}
		kept = append(kept, args[i])
	}
	return fmt.Sprintf("%s --seed %d", rerunCommand(command, kept), seed)
}

// shuffled is every scenario n times, in an order drawn from seed: the
// same seed gives the same order, so a nondeterministic failure replays.
func shuffled(scs []*scenarios.Scenario, n int, seed uint64) []*scenarios.Scenario {
	out := make([]*scenarios.Scenario, 0, len(scs)*n)
	for range n {
		out = append(out, scs...)
	}
	r := rand.New(rand.NewPCG(seed, 0x706f6c796c6f6f70))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
