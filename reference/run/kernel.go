package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/polyloop/polyloop-conform/reference/action"
	"github.com/polyloop/polyloop-conform/reference/assembly"
	"github.com/polyloop/polyloop-conform/reference/events"
	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

// ActionRecord is the decision as the trajectory shows it.
type ActionRecord struct {
	Kind action.Kind `json:"kind"`
	Tool string      `json:"tool,omitempty"`
	// Arguments is nil when the call carried no arguments object, which is
	// not the same as an empty one (0003.D6).
	Arguments any      `json:"arguments,omitempty"`
	Code      string   `json:"code,omitempty"`
	Repairs   []string `json:"repairs"`
	Error     string   `json:"error,omitempty"`
}

// Step is one settled step.
type Step struct {
	Index              int                 `json:"index"`
	ModelInput         []assembly.Message  `json:"model_input"`
	ContextSize        int                 `json:"context_size"`
	ModelOutput        string              `json:"model_output"`
	Action             ActionRecord        `json:"action"`
	Outcome            tools.ActionOutcome `json:"outcome"`
	HistoryObservation string              `json:"history_observation"`
	Counters           Counters            `json:"counters"`
	Replayed           bool                `json:"replayed"`
	// ToolCompletedRun is the judge's view of a completes_run call, kept in
	// the journal so that resume can judge the last step again.
	ToolCompletedRun bool `json:"tool_completed_run,omitempty"`
}

// EndDetail says where a run was interrupted, for cancelled and
// resume_outcome_unknown ends.
type EndDetail struct {
	Step   int    `json:"step"`
	During string `json:"during,omitempty"` // model_call or tool_call
	Tool   string `json:"tool,omitempty"`
}

// End is the run's end record, written to the journal by the library itself
// (0002.D2).
type End struct {
	Reason         StopReason `json:"reason"`
	EffectiveSteps int        `json:"effective_steps"`
	TotalSteps     int        `json:"total_steps"`
	Detail         *EndDetail `json:"detail,omitempty"`
}

// ResumeInfo describes how a resumed run picked up its journal.
type ResumeInfo struct {
	From         string `json:"from"` // run_end, step, start
	ReplayedStep int    `json:"replayed_step,omitempty"`
	TornTail     string `json:"torn_tail,omitempty"`
}

// Result is what a run returns: every settled step and its end.
type Result struct {
	Steps             []Step
	End               End
	EventSinkFailures int
	Resume            *ResumeInfo
}

// Options are the collaborators of one run.
type Options struct {
	Model Model
	Sinks []events.Sink
	// JournalDir enables the step journal; empty means no journal.
	JournalDir  string
	JournalHook journal.Hook
	// JournalWriteFault simulates file-system errors (see journal.Options).
	JournalWriteFault func(journal.Point) error
	// JournalFS is the file system the journal goes through; nil is the
	// real one (power-loss simulation passes a model of one).
	JournalFS journal.FS
	// Departures turns on the few departures from the design that sit
	// inside the kernel's own decisions, where no seam reaches; the zero
	// value follows the design. internal/deviation sets them for
	// polyloop-conform selfcheck.
	Departures Departures
}

// Departures are mistakes a port can make in the decisions whose code is
// the kernel's own: how a settled step counts and what the history shows
// (resumed steps too), when the intent is journalled and run_ended
// emitted, what is validated, who settles a decision failure. Every other deviation
// selfcheck knows wraps a seam (internal/deviation).
type Departures struct {
	// InvalidCallsEffective counts a NOT_EXECUTED step as effective (0004.D1).
	InvalidCallsEffective bool
	// DecisionFailuresUncounted leaves a decision failure out of the total (0003.D7).
	DecisionFailuresUncounted bool
	// HistoryShowsExecutorText puts the executor's sentence in the history
	// instead of the synthetic text (0007.D2).
	HistoryShowsExecutorText bool
	// IntentAfterAction journals the intent after the action ran (0002.D1).
	IntentAfterAction bool
	// ReplayWritesIntent journals a second intent for a SAFE action run
	// again on resume (0002.D4.one-intent).
	ReplayWritesIntent bool
	// ValidationSkipped runs calls to a project executor unvalidated (0003.D4).
	ValidationSkipped bool
	// HandlerRunsOnInvalid calls a derived executor's handler before the
	// call is validated (0008.D4.validate).
	HandlerRunsOnInvalid bool
	// BlankOutputsUncounted leaves an empty or blank model output out of
	// the total (0003.D7.empty).
	BlankOutputsUncounted bool
	// DecisionFailureToExecutor hands an output that is no action to a
	// project executor, which settles it (0003.D4).
	DecisionFailureToExecutor bool
	// RunEndedBeforeRecord emits run_ended before the end record is
	// written (0011.D1.end-after-record).
	RunEndedBeforeRecord bool
	// ResumeHistoryFromObservation rebuilds the history of a resumed
	// NOT_EXECUTED or ENV_ERROR step from its observation (0007.D2).
	ResumeHistoryFromObservation bool
	// IntentBeforeValidation journals a tool call's intent before it is
	// validated, so an invalid call gets one (0002.D1.no-intent-invalid).
	IntentBeforeValidation bool
}

