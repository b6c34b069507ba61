// Package refdriver runs a scenario on the reference kernel: it builds the
// registry, the request(s) and the fakes' seams from the scenario, runs or
// crashes-and-resumes, and returns the trajectory.
//
// It is used in process by the suite and, behind the stdio protocol, by
// `polyloop-conform serve-reference`; the Env it talks to is the fakes in
// the first case and the remote runner in the second.
package refdriver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/journalfile"
	"github.com/polyloop/polyloop-conform/reference/assembly"
	"github.com/polyloop/polyloop-conform/reference/deviation"
	"github.com/polyloop/polyloop-conform/reference/events"
	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/reference/run"
	"github.com/polyloop/polyloop-conform/reference/tools"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// Capabilities returns what the reference kernel claims.
func Capabilities() []string {
	return []string{"json-actions", "code-actions", "resume", "cancellation", "context-assembly", "events", "project-executor"}
}

// Options control journal placement and crash injection.
type Options struct {
	// JournalRoot is where resume scenarios keep their journal; a temporary
	// directory is used when empty.
	JournalRoot string
	// Crash overrides the scenario's crash point (the crash-point harness
	// walks every point this way). Nil uses the scenario's own.
	Crash *CrashInjector
	// Schemas shares compiled tool schemas between runs (may be nil).
	Schemas *tools.SchemaCache
	// Deviations turns on named departures from the design (selfcheck).
	Deviations deviation.Set
	// JournalFS is the file system Process journals through; nil is the
	// real one (the power-loss simulation passes its model of a disk).
	JournalFS journal.FS
	// JournalHook, when set, sees every journal write of a journal-fault
	// run before and after it happens (serve-reference reports them as
	// journal points).
	JournalHook journal.Hook
	// Sink, when set, is an audit sink the runner plays (the fakes in
	// process; event messages over the protocol): it gets every event with
	// its phase index and answers "" (taken), "error" or "panic". With it
	// the scenario's faults.sink is the runner's to play, not the driver's.
	Sink func(phase int, e trajectories.Event) string
	// Measure, when set, is the requests' size measure, played by the
	// runner, which refuses measure_unknown's block types itself.
	Measure func(phase int, block, text string) (int, error)
	// JournalPlayed, when set, is told that the driver, not the kernel, cut
	// or damaged the journal before a resume (in process, the runner's
	// part; serve-reference leaves it unset: there the kernel's side does).
	JournalPlayed func()
	// Restarted, when set, is told when a resume starts, in process as if
	// in a new process: the runner's record of the calls starts afresh.
	Restarted func()
}

// scenarioRun is what every run of one scenario shares: the scenario, its
// definition, the world it runs against and the driver's options.
type scenarioRun struct {
	sc    *scenarios.Scenario
	def   *run.Definition
	env   Env
	o     Options
	seams deviation.Seams
}

func newRun(sc *scenarios.Scenario, env Env, o Options) scenarioRun {
	return scenarioRun{sc: sc, def: definition(sc), env: env, o: o, seams: o.Deviations.Seams()}
}

// call runs req on the kernel, or resumes it, through the deviations'
// seams.
func (sr scenarioRun) call(ctx context.Context, req *run.Request, opts run.Options, resume bool) (*run.Result, error) {
	sr.seams.Options(&opts)
	k := sr.seams.Kernel()
	if resume {
		return k.Resume(ctx, req, opts)
	}
	return k.Run(ctx, req, opts)
}

// options are the collaborators of phase i's run, its events recorded in rec.
func (sr scenarioRun) options(rec *events.Recorder, i int) run.Options {
	return run.Options{Model: run.ModelFunc(modelFor(sr.env, i, sr.seams.Abandon())), Sinks: sr.sinks(rec, i)}
}

