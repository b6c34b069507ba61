package fakes

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/polyloop/polyloop-conform/internal/jsontext"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// NamedError is a handler error of a named type, standing for another
// language's exception class (ValueError, KeyError …).
type NamedError struct {
	Type    string
	Message string
}

func (e *NamedError) Error() string    { return e.Message }
func (e *NamedError) TypeName() string { return e.Type }

// Panic is a handler behaviour that fails without returning: the handler
// does not report an error, it breaks (a Go panic, an unexpected Python
// exception). The fake returns it as an error so the runner itself never
// panics; whoever runs the handler in process re-panics with Err, and over
// the protocol it is an ordinary exception of that type.
type Panic struct {
	Err *NamedError
}

func (p *Panic) Error() string { return "handler panicked: " + p.Err.Error() }

// EnvError is a handler behaviour that reports an environment error (the
// design's ToolEnvironmentError; env_error on the wire).
type EnvError struct {
	Message string
}

func (e *EnvError) Error() string { return e.Message }

// ErrScriptExhausted means the implementation asked the model for a step
// the scenario does not script: usually a stop judge that did not stop.
var ErrScriptExhausted = errors.New("the scenario scripts no model output for this step")

// Env is one scenario run's fake world.
type Env struct {
	sc      *scenarios.Scenario
	onBlock func()

	mu           sync.Mutex
	modelCalls   int
	inputs       [][]trajectories.Message
	handlerCalls []trajectories.HandlerCall
	perTool      map[string]int
	perExecutor  map[int]int
	blocked      int
	lastStep     int // the step of the latest model call, for faults.cancel
	// cancelled and failed record that faults.cancel and
	// faults.model_failure have fired: each fires once, so the next lease
	// holder's resumed run gets the scripted behaviour.
	cancelled, failed bool
	modelReleased     int
	// log is every call the world received, in arrival order, with
	// the journal points the runner passed: the evidence the engine holds
	// a trajectory to (engine.Observed).
	log []Call
	// points is whether the process now running reports journal points.
	points bool
	// process counts the processes (or, in process, the runs) that made
	// the calls: 0 for the first, one more for each resume.
	process int
	// journalPlayed is set when the runner itself cut or damaged the
	// journal before a resume (journal-lines); journalOpaque when the
	// implementation kept a journal the runner cannot read (no
	// journal-lines).
	journalPlayed, journalOpaque bool
	resumeNotIsolated            bool
	resumeMissing                []string
	resumesOnMachine             int
	// offered holds the parts the runner offered to play in this run
	// (scenarios.PartSink, PartMeasure): the implementation must then use
	// the runner's sink and measure.
	offered map[string]bool
	// weights multiply the runner's measure per block type (Weigh); a
	// type without one counts code points, as the default measure does.
	weights map[string]int
}

// Call kinds in an Env's log.
const (
	CallModel   = "model_call"
	CallHandler = "handler_call"
	CallExecute = "execute_call"
	CallPoint   = "journal_point"
	CallEvent   = "event"
	CallMeasure = "measure_call"
)

// Call is one thing the world received, as it arrived.
type Call struct {
	Kind string
	// Phase indexes the scenario's requests; -1 for a journal point,
	// which does not name one.
	Phase int
	// Step is the step the call belongs to: for a model call, the step its
	// input asks for (StepOf); for a handler or executor call, the step of
	// the latest model call; for a journal point, the point's own step.
	Step      int
	Input     []trajectories.Message // model_call
	Tool      string                 // handler_call
	Arguments map[string]any         // handler_call
	Action    *trajectories.Action   // execute_call
	// When and Record are a journal point's.
	When, Record string
	// Points says whether the process that made the call was reporting
	// journal points when it made it.
	Points bool
	// Process is the process that made the call (Env.Restarted).
	Process int
	// Event is what the runner's audit sink received (event); Failed says
	// the runner failed it (faults.sink).
	Event  *trajectories.Event
	Failed bool
	// Block and Text are a measure_call's; Refused says the runner's
	// measure refused the block (measure_unknown).
	Block, Text string
	Refused     bool
	// Size is the runner's answer to a measure_call it did not refuse.
	Size int
}

