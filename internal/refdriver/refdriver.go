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
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	sc  *scenarios.Scenario
	def *run.Definition
	env Env
	o   Options
}

// Run runs sc and returns its trajectory, without handler_calls and
// model_calls, which the runner fills from its fakes.
func Run(ctx context.Context, sc *scenarios.Scenario, env Env, o Options) (*trajectories.Trajectory, error) {
	tr := &trajectories.Trajectory{Format: trajectories.Format, Scenario: sc.ID}
	def := definition(sc)
	sr := scenarioRun{sc: sc, def: def, env: env, o: o}
	if multi(sc) && (sc.Faults.Crash != nil || sc.Faults.Resume) {
		return sr.phasedCrashAndResume(ctx)
	}
	runs := sc.Runs()
	for i, r := range runs {
		req, err := BuildRequest(sc, def, i, env, o)
		if err != nil {
			if tr.AssemblyError = refusal(err); tr.AssemblyError == nil {
				return nil, err
			}
			return tr, nil
		}
		rec := &events.Recorder{}
		opts := run.Options{Model: run.ModelFunc(modelFor(env, i, o.Deviations)), Sinks: sr.sinks(rec, i)}
		var res *run.Result
		switch {
		case sc.Faults.Crash != nil || o.Crash != nil:
			res, tr.Resume, err = sr.crashAndResume(ctx, req, opts, &rec)
		case sc.Faults.JournalError != nil:
			opts.JournalHook = o.JournalHook
			res, err = runWithWriteFault(ctx, req, opts, sc.Faults.JournalError, o.JournalRoot)
		case sc.Faults.Resume:
			res, tr.Resume, err = sr.stopAndResume(ctx, req, opts, &rec)
		default:
			res, err = run.Run(ctx, req, opts)
		}
		if o.Deviations.On(deviation.SinkFailuresPerPhase) {
			tr.EventSinkFailures = 0 // the count starts again with each phase
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
		if res == nil {
			res = &run.Result{}
		}
		appendResult(tr, phase, isMulti, res, evs)
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
	res, err := run.Run(ctx, req, first)
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

func modelFor(env Env, phase int, d deviation.Set) func(context.Context, []assembly.Message) (string, error) {
	return func(ctx context.Context, in []assembly.Message) (string, error) {
		out, err := env.Complete(ctx, phase, WireMessages(in))
		released(err, d)
		return out, deadlineAsFailure(err, d)
	}
}

// deadlineAsFailure is deviation DeadlineIsFailure, a wrapper around the
// model and handler seams: a port that recognises only context.Canceled
// sees the passing deadline as an ordinary error of the call.
func deadlineAsFailure(err error, d deviation.Set) error {
	if d.On(deviation.DeadlineIsFailure) && errors.Is(err, context.DeadlineExceeded) {
		return &fakes.NamedError{Type: "DeadlineExceeded", Message: "the call did not finish in time"}
	}
	return err
}

// released marks a cancelled fake call as released: in process, the
// kernel's cancellation reached the call, which is what releasing it means
// (0004.D4.release), unless deviation CancelNotReleased abandons it.
func released(err error, d deviation.Set) {
	var b *fakes.Blocked
	if errors.As(err, &b) && !d.On(deviation.CancelNotReleased) {
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
	res, err := run.Run(ctx, req, first)
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
	res, point, err = sr.resumeAgain(ctx, opts, dir, rec, point)
	if err != nil {
		return nil, nil, err
	}
	info := wireResume(res.Resume)
	info.CrashPoint = trajectories.CrashPointName(point.When(), point.Type, point.Step)
	return res, info, nil
}

// resumeAgain resumes the journal in dir as the second process does. With
// faults.crash_on_resume (and no crash point of the harness's own) that
// process dies too, at its point, and a third resumes the journal it
// left; point is then the second crash point, the one the last resume
// follows.
func (sr scenarioRun) resumeAgain(ctx context.Context, opts run.Options, dir string, rec **events.Recorder, point journal.Point) (*run.Result, journal.Point, error) {
	spec := sr.sc.Faults.CrashOnResume
	if spec == nil || sr.o.Crash != nil {
		res, err := sr.journaled(ctx, opts, dir, nil, true)
		return res, point, err
	}
	inj := ForSpec(spec)
	res, err := sr.journaled(ctx, opts, dir, inj.Hook, true)
	second, fired := inj.Fired()
	switch {
	case err != nil && !errors.Is(err, ErrCrash):
		return nil, point, err
	case !fired && res == nil:
		return nil, point, errors.New("crash_on_resume point was never reached; the resumed run stopped without an end")
	case !fired:
		return nil, point, fmt.Errorf("crash_on_resume point was never reached; the resumed run ended with %s after %d steps", res.End.Reason, len(res.Steps))
	}
	*rec = &events.Recorder{}
	opts.Sinks = sr.sinks(*rec, 0)
	sr.restarted()
	res, err = sr.journaled(ctx, opts, dir, nil, true)
	return res, second, err
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
	if resume {
		return run.Resume(ctx, req, opts)
	}
	return run.Run(ctx, req, opts)
}

// Process runs one process's share of a crash-and-resume scenario: the
// first run (resume false) with a journal in dir and the given hook, or a
// resume of that journal. The crash-point harness calls it in child
// processes that it kills.
func Process(ctx context.Context, sc *scenarios.Scenario, env Env, dir string, hook journal.Hook, resume bool, o Options) (*trajectories.Trajectory, error) {
	if sc.Request == nil {
		return nil, fmt.Errorf("scenario %s has phases; crash exploration runs single-request scenarios", sc.ID)
	}
	def := definition(sc)
	rec := &events.Recorder{}
	sr := scenarioRun{sc: sc, def: def, env: env, o: o}
	opts := run.Options{Model: run.ModelFunc(modelFor(env, 0, o.Deviations)), Sinks: sr.sinks(rec, 0)}
	res, err := sr.journaled(ctx, opts, dir, hook, resume)
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

func runWithWriteFault(ctx context.Context, req *run.Request, opts run.Options, f *scenarios.JournalError, root string) (*run.Result, error) {
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
	return run.Run(ctx, req, opts)
}

// TearTail cuts the last record of the reference's journal in dir in
// half (journalfile.Tear).
func TearTail(dir string) error { return journalfile.Tear(filepath.Join(dir, journal.FileName)) }

// DamageJournal damages the reference's journal in dir the way no crash
// does (journalfile.Damage): resume must refuse it (0002.D5).
func DamageJournal(dir, kind string) error {
	return journalfile.Damage(filepath.Join(dir, journal.FileName), kind)
}

// deviateSpecs applies the registry deviations: a later spec of the same
// name replaces the earlier, a schema that does not compile accepts any
// object.
func deviateSpecs(specs []tools.ToolSpec, d deviation.Set, cache *tools.SchemaCache) []tools.ToolSpec {
	if d.On(deviation.DuplicateNamesAccepted) {
		var out []tools.ToolSpec
		for _, s := range specs {
			if i := slices.IndexFunc(out, func(o tools.ToolSpec) bool { return o.Name == s.Name }); i >= 0 {
				out[i] = s
				continue
			}
			out = append(out, s)
		}
		specs = out
	}
	if d.On(deviation.InvalidSchemaFirstOnly) {
		for i := range specs {
			if _, err := tools.NewRegistryWithCache(cache, specs[i]); err != nil {
				// Every later broken spec is left out of the error by
				// being taken as accepting any object.
				for j := i + 1; j < len(specs); j++ {
					if _, err := tools.NewRegistryWithCache(cache, specs[j]); err != nil {
						specs[j].Parameters = map[string]any{"type": "object"}
					}
				}
				break
			}
		}
	}
	if d.On(deviation.UnresolvedRefAccepted) {
		for i := range specs {
			if _, err := tools.NewRegistryWithCache(cache, specs[i]); err != nil && strings.Contains(err.Error(), "not found") {
				specs[i].Parameters = map[string]any{"type": "object"}
			}
		}
	}
	if d.On(deviation.BrokenSchemaAccepted) {
		for i := range specs {
			if _, err := tools.NewRegistryWithCache(cache, specs[i]); err != nil {
				specs[i].Parameters = map[string]any{"type": "object"}
			}
		}
	}
	return specs
}

// BuildRequest assembles phase i of sc; assembly failures come back as
// *run.AssemblyError.
func BuildRequest(sc *scenarios.Scenario, def *run.Definition, i int, env Env, o Options) (*run.Request, error) {
	cache := o.Schemas
	r := sc.Runs()[i]
	if first := sc.Runs()[0]; i > 0 {
		// Deviations that take a per-request part from the first request,
		// as a port that put it on the definition would (0003.D1).
		if o.Deviations.On(deviation.BudgetFromFirstRequest) {
			r.Budget = first.Budget
		}
		if o.Deviations.On(deviation.GoalOnDefinition) {
			r.GoalFragment = first.GoalFragment
		}
	}
	specs := make([]tools.ToolSpec, 0, len(sc.Tools))
	for _, t := range sc.Tools {
		policy, err := tools.ParseReplayPolicy(t.Replay)
		if err != nil {
			return nil, err
		}
		spec := tools.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters, ReplayPolicy: policy, CompletesRun: t.CompletesRun}
		if env.HasHandler(t.Name) {
			name, phase := t.Name, i
			spec.Handler = func(ctx context.Context, args map[string]any) (string, error) {
				if o.Deviations.On(deviation.HandlerGetsToolKey) {
					args = maps.Clone(args)
					args["tool"] = name
				}
				out, err := env.CallHandler(ctx, phase, name, args)
				released(err, o.Deviations)
				return out, kernelHandlerError(deadlineAsFailure(err, o.Deviations))
			}
		} else if o.Deviations.On(deviation.LazyHandlerCheck) {
			name := t.Name
			spec.Handler = func(context.Context, map[string]any) (string, error) {
				return "", fmt.Errorf("tool %s has no handler", name)
			}
		}
		specs = append(specs, spec)
	}
	specs = deviateSpecs(specs, o.Deviations, cache)
	full, err := tools.NewRegistryWithCache(cache, specs...)
	if err != nil {
		return nil, run.AsAssemblyError(err)
	}
	visible := full
	if r.VisibleTools != nil {
		names := r.VisibleTools
		if o.Deviations.On(deviation.UnknownRestrictDropped) {
			names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { _, ok := full.Lookup(n); return !ok })
		}
		if visible, err = full.RestrictTo(names...); err != nil {
			return nil, run.AsAssemblyError(err)
		}
		if o.Deviations.On(deviation.HandlersDroppedRestrict) {
			var bare []tools.ToolSpec
			for _, n := range visible.Names() {
				spec, _ := visible.Lookup(n)
				c := *spec
				c.Handler = nil
				bare = append(bare, c)
			}
			if visible, err = tools.NewRegistryWithCache(cache, bare...); err != nil {
				return nil, run.AsAssemblyError(err)
			}
		}
	}
	var ex run.ActionExecutor
	switch r.Executor {
	case scenarios.ExecutorProject:
		ex = projectExecutor{env: env, phase: i}
	case scenarios.ExecutorFullRegistry:
		re, err := full.Executor()
		if err != nil {
			return nil, run.AsAssemblyError(err)
		}
		ex = re
	default:
		re, err := visible.Executor()
		if err != nil {
			err = run.AsAssemblyError(err)
			var ae *run.AssemblyError
			if errors.As(err, &ae) && o.Deviations.On(deviation.FirstMissingHandlerOnly) && len(ae.Tools) > 1 {
				ae.Tools = ae.Tools[:1]
			}
			return nil, err
		}
		ex = re
	}
	var measure assembly.Measure
	if play := o.Measure; play != nil {
		phase := i
		measure = func(t assembly.BlockType, text string) (int, error) { return play(phase, string(t), text) }
	} else if len(r.MeasureUnknown) > 0 {
		unknown := r.MeasureUnknown
		measure = func(t assembly.BlockType, text string) (int, error) {
			if slices.Contains(unknown, string(t)) {
				return 0, &fakes.Unmeasurable{Block: string(t)}
			}
			return assembly.RuneCount(t, text)
		}
	}
	return run.NewRequest(run.RequestConfig{
		Definition:   def,
		GoalFragment: r.GoalFragment,
		Budget:       run.Budget{MaxEffectiveSteps: r.Budget.MaxEffectiveSteps, MaxTotalSteps: r.Budget.MaxTotalSteps},
		Tools:        visible,
		Executor:     ex,
		Synthetic:    run.SyntheticObservations{NotExecuted: r.Synthetic.NotExecuted, EnvError: r.Synthetic.EnvError},
		Injections:   r.Injections.ByChannel(),
		Language:     run.Language(r.Language),
		Measure:      measure,
		Deviations:   o.Deviations,
	})
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
