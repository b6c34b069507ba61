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

	"github.com/polyloop/polyloop-conform/internal/deviation"
	"github.com/polyloop/polyloop-conform/internal/protocol"
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
	// RewordSink words each event's implementation text as Reword words
	// the trajectory's before Sink sees it, so the events a reworded
	// reference (serve-reference --reword) sends are the ones its
	// trajectory reports.
	RewordSink bool
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
	sr := newRun(sc, env, o)
	if multi(sc) && (sc.Faults.Crash != nil || sc.Faults.Resume) {
		return sr.phasedCrashAndResume(ctx)
	}
	return sr.sequence(ctx, 0, len(sc.Runs())-1, sr.faulted)
}

// leg runs phase i's request with its collaborators, and says how the
// run was resumed if it was. It may replace *rec when a resume records
// the events afresh.
type leg func(ctx context.Context, i int, req *run.Request, opts run.Options, rec **events.Recorder) (*run.Result, *trajectories.Resume, error)

// sequence runs phases from..to of sc (its single request is phase 0),
// each with a freshly built request, the way leg says; it stops at a
// refused request or a phase that does not end, as the kernel's caller
// would. A crash injected by a hook comes back as ErrCrash with the
// trajectory so far; any other error is the driver's.
func (sr scenarioRun) sequence(ctx context.Context, from, to int, step leg) (*trajectories.Trajectory, error) {
	sc := sr.sc
	tr := &trajectories.Trajectory{Format: trajectories.Format, Scenario: sc.ID}
	runs := sc.Runs()
	for i := from; i <= to && i < len(runs); i++ {
		req, err := BuildRequest(sc, sr.def, i, sr.env, sr.o)
		if err != nil {
			if tr.AssemblyError = refusal(err); tr.AssemblyError == nil {
				return nil, err
			}
			if sr.seams.RefusalClearsEnd() {
				tr.End = nil
			}
			return tr, nil
		}
		rec := &events.Recorder{}
		res, resumed, err := step(ctx, i, req, sr.options(rec, i), &rec)
		if errors.Is(err, ErrCrash) {
			return tr, err
		}
		if sr.seams.SinkCountPerPhase() {
			tr.EventSinkFailures = 0 // the count starts again with each phase
		}
		ended, err := settle(tr, runs[i].Name, multi(sc), res, err, rec.Events())
		if err != nil {
			return nil, err
		}
		if resumed != nil {
			tr.Resume = resumed
		}
		if !ended {
			return tr, nil
		}
		if multi(sc) {
			tr.Phases = append(tr.Phases, trajectories.PhaseEnd{Name: runs[i].Name, End: *tr.End})
		}
	}
	return tr, nil
}

// faulted is the leg of Run: the request as its scenario's faults stage
// it, crashed and resumed, stopped and resumed, with a failing journal
// write, or plain.
func (sr scenarioRun) faulted(ctx context.Context, _ int, req *run.Request, opts run.Options, rec **events.Recorder) (*run.Result, *trajectories.Resume, error) {
	f := sr.sc.Faults
	switch {
	case f.Crash != nil || sr.o.Crash != nil:
		return sr.crashAndResume(ctx, req, opts, rec)
	case f.JournalError != nil:
		opts.JournalHook = sr.o.JournalHook
		res, err := sr.runWithWriteFault(ctx, req, opts)
		return res, nil, err
	case f.Resume:
		return sr.stopAndResume(ctx, req, opts, rec)
	}
	res, err := sr.call(ctx, req, opts, false)
	return res, nil, err
}

// journaled is the leg of one process's share of a crash-and-resume run:
// each phase journals under dir (a phased scenario's phase in its own
// directory, protocol.PhaseJournal) with hookFor's hook, and phase from is
// resumed from its journal when resume is set.
func (sr scenarioRun) journaled(dir string, from int, resume bool, hookFor func(int) journal.Hook) leg {
	return func(ctx context.Context, i int, req *run.Request, opts run.Options, _ **events.Recorder) (*run.Result, *trajectories.Resume, error) {
		opts.JournalDir, opts.JournalHook, opts.JournalFS = dir, hookFor(i), sr.o.JournalFS
		if multi(sr.sc) {
			opts.JournalDir = protocol.PhaseJournal(dir, i)
		}
		resumed := resume && i == from
		res, err := sr.call(ctx, req, opts, resumed)
		if !resumed || res == nil {
			return res, nil, err
		}
		return res, wireResume(res.Resume), err
	}
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

func multi(sc *scenarios.Scenario) bool { return sc.Request == nil }

// restarted tells the runner that a resume starts.
func (sr scenarioRun) restarted() {
	if sr.o.Restarted != nil {
		sr.o.Restarted()
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