// logLocked appends a call to the log, with the process that made it and
// whether that process reports journal points; e.mu is held.
func (e *Env) logLocked(c Call) {
	c.Points, c.Process = e.points, e.process
	e.log = append(e.log, c)
}

// Restarted marks the start of a new process (a resume after a kill, or
// the next holder): calls from then on belong to it.
func (e *Env) Restarted() {
	e.mu.Lock()
	e.process++
	e.mu.Unlock()
}

// Emit is the runner's audit sink: it records the event, and answers with
// the scenario's faults.sink ("error", "panic") or "" when the sink takes
// it. The runner plays the failing sink, so a kernel cannot count failures
// it never had (0011.D2).
func (e *Env) Emit(phase int, ev trajectories.Event) (fail string) {
	fail = e.sc.Faults.Sink
	e.mu.Lock()
	e.logLocked(Call{Kind: CallEvent, Phase: phase, Step: ev.Step, Event: &ev, Failed: fail != ""})
	e.mu.Unlock()
	return fail
}

// Unmeasurable is the runner's measure refusing a block type the request
// lists in measure_unknown (0010.D5).
type Unmeasurable struct{ Block string }

func (u *Unmeasurable) Error() string {
	return fmt.Sprintf("this measure has no rule for %q blocks", u.Block)
}

// Measure is the runner's size measure for one block of a phase: Unicode
// code points times the block type's weight (Weigh; 1 unless set), or an
// *Unmeasurable for a type the request's measure_unknown lists.
func (e *Env) Measure(phase int, block, text string) (int, error) {
	runs := e.sc.Runs()
	refused := phase >= 0 && phase < len(runs) && slices.Contains(runs[phase].MeasureUnknown, block)
	size := 0
	e.mu.Lock()
	if !refused {
		size = utf8.RuneCountInString(text) * max(1, e.weights[block])
	}
	e.logLocked(Call{Kind: CallMeasure, Phase: phase, Block: block, Text: text, Refused: refused, Size: size})
	e.mu.Unlock()
	if refused {
		return 0, &Unmeasurable{Block: block}
	}
	return size, nil
}

// Weigh makes the runner's measure count each block type's code points
// times its weight, so that its answers differ from the default measure's
// and only a kernel that asks the runner for every block can report them
// (over the protocol, with wire-measure). The engine holds each step's
// context_size to the sum of the answers and judges it in the default
// measure's units (engine.PlainSizes).
func (e *Env) Weigh(weights map[string]int) {
	e.mu.Lock()
	e.weights = maps.Clone(weights)
	e.mu.Unlock()
}

// Offer records that the runner plays a part in this run (the run message
// asked for the wire sink or the wire measure): from then on the
// implementation must send its events or sizes to the runner.
func (e *Env) Offer(part string) {
	e.mu.Lock()
	if e.offered == nil {
		e.offered = map[string]bool{}
	}
	e.offered[part] = true
	e.mu.Unlock()
}

// JournalPlayed records that the runner cut or damaged the journal
// itself before the resume (journal-lines), rather than asking the
// implementation to.
func (e *Env) JournalPlayed() {
	e.mu.Lock()
	e.journalPlayed = true
	e.mu.Unlock()
}

// JournalOpaque records that the implementation keeps its journal in a
// format of its own (it does not offer journal-lines): what the journal
// holds is then its word alone.
func (e *Env) JournalOpaque() {
	e.mu.Lock()
	e.journalOpaque = true
	e.mu.Unlock()
}

// ResumeOnMachine records that a process the implementation's fork server
// forked resumed a run on a machine of its own, seen so by the runner
// (namespaces, mounts, the stopped process's tree gone).
func (e *Env) ResumeOnMachine() {
	e.mu.Lock()
	e.resumesOnMachine++
	e.mu.Unlock()
}

// ResumeNotIsolated records that a process resumed a run without the
// isolation that makes a crash a reboot (internal/isolate), lacking the
// machine's parts missing (isolate.AllParts names them; none named: no
// isolation at all): state its crashed predecessor left there could have
// reached it, so that the resume rests on the implementation's word.
func (e *Env) ResumeNotIsolated(missing ...string) {
	e.mu.Lock()
	e.resumeNotIsolated = true
	for _, p := range missing {
		if !slices.Contains(e.resumeMissing, p) {
			e.resumeMissing = append(e.resumeMissing, p)
		}
	}
	e.mu.Unlock()
}