func (o Options) journalOptions() journal.Options {
	return journal.Options{Hook: o.JournalHook, WriteFault: o.JournalWriteFault, FS: o.JournalFS}
}

type kernel struct {
	req     *Request
	opts    Options
	stream  *events.Stream
	journal *journal.Writer
	steps   []Step
	count   Counters

	// input is the model input for the next step, grown by one turn per
	// settled step; steps keep capacity-capped views of it, which later
	// appends never overwrite.
	input []assembly.Message
	size  int
	built bool
}

// Interrupted is how a run stops without an end: its context was cancelled
// before or during a model call or a tool call (GovDoc 七: the lease was
// lost), or a model call failed (0003.D3: the library never calls a failed
// model again). No end is journalled, so whoever holds the run next can
// resume it (0004.D4, 0002.D3); the Result returned beside this error
// holds the steps settled before. errors.Is(err, context.Canceled) holds
// for a cancellation.
type Interrupted struct {
	Step   int
	During string // model_call or tool_call
	Tool   string // the tool whose call was in flight, for tool_call
	Err    error  // the context's error, or the model's
}

func (e *Interrupted) Error() string {
	if e.Cancelled() {
		where := e.During
		if e.Tool != "" {
			where += " (" + e.Tool + ")"
		}
		return fmt.Sprintf("step %d: run cancelled during %s: %v", e.Step, where, e.Err)
	}
	return fmt.Sprintf("step %d: model call failed: %v", e.Step, e.Err)
}

// Unwrap returns the cause.
func (e *Interrupted) Unwrap() error { return e.Err }

// Cancelled reports whether the run was cancelled, as opposed to stopped
// by a failed model call.
func (e *Interrupted) Cancelled() bool {
	return errors.Is(e.Err, context.Canceled) || errors.Is(e.Err, context.DeadlineExceeded)
}

// Run executes a request until the stop judge ends it, or until it is
// interrupted (a *Interrupted error, with the partial Result), or an error
// the caller must see (a journal write failure) occurs.
func Run(ctx context.Context, req *Request, opts Options) (*Result, error) {
	k := &kernel{req: req, opts: opts, stream: events.NewStream(opts.Sinks...)}
	if opts.JournalDir != "" {
		w, err := journal.Create(opts.JournalDir, opts.journalOptions())
		if err != nil {
			return nil, err
		}
		defer w.Close()
		k.journal = w
		if err := k.write(journal.Record{Type: journal.TypeRunStarted}); err != nil {
			return nil, err
		}
	}
	k.stream.Emit(events.Event{Type: events.TypeRunStarted})
	end, err := k.loop(ctx)
	if err != nil {
		return k.stopped(err)
	}
	return k.finish(end)
}

// stopped returns what a run that did not end has to show: for an
// interruption or a failed journal write the steps settled so far beside
// the error, for anything else the error alone.
func (k *kernel) stopped(err error) (*Result, error) {
	var in *Interrupted
	var we *journal.WriteError
	if !errors.As(err, &in) && !errors.As(err, &we) {
		return nil, err
	}
	// A failed journal write keeps the steps settled before it: the
	// trajectory shows every settled step (0002.D6).
	return &Result{Steps: k.steps, EventSinkFailures: k.sinkFailures()}, err
}

func (k *kernel) write(r journal.Record) error {
	if k.journal == nil {
		return nil
	}
	return k.journal.Append(r)
}

func (k *kernel) history() []assembly.Turn {
	out := make([]assembly.Turn, len(k.steps))
	for i, s := range k.steps {
		out[i] = assembly.Turn{ModelOutput: s.ModelOutput, Observation: s.HistoryObservation}
	}
	return out
}

