package scenarios

import (
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Scenario is one conformance check, as written in its YAML file.
type Scenario struct {
	ID          string     `yaml:"id" json:"id"`
	Title       string     `yaml:"title" json:"title"`
	Description string     `yaml:"description,omitempty" json:"description,omitempty"`
	Decisions   []string   `yaml:"decisions" json:"decisions"`
	Level       string     `yaml:"level" json:"level"`
	Requires    []string   `yaml:"requires" json:"requires"`
	Tools       []Tool     `yaml:"tools" json:"tools"`
	Definition  Definition `yaml:"definition" json:"definition"`
	Request     *Request   `yaml:"request,omitempty" json:"request,omitempty"`
	Phases      []Request  `yaml:"phases,omitempty" json:"phases,omitempty"`
	Faults      Faults     `yaml:"faults,omitempty" json:"faults,omitempty"`
	Expect      Expect     `yaml:"expect" json:"expect"`

	// File is where the scenario was loaded from ("" for values built in code).
	File string `yaml:"-" json:"-"`
	// lines maps JSON pointers inside the file to their line numbers.
	lines map[string]int
}

// Line returns the line of the node at a JSON pointer, or of its nearest
// ancestor that has one; 0 when unknown.
func (s *Scenario) Line(pointer string) int { return lineOf(s.lines, pointer) }

// RealPrefix starts the name of a scenario built from a real downstream
// run (its phases, budgets, tool schemas and recorded failures) rather
// than from the design text alone.
const RealPrefix = "real-"

// Family is the group a scenario id belongs to in reports: the part before
// the first dot ("parse" for parse.fenced-json). Scenarios whose name
// starts with RealPrefix form a family of their own beside the one they
// extend ("govdoc.real" for govdoc.real-auditor-pes-happy-path), so a
// migration team sees its recorded runs apart from the requirement list.
func Family(id string) string {
	fam, name, _ := strings.Cut(id, ".")
	if strings.HasPrefix(name, RealPrefix) {
		return fam + ".real"
	}
	return fam
}

// Runs returns the scenario's requests: the single request, or the phases.
func (s *Scenario) Runs() []Request {
	if s.Request != nil {
		return []Request{*s.Request}
	}
	return s.Phases
}

// Tool declares one tool and its fake handler.
type Tool struct {
	Name         string         `yaml:"name" json:"name"`
	Description  string         `yaml:"description,omitempty" json:"description,omitempty"`
	Parameters   map[string]any `yaml:"parameters,omitempty" json:"parameters,omitempty"`
	Replay       string         `yaml:"replay,omitempty" json:"replay,omitempty"`
	CompletesRun bool           `yaml:"completes_run,omitempty" json:"completes_run,omitempty"`
	// Handler lists the fake handler's behaviour per call; the last entry
	// repeats. Empty means the spec has no handler.
	Handler Behaviours `yaml:"handler,omitempty" json:"handler,omitempty"`
}

// Behaviour is what a fake handler does on one call; exactly one field is set.
type Behaviour struct {
	Return   *string     `yaml:"return,omitempty" json:"return,omitempty"`
	Echo     bool        `yaml:"echo,omitempty" json:"echo,omitempty"`
	Error    *NamedError `yaml:"error,omitempty" json:"error,omitempty"`
	EnvError *string     `yaml:"env_error,omitempty" json:"env_error,omitempty"`
	// Panic is a handler that breaks instead of returning an error: in Go a
	// panic, elsewhere an unexpected exception of that type.
	Panic *NamedError `yaml:"panic,omitempty" json:"panic,omitempty"`
	Block bool        `yaml:"block,omitempty" json:"block,omitempty"`
}

// NamedError is an error of a named type (e.g. Python's ValueError).
type NamedError struct {
	Type    string `yaml:"type" json:"type"`
	Message string `yaml:"message" json:"message"`
}

// Definition is the run definition shared by every request of a scenario.
type Definition struct {
	RunFragment         string `yaml:"run_fragment,omitempty" json:"run_fragment,omitempty"`
	ObservationTemplate string `yaml:"observation_template,omitempty" json:"observation_template,omitempty"`
}

// Request is one run: its budget, visible tools, executor, and the model's
// scripted outputs.
type Request struct {
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// GoalFragment is this request's goal (0003.D1.goal): phases that share
	// a definition differ in it.
	GoalFragment    string            `yaml:"goal_fragment,omitempty" json:"goal_fragment,omitempty"`
	Budget          Budget            `yaml:"budget" json:"budget"`
	VisibleTools    []string          `yaml:"visible_tools,omitempty" json:"visible_tools,omitempty"`
	Executor        string            `yaml:"executor,omitempty" json:"executor,omitempty"`
	ProjectExecutor []ScriptedOutcome `yaml:"project_executor,omitempty" json:"project_executor,omitempty"`
	Synthetic       Synthetic         `yaml:"synthetic,omitempty" json:"synthetic,omitempty"`
	Injections      Injections        `yaml:"injections,omitempty" json:"injections,omitempty"`
	Language        string            `yaml:"language,omitempty" json:"language,omitempty"`
	MeasureUnknown  []string          `yaml:"measure_unknown,omitempty" json:"measure_unknown,omitempty"`
	Model           []ModelTurn       `yaml:"model" json:"model"`
}

// Executor kinds a request may name.
const (
	ExecutorRegistry     = "registry"      // Executor() of the visible registry (default)
	ExecutorFullRegistry = "full_registry" // Executor() of the unrestricted registry
	ExecutorProject      = "project"       // the project's own executor, scripted
)

// Budget holds the two caps.
type Budget struct {
	MaxEffectiveSteps int `yaml:"max_effective_steps" json:"max_effective_steps"`
	MaxTotalSteps     int `yaml:"max_total_steps" json:"max_total_steps"`
}

// Injection is one injected entry: a channel and one text.
type Injection struct {
	Channel string `json:"channel"`
	Text    string `json:"text"`
}

// Injections are a request's injected entries in the order the scenario
// file writes them. In YAML they are a mapping from channel to a list of
// texts; the order of the mapping's keys is kept, because 0010.D3 makes
// the library sort channels precisely since a caller's mapping can come in
// any order: the suite hands them over unsorted so that sorting is tested.
type Injections []Injection

// UnmarshalYAML reads the channel mapping in written order.
func (in *Injections) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: injections must be a mapping from channel to a list of texts", n.Line)
	}
	var out Injections
	for i := 0; i+1 < len(n.Content); i += 2 {
		var texts []string
		if err := n.Content[i+1].Decode(&texts); err != nil {
			return err
		}
		for _, t := range texts {
			out = append(out, Injection{Channel: n.Content[i].Value, Text: t})
		}
	}
	*in = out
	return nil
}

