// Package deviation names ways a PolyLoop kernel can depart from the
// design and makes the reference depart that way. They are genuine
// mistakes a port could make, not crashes; polyloop-conform selfcheck runs
// the suite once per deviation to prove the suite notices. A zero Set
// turns nothing on.
//
// The table in All holds every deviation beside the decision it breaks
// and the Wrap that makes it: a wrapper around a seam the kernel already
// swaps (the model, the handlers, the executor's outcome, the parser, the
// stop judge, the context assembler and measure, the audit sinks, the
// journal's file system, the kernel's entry points) or around how a driver
// builds the registry and the request. The few that sit inside the
// kernel's own decisions set a field of run.Departures.
package deviation

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/polyloop/polyloop-conform/reference/action"
	"github.com/polyloop/polyloop-conform/reference/run"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

// Name names a deviation.
type Name string

// The deviations.
const (
	HandlerErrorNotExecuted    Name = "handler-error-not-executed"
	EnvErrorExecuted           Name = "env-error-executed"
	StackInObservation         Name = "stack-in-observation"
	InvalidCallsEffective      Name = "invalid-calls-effective"
	EnvErrorContinues          Name = "env-error-continues"
	CapsBeforeCompletion       Name = "caps-before-completion"
	CompletionMerged           Name = "completion-merged"
	SystemMessage              Name = "system-message"
	InjectionsUnsorted         Name = "injections-unsorted"
	EmptyInjectionKept         Name = "empty-injection-kept"
	NoPlaceholderCheck         Name = "no-placeholder-check"
	UnknownBlockZero           Name = "unknown-block-zero"
	NeverReplayed              Name = "never-replayed"
	SafeNotReplayed            Name = "safe-not-replayed"
	RecordedEndIgnored         Name = "recorded-end-ignored"
	HistoryUsesExecutorText    Name = "history-uses-executor-text"
	ModelFailureRetried        Name = "model-failure-retried"
	FirstMissingHandlerOnly    Name = "first-missing-handler-only"
	BareCallAccepted           Name = "bare-call-accepted"
	ValidationSkipped          Name = "validation-skipped-for-project-executor"
	ZeroCapsAccepted           Name = "zero-caps-accepted"
	CancelEndsRun              Name = "cancel-ends-run"
	DeadlineIsFailure          Name = "deadline-is-failure"
	LazyHandlerCheck           Name = "lazy-handler-check"
	MismatchAccepted           Name = "registry-mismatch-accepted"
	JournalErrorIgnored        Name = "journal-error-ignored"
	DuplicateNamesAccepted     Name = "duplicate-names-accepted"
	BrokenSchemaAccepted       Name = "broken-schema-accepted"
	UnknownRestrictDropped     Name = "unknown-restrict-names-dropped"
	ContextSizeOffByOne        Name = "context-size-off-by-one"
	SeveralCallsFirst          Name = "several-calls-first-taken"
	PartsMustBeStrings         Name = "plan-and-reflection-must-be-strings"
	DuplicateKeysLastWins      Name = "duplicate-keys-last-wins"
	ActionsKeyTaken            Name = "actions-key-taken"
	EmptyOutputUncounted       Name = "empty-output-uncounted"
	EmptyTurnDropped           Name = "empty-turn-dropped"
	WhitespaceIsEmpty          Name = "whitespace-is-empty"
	InvalidSchemaFirstOnly     Name = "invalid-schema-first-only"
	UnresolvedRefAccepted      Name = "unresolved-ref-accepted"
	NoParametersBareCall       Name = "no-parameters-bare-call-accepted"
	BooleansAreNumbers         Name = "booleans-are-numbers"
	DefaultsFilled             Name = "defaults-filled"
	RunEndedBeforeRecord       Name = "run-ended-before-end-record"
	SinkFailuresPerPhase       Name = "sink-failures-per-phase"
	EmptyReturnPlaceholder     Name = "empty-return-placeholder"
	ErrorFirstLineOnly         Name = "error-message-first-line"
	JSONFenceAfterProse        Name = "json-fence-after-prose-accepted"
	TemplateBracesFormatted    Name = "template-braces-formatted"
	DecisionFailureToExecutor  Name = "decision-failure-to-executor"
	ResumeHistoryObservation   Name = "resume-history-from-observation"
	JournalErrorDropsSteps     Name = "journal-error-drops-steps"
	OnlyZeroCapsRefused        Name = "only-zero-caps-refused"
	EmptyFenceRunAsCode        Name = "empty-fence-run-as-code"
	IntentAfterAction          Name = "intent-after-action"
	ReplayWritesIntent         Name = "replay-writes-second-intent"
	RefusalClearsEnd           Name = "later-refusal-clears-end"
	NoRunEndRecord             Name = "no-run-end-record"
	UnknownWithoutDetail       Name = "unknown-without-detail"
	CodeActionReplayed         Name = "code-action-replayed"
	TornTailRefused            Name = "torn-tail-refused"
	BudgetFromFirstRequest     Name = "budget-from-first-request"
	GoalOnDefinition           Name = "goal-on-definition"
	FragmentsNormalised        Name = "fragments-normalised"
	FailedModelCallSettled     Name = "failed-model-call-settles-step"
	CodeParsedAsJSON           Name = "code-parsed-as-json"
	FlattenedNotCollapsed      Name = "flattened-not-collapsed"
	RepairsUnnamed             Name = "repairs-unnamed"
	CodeFenceWholeOnly         Name = "code-fence-whole-only"
	DamagedTailCut             Name = "damaged-tail-cut"
	EnvCompletionNeedsExecuted Name = "env-completion-needs-executed"
	DecisionFailureUncount     Name = "decision-failure-uncounted"
	EnvCompletionIgnored       Name = "env-completion-ignored"
	BothCompletionsToolWins    Name = "both-completions-tool-wins"
	ToolErrorCompletes         Name = "tool-error-completes"
	CancelNotReleased          Name = "cancel-not-released"
	RegistryIdentity           Name = "registry-identity-compared"
	StringNumbersCoerced       Name = "string-numbers-coerced"
	HandlersDroppedRestrict    Name = "handlers-dropped-by-restrict"
	HandlerGetsToolKey         Name = "handler-gets-tool-key"
	ExecutorNotRecognised      Name = "executor-not-recognised"
	NoToolCallExecuted         Name = "no-tool-call-executed"
	HandlerRunsOnInvalid       Name = "handler-runs-on-invalid"
	ErrorMessageOnly           Name = "error-format-message-only"
	NormalReturnSynthetic      Name = "normal-return-synthetic"
	CancelAsObservation        Name = "cancel-as-observation"
	CompletesRunAsEnvSignal    Name = "completes-run-as-env-signal"
	ToolSectionRendered        Name = "tool-section-rendered"
	GoalBeforeInjections       Name = "goal-before-injections"
	EmptyFragmentMessage       Name = "empty-fragment-message"
	EmptyChannelKept           Name = "empty-channel-kept"
	PlaceholderSpelledJinja    Name = "placeholder-spelled-jinja"
	BlockNamesRenamed          Name = "block-names-renamed"
	RepairedDecisionMissing    Name = "repaired-decision-missing"
	SinkFailureStops           Name = "sink-failure-stops"
	SinkFailuresUncounted      Name = "sink-failures-uncounted"
)