// Run runs sc and returns its trajectory, without handler_calls and
// model_calls, which the runner fills from its fakes.
func Run(ctx context.Context, sc *scenarios.Scenario, env Env, o Options) (*trajectories.Trajectory, error) {
	tr := &trajectories.Trajectory{Format: trajectories.Format, Scenario: sc.ID}
	sr := newRun(sc, env, o)
	if multi(sc) && (sc.Faults.Crash != nil || sc.Faults.Resume) {
		return sr.phasedCrashAndResume(ctx)
	}
	runs := sc.Runs()
	for i, r := range runs {
		req, err := BuildRequest(sc, sr.def, i, env, o)
		if err != nil {
			if tr.AssemblyError = refusal(err); tr.AssemblyError == nil {
				return nil, err
			}
			return tr, nil
		}
		rec := &events.Recorder{}
		opts := sr.options(rec, i)
		var res *run.Result
		switch {
		case sc.Faults.Crash != nil || o.Crash != nil:
			res, tr.Resume, err = sr.crashAndResume(ctx, req, opts, &rec)
		case sc.Faults.JournalError != nil:
			opts.JournalHook = o.JournalHook
			res, err = sr.runWithWriteFault(ctx, req, opts)
		case sc.Faults.Resume:
			res, tr.Resume, err = sr.stopAndResume(ctx, req, opts, &rec)
		default:
			res, err = sr.call(ctx, req, opts, false)
		}
		ended, err := settle(tr, r.Name, multi(sc), res, err, rec.Events())
		if err != nil || !ended {
			return tr, err
		}
		if multi(sc) {
			tr.Phases = append(tr.Phases, trajectories.PhaseEnd{Name: r.Name, End: *tr.End})
		}
	}
	return tr, nil
}

// settle records a run's outcome in tr: its steps and events, and its end,
// or how it stopped without one (a journal write error, a failed model
// call, a cancellation). ended is false when the run did not end, so no
// later phase may start; err is an error of the driver, not of the run.
func settle(tr *trajectories.Trajectory, phase string, isMulti bool, res *run.Result, err error, evs []events.Event) (ended bool, _ error) {
	var we *journal.WriteError
	var in *run.Interrupted
	switch {
	case errors.As(err, &we):
		// The path is volatile; the rest of the error is what conformance checks.
		tr.RunError = &trajectories.RunError{Kind: "journal_write", Message: fmt.Sprintf("%s of record %d (%s) failed: %v", we.During, we.Seq, we.Type, we.Err)}
		appendResult(tr, phase, isMulti, &run.Result{}, evs)
		return false, nil
	case errors.As(err, &in):
		if res == nil {
			// Interrupted before a crash point it was meant to reach.
			res = &run.Result{}
		}
		appendResult(tr, phase, isMulti, res, evs)
		if in.Cancelled() {
			tr.Interrupted = &trajectories.Interrupted{Step: in.Step, During: in.During, Tool: in.Tool}
			if isMulti {
				tr.Interrupted.Phase = phase
			}
		} else {
			tr.RunError = &trajectories.RunError{Kind: "model_call", Message: in.Err.Error()}
		}
		return false, nil
	case errors.Is(err, journal.ErrDamaged):
		// Resume refused a damaged journal (0002.D5): nothing ran.
		// The path is volatile; where and how the journal is damaged is not.
		msg := "resume refused the journal: it is damaged, not torn by a crash"
		var te *journal.TailError
		if errors.As(err, &te) {
			msg = fmt.Sprintf("resume refused the journal: record %d (byte %d) is damaged, not torn by a crash: %s", te.Line, te.Offset, te.Reason)
		}
		tr.RunError = &trajectories.RunError{Kind: "journal_damaged", Message: msg}
		appendResult(tr, phase, isMulti, &run.Result{}, evs)
		return false, nil
	case err != nil:
		return false, err
	}
	appendResult(tr, phase, isMulti, res, evs)
	return true, nil
}

// stopAndResume runs req with a journal until it stops without an end
// (cancelled, or a failed model call), then resumes that journal with a
// freshly built request and an uncancelled context, as the next holder of
// the run's lease would (0004.D4, 0002.D3).
func (sr scenarioRun) stopAndResume(ctx context.Context, req *run.Request, opts run.Options, rec **events.Recorder) (*run.Result, *trajectories.Resume, error) {
	sc, o := sr.sc, sr.o
	dir, cleanup, err := journalDir(o.JournalRoot, sc.ID)
	if err != nil {
		return nil, nil, err
	}
	defer cleanup()
	first := opts
	first.JournalDir = dir
	res, err := sr.call(ctx, req, first, false)
	var in *run.Interrupted
	if !errors.As(err, &in) {
		if err == nil {
			return nil, nil, fmt.Errorf("the run ended with %s without being interrupted, so there is nothing to resume", res.End.Reason)
		}
		return nil, nil, err
	}
	next, cancel := nextHolder(ctx)
	defer cancel()
	*rec = &events.Recorder{}
	opts.Sinks = sr.sinks(*rec, 0)
	sr.restarted()
	res, err = sr.journaled(next, opts, dir, nil, true)
	if res == nil {
		return res, nil, err
	}
	return res, wireResume(res.Resume), err
}