// Played reports which parts of the scenario's faults the runner played
// itself in this run (scenarios.PartSink, PartMeasure, PartJournal).
func (e *Env) Played() map[string]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]bool{}
	for _, c := range e.log {
		switch c.Kind {
		case CallEvent:
			out[scenarios.PartSink] = true
		case CallMeasure:
			out[scenarios.PartMeasure] = true
		}
	}
	if e.journalPlayed {
		out[scenarios.PartJournal] = true
	}
	return out
}

// Reporting tells the Env whether the process that makes the next calls
// reports journal points (a run asked for them; a resume never is).
func (e *Env) Reporting(on bool) {
	e.mu.Lock()
	e.points = on
	e.mu.Unlock()
}

// Point records a journal point the implementation sent.
func (e *Env) Point(when, record string, step int) {
	e.mu.Lock()
	e.logLocked(Call{Kind: CallPoint, Phase: -1, Step: step, When: when, Record: record})
	e.mu.Unlock()
}

// Blocked is what a fake that blocked until cancelled returns once its
// call was cancelled. It wraps the context's error. Whoever sees the call
// released calls Release: in process, the kernel's cancellation reached the
// fake, which is the release; over the protocol, the implementation
// acknowledged the cancelled call with a released message. A call nobody
// releases stays unreleased in the trajectory.
type Blocked struct {
	err     error
	release func()
}

func (b *Blocked) Error() string { return b.err.Error() }

// Unwrap returns the context's error.
func (b *Blocked) Unwrap() error { return b.err }

// Release records that the cancelled call was released.
func (b *Blocked) Release() { b.release() }

// ModelFailure is a model call that failed (faults.model_failure).
type ModelFailure struct {
	Message string
}

func (f *ModelFailure) Error() string { return f.Message }

// New returns an Env for sc. onBlock is called when a fake starts blocking
// until cancelled; the runner answers it by cancelling the run.
func New(sc *scenarios.Scenario, onBlock func()) *Env {
	if onBlock == nil {
		onBlock = func() {}
	}
	return &Env{sc: sc, onBlock: onBlock, perTool: map[string]int{}, perExecutor: map[int]int{}}
}

// Scenario returns the scenario this Env scripts.
func (e *Env) Scenario() *scenarios.Scenario { return e.sc }

// phaseName is "" for single-request scenarios.
func (e *Env) phaseName(phase int) string {
	if e.sc.Request != nil {
		return ""
	}
	return e.sc.Phases[phase].Name
}