// Deviation describes one departure and how the reference makes it.
type Deviation struct {
	Name     Name
	Decision string // the decision it breaks
	What     string
	wrap     Wrap
}

// All lists every deviation, by name.
func All() []Deviation {
	out := slices.Concat(journalDeviations(), requestDeviations(), judgeDeviations(), registryDeviations(),
		handlerDeviations(), contextDeviations(), eventDeviations(), schemaDeviations(), shapeDeviations(), edgeDeviations())
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Journal deviations break the journal and resume (0002).
func journalDeviations() []Deviation {
	return []Deviation{
		{NeverReplayed, "0002.D4", "resume runs an unfinished NEVER action again",
			Wrap{Options: rewrite(replayed(string(tools.ReplayNever), string(tools.ReplaySafe), false))}},
		{SafeNotReplayed, "0002.D4", "resume gives up on an unfinished SAFE action instead of replaying it",
			Wrap{Options: rewrite(replayed(string(tools.ReplaySafe), string(tools.ReplayNever), false))}},
		{RecordedEndIgnored, "0002.D3", "resume ignores a journalled end and runs on",
			Wrap{Options: rewrite(endIgnored)}},
		{JournalErrorIgnored, "0002.D6", "a failed journal write is ignored and the run goes on",
			Wrap{Options: journalErrorIgnored}},
		{IntentAfterAction, "0002.D1", "the action intent is journalled after the action ran, beside its result",
			Wrap{Options: departure(func(d *run.Departures) { d.IntentAfterAction = true })}},
		{ReplayWritesIntent, "0002.D4.one-intent", "a SAFE action run again on resume journals a second intent before it runs",
			Wrap{Options: departure(func(d *run.Departures) { d.ReplayWritesIntent = true })}},
		{RefusalClearsEnd, "0003.D1.end", "a later phase refused at assembly leaves end null, dropping the end of the phase before it",
			Wrap{RefusalClearsEnd: true}},
		{NoRunEndRecord, "0002.D2", "the run's end is returned but never journalled; the caller is left to record it",
			Wrap{Options: noRunEnd}},
		{UnknownWithoutDetail, "0002.D4.unknown", "a resume_outcome_unknown end does not say which step and tool",
			Wrap{Kernel: unknownWithoutDetail}},
		{CodeActionReplayed, "0002.D4.code", "an unfinished code action is replayed on resume as if it were SAFE",
			Wrap{Options: rewrite(replayed(string(tools.ReplayNever), string(tools.ReplaySafe), true))}},
		{TornTailRefused, "0002.D5", "a torn final record makes resume fail instead of being reported and cut",
			Wrap{Options: read(tornRefused)}},
		{DamagedTailCut, "0002.D5", "a complete last record with a bad checksum is cut like a torn one and resume goes on, instead of refusing",
			Wrap{Options: read(damagedCut)}},
		{JournalErrorDropsSteps, "0002.D6", "a journal write error loses the steps settled before it: the trajectory shows none",
			Wrap{Kernel: journalErrorDropsSteps}},
	}
}

// Request deviations break the request, the model call and the decision (0003, 0007).
func requestDeviations() []Deviation {
	return []Deviation{
		{ModelFailureRetried, "0003.D3", "a failed model call is made once more",
			Wrap{Options: model(retried)}},
		{BareCallAccepted, "0003.D6.bare-call", "a call with no arguments object passes validation when the schema allows {}",
			Wrap{Request: parser(bareCallAccepted)}},
		{ValidationSkipped, "0003.D4", "calls to a project executor are not validated first",
			Wrap{Options: departure(func(d *run.Departures) { d.ValidationSkipped = true })}},
		{BudgetFromFirstRequest, "0003.D1", "every phase runs with the first request's budget, as if the budget belonged to the definition",
			Wrap{Request: fromFirst(func(c *run.RequestConfig, first run.RequestConfig) { c.Budget = first.Budget })}},
		{GoalOnDefinition, "0003.D1.goal", "every phase uses the first request's goal fragment",
			Wrap{Request: fromFirst(func(c *run.RequestConfig, first run.RequestConfig) { c.GoalFragment = first.GoalFragment })}},
		{FragmentsNormalised, "0003.D2", "line breaks in the fragments are folded into spaces before they reach the model",
			Wrap{Request: before(normalised)}},
		{FailedModelCallSettled, "0003.D3.budget", "a failed model call is settled as a decision failure step before the run stops",
			Wrap{Options: model(settledFirst)}},
		{CodeParsedAsJSON, "0003.D5", "the code action language is ignored and every output parsed as a JSON action",
			Wrap{Request: parser(codeAsJSON)}},
		{FlattenedNotCollapsed, "0003.D6", "arguments written beside the tool name are not collapsed; the call has no arguments",
			Wrap{Request: parser(notCollapsed)}},
		{RepairsUnnamed, "0003.D6.names", "repairs are applied but not named",
			Wrap{Request: parser(repairsUnnamed)}},
		{DecisionFailureUncount, "0003.D7", "output that is not an action is settled but not counted as a step",
			Wrap{Options: departure(func(d *run.Departures) { d.DecisionFailuresUncounted = true })}},
		{SeveralCallsFirst, "0003.D7.several", "of several tool calls in one model message, the first is run and the rest dropped",
			Wrap{Request: parser(firstCallTaken)}},
		{CodeFenceWholeOnly, "0003.D5.fence", "a code fence is stripped only when it wraps the whole output, so prose before the fence is run as code",
			Wrap{Request: parser(wholeFenceOnly)}},
		{HistoryUsesExecutorText, "0007.D2", "the history shows the executor's sentence instead of the synthetic text",
			Wrap{Options: departure(func(d *run.Departures) { d.HistoryShowsExecutorText = true })}},
		{PartsMustBeStrings, "0003.D5.parts", "a reflection or plan that is not a string makes the output a decision failure",
			Wrap{Request: parser(partsMustBeStrings)}},
		{DuplicateKeysLastWins, "0003.D6.duplicate-keys", "a key written twice in the model's JSON takes its last value, as most JSON readers do",
			Wrap{Request: parser(duplicatesLastWin)}},
		{ActionsKeyTaken, "0003.D7.several.actions-key", "an actions list of one call is taken as that call, and an actions field beside an action is ignored",
			Wrap{Request: parser(actionsKeyTaken)}},
		{EmptyOutputUncounted, "0003.D7.empty", "an empty or blank model output is settled but not counted toward the total cap",
			Wrap{Options: departure(func(d *run.Departures) { d.BlankOutputsUncounted = true })}},
		{JSONFenceAfterProse, "0003.D7", "a JSON action in the one fenced block of an output is unfenced even with prose around it",
			Wrap{Request: parser(jsonFenceAfterProse)}},
		{DecisionFailureToExecutor, "0003.D4", "an output that is no action is handed to a project executor, which settles it",
			Wrap{Options: departure(func(d *run.Departures) { d.DecisionFailureToExecutor = true })}},
		{EmptyFenceRunAsCode, "0003.D5.fence", "an empty fenced block in the code language is run as empty code",
			Wrap{Request: parser(emptyFenceRunAsCode)}},
		{ResumeHistoryObservation, "0007.D2", "resume rebuilds the history of NOT_EXECUTED and ENV_ERROR steps from their observation instead of their history observation",
			Wrap{Options: departure(func(d *run.Departures) { d.ResumeHistoryFromObservation = true })}},
	}
}

// Judge deviations break the counters and the stop judge (0004).
func judgeDeviations() []Deviation {
	return []Deviation{
		{InvalidCallsEffective, "0004.D1", "a NOT_EXECUTED step counts as an effective step",
			Wrap{Options: departure(func(d *run.Departures) { d.InvalidCallsEffective = true })}},
		{EnvErrorContinues, "0004.D2", "an ENV_ERROR does not end the run",
			Wrap{Request: verdict(func(v *run.Verdict) { v.Outcome.Status = notEnvError(v.Outcome.Status) })}},
		{CapsBeforeCompletion, "0004.D3.order", "the caps are judged before completion",
			Wrap{Request: judge(capsFirst)}},
		{ZeroCapsAccepted, "0004.D1.min", "a cap below 1 is accepted",
			Wrap{Request: zeroCapsAccepted}},
		{CancelEndsRun, "0004.D4", "a cancelled run journals an end with reason cancelled instead of stopping resumable",
			Wrap{Kernel: cancelEndsRun}},
		{DeadlineIsFailure, "0004.D4.deadline", "the run's deadline passing in a call is taken for the call's failure (a failed model call, a handler error), not for a cancellation",
			deadlineIsFailure},
		{EnvCompletionNeedsExecuted, "0004.D3.env-not-executed", "the environment's completion signal is ignored when the step's action did not execute",
			Wrap{Request: verdict(func(v *run.Verdict) {
				v.Outcome.EnvReportedCompletion = v.Outcome.EnvReportedCompletion && v.Outcome.Status != tools.StatusNotExecuted
			})}},
		{EnvCompletionIgnored, "0004.D3", "the judge ignores env_reported_completion",
			Wrap{Request: verdict(func(v *run.Verdict) { v.Outcome.EnvReportedCompletion = false })}},
		{BothCompletionsToolWins, "0004.D3.both", "when both completions come in one step the tool's wins",
			Wrap{Request: judge(toolWins)}},
		{ToolErrorCompletes, "0004.D3.tool-error", "a completes_run tool whose handler returned an error completes the run",
			Wrap{Request: toolErrorCompletes}},
		{CancelNotReleased, "0004.D4.release", "a cancelled call is abandoned without being released",
			Wrap{Abandon: true}},
		{OnlyZeroCapsRefused, "0004.D1.min", "only a cap of exactly 0 is refused; a negative cap is accepted",
			Wrap{Request: onlyZeroCapsRefused}},
	}
}

// Registry deviations break the tool registry (0006).
func registryDeviations() []Deviation {
	return []Deviation{
		{CompletionMerged, "0006.D5", "a completes_run tool ends the run as goal_reached_by_environment",
			Wrap{Request: judge(completionMerged)}},
		{MismatchAccepted, "0006.D3", "a RegistryExecutor from another registry than the visible one is accepted",
			Wrap{Request: executor(unrecognised)}},
		{DuplicateNamesAccepted, "0006.D6.construction", "a second tool with the same name replaces the first",
			Wrap{Specs: duplicatesReplaced}},
		{BrokenSchemaAccepted, "0006.D6.construction", "a parameter schema that does not compile is taken as accepting any object",
			Wrap{Specs: brokenSchemaAccepted}},
		{UnknownRestrictDropped, "0006.D6", "restrict_to leaves out names the registry does not have instead of refusing them",
			Wrap{Restrict: unknownDropped}},
		{RegistryIdentity, "0006.D3.same", "registries are compared by object identity, so one narrowed twice to the same names is a mismatch",
			Wrap{Request: registryIdentity}},
		{StringNumbersCoerced, "0006.D6.no-coercion", "a numeric string is coerced to a number when that makes the call valid",
			Wrap{Request: parser(numbersCoerced)}},
		{InvalidSchemaFirstOnly, "0006.D6.construction.all", "invalid_schema names only the first broken spec in registration order",
			Wrap{Specs: invalidSchemaFirstOnly}},
		{UnresolvedRefAccepted, "0006.D6.compile", "a $ref that does not resolve is not a construction error; the schema is taken as accepting any object",
			Wrap{Specs: unresolvedRefAccepted}},
		{NoParametersBareCall, "0006.D6.no-parameters", "a bare call to a tool without parameters passes validation with empty arguments",
			Wrap{Request: parser(noParametersBareCall)}},
		{BooleansAreNumbers, "0006.D6.no-coercion.json-types", "true and false pass as integers and numbers, as Python's bool is an int",
			Wrap{Specs: booleansAreNumbers}},
		{DefaultsFilled, "0006.D6.no-defaults", "the schema's defaults for top-level properties are filled into the handler's arguments",
			Wrap{Specs: defaultsFilled}},
	}
}

// Handler deviations break tool handlers and the derived executor (0008).
func handlerDeviations() []Deviation {
	return []Deviation{
		{HandlerErrorNotExecuted, "0008.D4.handler-error", "a handler's ordinary error is reported NOT_EXECUTED, synthetic, instead of EXECUTED",
			Wrap{Request: outcomes(ordinaryError(func(out *tools.ActionOutcome, _ tools.CallReport) {
				out.Status, out.ObservationIsSynthetic = tools.StatusNotExecuted, true
			}))}},
		{EnvErrorExecuted, "0008.D4.env-error", "a ToolEnvironmentError is reported EXECUTED instead of ENV_ERROR",
			Wrap{Request: outcomes(envErrorExecuted)}},
		{StackInObservation, "0008.D4.handler-error", "a handler error's observation carries a stack frame",
			Wrap{Request: outcomes(ordinaryError(func(out *tools.ActionOutcome, _ tools.CallReport) {
				out.Observation += "\n\tat handler (tools/handler.go:42)"
			}))}},
		{FirstMissingHandlerOnly, "0008.D2.names", "executor() names only the first spec without a handler",
			Wrap{Refusal: firstMissingOnly}},
		{LazyHandlerCheck, "0008.D2", "executor() does not check for missing handlers; a call to one fails when made",
			Wrap{Specs: lazyHandlers}},
		{HandlersDroppedRestrict, "0008.D1", "restrict_to copies the specs without their handlers",
			Wrap{Visible: handlersDropped}},
		{HandlerGetsToolKey, "0008.D3", "the handler gets the tool name in its arguments",
			Wrap{Specs: handlers(toolKeyAdded)}},
		{ExecutorNotRecognised, "0008.D4", "the derived executor is wrapped, so the request cannot recognise it and check its registry",
			Wrap{Request: executor(unrecognised)}},
		{NoToolCallExecuted, "0008.D4.no-tool-call", "the derived executor reports an action without a tool call as EXECUTED with an empty observation",
			Wrap{Request: derivedOutcomes(noToolCallExecuted)}},
		{HandlerRunsOnInvalid, "0008.D4.validate", "the derived executor calls the handler before validating the call",
			Wrap{Options: departure(func(d *run.Departures) { d.HandlerRunsOnInvalid = true })}},
		{ErrorMessageOnly, "0008.D4.handler-error.format", "a handler error's observation is its message without the error's type",
			Wrap{Request: outcomes(ordinaryError(func(out *tools.ActionOutcome, rep tools.CallReport) {
				out.Observation = strings.TrimPrefix(out.Observation, rep.ErrorType+": ")
			}))}},
		{NormalReturnSynthetic, "0008.D4.normal-return", "a handler's normal return is marked observation_is_synthetic",
			Wrap{Request: outcomes(normalReturn(func(_ action.Action, out *tools.ActionOutcome) { out.ObservationIsSynthetic = true }))}},
		{EmptyReturnPlaceholder, "0008.D4.normal-return", "a handler's empty or blank return is replaced by \"(no output)\"",
			Wrap{Request: outcomes(normalReturn(func(_ action.Action, out *tools.ActionOutcome) {
				if strings.TrimSpace(out.Observation) == "" {
					out.Observation = "(no output)"
				}
			}))}},
		{ErrorFirstLineOnly, "0008.D4.handler-error.format", "a handler error's message is cut to its first line",
			Wrap{Request: outcomes(ordinaryError(func(out *tools.ActionOutcome, _ tools.CallReport) {
				out.Observation, _, _ = strings.Cut(out.Observation, "\n")
			}))}},
		{CancelAsObservation, "0008.D4.cancelled", "a cancelled handler call is settled as an EXECUTED observation instead of passing through",
			Wrap{Request: outcomes(cancelAsObservation)}},
		{CompletesRunAsEnvSignal, "0008.D4.constants", "the derived executor sets env_reported_completion for a completes_run tool",
			Wrap{Request: completesRunAsEnvSignal}},
	}
}

// Context deviations break context assembly (0010).
func contextDeviations() []Deviation {
	return []Deviation{
		{SystemMessage, "0010.D1", "the library puts a system message before the context",
			Wrap{Request: assembler(systemMessage)}},
		{InjectionsUnsorted, "0010.D3", "injection channels come in reverse name order",
			Wrap{Request: layout{reversed: true}.wrap}},
		{EmptyInjectionKept, "0010.D3.empty-entry", "an empty injection entry becomes an empty user message",
			Wrap{Request: layout{entries: slices.Clone[[]string]}.wrap}},
		{NoPlaceholderCheck, "0010.D4", "a template without {observation} is accepted",
			Wrap{Request: checkTemplate(noPlaceholderCheck)}},
		{UnknownBlockZero, "0010.D5", "a block the measure cannot measure counts as 0",
			Wrap{Request: measure(unknownZero)}},
		{ContextSizeOffByOne, "0010.D5", "the context size counts one more than the measure gives (a separator or a header counted)",
			Wrap{Request: after(offByOne)}},
		{ToolSectionRendered, "0010.D1.messages-only", "the tools' schemas are rendered into the model input as a message",
			Wrap{Request: after(toolSection)}},
		{GoalBeforeInjections, "0010.D2", "the goal fragment comes before the injections",
			Wrap{Request: layout{goalFirst: true}.wrap}},
		{EmptyFragmentMessage, "0010.D2.empty", "an empty fragment becomes an empty user message",
			Wrap{Request: layout{emptyFragments: true}.wrap}},
		{EmptyChannelKept, "0010.D3.empty", "an injection channel with nothing in it (no entries, or only empty ones) still adds one empty user message",
			Wrap{Request: layout{entries: emptyChannelKept}.wrap}},
		{PlaceholderSpelledJinja, "0010.D4.spelling", "the placeholder is spelled {{observation}}",
			Wrap{Request: checkTemplate(jinjaPlaceholder)}},
		{BlockNamesRenamed, "0010.D5.names", "the observation block is measured as block type tool_result",
			Wrap{Request: measure(blocksRenamed)}},
		{EmptyTurnDropped, "0010.D2.turns", "an empty model output or an empty observation adds no message to the next model input",
			Wrap{Request: history(emptyTurnDropped)}},
		{WhitespaceIsEmpty, "0010.D2.whitespace", "fragments and injection entries are stripped before the emptiness test, so whitespace-only text adds no message",
			Wrap{Request: before(whitespaceIsEmpty)}},
		{TemplateBracesFormatted, "0010.D4.spelling", "the observation template is applied as a format string: {{ and }} become single braces",
			Wrap{Request: history(bracesFormatted)}},
	}
}

// Event deviations break the audit events (0011).
func eventDeviations() []Deviation {
	return []Deviation{
		{RepairedDecisionMissing, "0011.D1", "model_step events carry the raw output without the repaired decision",
			Wrap{Options: sinks(withoutDecision)}},
		{SinkFailureStops, "0011.D2", "a failing event sink stops the run",
			Wrap{Options: sinkFailureStops}},
		{SinkFailuresUncounted, "0011.D2.count", "sink failures are not counted in event_sink_failures",
			Wrap{Options: sinks(uncounted)}},
		{RunEndedBeforeRecord, "0011.D1.end-after-record", "run_ended is emitted before the end record is written, so a failed write still announces an end",
			Wrap{Options: departure(func(d *run.Departures) { d.RunEndedBeforeRecord = true })}},
		{SinkFailuresPerPhase, "0011.D2.count.phases", "sink failures are counted per phase, and the trajectory shows the last phase's count",
			Wrap{SinkCountPerPhase: true}},
	}
}

// departure sets one of the kernel's own departures.
func departure(f func(d *run.Departures)) func(*run.Options) {
	return func(o *run.Options) { f(&o.Departures) }
}

// notEnvError reads an environment error as an invalid call (0004.D2).
func notEnvError(s tools.Status) tools.Status {
	if s == tools.StatusEnvError {
		return tools.StatusNotExecuted
	}
	return s
}

// Set holds the deviations turned on.
type Set map[Name]bool

// On reports whether n is turned on.
func (s Set) On(n Name) bool { return s[n] }

// Parse turns names into a Set, refusing names that are not deviations.
func Parse(names ...string) (Set, error) {
	known := map[Name]bool{}
	for _, d := range All() {
		known[d.Name] = true
	}
	s := Set{}
	for _, n := range names {
		if !known[Name(n)] {
			var all []string
			for _, d := range All() {
				all = append(all, string(d.Name))
			}
			return nil, fmt.Errorf("no deviation named %q; the deviations are %s", n, strings.Join(all, ", "))
		}
		s[Name(n)] = true
	}
	return s, nil
}