// nextHolder is the context of the next holder of a run's lease: not
// cancelled with the first holder (its cancellation ended with it), but
// held to the same deadline.
func nextHolder(ctx context.Context) (context.Context, context.CancelFunc) {
	next := context.WithoutCancel(ctx)
	if d, ok := ctx.Deadline(); ok {
		return context.WithDeadline(next, d)
	}
	return next, func() {}
}

// refusal is a request refused at assembly as the trajectory records it,
// or nil when err is no assembly error.
func refusal(err error) *trajectories.AssemblyError {
	var ae *run.AssemblyError
	if !errors.As(err, &ae) {
		return nil
	}
	return &trajectories.AssemblyError{Kind: ae.Kind, Tools: ae.Tools, Message: ae.Message}
}

// wireResume is what a resume found, as the trajectory records it (nil
// when the run was not resumed).
func wireResume(r *run.ResumeInfo) *trajectories.Resume {
	if r == nil {
		return nil
	}
	return &trajectories.Resume{From: r.From, ReplayedStep: r.ReplayedStep, TornTail: r.TornTail != ""}
}

// journalDir returns a fresh journal directory for one scenario under root
// (a temporary directory when root is empty) and how to remove it.
func journalDir(root, id string) (string, func(), error) {
	if root == "" {
		tmp, err := os.MkdirTemp("", "polyloop-journal-*")
		if err != nil {
			return "", nil, fmt.Errorf("create journal directory: %w", err)
		}
		return filepath.Join(tmp, id), func() { os.RemoveAll(tmp) }, nil
	}
	return filepath.Join(root, id), func() {}, nil
}

func multi(sc *scenarios.Scenario) bool { return sc.Request == nil }

func modelFor(env Env, phase int, abandon bool) func(context.Context, []assembly.Message) (string, error) {
	return func(ctx context.Context, in []assembly.Message) (string, error) {
		out, err := env.Complete(ctx, phase, WireMessages(in))
		released(err, abandon)
		return out, err
	}
}

// released marks a cancelled fake call as released: in process, the
// kernel's cancellation reached the call, which is what releasing it means
// (0004.D4.release), unless a deviation abandons it.
func released(err error, abandon bool) {
	var b *fakes.Blocked
	if errors.As(err, &b) && !abandon {
		b.Release()
	}
}

// sinks are the audit sinks of phase i's run: the recorder the trajectory
// is written from, and the runner's sink when it plays one, or else the
// scenario's failing sink, if any, staged here.
func (sr scenarioRun) sinks(rec *events.Recorder, i int) []events.Sink {
	if sr.o.Sink == nil {
		return stagedSinks(rec, sr.sc.Faults.Sink)
	}
	phase := ""
	if multi(sr.sc) {
		phase = sr.sc.Runs()[i].Name
	}
	play := sr.o.Sink
	return []events.Sink{rec, events.SinkFunc(func(e events.Event) error { return sinkFailure(play(i, WireEvent(e, phase))) })}
}

// sinkFailure is what a failing audit sink does for faults.sink: "error"
// returns an error, "panic" breaks; "" takes the event.
func sinkFailure(fault string) error {
	switch fault {
	case "error":
		return errors.New("audit store unavailable")
	case "panic":
		panic("audit sink bug")
	}
	return nil
}

// restarted tells the runner that a resume starts.
func (sr scenarioRun) restarted() {
	if sr.o.Restarted != nil {
		sr.o.Restarted()
	}
}

