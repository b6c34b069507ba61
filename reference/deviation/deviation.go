// Package deviation names ways a PolyLoop kernel can depart from the
// design, each one a switch the reference kernel can turn on. They are
// genuine mistakes a port could make, not crashes, and each cites the
// decision it breaks; polyloop-conform selfcheck runs the suite once per
// deviation to prove the suite notices. A zero Set turns nothing on.
package deviation

import (
	"fmt"
	"sort"
	"strings"
)

// Name is a deviation's switch.
type Name string

// The deviations.
const (
	HandlerErrorNotExecuted Name = "handler-error-not-executed"
	EnvErrorExecuted        Name = "env-error-executed"
	StackInObservation      Name = "stack-in-observation"
	InvalidCallsEffective   Name = "invalid-calls-effective"
	EnvErrorContinues       Name = "env-error-continues"
	CapsBeforeCompletion    Name = "caps-before-completion"
	CompletionMerged        Name = "completion-merged"
	SystemMessage           Name = "system-message"
	InjectionsUnsorted      Name = "injections-unsorted"
	EmptyInjectionKept      Name = "empty-injection-kept"
	NoPlaceholderCheck      Name = "no-placeholder-check"
	UnknownBlockZero        Name = "unknown-block-zero"
	NeverReplayed           Name = "never-replayed"
	SafeNotReplayed         Name = "safe-not-replayed"
	RecordedEndIgnored      Name = "recorded-end-ignored"
	HistoryUsesExecutorText Name = "history-uses-executor-text"
	ModelFailureRetried     Name = "model-failure-retried"
	FirstMissingHandlerOnly Name = "first-missing-handler-only"
	BareCallAccepted        Name = "bare-call-accepted"
	ValidationSkipped       Name = "validation-skipped-for-project-executor"
	ZeroCapsAccepted        Name = "zero-caps-accepted"
	CancelEndsRun           Name = "cancel-ends-run"
	LazyHandlerCheck        Name = "lazy-handler-check"
	MismatchAccepted        Name = "registry-mismatch-accepted"
	JournalErrorIgnored     Name = "journal-error-ignored"
	DuplicateNamesAccepted  Name = "duplicate-names-accepted"
	BrokenSchemaAccepted    Name = "broken-schema-accepted"
	UnknownRestrictDropped  Name = "unknown-restrict-names-dropped"
	ContextSizeOffByOne     Name = "context-size-off-by-one"
	SeveralCallsFirst       Name = "several-calls-first-taken"
)

// Deviation describes one switch.
type Deviation struct {
	Name     Name
	Decision string // the decision it breaks
	What     string
}

// All lists every deviation, by name.
func All() []Deviation {
	out := []Deviation{
		{HandlerErrorNotExecuted, "0008.D4.handler-error", "a handler's ordinary error is reported NOT_EXECUTED, synthetic, instead of EXECUTED"},
		{EnvErrorExecuted, "0008.D4.env-error", "a ToolEnvironmentError is reported EXECUTED instead of ENV_ERROR"},
		{StackInObservation, "0008.D4.handler-error", "a handler error's observation carries a stack frame"},
		{InvalidCallsEffective, "0004.D1", "a NOT_EXECUTED step counts as an effective step"},
		{EnvErrorContinues, "0004.D2", "an ENV_ERROR does not end the run"},
		{CapsBeforeCompletion, "0004.D3.order", "the caps are judged before completion"},
		{CompletionMerged, "0006.D5", "a completes_run tool ends the run as goal_reached_by_environment"},
		{SystemMessage, "0010.D1", "the library puts a system message before the context"},
		{InjectionsUnsorted, "0010.D3", "injection channels come in reverse name order"},
		{EmptyInjectionKept, "0010.D3.empty-entry", "an empty injection entry becomes an empty user message"},
		{NoPlaceholderCheck, "0010.D4", "a template without {observation} is accepted"},
		{UnknownBlockZero, "0010.D5", "a block the measure cannot measure counts as 0"},
		{NeverReplayed, "0002.D4", "resume runs an unfinished NEVER action again"},
		{SafeNotReplayed, "0002.D4", "resume gives up on an unfinished SAFE action instead of replaying it"},
		{RecordedEndIgnored, "0002.D3", "resume ignores a journalled end and runs on"},
		{HistoryUsesExecutorText, "0007.D2", "the history shows the executor's sentence instead of the synthetic text"},
		{ModelFailureRetried, "0003.D3", "a failed model call is made once more"},
		{FirstMissingHandlerOnly, "0008.D2.names", "executor() names only the first spec without a handler"},
		{BareCallAccepted, "0003.D6.bare-call", "a call with no arguments object passes validation when the schema allows {}"},
		{ValidationSkipped, "0003.D4", "calls to a project executor are not validated first"},
		{ZeroCapsAccepted, "0004.D1.min", "a cap below 1 is accepted"},
		{CancelEndsRun, "0004.D4", "a cancelled run journals an end with reason cancelled instead of stopping resumable"},
		{LazyHandlerCheck, "0008.D2", "executor() does not check for missing handlers; a call to one fails when made"},
		{MismatchAccepted, "0006.D3", "a RegistryExecutor from another registry than the visible one is accepted"},
		{JournalErrorIgnored, "0002.D6", "a failed journal write is ignored and the run goes on"},
		{DuplicateNamesAccepted, "0006.D6.construction", "a second tool with the same name replaces the first"},
		{BrokenSchemaAccepted, "0006.D6.construction", "a parameter schema that does not compile is taken as accepting any object"},
		{UnknownRestrictDropped, "0006.D6", "restrict_to leaves out names the registry does not have instead of refusing them"},
		{ContextSizeOffByOne, "0010.D5", "the context size counts one more than the measure gives (a separator or a header counted)"},
		{SeveralCallsFirst, "0003.D7.several", "of several tool calls in one model message, the first is run and the rest dropped"},
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
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
