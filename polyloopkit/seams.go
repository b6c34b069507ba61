package polyloopkit

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/polyloop/polyloop-conform/trajectories"
)

// Seams is the outside world of one scenario, scripted by the runner,
// and what the run message says about the run. Every method that asks the
// runner is safe to call from any goroutine.
type Seams struct {
	// ID is the run's opaque ID (the same as Spec.Scenario).
	ID string
	// Resume is set when the runner asks a new process to resume
	// JournalDir instead of starting a run.
	Resume bool
	// ResumePhase is, in a phased scenario, the phase whose journal a
	// resume starts from; the phases after it run next.
	ResumePhase int
	// TearTail asks the kernel to cut its journal's last record in half
	// before resuming, as a crash during that write leaves it (0002.D5).
	TearTail bool
	// Damage is "last_checksum" or "middle": damage the journal that way
	// before resuming; resume must refuse it (0002.D5). "" otherwise.
	Damage string
	// JournalDir is where the kernel keeps its journal; "" for scenarios
	// that do not journal. PhaseJournal gives a phase's own directory.
	JournalDir string
	// ReportJournalPoints is set when JournalPoint reports to the runner
	// (otherwise it does nothing).
	ReportJournalPoints bool
	// WireSink and WireMeasure are set when the runner plays the audit
	// sink (install Sink as one) and the size measure (measure with
	// Measure); only sent to a kernel that claims wire-sink, wire-measure.
	WireSink    bool
	WireMeasure bool

	s        *session
	handlers map[string]bool
	phased   bool
	runCtx   context.Context
	cancel   func()
	expire   func()
}

func newSeams(s *session, m *incoming, cancel, expire func()) *Seams {
	seams := &Seams{ID: m.ID, Resume: m.Type == "resume", ResumePhase: m.Phase, TearTail: m.TearTail, Damage: m.Damage,
		JournalDir: m.JournalDir, ReportJournalPoints: m.ReportJournalPoints, WireSink: m.WireSink, WireMeasure: m.WireMeasure,
		s: s, handlers: map[string]bool{}, phased: m.Spec.Phased, cancel: cancel, expire: expire}
	for _, t := range m.Spec.Tools {
		seams.handlers[t.Name] = t.HasHandler
	}
	return seams
}

// stop ends the run's context as the runner's cancel says: its deadline
// passing, or the run cancelled.
func (sm *Seams) stop(deadline bool) {
	if deadline {
		sm.expire()
	} else {
		sm.cancel()
	}
}

// ctxErr is the error a released call returns: the run's context's.
func (sm *Seams) ctxErr() error {
	if sm.runCtx != nil && sm.runCtx.Err() != nil {
		return sm.runCtx.Err()
	}
	return context.Canceled
}

// ModelError is a model call that failed: by 0003.D3 the kernel does not
// call the model again, and the run stops with run_error {kind: model_call}.
type ModelError struct{ Type, Message string }

func (e *ModelError) Error() string { return e.Message }

// HandlerError is the ordinary error a scripted handler raises: Type is
// the name the scenario gives it, Message its text.
type HandlerError struct{ Type, Message string }

func (e *HandlerError) Error() string { return e.Message }

// EnvError is the environment error a scripted handler raises (the
// kernel's ToolEnvironmentError).
type EnvError struct{ Message string }

func (e *EnvError) Error() string { return e.Message }

// SinkError is the runner's audit sink refusing an event: an error
// (Type, Message), or with Panic a sink that breaks, as a bug would. By
// 0011.D2 the loop counts it and goes on.
type SinkError struct {
	Type, Message string
	Panic         bool
}

func (e *SinkError) Error() string {
	if e.Panic {
		return "the audit sink broke: " + e.Message
	}
	return e.Type + ": " + e.Message
}

// MeasureError is the runner's size measure refusing a block; 0010.D5
// says what the run does then.
type MeasureError struct{ Type, Message string }

func (e *MeasureError) Error() string { return e.Message }

// Model asks the scenario's model; input is the message list exactly as
// the model would be sent it. A failed call is a *ModelError; a call the
// runner cancelled returns the run context's error.
func (sm *Seams) Model(ctx context.Context, phase int, input []ChatMessage) (string, error) {
	if input == nil {
		input = []ChatMessage{}
	}
	a, err := sm.s.call(ctx, sm, true, func(n int) any {
		return ModelCall{Type: "model_call", Call: n, Phase: phase, Input: input}
	})
	switch {
	case err != nil:
		return "", err
	case a.Error != nil:
		return "", &ModelError{Type: a.Error.Type, Message: a.Error.Message}
	case a.Output == nil:
		return "", fmt.Errorf("polyloopkit: the runner answered model_call %d with neither output nor error", a.Call)
	}
	return *a.Output, nil
}

