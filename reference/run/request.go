package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/polyloop/polyloop-conform/reference/action"
	"github.com/polyloop/polyloop-conform/reference/assembly"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

// Definition is the part of an agent that is the same for every run: its
// run fragment and observation template. Several requests may share one
// (0003.D1: the GovDoc phases of 50, 50 and 16 steps use one definition).
// The goal fragment is not here: it changes more often than the injections,
// so it belongs to each request (0003.D1.goal).
type Definition struct {
	RunFragment         string
	ObservationTemplate string
}

// Budget holds the two caps; each must be at least 1 (0004.D1).
type Budget struct {
	MaxEffectiveSteps int
	MaxTotalSteps     int
}

// SyntheticObservations are the fixed texts the history shows for actions
// that did not execute or hit an environment error, so two runs of one
// configuration show the model the same words (0007.D2).
type SyntheticObservations struct {
	NotExecuted string
	EnvError    string
}

// The texts used for any SyntheticObservations field a request leaves
// empty (0007.D2.defaults).
const (
	DefaultNotExecuted = "The action was not executed."
	DefaultEnvError    = "The environment reported an error; the action did not complete."
)

// Language is a run's action language.
type Language string

// The two action languages (0003.D5).
const (
	LanguageJSON Language = "json"
	LanguageCode Language = "code"
)

// Model is the model-call seam. It must return the context's error when the
// context is cancelled during the call.
type Model interface {
	Complete(ctx context.Context, input []assembly.Message) (string, error)
}

// ModelFunc adapts a function to Model.
type ModelFunc func(ctx context.Context, input []assembly.Message) (string, error)

// Complete calls f.
func (f ModelFunc) Complete(ctx context.Context, in []assembly.Message) (string, error) {
	return f(ctx, in)
}

// ActionExecutor is the action-execution seam. Returning an error means the
// call was cancelled; every other result is an ActionOutcome.
type ActionExecutor interface {
	Execute(ctx context.Context, a action.Action) (tools.ActionOutcome, error)
}

// Dispatcher is an executor that runs calls the kernel has already
// validated and reports what happened inside the handler, as
// *tools.RegistryExecutor does (0008.D4): the stop judge needs to know
// whether a completes_run tool's handler failed, and audit wants the
// error's type. The kernel calls Dispatch instead of Execute on one.
type Dispatcher interface {
	Dispatch(ctx context.Context, a action.Action) (tools.ActionOutcome, tools.CallReport, error)
}

// Derived is an executor derived from a tool registry, as
// *tools.RegistryExecutor is; the request checks that it dispatches
// exactly the visible tools (0006.D3).
type Derived interface {
	Registry() *tools.ToolRegistry
}

// ParserFor is the design's parser of an action language (0003.D5).
func ParserFor(l Language) action.Parser {
	if l == LanguageCode {
		return action.ParseCode
	}
	return action.ParseJSON
}

// RequestConfig is what a caller fills in to build a Request.
type RequestConfig struct {
	Definition *Definition
	// GoalFragment is this run's goal, placed after the injections
	// (0010.D2); GovDoc's phases share a definition but not a goal.
	GoalFragment string
	Budget       Budget
	Tools        *tools.ToolRegistry
	Executor     ActionExecutor
	Synthetic    SyntheticObservations
	Injections   map[string][]string
	Language     Language
	Measure      assembly.Measure
	// Parser reads each model output as an action; nil is the language's
	// own (ParserFor). A kernel embedding may pass one that logs or
	// tolerates a model's quirks; it decides what the step records.
	Parser action.Parser
	// Judge decides after each settlement whether the run ends; nil is
	// Judge, the design's order (0004.D3).
	Judge func(Verdict) StopReason
	// Assembler lays out each step's context; nil is assembly.Standard.
	Assembler assembly.Assembler
}

// Request is one run's complete, checked configuration.
type Request struct {
	def        Definition
	goal       string
	budget     Budget
	tools      *tools.ToolRegistry
	executor   ActionExecutor
	synthetic  SyntheticObservations
	injections map[string][]string
	measure    assembly.Measure
	parse      action.Parser
	judge      func(Verdict) StopReason
	assembler  assembly.Assembler
}

// AssemblyError is a refusal to build a run: nothing was sent to a model.
// Kind is one of the AssemblyKind constants; Tools names the tools concerned.
type AssemblyError struct {
	Kind    string
	Tools   []string
	Message string
	Err     error
}

func (e *AssemblyError) Error() string { return e.Message }
func (e *AssemblyError) Unwrap() error { return e.Err }