// StepOf derives the step a model input belongs to from the number of
// assistant messages in it, so a resumed run is answered by step, not by
// how many calls came before.
func StepOf(input []trajectories.Message) int {
	n := 1
	for _, m := range input {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// Complete answers a model call of the given phase. The Env keeps input
// as it is (the call log and Record.ModelInputs hold it): callers pass a
// slice of their own, built for this call (the wire's decode, or
// refdriver.WireMessages), and do not change it afterwards.
func (e *Env) Complete(ctx context.Context, phase int, input []trajectories.Message) (string, error) {
	e.mu.Lock()
	e.modelCalls++
	e.inputs = append(e.inputs, input)
	e.logLocked(Call{Kind: CallModel, Phase: phase, Step: StepOf(input), Input: input})
	e.mu.Unlock()
	runs := e.sc.Runs()
	if phase < 0 || phase >= len(runs) {
		return "", fmt.Errorf("fakes: model call for phase %d, but the scenario has %d", phase, len(runs))
	}
	script := runs[phase].Model
	step := StepOf(input)
	if step > len(script) {
		return "", fmt.Errorf("%w: step %d asked, %d scripted", ErrScriptExhausted, step, len(script))
	}
	e.mu.Lock()
	e.lastStep = step
	fail := e.sc.Faults.ModelFailure
	failNow := fail != nil && fail.Step == step && !e.failed
	e.failed = e.failed || failNow
	e.mu.Unlock()
	if failNow {
		return "", &ModelFailure{Message: fail.Message}
	}
	if e.takeCancel(phase, step, "model_call") || script[step-1].Block {
		return "", e.block(ctx, func() {
			e.mu.Lock()
			e.modelReleased++
			e.mu.Unlock()
		})
	}
	return script[step-1].Output, nil
}

// cancelAt reports whether faults.cancel (or faults.deadline) names this
// phase, step and call and has not fired yet.
func (e *Env) cancelAt(phase, step int, during string) bool {
	c, _ := e.sc.Faults.Interruption()
	if c == nil || c.Step != step || c.During != during {
		return false
	}
	if phase >= 0 && phase < len(e.sc.Runs()) && c.Phase != e.phaseName(phase) {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return !e.cancelled
}

// Deadline reports whether the scenario's interruption is a deadline
// passing rather than a cancellation: the runner then stops the run the
// way a caller's timeout does (over the protocol, cancel with deadline).
func (e *Env) Deadline() bool {
	_, deadline := e.sc.Faults.Interruption()
	return deadline
}

// takeCancel is cancelAt that fires the fault.
func (e *Env) takeCancel(phase, step int, during string) bool {
	if !e.cancelAt(phase, step, during) {
		return false
	}
	e.mu.Lock()
	e.cancelled = true
	e.mu.Unlock()
	return true
}

func (e *Env) block(ctx context.Context, release func()) error {
	e.mu.Lock()
	e.blocked++
	e.mu.Unlock()
	e.onBlock()
	<-ctx.Done()
	var once sync.Once
	return &Blocked{err: ctx.Err(), release: func() { once.Do(release) }}
}

// ModelBlocks reports whether the model call for this input will block
// until cancelled, so a runner can answer other calls inline.
func (e *Env) ModelBlocks(phase int, input []trajectories.Message) bool {
	runs := e.sc.Runs()
	if phase < 0 || phase >= len(runs) {
		return false
	}
	step := StepOf(input)
	return e.cancelAt(phase, step, "model_call") || (step <= len(runs[phase].Model) && runs[phase].Model[step-1].Block)
}

// HandlerBlocks reports whether the tool's next handler call in this
// phase will block until cancelled.
func (e *Env) HandlerBlocks(phase int, tool string) bool {
	t := e.sc.Tool(tool)
	if t == nil || len(t.Handler) == 0 {
		return false
	}
	e.mu.Lock()
	n, step := e.perTool[tool], e.lastStep
	e.mu.Unlock()
	return e.cancelAt(phase, step, "tool_call") || t.Handler[min(n, len(t.Handler)-1)].Block
}

// HasHandler reports whether the scenario gives the tool a handler.
func (e *Env) HasHandler(tool string) bool {
	t := e.sc.Tool(tool)
	return t != nil && len(t.Handler) > 0
}

// CallHandler runs the fake handler of a tool once.
func (e *Env) CallHandler(ctx context.Context, phase int, tool string, args map[string]any) (string, error) {
	spec := e.sc.Tool(tool)
	if spec == nil || len(spec.Handler) == 0 {
		return "", fmt.Errorf("fakes: the scenario gives tool %q no handler, yet it was called", tool)
	}
	e.mu.Lock()
	n := e.perTool[tool]
	e.perTool[tool]++
	step := e.lastStep
	idx := len(e.handlerCalls)
	// One copy of the arguments, for the handler calls and the log: the
	// records do not change them.
	kept := copyArgs(args)
	e.handlerCalls = append(e.handlerCalls, trajectories.HandlerCall{Phase: e.phaseName(phase), Tool: tool, Arguments: kept})
	e.logLocked(Call{Kind: CallHandler, Phase: phase, Step: step, Tool: tool, Arguments: kept})
	e.mu.Unlock()
	b := spec.Handler[min(n, len(spec.Handler)-1)]
	if e.takeCancel(phase, step, "tool_call") {
		b = scenarios.Behaviour{Block: true}
	}
	switch {
	case b.Return != nil:
		return *b.Return, nil
	case b.Echo:
		return echo(args), nil
	case b.Error != nil:
		return "", &NamedError{Type: b.Error.Type, Message: b.Error.Message}
	case b.EnvError != nil:
		return "", &EnvError{Message: *b.EnvError}
	case b.Panic != nil:
		return "", &Panic{Err: &NamedError{Type: b.Panic.Type, Message: b.Panic.Message}}
	case b.Block:
		return "", e.block(ctx, func() {
			e.mu.Lock()
			e.handlerCalls[idx].Released = true
			e.mu.Unlock()
		})
	}
	return "", fmt.Errorf("fakes: tool %q has an empty behaviour", tool)
}

// Execute answers a project executor call of a phase with the next
// scripted outcome, whatever the action (the script is by call order),
// and records the action it was given.
func (e *Env) Execute(ctx context.Context, phase int, a trajectories.Action) (scenarios.ScriptedOutcome, error) {
	e.mu.Lock()
	a.Repairs = nil
	e.logLocked(Call{Kind: CallExecute, Phase: phase, Step: e.lastStep, Action: &a})
	e.mu.Unlock()
	return e.Scripted(ctx, phase)
}

// Scripted returns the project executor's next scripted outcome for a
// phase, as the scenario writes it (with NoCompletionSignal, which the
// protocol sends as null).
func (e *Env) Scripted(ctx context.Context, phase int) (scenarios.ScriptedOutcome, error) {
	if err := ctx.Err(); err != nil {
		return scenarios.ScriptedOutcome{}, err
	}
	script := e.sc.Runs()[phase].ProjectExecutor
	if len(script) == 0 {
		return scenarios.ScriptedOutcome{}, fmt.Errorf("fakes: phase %d has no project_executor script", phase)
	}
	e.mu.Lock()
	n := e.perExecutor[phase]
	e.perExecutor[phase]++
	e.mu.Unlock()
	return script[min(n, len(script)-1)], nil
}

// Record is a snapshot of what the Env saw.
type Record struct {
	ModelCalls   int
	ModelInputs  [][]trajectories.Message
	HandlerCalls []trajectories.HandlerCall
	Blocked      int
	// ModelCallsReleased counts blocked model calls that were released.
	ModelCallsReleased int
	// Log is every call and journal point, in arrival order.
	Log []Call
	// Process is the process that ran last (Env.Restarted): the one whose
	// events the trajectory reports.
	Process int
	// Offered holds the parts the runner offered to play (Env.Offer).
	Offered map[string]bool
	// JournalOpaque: the implementation journalled in a format the runner
	// cannot read (Env.JournalOpaque).
	JournalOpaque bool
	// ResumeNotIsolated: a resume ran without a crash's isolation
	// (Env.ResumeNotIsolated); ResumeMissing names the machine's parts it
	// lacked, when known.
	ResumeNotIsolated bool
	ResumeMissing     []string
	// ResumesOnMachine counts the resumes forked onto a machine of their
	// own and seen so (Env.ResumeOnMachine).
	ResumesOnMachine int
}

// Snapshot returns what happened so far.
func (e *Env) Snapshot() Record {
	e.mu.Lock()
	defer e.mu.Unlock()
	return Record{
		ModelCalls:         e.modelCalls,
		ModelInputs:        append([][]trajectories.Message(nil), e.inputs...),
		HandlerCalls:       append([]trajectories.HandlerCall(nil), e.handlerCalls...),
		Blocked:            e.blocked,
		ModelCallsReleased: e.modelReleased,
		Log:                append([]Call(nil), e.log...),
		Process:            e.process,
		Offered:            maps.Clone(e.offered),
		JournalOpaque:      e.journalOpaque,
		ResumeNotIsolated:  e.resumeNotIsolated,
		ResumeMissing:      slices.Clone(e.resumeMissing),
		ResumesOnMachine:   e.resumesOnMachine,
	}
}

func copyArgs(a map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	return out
}

// echo is an echo handler's text: the arguments as compact JSON, keys
// sorted, each number in its canonical spelling (2.0 and 1e0 are 2 and 1:
// an implementation may send either spelling, 0006.D6.integer), no HTML
// escaping.
func echo(args map[string]any) string {
	b, err := jsontext.Marshal(jsontext.Canonical(args))
	if err != nil {
		return fmt.Sprintf("%v", args)
	}
	return string(b)
}