// ByChannel groups the entries by channel, keeping each channel's entries
// in order: the shape of the reference's RequestConfig.Injections.
func (in Injections) ByChannel() map[string][]string {
	if len(in) == 0 {
		return nil
	}
	out := map[string][]string{}
	for _, e := range in {
		out[e.Channel] = append(out[e.Channel], e.Text)
	}
	return out
}

// The suite's default SyntheticObservations texts (0007.D2.defaults, an
// interpretation of this project). The runner sends them explicitly to
// every implementation whose scenario gives none, except in the scenarios
// that check the defaults themselves, so no other scenario depends on an
// implementation having chosen the same default words.
const (
	DefaultNotExecuted = "The action was not executed."
	DefaultEnvError    = "The environment reported an error; the action did not complete."
)

// Synthetic are the request's SyntheticObservations texts.
type Synthetic struct {
	NotExecuted string `yaml:"not_executed,omitempty" json:"not_executed,omitempty"`
	EnvError    string `yaml:"env_error,omitempty" json:"env_error,omitempty"`
}

// ScriptedOutcome is one answer of the scripted project executor.
type ScriptedOutcome struct {
	Status                    string `yaml:"status" json:"status"`
	Observation               string `yaml:"observation" json:"observation"`
	ObservationIsSynthetic    bool   `yaml:"observation_is_synthetic,omitempty" json:"observation_is_synthetic,omitempty"`
	EnvReportedCompletion     bool   `yaml:"env_reported_completion,omitempty" json:"env_reported_completion,omitempty"`
	ObservationTruncatedChars int    `yaml:"observation_truncated_chars,omitempty" json:"observation_truncated_chars,omitempty"`
	// NoCompletionSignal is an environment that cannot tell whether the
	// goal is reached (GovDoc's executor; 0004 档 G): over the protocol the
	// outcome's env_reported_completion is null, which means "not complete",
	// never an environment error.
	NoCompletionSignal bool `yaml:"no_completion_signal,omitempty" json:"no_completion_signal,omitempty"`
}