// Assembly error kinds.
const (
	KindMissingHandler      = "missing_handler"
	KindRegistryMismatch    = "registry_mismatch"
	KindUnknownTool         = "unknown_tool"
	KindDuplicateTool       = "duplicate_tool"
	KindInvalidSchema       = "invalid_schema"
	KindTemplate            = "template_without_placeholder"
	KindUnmeasurableBlock   = "unmeasurable_block"
	KindInvalidBudget       = "invalid_budget"
	KindMissingPart         = "missing_part"
	KindUnsupportedLanguage = "unsupported_language"
)

// AsAssemblyError turns an error from registry construction, RestrictTo or
// Executor into an AssemblyError; other errors are returned unchanged.
func AsAssemblyError(err error) error {
	var me *tools.MissingHandlersError
	if errors.As(err, &me) {
		return &AssemblyError{Kind: KindMissingHandler, Tools: me.Tools, Message: me.Error(), Err: err}
	}
	var re *tools.RegistryError
	if errors.As(err, &re) {
		return &AssemblyError{Kind: re.Kind, Tools: re.Tools, Message: re.Error(), Err: err}
	}
	return err
}

// NewRequest checks a configuration and returns a Request, or an
// *AssemblyError saying what to fix.
func NewRequest(c RequestConfig) (*Request, error) {
	if c.Definition == nil || c.Tools == nil || c.Executor == nil {
		return nil, &AssemblyError{Kind: KindMissingPart, Message: "run request: Definition, Tools and Executor are all required"}
	}
	if c.Budget.MaxEffectiveSteps < 1 || c.Budget.MaxTotalSteps < 1 {
		return nil, &AssemblyError{Kind: KindInvalidBudget, Message: fmt.Sprintf("run request: both budget caps must be at least 1 (effective %d, total %d)", c.Budget.MaxEffectiveSteps, c.Budget.MaxTotalSteps)}
	}
	if d, ok := c.Executor.(Derived); ok && !d.Registry().SameTools(c.Tools) {
		// 0006.D3: a derived executor must dispatch exactly the tools the model sees.
		return nil, &AssemblyError{Kind: KindRegistryMismatch, Tools: symmetricDifference(d.Registry(), c.Tools),
			Message: "run request: the RegistryExecutor was derived from a different registry than the visible tools; call Executor() on the registry you pass as Tools (after RestrictTo, not before)"}
	}
	asm := c.Assembler
	if asm == nil {
		asm = assembly.Standard{}
	}
	tmpl := c.Definition.ObservationTemplate
	if tmpl == "" {
		tmpl = assembly.DefaultTemplate
	}
	if err := asm.CheckTemplate(tmpl); err != nil {
		return nil, &AssemblyError{Kind: KindTemplate, Message: "run request: " + err.Error(), Err: err}
	}
	m := c.Measure
	if m == nil {
		m = assembly.RuneCount
	}
	if err := assembly.ProbeMeasure(m); err != nil {
		return nil, &AssemblyError{Kind: KindUnmeasurableBlock, Message: "run request: " + err.Error(), Err: err}
	}
	lang := c.Language
	if lang == "" {
		lang = LanguageJSON
	}
	if lang != LanguageJSON && lang != LanguageCode {
		return nil, &AssemblyError{Kind: KindUnsupportedLanguage, Message: fmt.Sprintf("run request: action language %q is neither json nor code", lang)}
	}
	syn := c.Synthetic
	if syn.NotExecuted == "" {
		syn.NotExecuted = DefaultNotExecuted
	}
	if syn.EnvError == "" {
		syn.EnvError = DefaultEnvError
	}
	def := *c.Definition
	def.ObservationTemplate = tmpl
	inj := make(map[string][]string, len(c.Injections))
	for k, v := range c.Injections {
		inj[k] = append([]string(nil), v...)
	}
	parse, judge := c.Parser, c.Judge
	if parse == nil {
		parse = ParserFor(lang)
	}
	if judge == nil {
		judge = Judge
	}
	return &Request{def: def, goal: c.GoalFragment, budget: c.Budget, tools: c.Tools, executor: c.Executor, synthetic: syn,
		injections: inj, measure: m, parse: parse, judge: judge, assembler: asm}, nil
}

func symmetricDifference(a, b *tools.ToolRegistry) []string {
	in := map[string]int{}
	for _, n := range a.Names() {
		in[n] |= 1
	}
	for _, n := range b.Names() {
		in[n] |= 2
	}
	var out []string
	for n, v := range in {
		if v != 3 {
			out = append(out, n)
		}
	}
	sortStrings(out)
	return out
}
