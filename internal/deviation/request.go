package deviation

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/polyloop/polyloop-conform/reference/action"
	"github.com/polyloop/polyloop-conform/reference/assembly"
	"github.com/polyloop/polyloop-conform/reference/run"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

// The wrappers around a request's parser, stop judge, executor, measure
// and parts.

// parser wraps the request's parser, the language's own when it has none.
func parser(f func(p action.Parser, c *run.RequestConfig) action.Parser) func(*run.RequestConfig, run.RequestConfig) error {
	return func(c *run.RequestConfig, _ run.RequestConfig) error {
		p := c.Parser
		if p == nil {
			p = run.ParserFor(c.Language)
		}
		c.Parser = f(p, c)
		return nil
	}
}

// codeAsJSON parses every output as a JSON action (0003.D5).
func codeAsJSON(action.Parser, *run.RequestConfig) action.Parser { return action.ParseJSON }

// wholeFenceOnly strips a code fence only when it wraps the whole output,
// so prose before a fence is run as code (0003.D5.fence).
func wholeFenceOnly(p action.Parser, c *run.RequestConfig) action.Parser {
	if c.Language != run.LanguageCode {
		return p
	}
	return func(raw string) (action.Action, error) {
		text := strings.TrimSpace(raw)
		var repairs []string
		if body, ok := action.Unfence(text); ok {
			text = body
			repairs = append(repairs, action.RepairUnfence)
		}
		if strings.TrimSpace(text) == "" {
			return action.Action{}, &action.ParseError{Reason: "the code action is empty"}
		}
		return action.Action{Kind: action.KindCode, Code: text, Repairs: repairs}, nil
	}
}

// firstCallTaken keeps the first of several calls in one output (0003.D7.several).
func firstCallTaken(p action.Parser, _ *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if err != nil {
			if first, ok := firstCall(raw); ok {
				return action.ParseJSON(first)
			}
		}
		return a, err
	}
}

// firstCall is the first of several calls in one output (the first object
// of several, or the first element of an action array), as a port that
// splits native tool calls might take it.
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

// notCollapsed drops arguments written beside the tool name instead of
// collapsing them (0003.D6).
func notCollapsed(p action.Parser, _ *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if i := slices.Index(a.Repairs, action.RepairCollapseFlattened); i >= 0 {
			a.Arguments, a.HasArgs = nil, false
			a.Repairs = slices.Delete(a.Repairs, i, i+1)
		}
		return a, err
	}
}

// repairsUnnamed applies the repairs without naming them (0003.D6.names).
func repairsUnnamed(p action.Parser, _ *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		a.Repairs = nil
		return a, err
	}
}

// bareCallAccepted reads a call without arguments as one with an empty
// object when the schema allows {} (0003.D6.bare-call).
func bareCallAccepted(p action.Parser, c *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if err == nil && a.Kind == action.KindToolCall && !a.HasArgs {
			try := a
			try.Arguments, try.HasArgs = map[string]any{}, true
			if c.Tools.Validate(try) == nil {
				return try, nil
			}
		}
		return a, err
	}
}

// numbersCoerced turns numeric strings into numbers when that makes the
// call valid (0006.D6.no-coercion).
func numbersCoerced(p action.Parser, c *run.RequestConfig) action.Parser {
	return func(raw string) (action.Action, error) {
		a, err := p(raw)
		if err != nil || a.Kind != action.KindToolCall || c.Tools.Validate(a) == nil {
			return a, err
		}
		try := a
		try.Arguments = map[string]any{}
		changed := false
		for k, v := range a.Arguments {
			try.Arguments[k] = v
			if s, ok := v.(string); ok {
				if _, err := strconv.ParseFloat(s, 64); err == nil {
					try.Arguments[k], changed = json.Number(s), true
				}
			}
		}
		if changed && c.Tools.Validate(try) == nil {
			return try, nil
		}
		return a, nil
	}
}

// judge wraps the request's stop judge, Judge when it has none.
func judge(f func(j func(run.Verdict) run.StopReason) func(run.Verdict) run.StopReason) func(*run.RequestConfig, run.RequestConfig) error {
	return func(c *run.RequestConfig, _ run.RequestConfig) error {
		j := c.Judge
		if j == nil {
			j = run.Judge
		}
		c.Judge = f(j)
		return nil
	}
}

// verdict changes what the judge sees.
func verdict(f func(v *run.Verdict)) func(*run.RequestConfig, run.RequestConfig) error {
	return judge(func(j func(run.Verdict) run.StopReason) func(run.Verdict) run.StopReason {
		return func(v run.Verdict) run.StopReason {
			f(&v)
			return j(v)
		}
	})
}

// capsFirst judges the caps before completion (0004.D3.order).
func capsFirst(j func(run.Verdict) run.StopReason) func(run.Verdict) run.StopReason {
	return func(v run.Verdict) run.StopReason {
		switch {
		case v.Counters.EffectiveSteps >= v.Budget.MaxEffectiveSteps:
			return run.EffectiveBudgetExhausted
		case v.Counters.TotalSteps >= v.Budget.MaxTotalSteps:
			return run.TotalBudgetExhausted
		}
		return j(v)
	}
}