// ModelTurn is the model's scripted output for one step: text, or a call
// that blocks until the run is cancelled.
type ModelTurn struct {
	Output string `yaml:"output,omitempty" json:"output,omitempty"`
	Block  bool   `yaml:"block,omitempty" json:"block,omitempty"`
}

// Faults are injected failures.
type Faults struct {
	Sink  string     `yaml:"sink,omitempty" json:"sink,omitempty"` // error or panic
	Crash *CrashSpec `yaml:"crash,omitempty" json:"crash,omitempty"`
	// CrashOnResume kills the process that resumes after Crash too, at
	// this journal write point; a third process resumes the journal the
	// second left. It needs Crash, and a single request.
	CrashOnResume *CrashSpec `yaml:"crash_on_resume,omitempty" json:"crash_on_resume,omitempty"`
	TornTail      bool       `yaml:"torn_tail,omitempty" json:"torn_tail,omitempty"`
	// JournalDamage damages the journal after the crash the way no crash
	// does: last_checksum (a whole last record whose checksum fails) or
	// middle (damage followed by intact records). Resume refuses (0002.D5).
	JournalDamage string `yaml:"journal_damage,omitempty" json:"journal_damage,omitempty"`
	// Cancel cancels the run at one step, during its model call or its
	// tool call (the same as a {block: true} model turn or handler).
	Cancel *CancelSpec `yaml:"cancel,omitempty" json:"cancel,omitempty"`
	// Deadline is the run's deadline passing at one step, during its
	// model call or its tool call: the caller's timeout, which the kernel
	// must treat as it treats a cancellation (0004.D4.deadline).
	Deadline *CancelSpec `yaml:"deadline,omitempty" json:"deadline,omitempty"`
	// ModelFailure makes one step's model call fail once.
	ModelFailure *ModelFailure `yaml:"model_failure,omitempty" json:"model_failure,omitempty"`
	// Resume has the next lease holder resume the journal of a run that
	// stopped without an end, in a new process.
	Resume bool `yaml:"resume,omitempty" json:"resume,omitempty"`
	// JournalError makes one journal write fail with an errno.
	JournalError *JournalError `yaml:"journal_error,omitempty" json:"journal_error,omitempty"`
}

// CancelSpec names the step and the call during which the run is cancelled.
// ModelFailure is a model call that fails once, as a gateway error would.
type ModelFailure struct {
	Step    int    `yaml:"step" json:"step"`
	Message string `yaml:"message" json:"message"`
}

// CancelSpec is a cancellation (or a deadline) at one step; Phase names
// the phase in a phased scenario.
type CancelSpec struct {
	Phase  string `yaml:"phase,omitempty" json:"phase,omitempty"`
	Step   int    `yaml:"step" json:"step"`
	During string `yaml:"during" json:"during"` // model_call or tool_call
}

// Interruption is the scenario's cancel or deadline fault, whichever is
// given (the loader refuses both), and whether it is the deadline.
func (f *Faults) Interruption() (spec *CancelSpec, deadline bool) {
	if f.Deadline != nil {
		return f.Deadline, true
	}
	return f.Cancel, false
}

// JournalError names a journal write and the file-system error it gets.
type JournalError struct {
	Record string `yaml:"record" json:"record"`
	Step   int    `yaml:"step,omitempty" json:"step,omitempty"`
	Errno  string `yaml:"errno" json:"errno"`
}

// CrashSpec names the journal write point at which the process dies; in
// a phased scenario Phase names the phase whose journal it is.
type CrashSpec struct {
	Phase  string `yaml:"phase,omitempty" json:"phase,omitempty"`
	When   string `yaml:"when" json:"when"` // before or after
	Record string `yaml:"record" json:"record"`
	Step   int    `yaml:"step,omitempty" json:"step,omitempty"`
	// Unreached states that the design writes no record at this point (an
	// action intent of a call that fails validation, 0002.D1.no-intent-invalid):
	// the run must end without reaching it. An implementation that does
	// reach it is killed there and resumed like any other, and its resumed
	// trajectory is judged against the uninterrupted golden.
	Unreached bool `yaml:"unreached,omitempty" json:"unreached,omitempty"`
}