// buildInput returns the next step's model input, building it from the
// whole history the first time (a new run, or a resumed one).
func (k *kernel) buildInput() ([]assembly.Message, int, error) {
	if !k.built {
		msgs, size, err := k.req.assembler.Build(assembly.Input{
			RunFragment:  k.req.def.RunFragment,
			Injections:   k.req.injections,
			GoalFragment: k.req.goal,
			History:      k.history(),
			Template:     k.req.def.ObservationTemplate,
		}, k.req.measure)
		if err != nil {
			return nil, 0, err
		}
		k.input, k.size, k.built = msgs, size, true
	}
	return k.input[:len(k.input):len(k.input)], k.size, nil
}

// addTurn extends the next input with a settled step.
func (k *kernel) addTurn(st Step) error {
	if _, standard := k.req.assembler.(assembly.Standard); !standard {
		// Only the design's layout is known to append a turn the way
		// AppendTurn does: another assembler builds every input whole.
		k.built = false
	}
	if !k.built {
		return nil
	}
	var err error
	k.input, k.size, err = assembly.AppendTurn(k.input, k.size, assembly.Turn{ModelOutput: st.ModelOutput, Observation: st.HistoryObservation}, k.req.def.ObservationTemplate, k.req.measure)
	return err
}

func (k *kernel) loop(ctx context.Context) (End, error) {
	for {
		index := len(k.steps) + 1
		input, size, err := k.buildInput()
		if err != nil {
			return End{}, fmt.Errorf("step %d: assemble context: %w", index, err)
		}
		if err := ctx.Err(); err != nil {
			return End{}, k.interrupt(index, "model_call", "", err)
		}
		out, err := k.opts.Model.Complete(ctx, input)
		if err != nil {
			// Cancelled or failed, the model is not called again (0003.D3).
			return End{}, k.interrupt(index, "model_call", "", err)
		}
		if err := k.write(journal.Record{Type: journal.TypeModelOutput, Step: index, Output: out}); err != nil {
			return End{}, err
		}
		st := Step{Index: index, ModelInput: input, ContextSize: size, ModelOutput: out}
		end, done, err := k.settle(ctx, st, settleFresh)
		if err != nil || done {
			return end, err
		}
	}
}