// toolWins lets the tool's completion win over the environment's
// (0004.D3.both).
func toolWins(j func(run.Verdict) run.StopReason) func(run.Verdict) run.StopReason {
	return func(v run.Verdict) run.StopReason {
		if v.ToolCompletedRun && v.Outcome.EnvReportedCompletion && v.Outcome.Status != tools.StatusEnvError {
			return run.GoalReachedByTool
		}
		return j(v)
	}
}

// completionMerged reports a tool's completion as the environment's (0006.D5).
func completionMerged(j func(run.Verdict) run.StopReason) func(run.Verdict) run.StopReason {
	return func(v run.Verdict) run.StopReason {
		if r := j(v); r != run.GoalReachedByTool {
			return r
		}
		return run.GoalReachedByEnvironment
	}
}

// zeroCapsAccepted accepts a cap below 1: the request gets caps it can
// check, the judge the ones asked for (0004.D1.min).
func zeroCapsAccepted(c *run.RequestConfig, _ run.RequestConfig) error {
	asked := c.Budget
	c.Budget.MaxEffectiveSteps = max(c.Budget.MaxEffectiveSteps, 1)
	c.Budget.MaxTotalSteps = max(c.Budget.MaxTotalSteps, 1)
	return verdict(func(v *run.Verdict) { v.Budget = asked })(c, run.RequestConfig{})
}

// registryIdentity compares registries by identity, so one narrowed twice
// to the same names is a mismatch (0006.D3.same).
func registryIdentity(c *run.RequestConfig, _ run.RequestConfig) error {
	if d, ok := c.Executor.(run.Derived); ok && d.Registry() != c.Tools && d.Registry().SameTools(c.Tools) {
		return &run.AssemblyError{Kind: run.KindRegistryMismatch,
			Message: "run request: the RegistryExecutor was derived from a different registry than the visible tools; call Executor() on the registry you pass as Tools (after RestrictTo, not before)"}
	}
	return nil
}

// measure wraps the request's measure, RuneCount when it has none.
func measure(f func(m assembly.Measure) assembly.Measure) func(*run.RequestConfig, run.RequestConfig) error {
	return func(c *run.RequestConfig, _ run.RequestConfig) error {
		m := c.Measure
		if m == nil {
			m = assembly.RuneCount
		}
		c.Measure = f(m)
		return nil
	}
}

// blocksRenamed measures the observation block as tool_result (0010.D5.names).
func blocksRenamed(m assembly.Measure) assembly.Measure {
	return func(t assembly.BlockType, text string) (int, error) {
		if t == assembly.BlockObservation {
			t = "tool_result"
		}
		return m(t, text)
	}
}

// unknownZero counts a block the measure cannot measure as 0 (0010.D5).
func unknownZero(m assembly.Measure) assembly.Measure {
	return func(t assembly.BlockType, text string) (int, error) {
		if n, err := m(t, text); err == nil {
			return n, nil
		}
		return 0, nil
	}
}

// fromFirst takes a per-request part from the first request, as a port
// that put it on the definition would (0003.D1).
func fromFirst(f func(c *run.RequestConfig, first run.RequestConfig)) func(*run.RequestConfig, run.RequestConfig) error {
	return func(c *run.RequestConfig, first run.RequestConfig) error {
		f(c, first)
		return nil
	}
}

// executor wraps the request's executor.
func executor(f func(ex run.ActionExecutor, c *run.RequestConfig) run.ActionExecutor) func(*run.RequestConfig, run.RequestConfig) error {
	return func(c *run.RequestConfig, _ run.RequestConfig) error {
		c.Executor = f(c.Executor, c)
		return nil
	}
}

// unrecognised hides that the executor was derived from a registry, so the
// request cannot check which (0008.D4, 0006.D3).
func unrecognised(ex run.ActionExecutor, _ *run.RequestConfig) run.ActionExecutor {
	if d, ok := ex.(run.Dispatcher); ok {
		return hidden{ex, d}
	}
	return ex
}

type hidden struct {
	run.ActionExecutor
	d run.Dispatcher
}

func (h hidden) Dispatch(ctx context.Context, a action.Action) (tools.ActionOutcome, tools.CallReport, error) {
	return h.d.Dispatch(ctx, a)
}

// outcome changes what an executor reports, derived or not.
type outcome func(ctx context.Context, a action.Action, out tools.ActionOutcome, rep tools.CallReport, err error) (tools.ActionOutcome, tools.CallReport, error)

func outcomes(f outcome) func(*run.RequestConfig, run.RequestConfig) error {
	return executor(func(ex run.ActionExecutor, _ *run.RequestConfig) run.ActionExecutor {
		if re, ok := ex.(*tools.RegistryExecutor); ok {
			return derivedOutcome{re, f}
		}
		return projectOutcome{ex, f}
	})
}

// derivedOutcomes changes what a derived executor reports.
func derivedOutcomes(f outcome) func(*run.RequestConfig, run.RequestConfig) error {
	return executor(func(ex run.ActionExecutor, _ *run.RequestConfig) run.ActionExecutor {
		if re, ok := ex.(*tools.RegistryExecutor); ok {
			return derivedOutcome{re, f}
		}
		return ex
	})
}