// Matches reports whether a journal point (before or after a write of a
// record type at a step) is this crash point; Step 0 matches any step,
// which is how a run-level record (run_started, run_end) is named.
func (c *CrashSpec) Matches(when, record string, step int) bool {
	return c != nil && when == c.When && record == c.Record && (c.Step == 0 || c.Step == step)
}

// FaultPhase is the index of the phase a crash or an interruption names
// (0 in a single-request scenario, or when no fault names one): the phase
// whose journal the next process resumes.
func (s *Scenario) FaultPhase() int {
	name := ""
	if s.Faults.Crash != nil {
		name = s.Faults.Crash.Phase
	} else if in, _ := s.Faults.Interruption(); in != nil {
		name = in.Phase
	}
	for i, r := range s.Phases {
		if r.Name == name {
			return i
		}
	}
	return 0
}

// Tool returns the scenario's tool of that name, or nil.
func (s *Scenario) Tool(name string) *Tool {
	for i := range s.Tools {
		if s.Tools[i].Name == name {
			return &s.Tools[i]
		}
	}
	return nil
}

// Empty reports whether the expect block checks nothing: a scenario
// without a golden and with an empty expect has no oracle at all.
func (e *Expect) Empty() bool { return reflect.DeepEqual(*e, Expect{}) }

// Expect is the hand-written oracle.
type Expect struct {
	AssemblyError     *ExpectAssembly    `yaml:"assembly_error,omitempty" json:"assembly_error,omitempty"`
	RunError          string             `yaml:"run_error,omitempty" json:"run_error,omitempty"`
	Interrupted       *ExpectInterrupted `yaml:"interrupted,omitempty" json:"interrupted,omitempty"`
	End               *ExpectEnd         `yaml:"end,omitempty" json:"end,omitempty"`
	Steps             *int               `yaml:"steps,omitempty" json:"steps,omitempty"`
	Step              []ExpectStep       `yaml:"step,omitempty" json:"step,omitempty"`
	HandlerCalls      map[string]int     `yaml:"handler_calls,omitempty" json:"handler_calls,omitempty"`
	ModelCalls        *int               `yaml:"model_calls,omitempty" json:"model_calls,omitempty"`
	Phases            []ExpectPhase      `yaml:"phases,omitempty" json:"phases,omitempty"`
	ModelInput        []ExpectModelInput `yaml:"model_input,omitempty" json:"model_input,omitempty"`
	EventSinkFailures *int               `yaml:"event_sink_failures,omitempty" json:"event_sink_failures,omitempty"`
	Events            []ExpectEvent      `yaml:"events,omitempty" json:"events,omitempty"`
	// EventTypes is the exact sequence of event types, in the order
	// emitted: order, a missing and a duplicated event all show (0011.D1).
	EventTypes []string       `yaml:"event_types,omitempty" json:"event_types,omitempty"`
	Fields     map[string]any `yaml:"fields,omitempty" json:"fields,omitempty"`
}

// ExpectAssembly expects the run to be refused at assembly.
type ExpectAssembly struct {
	Kind  string   `yaml:"kind" json:"kind"`
	Tools []string `yaml:"tools,omitempty" json:"tools,omitempty"`
}

// ExpectInterrupted expects the run to stop cancelled, without an end.
type ExpectInterrupted struct {
	Phase  string `yaml:"phase,omitempty" json:"phase,omitempty"`
	Step   int    `yaml:"step" json:"step"`
	During string `yaml:"during" json:"during"`
	Tool   string `yaml:"tool,omitempty" json:"tool,omitempty"`
}

// ExpectEnd expects how the run ends.
type ExpectEnd struct {
	Reason         string `yaml:"reason" json:"reason"`
	EffectiveSteps *int   `yaml:"effective_steps,omitempty" json:"effective_steps,omitempty"`
	TotalSteps     *int   `yaml:"total_steps,omitempty" json:"total_steps,omitempty"`
	DetailStep     *int   `yaml:"detail_step,omitempty" json:"detail_step,omitempty"`
	DetailTool     string `yaml:"detail_tool,omitempty" json:"detail_tool,omitempty"`
	DetailDuring   string `yaml:"detail_during,omitempty" json:"detail_during,omitempty"`
}