// WireEvent is a kernel event as trajectories (and the protocol's event
// message) carry it, with its phase's name ("" outside phased scenarios).
func WireEvent(e events.Event, phase string) trajectories.Event {
	return trajectories.Event{Type: e.Type, Phase: phase, Step: e.Step, RawOutput: e.RawOutput,
		Decision: e.Decision, Repairs: e.Repairs, Tool: e.Tool, Status: e.Status, Observation: e.Observation,
		ErrorType: e.ErrorType, Error: e.Error, Reason: e.Reason, Replayed: e.Replayed}
}

func stagedSinks(rec *events.Recorder, fault string) []events.Sink {
	out := []events.Sink{rec}
	if fault != "" {
		out = append(out, events.SinkFunc(func(events.Event) error { return sinkFailure(fault) }))
	}
	return out
}

// crashAndResume runs req until the injected crash, optionally tears the
// journal's tail, then resumes with a freshly built request, as a new
// process would.
func (sr scenarioRun) crashAndResume(ctx context.Context, req *run.Request, opts run.Options, rec **events.Recorder) (*run.Result, *trajectories.Resume, error) {
	sc, o := sr.sc, sr.o
	dir, cleanup, err := journalDir(o.JournalRoot, sc.ID)
	if err != nil {
		return nil, nil, err
	}
	defer cleanup()
	inj := o.Crash
	if inj == nil {
		inj = ForSpec(sc.Faults.Crash)
	}
	first := opts
	first.JournalDir, first.JournalHook = dir, inj.Hook
	res, err := sr.call(ctx, req, first, false)
	point, fired := inj.Fired()
	switch {
	case err != nil && !errors.Is(err, ErrCrash):
		return nil, nil, err
	case !fired:
		// The run finished before reaching the point: nothing to resume,
		// which the crash-point harness needs to know, and a scenario author too.
		return nil, nil, fmt.Errorf("crash point was never reached; the run ended with %s after %d steps", res.End.Reason, len(res.Steps))
	}
	if sc.Faults.TornTail {
		if err := TearTail(dir); err != nil {
			return nil, nil, err
		}
	}
	if sc.Faults.JournalDamage != "" {
		if err := DamageJournal(dir, sc.Faults.JournalDamage); err != nil {
			return nil, nil, err
		}
	}
	sr.journalPlayed()
	*rec = &events.Recorder{}
	opts.Sinks = sr.sinks(*rec, 0)
	sr.restarted()
	res, err = sr.journaled(ctx, opts, dir, nil, true)
	if err != nil {
		return nil, nil, err
	}
	info := wireResume(res.Resume)
	info.CrashPoint = trajectories.CrashPointName(point.When(), point.Type, point.Step)
	return res, info, nil
}

// journalPlayed tells the runner that the driver cut or damaged the
// journal, if the scenario asked for either.
func (sr scenarioRun) journalPlayed() {
	if (sr.sc.Faults.TornTail || sr.sc.Faults.JournalDamage != "") && sr.o.JournalPlayed != nil {
		sr.o.JournalPlayed()
	}
}

// journaled runs (or resumes) the single request of sc with a journal in
// dir, building the request afresh as a new process would.
func (sr scenarioRun) journaled(ctx context.Context, opts run.Options, dir string, hook journal.Hook, resume bool) (*run.Result, error) {
	req, err := BuildRequest(sr.sc, sr.def, 0, sr.env, sr.o)
	if err != nil {
		return nil, err
	}
	opts.JournalDir, opts.JournalHook, opts.JournalFS = dir, hook, sr.o.JournalFS
	return sr.call(ctx, req, opts, resume)
}

// Process runs one process's share of a crash-and-resume scenario: the
// first run (resume false) with a journal in dir and the given hook, or a
// resume of that journal. The crash-point harness calls it in child
// processes that it kills.
func Process(ctx context.Context, sc *scenarios.Scenario, env Env, dir string, hook journal.Hook, resume bool, o Options) (*trajectories.Trajectory, error) {
	if sc.Request == nil {
		return nil, fmt.Errorf("scenario %s has phases; crash exploration runs single-request scenarios", sc.ID)
	}
	rec := &events.Recorder{}
	sr := newRun(sc, env, o)
	res, err := sr.journaled(ctx, sr.options(rec, 0), dir, hook, resume)
	tr := &trajectories.Trajectory{Format: trajectories.Format, Scenario: sc.ID}
	if tr.AssemblyError = refusal(err); tr.AssemblyError != nil {
		// Refused before anything ran, as Run reports it: the same
		// trajectory whether the scenario runs in process or behind
		// serve-reference with a journal (generate found the difference).
		return tr, nil
	}
	if _, err := settle(tr, "", false, res, err, rec.Events()); err != nil {
		return nil, err
	}
	if res != nil && res.Resume != nil {
		tr.Resume = wireResume(res.Resume)
	}
	return tr, nil
}

