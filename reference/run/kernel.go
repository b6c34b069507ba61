package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/polyloop/polyloop-conform/reference/action"
	"github.com/polyloop/polyloop-conform/reference/assembly"
	"github.com/polyloop/polyloop-conform/reference/deviation"
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

// endedInstead carries the end a CancelEndsRun deviation writes.
type endedInstead struct{ end End }

func (e *endedInstead) Error() string { return "ended instead of interrupted" }

// stopped returns what a run that did not end has to show: for an
// interruption or a failed journal write the steps settled so far beside
// the error, for anything else the error alone.
func (k *kernel) stopped(err error) (*Result, error) {
	var ei *endedInstead
	if errors.As(err, &ei) {
		return k.finish(ei.end)
	}
	var in *Interrupted
	var we *journal.WriteError
	if !errors.As(err, &in) && (!errors.As(err, &we) || k.req.dev.On(deviation.JournalErrorDropsSteps)) {
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
	if err := k.journal.Append(r); err != nil && !k.req.dev.On(deviation.JournalErrorIgnored) {
		return err
	}
	return nil
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
		msgs, size, err := assembly.Build(assembly.Input{
			RunFragment:  k.req.def.RunFragment,
			Injections:   k.req.injections,
			GoalFragment: k.req.goal,
			History:      k.history(),
			Template:     k.req.def.ObservationTemplate,
			Deviations:   k.req.dev,
		}, k.req.measure)
		if err != nil {
			return nil, 0, err
		}
		if k.req.dev.On(deviation.ToolSectionRendered) {
			msgs = append([]assembly.Message{{Role: assembly.RoleUser, Content: "Tools: " + strings.Join(k.req.tools.Names(), ", ")}}, msgs...)
		}
		k.input, k.size, k.built = msgs, size, true
	}
	size := k.size
	if k.req.dev.On(deviation.ContextSizeOffByOne) {
		size++
	}
	return k.input[:len(k.input):len(k.input)], size, nil
}