// ExpectStep expects fields of one step (1-based index; phase for
// multi-phase scenarios).
type ExpectStep struct {
	Index                     int      `yaml:"index" json:"index"`
	Phase                     string   `yaml:"phase,omitempty" json:"phase,omitempty"`
	Status                    string   `yaml:"status,omitempty" json:"status,omitempty"`
	Observation               *string  `yaml:"observation,omitempty" json:"observation,omitempty"`
	ObservationContains       string   `yaml:"observation_contains,omitempty" json:"observation_contains,omitempty"`
	ObservationIsSynthetic    *bool    `yaml:"observation_is_synthetic,omitempty" json:"observation_is_synthetic,omitempty"`
	EnvReportedCompletion     *bool    `yaml:"env_reported_completion,omitempty" json:"env_reported_completion,omitempty"`
	ObservationTruncatedChars *int     `yaml:"observation_truncated_chars,omitempty" json:"observation_truncated_chars,omitempty"`
	HistoryObservation        *string  `yaml:"history_observation,omitempty" json:"history_observation,omitempty"`
	ActionKind                string   `yaml:"action_kind,omitempty" json:"action_kind,omitempty"`
	Tool                      string   `yaml:"tool,omitempty" json:"tool,omitempty"`
	Arguments                 any      `yaml:"arguments,omitempty" json:"arguments,omitempty"`
	Repairs                   []string `yaml:"repairs,omitempty" json:"repairs,omitempty"`
	Replayed                  *bool    `yaml:"replayed,omitempty" json:"replayed,omitempty"`
	EffectiveSteps            *int     `yaml:"effective_steps,omitempty" json:"effective_steps,omitempty"`
	TotalSteps                *int     `yaml:"total_steps,omitempty" json:"total_steps,omitempty"`
}

// ExpectPhase expects one phase's end.
type ExpectPhase struct {
	Name           string `yaml:"name" json:"name"`
	Reason         string `yaml:"reason" json:"reason"`
	EffectiveSteps *int   `yaml:"effective_steps,omitempty" json:"effective_steps,omitempty"`
	TotalSteps     *int   `yaml:"total_steps,omitempty" json:"total_steps,omitempty"`
}

// ExpectModelInput expects the exact messages sent at one step.
type ExpectModelInput struct {
	Step     int             `yaml:"step" json:"step"`
	Phase    string          `yaml:"phase,omitempty" json:"phase,omitempty"`
	Messages []ExpectMessage `yaml:"messages" json:"messages"`
}

// ExpectMessage is one expected model input message.
type ExpectMessage struct {
	Role    string `yaml:"role" json:"role"`
	Content string `yaml:"content" json:"content"`
}

// ExpectEvent expects an event of a type to exist, with some fields.
type ExpectEvent struct {
	Type        string   `yaml:"type" json:"type"`
	Step        int      `yaml:"step,omitempty" json:"step,omitempty"`
	RawOutput   string   `yaml:"raw_output,omitempty" json:"raw_output,omitempty"`
	Decision    any      `yaml:"decision,omitempty" json:"decision,omitempty"`
	Repairs     []string `yaml:"repairs,omitempty" json:"repairs,omitempty"`
	Status      string   `yaml:"status,omitempty" json:"status,omitempty"`
	ErrorType   string   `yaml:"error_type,omitempty" json:"error_type,omitempty"`
	Observation string   `yaml:"executor_observation,omitempty" json:"executor_observation,omitempty"`
	Phase       string   `yaml:"phase,omitempty" json:"phase,omitempty"`
	Reason      string   `yaml:"reason,omitempty" json:"reason,omitempty"`
	Tool        string   `yaml:"tool,omitempty" json:"tool,omitempty"`
	// Replayed false asks for an event that is not marked replayed (the
	// key absent or false); true for one that is.
	Replayed *bool `yaml:"replayed,omitempty" json:"replayed,omitempty"`
}

// Parts of a scenario's faults the runner can play itself (over the
// protocol, with an option; engine.Evidence names who played what).
const (
	PartSink    = "sink"    // the failing audit sink (wire-sink)
	PartMeasure = "measure" // the size measure's refusal (wire-measure)
	PartJournal = "journal" // the cut or damage of the journal (journal-lines)
)