func definition(sc *scenarios.Scenario) *run.Definition {
	return &run.Definition{RunFragment: sc.Definition.RunFragment, ObservationTemplate: sc.Definition.ObservationTemplate}
}

// Errnos a journal_error fault may name.
var errnos = map[string]error{"ENOSPC": syscall.ENOSPC, "EACCES": syscall.EACCES, "EIO": syscall.EIO}

func (sr scenarioRun) runWithWriteFault(ctx context.Context, req *run.Request, opts run.Options) (*run.Result, error) {
	f, root := sr.sc.Faults.JournalError, sr.o.JournalRoot
	if root != "" {
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, fmt.Errorf("create journal directory: %w", err)
		}
	}
	dir, err := os.MkdirTemp(root, "polyloop-journal-*")
	if err != nil {
		return nil, fmt.Errorf("create journal directory: %w", err)
	}
	defer os.RemoveAll(dir)
	opts.JournalDir = filepath.Join(dir, "run")
	opts.JournalWriteFault = func(p journal.Point) error {
		if p.Type == f.Record && (f.Step == 0 || f.Step == p.Step) {
			return errnos[f.Errno]
		}
		return nil
	}
	return sr.call(ctx, req, opts, false)
}

// TearTail cuts the last record of the reference's journal in dir in
// half (journalfile.Tear).
func TearTail(dir string) error { return journalfile.Tear(filepath.Join(dir, journal.FileName)) }

// DamageJournal damages the reference's journal in dir the way no crash
// does (journalfile.Damage): resume must refuse it (0002.D5).
func DamageJournal(dir, kind string) error {
	return journalfile.Damage(filepath.Join(dir, journal.FileName), kind)
}

// BuildRequest assembles phase i of sc; assembly failures come back as
// *run.AssemblyError.
func BuildRequest(sc *scenarios.Scenario, def *run.Definition, i int, env Env, o Options) (*run.Request, error) {
	seams := o.Deviations.Seams()
	r := sc.Runs()[i]
	full, visible, err := registries(sc, r, i, env, o, seams)
	if err != nil {
		return nil, run.AsAssemblyError(err)
	}
	ex, err := executorFor(r, i, env, full, visible, seams)
	if err != nil {
		return nil, err
	}
	c := run.RequestConfig{
		Definition:   def,
		GoalFragment: r.GoalFragment,
		Budget:       budget(r),
		Tools:        visible,
		Executor:     ex,
		Synthetic:    run.SyntheticObservations{NotExecuted: r.Synthetic.NotExecuted, EnvError: r.Synthetic.EnvError},
		Injections:   r.Injections.ByChannel(),
		Language:     run.Language(r.Language),
		Measure:      measureFor(r, i, o),
	}
	first := sc.Runs()[0]
	if err := seams.Request(&c, run.RequestConfig{Budget: budget(first), GoalFragment: first.GoalFragment}); err != nil {
		return nil, err
	}
	return run.NewRequest(c)
}

func budget(r scenarios.Request) run.Budget {
	return run.Budget{MaxEffectiveSteps: r.Budget.MaxEffectiveSteps, MaxTotalSteps: r.Budget.MaxTotalSteps}
}