// addTurn extends the next input with a settled step.
func (k *kernel) addTurn(st Step) error {
	if k.req.dev.On(deviation.EmptyTurnDropped) || k.req.dev.On(deviation.TemplateBracesFormatted) {
		// Build holds these deviations: rebuild the input each step.
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
		if n, last := k.stream.Failures(); n > 0 && k.req.dev.On(deviation.SinkFailureStops) {
			return End{}, fmt.Errorf("step %d: event sink failed: %w", index, last)
		}
		out, err := k.opts.Model.Complete(ctx, input)
		if err != nil && !isCancel(ctx, err) && k.req.dev.On(deviation.ModelFailureRetried) {
			out, err = k.opts.Model.Complete(ctx, input)
		}
		if err != nil && !isCancel(ctx, err) && k.req.dev.On(deviation.FailedModelCallSettled) {
			end, done, serr := k.settle(ctx, Step{Index: index, ModelInput: input, ContextSize: size}, settleFresh)
			if serr != nil || done {
				return end, serr
			}
		}
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
	if k.req.dev.On(deviation.CancelEndsRun) && errors.Is(err, context.Canceled) {
		end := k.endWith("cancelled")
		end.Detail = &EndDetail{Step: step, During: during, Tool: tool}
		return &endedInstead{end}
	}
	k.stream.Emit(events.Event{Type: events.TypeRunInterrupted, Step: step, Tool: tool})
	return &Interrupted{Step: step, During: during, Tool: tool, Err: err}
}

type settleMode int

const (
	settleFresh  settleMode = iota
	settleReplay            // the intent is already journalled; run the action again
)

func (k *kernel) decide(raw string) (action.Action, error) {
	a, err := k.parse(raw)
	d := k.req.dev
	if i := slices.Index(a.Repairs, action.RepairCollapseFlattened); i >= 0 && d.On(deviation.FlattenedNotCollapsed) {
		a.Arguments, a.HasArgs = nil, false
		a.Repairs = slices.Delete(a.Repairs, i, i+1)
	}
	if d.On(deviation.RepairsUnnamed) {
		a.Repairs = nil
	}
	return a, err
}

func (k *kernel) parse(raw string) (action.Action, error) {
	d := k.req.dev
	if k.req.language == LanguageCode && !d.On(deviation.CodeParsedAsJSON) {
		if d.On(deviation.CodeFenceWholeOnly) {
			return action.ParseCodeWholeFence(raw)
		}
		a, err := action.ParseCode(raw)
		if err != nil && d.On(deviation.EmptyFenceRunAsCode) && len(action.FencedBlocks(strings.TrimSpace(raw))) == 1 {
			return action.Action{Kind: action.KindCode, Repairs: []string{action.RepairUnfence}}, nil
		}
		return a, err
	}
	parseJSON := action.ParseJSON
	if d.On(deviation.DuplicateKeysLastWins) {
		parseJSON = action.ParseJSONDuplicatesLastWin
	}
	a, err := parseJSON(raw)
	if err != nil && d.On(deviation.SeveralCallsFirst) {
		if first, ok := firstCall(raw); ok {
			return parseJSON(first)
		}
	}
	if err != nil && d.On(deviation.ActionsKeyTaken) {
		if one, ok := actionsKeyTaken(raw); ok {
			return parseJSON(one)
		}
	}
	if err != nil && d.On(deviation.JSONFenceAfterProse) {
		if blocks := action.FencedBlocks(strings.TrimSpace(raw)); len(blocks) == 1 {
			if a, err := parseJSON(blocks[0]); err == nil {
				a.Repairs = append([]string{action.RepairUnfence}, a.Repairs...)
				return a, nil
			}
		}
	}
	if err == nil && d.On(deviation.PartsMustBeStrings) && !partsAreStrings(raw) {
		return action.Action{}, &action.ParseError{Reason: "the reflection or the plan is not a string"}
	}
	return a, err
}

// actionsKeyTaken is deviation ActionsKeyTaken: an "actions" field
// beside an action is dropped, and a list of one call becomes the action.
func actionsKeyTaken(raw string) (string, bool) {
	var top map[string]any
	if json.Unmarshal([]byte(strings.TrimSpace(raw)), &top) != nil {
		return "", false
	}
	list, isList := top["actions"].([]any)
	switch {
	case top["action"] != nil:
	case isList && len(list) == 1:
		top["action"] = list[0]
	default:
		return "", false
	}
	delete(top, "actions")
	b, err := json.Marshal(top)
	return string(b), err == nil
}

// partsAreStrings is the check deviation PartsMustBeStrings adds: a
// reflection or plan present and not null must be a string.
func partsAreStrings(raw string) bool {
	var top map[string]any
	if json.Unmarshal([]byte(strings.TrimSpace(raw)), &top) != nil {
		return true
	}
	for _, key := range []string{"reflection", "plan"} {
		if v, ok := top[key]; ok && v != nil {
			if _, isString := v.(string); !isString {
				return false
			}
		}
	}
	return true
}

// firstCall is deviation SeveralCallsFirst: it keeps the first of several
// calls in one output (the first object of several, or the first element
// of an action array), as a port that splits native tool calls might.
func firstCall(raw string) (string, bool) {
	text := strings.TrimSpace(raw)
	text = strings.TrimPrefix(strings.TrimPrefix(text, "```json"), "```")
	dec := json.NewDecoder(strings.NewReader(text))
	var top map[string]any
	if dec.Decode(&top) != nil {
		return "", false
	}
	for _, key := range []string{"action", "actions"} {
		if list, ok := top[key].([]any); ok && len(list) > 0 {
			top["action"] = list[0]
			delete(top, "actions")
		}
	}
	b, err := json.Marshal(top)
	return string(b), err == nil
}

// settle turns one model output into a settled step, journals it, and asks
// the judge. done is true when the run ended (end is then set).
func (k *kernel) settle(ctx context.Context, st Step, mode settleMode) (End, bool, error) {
	act, perr := k.decide(st.ModelOutput)
	st.Action = ActionRecord{Kind: act.Kind, Tool: act.Tool, Code: act.Code, Repairs: nonNil(act.Repairs)}
	if act.HasArgs {
		st.Action.Arguments = act.Arguments
	}
	ev := events.Event{Type: events.TypeModelStep, Step: st.Index, RawOutput: st.ModelOutput, Repairs: act.Repairs}
	if perr != nil {
		st.Action = ActionRecord{Kind: action.KindNone, Repairs: []string{}, Error: perr.Error()}
		ev.Error = perr.Error()
	} else if !k.req.dev.On(deviation.RepairedDecisionMissing) {
		ev.Decision = decisionView(act)
	}
	k.stream.Emit(ev)

	var out tools.ActionOutcome
	settled := events.Event{Step: st.Index, Tool: act.Tool}
	completed := false
	switch {
	case perr != nil:
		// 0003.D7: a decision failure settles like an invalid call.
		out = tools.ActionOutcome{Status: tools.StatusNotExecuted, Observation: perr.Error(), ObservationIsSynthetic: true}
		settled.Type = events.TypeDecisionFailed
		if _, derived := k.req.executor.(*tools.RegistryExecutor); !derived && k.req.dev.On(deviation.DecisionFailureToExecutor) {
			var err error
			if out, err = k.req.executor.Execute(ctx, action.Action{Kind: action.KindNone}); err != nil {
				return End{}, true, k.interrupt(st.Index, "tool_call", "", err)
			}
		}
	default:
		if act.Kind == action.KindToolCall {
			settled.Type = events.TypeToolCall
			_, derived := k.req.executor.(*tools.RegistryExecutor)
			verr := k.req.tools.Validate(act)
			if verr != nil && !act.HasArgs && k.req.dev.On(deviation.BareCallAccepted) {
				act.Arguments, act.HasArgs = map[string]any{}, true
				verr = k.req.tools.Validate(act)
			}
			if verr != nil && k.req.dev.On(deviation.StringNumbersCoerced) {
				if coerced, ok := coerceNumbers(act.Arguments); ok {
					try := act
					try.Arguments = coerced
					if k.req.tools.Validate(try) == nil {
						act, verr = try, nil
					}
				}
			}
			act, verr = k.deviateValidation(act, verr)
			if !derived && k.req.dev.On(deviation.ValidationSkipped) {
				verr = nil
			}
			if verr != nil && derived && k.req.dev.On(deviation.HandlerRunsOnInvalid) {
				// The handler is called first; validation only decides
				// the outcome afterwards.
				re := k.req.executor.(*tools.RegistryExecutor)
				if _, _, err := re.Dispatch(ctx, act); err != nil && isCancel(ctx, err) {
					return End{}, true, k.interrupt(st.Index, "tool_call", act.Tool, err)
				}
			}
			if verr != nil {
				// 0003.D4: validation happens before any executor.
				out = tools.ActionOutcome{Status: tools.StatusNotExecuted, Observation: verr.Error(), ObservationIsSynthetic: true}
				break
			}
		} else {
			settled.Type = events.TypeCodeAction
		}
		intent := journal.Record{Type: journal.TypeActionIntent, Step: st.Index, Tool: act.Tool, Arguments: act.Arguments, Replay: string(k.replayPolicy(act))}
		intentLate := k.req.dev.On(deviation.IntentAfterAction)
		if mode == settleFresh && !intentLate {
			if err := k.write(intent); err != nil {
				return End{}, false, err
			}
		}
		var rep tools.CallReport
		var err error
		if re, ok := k.req.executor.(*tools.RegistryExecutor); ok {
			// Validated above against the visible registry, which is the
			// executor's own (0006.D3); no need to validate twice.
			out, rep, err = re.Dispatch(ctx, act)
		} else {
			out, err = k.req.executor.Execute(ctx, act)
		}
		if err != nil && isCancel(ctx, err) && k.req.dev.On(deviation.CancelAsObservation) {
			out, err = tools.ActionOutcome{Status: tools.StatusExecuted, Observation: "Cancelled: " + err.Error()}, nil
		}
		if err != nil {
			if isCancel(ctx, err) {
				return End{}, true, k.interrupt(st.Index, "tool_call", act.Tool, err)
			}
			return End{}, false, fmt.Errorf("step %d: action executor failed (an executor may only fail by cancellation): %w", st.Index, err)
		}
		if mode == settleFresh && intentLate {
			if err := k.write(intent); err != nil {
				return End{}, false, err
			}
		}
		out = k.deviateOutcome(act, out, rep)
		settled.ErrorType = rep.ErrorType
		handlerErr := rep.ErrorType != "" && !k.req.dev.On(deviation.ToolErrorCompletes)
		if act.Kind == action.KindToolCall && out.Status == tools.StatusExecuted && !handlerErr {
			// Lookup fails only under a deviation that skips validation
			// (an unknown tool reaching a project executor).
			if spec, ok := k.req.tools.Lookup(act.Tool); ok {
				completed = spec.CompletesRun
			}
		}
	}
	st.Outcome = out
	switch out.Status {
	case tools.StatusExecuted:
		st.HistoryObservation = out.Observation
		k.count.EffectiveSteps++
	case tools.StatusEnvError:
		st.HistoryObservation = k.req.synthetic.EnvError
	default:
		st.HistoryObservation = k.req.synthetic.NotExecuted
		if k.req.dev.On(deviation.InvalidCallsEffective) {
			k.count.EffectiveSteps++
		}
	}
	if out.Status != tools.StatusExecuted && k.req.dev.On(deviation.HistoryUsesExecutorText) {
		st.HistoryObservation = out.Observation
	}
	blank := perr != nil && strings.TrimSpace(st.ModelOutput) == "" && k.req.dev.On(deviation.EmptyOutputUncounted)
	if (perr == nil || !k.req.dev.On(deviation.DecisionFailureUncount)) && !blank {
		k.count.TotalSteps++
	}
	st.Counters = k.count
	st.Replayed = mode == settleReplay
	st.ToolCompletedRun = completed
	if k.journal != nil {
		payload, err := json.Marshal(st)
		if err != nil {
			return End{}, false, fmt.Errorf("step %d: encode step record: %w", st.Index, err)
		}
		if err := k.write(journal.Record{Type: journal.TypeActionResult, Step: st.Index, Payload: payload}); err != nil {
			return End{}, false, err
		}
	}
	k.steps = append(k.steps, st)
	if err := k.addTurn(st); err != nil {
		return End{}, false, fmt.Errorf("step %d: assemble context: %w", st.Index, err)
	}
	settled.Status = string(out.Status)
	settled.Observation = out.Observation
	settled.Replayed = st.Replayed
	k.stream.Emit(settled)

	reason := k.judge(Verdict{Outcome: out, ToolCompletedRun: completed, Counters: k.count, Budget: k.req.budget})
	if reason == "" {
		return End{}, false, nil
	}
	return k.endWith(reason), true, nil
}

// judge is Judge, with the request's deviations from it.
func (k *kernel) judge(v Verdict) StopReason {
	d := k.req.dev
	if d.On(deviation.EnvErrorContinues) && v.Outcome.Status == tools.StatusEnvError {
		v.Outcome.Status = tools.StatusNotExecuted
	}
	if d.On(deviation.EnvCompletionIgnored) {
		v.Outcome.EnvReportedCompletion = false
	}
	if d.On(deviation.EnvCompletionNeedsExecuted) && v.Outcome.Status == tools.StatusNotExecuted {
		v.Outcome.EnvReportedCompletion = false
	}
	if d.On(deviation.BothCompletionsToolWins) && v.ToolCompletedRun && v.Outcome.EnvReportedCompletion && v.Outcome.Status != tools.StatusEnvError {
		return GoalReachedByTool
	}
	if d.On(deviation.CapsBeforeCompletion) {
		switch {
		case v.Counters.EffectiveSteps >= v.Budget.MaxEffectiveSteps:
			return EffectiveBudgetExhausted
		case v.Counters.TotalSteps >= v.Budget.MaxTotalSteps:
			return TotalBudgetExhausted
		}
	}
	r := Judge(v)
	if d.On(deviation.CompletionMerged) && r == GoalReachedByTool {
		return GoalReachedByEnvironment
	}
	return r
}

// deviateOutcome applies the request's deviations from 0008.D4's table.
func (k *kernel) deviateOutcome(act action.Action, out tools.ActionOutcome, rep tools.CallReport) tools.ActionOutcome {
	d := k.req.dev
	_, derived := k.req.executor.(*tools.RegistryExecutor)
	ordinary := rep.ErrorType != "" && rep.ErrorType != "ToolEnvironmentError" && out.Status == tools.StatusExecuted
	normal := derived && rep.HandlerCalled && rep.ErrorType == "" && out.Status == tools.StatusExecuted
	switch {
	case ordinary && d.On(deviation.HandlerErrorNotExecuted):
		out.Status, out.ObservationIsSynthetic = tools.StatusNotExecuted, true
	case ordinary && d.On(deviation.StackInObservation):
		out.Observation += "\n\tat handler (tools/handler.go:42)"
	case ordinary && d.On(deviation.ErrorMessageOnly):
		out.Observation = strings.TrimPrefix(out.Observation, rep.ErrorType+": ")
	case ordinary && d.On(deviation.ErrorFirstLineOnly):
		out.Observation, _, _ = strings.Cut(out.Observation, "\n")
	case normal && strings.TrimSpace(out.Observation) == "" && d.On(deviation.EmptyReturnPlaceholder):
		out.Observation = "(no output)"
	case out.Status == tools.StatusEnvError && d.On(deviation.EnvErrorExecuted):
		out.Status = tools.StatusExecuted
	case derived && act.Kind != action.KindToolCall && d.On(deviation.NoToolCallExecuted):
		out = tools.ActionOutcome{Status: tools.StatusExecuted}
	case normal && d.On(deviation.NormalReturnSynthetic):
		out.ObservationIsSynthetic = true
	}
	if normal && d.On(deviation.CompletesRunAsEnvSignal) {
		if spec, ok := k.req.tools.Lookup(act.Tool); ok && spec.CompletesRun {
			out.EnvReportedCompletion = true
		}
	}
	return out
}

// deviateValidation applies the deviations of issue 37 from 0006.D6 to a
// call's validation: verr is what validation said.
func (k *kernel) deviateValidation(act action.Action, verr error) (action.Action, error) {
	d := k.req.dev
	if verr != nil && !act.HasArgs && d.On(deviation.NoParametersBareCall) {
		if spec, ok := k.req.tools.Lookup(act.Tool); ok && spec.Parameters == nil {
			act.Arguments, act.HasArgs = map[string]any{}, true
			verr = k.req.tools.Validate(act)
		}
	}
	if verr != nil && d.On(deviation.BooleansAreNumbers) {
		try := act
		try.Arguments = boolsAsNumbers(act.Arguments)
		if k.req.tools.Validate(try) == nil {
			verr = nil // the model's true reaches the handler as written
		}
	}
	if verr == nil && d.On(deviation.DefaultsFilled) {
		act.Arguments = withDefaults(k.req.tools, act.Tool, act.Arguments)
	}
	return act, verr
}

// boolsAsNumbers is deviation BooleansAreNumbers: each boolean argument
// read as the number Python's bool is.
func boolsAsNumbers(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = v
		if b, ok := v.(bool); ok {
			out[k] = json.Number(map[bool]string{true: "1", false: "0"}[b])
		}
	}
	return out
}