// isCancel reports whether err is the cancellation of ctx.
func isCancel(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// endWith is the run's end for a reason, with the counters as they stand.
func (k *kernel) endWith(reason StopReason) End {
	return End{Reason: reason, EffectiveSteps: k.count.EffectiveSteps, TotalSteps: k.count.TotalSteps}
}

// interrupt stops the run without an end (see Interrupted): nothing is
// journalled, and the audit stream says where the run stopped.
func (k *kernel) interrupt(step int, during, tool string, err error) error {
	k.stream.Emit(events.Event{Type: events.TypeRunInterrupted, Step: step, Tool: tool})
	return &Interrupted{Step: step, During: during, Tool: tool, Err: err}
}

type settleMode int

const (
	settleFresh  settleMode = iota
	settleReplay            // the intent is already journalled; run the action again
)

// settle turns one model output into a settled step, journals it, and asks
// the judge. done is true when the run ended (end is then set).
func (k *kernel) settle(ctx context.Context, st Step, mode settleMode) (End, bool, error) {
	act, perr := k.req.parse(st.ModelOutput)
	k.decided(&st, act, perr)
	settled := events.Event{Step: st.Index, Tool: act.Tool, Type: events.TypeDecisionFailed}
	// 0003.D7: a decision failure settles like an invalid call.
	out := notExecuted(perr)
	completed := false
	if perr == nil {
		settled.Type = events.TypeCodeAction
		if act.Kind == action.KindToolCall {
			settled.Type = events.TypeToolCall
		}
		var rep tools.CallReport
		var err error
		if out, rep, err = k.act(ctx, st.Index, act, mode); err != nil {
			return End{}, false, err
		}
		settled.ErrorType = rep.ErrorType
		completed = k.completesRun(act, out, rep)
	} else if k.opts.Departures.DecisionFailureToExecutor {
		if _, derived := k.req.executor.(Dispatcher); !derived {
			var err error
			if out, err = k.req.executor.Execute(ctx, action.Action{Kind: action.KindNone}); err != nil {
				return End{}, true, k.interrupt(st.Index, "tool_call", "", err)
			}
		}
	}
	k.account(&st, out, perr)
	st.Replayed = mode == settleReplay
	st.ToolCompletedRun = completed
	if err := k.record(st); err != nil {
		return End{}, false, err
	}
	settled.Status, settled.Observation, settled.Replayed = string(out.Status), out.Observation, st.Replayed
	settled.ObservationIsSynthetic = out.ObservationIsSynthetic
	k.stream.Emit(settled)
	reason := k.req.judge(Verdict{Outcome: out, ToolCompletedRun: completed, Counters: k.count, Budget: k.req.budget})
	if reason == "" {
		return End{}, false, nil
	}
	return k.endWith(reason), true, nil
}

// decided records the decision in the step and the audit stream.
func (k *kernel) decided(st *Step, act action.Action, perr error) {
	st.Action = ActionRecord{Kind: act.Kind, Tool: act.Tool, Code: act.Code, Repairs: nonNil(act.Repairs)}
	if act.HasArgs {
		st.Action.Arguments = act.Arguments
	}
	ev := events.Event{Type: events.TypeModelStep, Step: st.Index, RawOutput: st.ModelOutput, Repairs: act.Repairs}
	if perr != nil {
		st.Action = ActionRecord{Kind: action.KindNone, Repairs: []string{}, Error: perr.Error()}
		ev.Error = perr.Error()
	} else {
		ev.Decision = decisionView(act)
	}
	k.stream.Emit(ev)
}

// notExecuted is the outcome of an action that was refused before any
// executor saw it (nil for no refusal).
func notExecuted(refusal error) tools.ActionOutcome {
	if refusal == nil {
		return tools.ActionOutcome{}
	}
	return tools.ActionOutcome{Status: tools.StatusNotExecuted, Observation: refusal.Error(), ObservationIsSynthetic: true}
}

// act validates a decided action (0003.D4), journals its intent and runs
// it. An error is the run's: an interruption or a journal write failure.
func (k *kernel) act(ctx context.Context, index int, act action.Action, mode settleMode) (tools.ActionOutcome, tools.CallReport, error) {
	if act.Kind == action.KindToolCall {
		if k.opts.Departures.IntentBeforeValidation && mode == settleFresh && k.req.tools.Validate(act) != nil {
			intent := journal.Record{Type: journal.TypeActionIntent, Step: index, Tool: act.Tool, Arguments: act.Arguments, Replay: string(k.replayPolicy(act))}
			if err := k.write(intent); err != nil {
				return tools.ActionOutcome{}, tools.CallReport{}, err
			}
		}
		if verr, err := k.validate(ctx, index, act); verr != nil || err != nil {
			return notExecuted(verr), tools.CallReport{}, err
		}
	}
	intent := journal.Record{Type: journal.TypeActionIntent, Step: index, Tool: act.Tool, Arguments: act.Arguments, Replay: string(k.replayPolicy(act))}
	late := k.opts.Departures.IntentAfterAction
	if (mode == settleFresh || k.opts.Departures.ReplayWritesIntent) && !late {
		if err := k.write(intent); err != nil {
			return tools.ActionOutcome{}, tools.CallReport{}, err
		}
	}
	out, rep, err := k.execute(ctx, act)
	if err != nil {
		if isCancel(ctx, err) {
			return out, rep, k.interrupt(index, "tool_call", act.Tool, err)
		}
		return out, rep, fmt.Errorf("step %d: action executor failed (an executor may only fail by cancellation): %w", index, err)
	}
	if late {
		if mode == settleFresh {
			err = k.write(intent)
		}
	}
	return out, rep, err
}

// validate checks a tool call against the visible registry before any
// executor sees it (0003.D4). verr is the refusal; err interrupts the run.
func (k *kernel) validate(ctx context.Context, index int, act action.Action) (verr, err error) {
	verr = k.req.tools.Validate(act)
	if verr == nil {
		return nil, nil
	}
	if dep := k.opts.Departures; dep.ValidationSkipped || dep.HandlerRunsOnInvalid {
		return k.departedValidation(ctx, index, act, verr)
	}
	return verr, nil
}

// departedValidation is validate under Departures.ValidationSkipped or
// HandlerRunsOnInvalid.
func (k *kernel) departedValidation(ctx context.Context, index int, act action.Action, verr error) (error, error) {
	d, derived := k.req.executor.(Dispatcher)
	if !derived {
		if k.opts.Departures.ValidationSkipped {
			return nil, nil
		}
		return verr, nil
	}
	if k.opts.Departures.HandlerRunsOnInvalid {
		if _, _, err := d.Dispatch(ctx, act); err != nil && isCancel(ctx, err) {
			return verr, k.interrupt(index, "tool_call", act.Tool, err)
		}
	}
	return verr, nil
}

// execute runs a validated action.
func (k *kernel) execute(ctx context.Context, act action.Action) (tools.ActionOutcome, tools.CallReport, error) {
	if d, ok := k.req.executor.(Dispatcher); ok {
		// Validated above against the visible registry, which is the
		// executor's own (0006.D3); no need to validate twice.
		return d.Dispatch(ctx, act)
	}
	out, err := k.req.executor.Execute(ctx, act)
	return out, tools.CallReport{}, err
}

// completesRun reports whether a step completed the run by its tool: a
// completes_run tool that executed without a handler error (0004.D3).
func (k *kernel) completesRun(act action.Action, out tools.ActionOutcome, rep tools.CallReport) bool {
	if act.Kind != action.KindToolCall || out.Status != tools.StatusExecuted || rep.ErrorType != "" {
		return false
	}
	// Lookup fails only when validation was skipped (an unknown tool
	// reaching a project executor).
	spec, ok := k.req.tools.Lookup(act.Tool)
	return ok && spec.CompletesRun
}

// account fills the step's history observation (0007.D2) and counters
// (0004.D1, 0003.D7).
func (k *kernel) account(st *Step, out tools.ActionOutcome, perr error) {
	st.Outcome = out
	switch out.Status {
	case tools.StatusExecuted:
		st.HistoryObservation = out.Observation
		k.count.EffectiveSteps++
	case tools.StatusEnvError:
		st.HistoryObservation = k.req.synthetic.EnvError
	default:
		st.HistoryObservation = k.req.synthetic.NotExecuted
	}
	k.count.TotalSteps++
	if dep := k.opts.Departures; dep.InvalidCallsEffective || dep.HistoryShowsExecutorText || dep.DecisionFailuresUncounted || dep.BlankOutputsUncounted {
		k.departedAccount(st, out, perr)
	}
	st.Counters = k.count
}

// departedAccount is account under Departures.
func (k *kernel) departedAccount(st *Step, out tools.ActionOutcome, perr error) {
	dep := k.opts.Departures
	if out.Status != tools.StatusExecuted {
		if dep.InvalidCallsEffective && out.Status == tools.StatusNotExecuted {
			k.count.EffectiveSteps++
		}
		if dep.HistoryShowsExecutorText {
			st.HistoryObservation = out.Observation
		}
	}
	if perr != nil && (dep.DecisionFailuresUncounted || dep.BlankOutputsUncounted && strings.TrimSpace(st.ModelOutput) == "") {
		k.count.TotalSteps--
	}
}

// record journals a settled step and adds it to the history.
func (k *kernel) record(st Step) error {
	if k.journal != nil {
		payload, err := json.Marshal(st)
		if err != nil {
			return fmt.Errorf("step %d: encode step record: %w", st.Index, err)
		}
		if err := k.write(journal.Record{Type: journal.TypeActionResult, Step: st.Index, Payload: payload}); err != nil {
			return err
		}
	}
	k.steps = append(k.steps, st)
	if err := k.addTurn(st); err != nil {
		return fmt.Errorf("step %d: assemble context: %w", st.Index, err)
	}
	return nil
}

func (k *kernel) replayPolicy(a action.Action) tools.ReplayPolicy {
	if a.Kind == action.KindToolCall {
		if spec, ok := k.req.tools.Lookup(a.Tool); ok {
			return spec.Replay()
		}
	}
	return tools.ReplayNever
}

// sinkFailures is the count of failed event deliveries (0011.D2.count).
func (k *kernel) sinkFailures() int {
	n, _ := k.stream.Failures()
	return n
}

// finish writes the run's end and returns the result.
func (k *kernel) finish(end End) (*Result, error) {
	payload, err := json.Marshal(end)
	if err != nil {
		return nil, fmt.Errorf("encode end record: %w", err)
	}
	early := k.opts.Departures.RunEndedBeforeRecord
	if early {
		k.stream.Emit(events.Event{Type: events.TypeRunEnded, Reason: string(end.Reason)})
	}
	if err := k.write(journal.Record{Type: journal.TypeRunEnd, Payload: payload}); err != nil {
		return k.stopped(err)
	}
	if !early {
		k.stream.Emit(events.Event{Type: events.TypeRunEnded, Reason: string(end.Reason)})
	}
	return &Result{Steps: k.steps, End: end, EventSinkFailures: k.sinkFailures()}, nil
}

func decisionView(a action.Action) map[string]any {
	m := map[string]any{"kind": string(a.Kind)}
	if a.Kind == action.KindCode {
		m["code"] = a.Code
		return m
	}
	m["tool"] = a.Tool
	if a.HasArgs {
		m["arguments"] = a.Arguments
	}
	return m
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func sortStrings(s []string) { sort.Strings(s) }