// registries builds phase i's full registry and the visible one
// (restricted to the phase's visible tools, or the full one).
func registries(sc *scenarios.Scenario, r scenarios.Request, i int, env Env, o Options, seams deviation.Seams) (full, visible *tools.ToolRegistry, err error) {
	cache := o.Schemas
	specs := make([]tools.ToolSpec, 0, len(sc.Tools))
	for _, t := range sc.Tools {
		policy, err := tools.ParseReplayPolicy(t.Replay)
		if err != nil {
			return nil, nil, err
		}
		spec := tools.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters, ReplayPolicy: policy, CompletesRun: t.CompletesRun}
		if env.HasHandler(t.Name) {
			spec.Handler = handlerFor(env, i, t.Name, seams.Abandon())
		}
		specs = append(specs, spec)
	}
	if full, err = tools.NewRegistryWithCache(cache, seams.Specs(specs, cache)...); err != nil {
		return nil, nil, err
	}
	if r.VisibleTools == nil {
		return full, full, nil
	}
	if visible, err = full.RestrictTo(seams.Restrict(full, r.VisibleTools)...); err != nil {
		return nil, nil, err
	}
	visible, err = seams.Visible(visible, cache)
	return full, visible, err
}

// handlerFor is tool name's handler in phase i: the runner's.
func handlerFor(env Env, phase int, name string, abandon bool) tools.ToolHandler {
	return func(ctx context.Context, args map[string]any) (string, error) {
		out, err := env.CallHandler(ctx, phase, name, args)
		released(err, abandon)
		return out, kernelHandlerError(err)
	}
}

// executorFor is phase r's executor: the project's, or one derived from
// the full or the visible registry.
func executorFor(r scenarios.Request, i int, env Env, full, visible *tools.ToolRegistry, seams deviation.Seams) (run.ActionExecutor, error) {
	switch r.Executor {
	case scenarios.ExecutorProject:
		return projectExecutor{env: env, phase: i}, nil
	case scenarios.ExecutorFullRegistry:
		re, err := full.Executor()
		if err != nil {
			return nil, run.AsAssemblyError(err)
		}
		return re, nil
	}
	re, err := visible.Executor()
	if err != nil {
		return nil, seams.Refusal(run.AsAssemblyError(err))
	}
	return re, nil
}

// measureFor is phase r's size measure: the runner's when it plays one,
// else the reference's, refusing the block types the scenario names.
func measureFor(r scenarios.Request, i int, o Options) assembly.Measure {
	if play := o.Measure; play != nil {
		return func(t assembly.BlockType, text string) (int, error) { return play(i, string(t), text) }
	}
	if len(r.MeasureUnknown) == 0 {
		return nil
	}
	unknown := r.MeasureUnknown
	return func(t assembly.BlockType, text string) (int, error) {
		if slices.Contains(unknown, string(t)) {
			return 0, &fakes.Unmeasurable{Block: string(t)}
		}
		return assembly.RuneCount(t, text)
	}
}

func appendResult(tr *trajectories.Trajectory, phase string, isMulti bool, res *run.Result, evs []events.Event) {
	if !isMulti {
		phase = ""
	}
	for _, s := range res.Steps {
		tr.Steps = append(tr.Steps, trajectories.Step{
			Index: s.Index, Phase: phase, ModelInput: WireMessages(s.ModelInput), ContextSize: s.ContextSize, ModelOutput: s.ModelOutput,
			Action: trajectories.Action{Kind: string(s.Action.Kind), Tool: s.Action.Tool, Arguments: s.Action.Arguments,
				Code: s.Action.Code, Repairs: s.Action.Repairs, Error: s.Action.Error},
			Outcome:            wireOutcome(s.Outcome),
			HistoryObservation: s.HistoryObservation,
			Counters:           trajectories.Counters{EffectiveSteps: s.Counters.EffectiveSteps, TotalSteps: s.Counters.TotalSteps},
			Replayed:           s.Replayed,
		})
	}
	for _, e := range evs {
		tr.Events = append(tr.Events, WireEvent(e, phase))
	}
	tr.EventSinkFailures += res.EventSinkFailures
	if res.End.Reason == "" {
		tr.End = nil // the run stopped without an end
		return
	}
	end := &trajectories.End{Reason: string(res.End.Reason), EffectiveSteps: res.End.EffectiveSteps, TotalSteps: res.End.TotalSteps}
	if d := res.End.Detail; d != nil {
		end.Detail = &trajectories.EndDetail{Step: d.Step, During: d.During, Tool: d.Tool}
	}
	tr.End = end
}