// withDefaults is deviation DefaultsFilled: each top-level property the
// call left out gets the schema's default.
func withDefaults(reg *tools.ToolRegistry, tool string, args map[string]any) map[string]any {
	spec, ok := reg.Lookup(tool)
	if !ok {
		return args
	}
	props, _ := spec.Parameters["properties"].(map[string]any)
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = v
	}
	for name, p := range props {
		if pm, _ := p.(map[string]any); pm != nil {
			d, has := pm["default"]
			if !has {
				continue
			}
			if _, given := out[name]; !given {
				out[name] = d
			}
		}
	}
	return out
}

// coerceNumbers is deviation StringNumbersCoerced: every string argument
// that reads as a number becomes that number.
func coerceNumbers(args map[string]any) (map[string]any, bool) {
	out := make(map[string]any, len(args))
	changed := false
	for k, v := range args {
		out[k] = v
		if s, ok := v.(string); ok {
			if _, err := strconv.ParseFloat(s, 64); err == nil {
				out[k], changed = json.Number(s), true
			}
		}
	}
	return out, changed
}

func (k *kernel) replayPolicy(a action.Action) tools.ReplayPolicy {
	if a.Kind == action.KindCode && k.req.dev.On(deviation.CodeActionReplayed) {
		return tools.ReplaySafe
	}
	if a.Kind == action.KindToolCall {
		if spec, ok := k.req.tools.Lookup(a.Tool); ok {
			return spec.Replay()
		}
	}
	return tools.ReplayNever
}

// sinkFailures is the count of failed event deliveries (0011.D2.count).
func (k *kernel) sinkFailures() int {
	if k.req.dev.On(deviation.SinkFailuresUncounted) {
		return 0
	}
	n, _ := k.stream.Failures()
	return n
}

// finish writes the run's end and returns the result.
func (k *kernel) finish(end End) (*Result, error) {
	payload, err := json.Marshal(end)
	if err != nil {
		return nil, fmt.Errorf("encode end record: %w", err)
	}
	early := k.req.dev.On(deviation.RunEndedBeforeRecord)
	if early {
		k.stream.Emit(events.Event{Type: events.TypeRunEnded, Reason: string(end.Reason)})
	}
	if !k.req.dev.On(deviation.NoRunEndRecord) {
		if err := k.write(journal.Record{Type: journal.TypeRunEnd, Payload: payload}); err != nil {
			return k.stopped(err)
		}
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