// HasHandler says whether the spec gives tool a handler (a tool without
// one makes executor() refuse the registry, 0008.D2).
func (sm *Seams) HasHandler(tool string) bool { return sm.handlers[tool] }

// Handler runs a tool's scripted handler with the arguments it received:
// its text, or a *HandlerError or *EnvError to raise.
func (sm *Seams) Handler(ctx context.Context, phase int, tool string, arguments map[string]any) (string, error) {
	a, err := sm.s.call(ctx, sm, true, func(n int) any {
		return HandlerCall{Type: "handler_call", Call: n, Phase: phase, Tool: tool, Arguments: arguments}
	})
	switch {
	case err != nil:
		return "", err
	case a.Error != nil:
		return "", &HandlerError{Type: a.Error.Type, Message: a.Error.Message}
	case a.EnvError != nil:
		return "", &EnvError{Message: *a.EnvError}
	case a.Output == nil:
		return "", fmt.Errorf("polyloopkit: the runner answered handler_call %d with neither output, error nor env_error", a.Call)
	}
	return *a.Output, nil
}

// Execute asks the scripted project executor to run action; it returns
// the five ActionOutcome fields to return from the kernel's executor.
func (sm *Seams) Execute(ctx context.Context, phase int, action Action) (Outcome, error) {
	a, err := sm.s.call(ctx, sm, true, func(n int) any {
		return ExecuteCall{Type: "execute_call", Call: n, Phase: phase, Action: action}
	})
	switch {
	case err != nil:
		return Outcome{}, err
	case a.Outcome == nil:
		return Outcome{}, fmt.Errorf("polyloopkit: the runner answered execute_call %d without an outcome", a.Call)
	}
	return *a.Outcome, nil
}

// Sink sends one event, as the trajectory records it, to the runner's
// audit sink and returns a *SinkError when the runner fails it. Install
// it as an audit sink when WireSink is set.
func (sm *Seams) Sink(phase int, event trajectories.Event) error {
	a, err := sm.s.call(context.Background(), sm, false, func(n int) any {
		return EventMessage{Type: "event", Call: n, Phase: phase, Event: event}
	})
	switch {
	case err != nil:
		return err
	case a.Panic != nil:
		return &SinkError{Message: *a.Panic, Panic: true}
	case a.Error != nil:
		return &SinkError{Type: a.Error.Type, Message: a.Error.Message}
	}
	return nil
}

// Measure asks the runner's size measure for one block (text empty to
// probe a block type): its size, or a *MeasureError. Use it as the size
// measure when WireMeasure is set.
func (sm *Seams) Measure(phase int, block, text string) (int, error) {
	a, err := sm.s.call(context.Background(), sm, false, func(n int) any {
		return MeasureCall{Type: "measure_call", Call: n, Phase: phase, Block: block, Text: text}
	})
	switch {
	case err != nil:
		return 0, err
	case a.Error != nil:
		return 0, &MeasureError{Type: a.Error.Type, Message: a.Error.Message}
	case a.Size == nil:
		return 0, fmt.Errorf("polyloopkit: the runner answered measure_call %d with neither size nor error", a.Call)
	}
	return *a.Size, nil
}

// JournalPoint reports a point before or after a journal write of phase
// (0 outside phased scenarios) and waits for the runner's continue; it
// does nothing unless ReportJournalPoints. At a crash point the runner
// never answers: the call does not return (see Serve).
func (sm *Seams) JournalPoint(phase int, p Point) error {
	if !sm.ReportJournalPoints {
		return nil
	}
	if p.When != "before" && p.When != "after" {
		return errors.New("polyloopkit: a journal point is before or after its write, not " + strconv.Quote(p.When))
	}
	var ph *int
	if sm.phased {
		ph = &phase
	}
	_, err := sm.s.call(context.Background(), sm, false, func(n int) any {
		return JournalPoint{Type: "journal_point", Call: n, Phase: ph, Point: p}
	})
	return err
}

// PhaseJournal is the directory of a phase's journal: JournalDir itself
// for a single request, JournalDir/<phase> in a phased scenario, where
// each phase is a run with a journal of its own; "" without a journal.
func (sm *Seams) PhaseJournal(phase int) string {
	if sm.JournalDir == "" {
		return ""
	}
	if sm.phased {
		return filepath.Join(sm.JournalDir, strconv.Itoa(phase))
	}
	return sm.JournalDir
}