type derivedOutcome struct {
	*tools.RegistryExecutor
	f outcome
}

func (d derivedOutcome) Dispatch(ctx context.Context, a action.Action) (tools.ActionOutcome, tools.CallReport, error) {
	out, rep, err := d.RegistryExecutor.Dispatch(ctx, a)
	return d.f(ctx, a, out, rep, err)
}

type projectOutcome struct {
	ex run.ActionExecutor
	f  outcome
}

func (p projectOutcome) Execute(ctx context.Context, a action.Action) (tools.ActionOutcome, error) {
	out, err := p.ex.Execute(ctx, a)
	out, _, err = p.f(ctx, a, out, tools.CallReport{}, err)
	return out, err
}

// ordinaryError changes the outcome of a handler's ordinary error (0008.D4.handler-error).
func ordinaryError(f func(out *tools.ActionOutcome, rep tools.CallReport)) outcome {
	return func(_ context.Context, _ action.Action, out tools.ActionOutcome, rep tools.CallReport, err error) (tools.ActionOutcome, tools.CallReport, error) {
		if err == nil && rep.ErrorType != "" && rep.ErrorType != "ToolEnvironmentError" && out.Status == tools.StatusExecuted {
			f(&out, rep)
		}
		return out, rep, err
	}
}

// normalReturn changes the outcome of a handler's normal return (0008.D4.normal-return).
func normalReturn(f func(a action.Action, out *tools.ActionOutcome)) outcome {
	return func(_ context.Context, a action.Action, out tools.ActionOutcome, rep tools.CallReport, err error) (tools.ActionOutcome, tools.CallReport, error) {
		if err == nil && rep.HandlerCalled && rep.ErrorType == "" && out.Status == tools.StatusExecuted {
			f(a, &out)
		}
		return out, rep, err
	}
}

// envErrorExecuted reports a ToolEnvironmentError EXECUTED (0008.D4.env-error).
func envErrorExecuted(_ context.Context, _ action.Action, out tools.ActionOutcome, rep tools.CallReport, err error) (tools.ActionOutcome, tools.CallReport, error) {
	if err == nil && out.Status == tools.StatusEnvError {
		out.Status = tools.StatusExecuted
	}
	return out, rep, err
}

// noToolCallExecuted has the derived executor report an action without a
// tool call EXECUTED with an empty observation (0008.D4.no-tool-call).
func noToolCallExecuted(_ context.Context, a action.Action, out tools.ActionOutcome, rep tools.CallReport, err error) (tools.ActionOutcome, tools.CallReport, error) {
	if err == nil && a.Kind != action.KindToolCall {
		out = tools.ActionOutcome{Status: tools.StatusExecuted}
	}
	return out, rep, err
}

// cancelAsObservation settles a cancelled call as an EXECUTED observation
// (0008.D4.cancelled).
func cancelAsObservation(ctx context.Context, _ action.Action, out tools.ActionOutcome, rep tools.CallReport, err error) (tools.ActionOutcome, tools.CallReport, error) {
	if err != nil && cancelled(ctx, err) {
		return tools.ActionOutcome{Status: tools.StatusExecuted, Observation: "Cancelled: " + err.Error()}, rep, nil
	}
	return out, rep, err
}

// toolErrorCompletes hides the handler error of a completes_run tool from
// the judge, so its call completes the run (0004.D3.tool-error).
func toolErrorCompletes(c *run.RequestConfig, first run.RequestConfig) error {
	return outcomes(func(_ context.Context, a action.Action, out tools.ActionOutcome, rep tools.CallReport, err error) (tools.ActionOutcome, tools.CallReport, error) {
		if spec, ok := c.Tools.Lookup(a.Tool); ok && spec.CompletesRun {
			rep.ErrorType = ""
		}
		return out, rep, err
	})(c, first)
}

// completesRunAsEnvSignal sets env_reported_completion for a completes_run
// tool's normal return (0008.D4.constants).
func completesRunAsEnvSignal(c *run.RequestConfig, first run.RequestConfig) error {
	return outcomes(normalReturn(func(a action.Action, out *tools.ActionOutcome) {
		if spec, ok := c.Tools.Lookup(a.Tool); ok && spec.CompletesRun {
			out.EnvReportedCompletion = true
		}
	}))(c, first)
}

// firstMissingOnly names only the first spec without a handler (0008.D2.names).
func firstMissingOnly(err error) error {
	var ae *run.AssemblyError
	if errors.As(err, &ae) && ae.Kind == run.KindMissingHandler && len(ae.Tools) > 1 {
		ae.Tools = ae.Tools[:1]
	}
	return err
}

// onlyZeroCapsRefused refuses only a cap of exactly 0 and accepts a
// negative one (0004.D1.min).
func onlyZeroCapsRefused(c *run.RequestConfig, first run.RequestConfig) error {
	if c.Budget.MaxEffectiveSteps == 0 || c.Budget.MaxTotalSteps == 0 {
		return nil // the request refuses it, as the design does
	}
	return zeroCapsAccepted(c, first)
}
