package polyloopkit

import (
	"encoding/json"

	"github.com/polyloop/polyloop-conform/trajectories"
)

// The protocol's messages, one Go type per shape of
// docs/protocol.schema.json. A field is required by the schema exactly when
// its json tag has no omitempty; TestMessages_matchTheSchema holds every
// type here to its shape (the same keys, the same required ones), so the
// kit and the runner read one contract.

// ChatMessage is one message of a model input (schema: message).
type ChatMessage = trajectories.Message

// NamedError is an error a runner's answer asks the kernel to raise: its
// type name and its text.
type NamedError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Hello is the handshake, both ways (schema: hello).
type Hello struct {
	Type         string   `json:"type"`
	Protocol     int      `json:"protocol"`
	Suite        string   `json:"suite,omitempty"`
	SuiteVersion string   `json:"suite_version,omitempty"`
	Name         string   `json:"name,omitempty"`
	Version      string   `json:"version,omitempty"`
	SpecVersion  string   `json:"spec_version,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
}

// Spec is what to build for one run (schema: spec); docs/protocol.md,
// "Running a scenario: run.spec", gives every field's meaning and default.
type Spec struct {
	// Scenario is the run's opaque ID: name the trajectory with it.
	Scenario   string     `json:"scenario"`
	Tools      []Tool     `json:"tools"`
	Definition Definition `json:"definition"`
	Requests   []Request  `json:"requests"`
	Phased     bool       `json:"phased,omitempty"`
	Faults     Faults     `json:"faults,omitzero"`
}

// Definition is the run definition every request shares.
type Definition struct {
	RunFragment string `json:"run_fragment,omitempty"`
	// ObservationTemplate is "{observation}" when the spec leaves it out
	// (Seams.Spec fills it in).
	ObservationTemplate *string `json:"observation_template,omitempty"`
}

// Faults are the faults the kernel applies itself.
type Faults struct {
	// Sink is "error" or "panic": add an audit sink that fails so on
	// every event; "" for none.
	Sink         string        `json:"sink,omitempty"`
	JournalError *JournalError `json:"journal_error,omitempty"`
}

// JournalError makes one journal write fail with an errno.
type JournalError struct {
	Record string `json:"record"`
	Step   int    `json:"step,omitempty"`
	Errno  string `json:"errno"`
}

// Tool is one ToolSpec (schema: tool).
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the arguments' JSON Schema as the runner wrote it
	// (numbers as written), nil when the spec gives none.
	Parameters   json.RawMessage `json:"parameters,omitempty"`
	Replay       string          `json:"replay,omitempty"`
	CompletesRun bool            `json:"completes_run,omitempty"`
	HasHandler   bool            `json:"has_handler"`
}

// Request is one run request, or one phase (schema: request).
type Request struct {
	Name         string `json:"name,omitempty"`
	GoalFragment string `json:"goal_fragment,omitempty"`
	Budget       Budget `json:"budget"`
	// VisibleTools is nil for every tool, empty for none.
	VisibleTools   []string    `json:"visible_tools"`
	Executor       string      `json:"executor,omitempty"`
	Synthetic      *Synthetic  `json:"synthetic,omitempty"`
	Injections     []Injection `json:"injections,omitempty"`
	Language       string      `json:"language,omitempty"`
	MeasureUnknown []string    `json:"measure_unknown,omitempty"`
}

// Budget is a request's two caps.
type Budget struct {
	MaxEffectiveSteps int `json:"max_effective_steps"`
	MaxTotalSteps     int `json:"max_total_steps"`
}

// Synthetic holds a request's SyntheticObservations; nil fields mean the
// kernel's defaults.
type Synthetic struct {
	NotExecuted *string `json:"not_executed,omitempty"`
	EnvError    *string `json:"env_error,omitempty"`
}

// Injection is one injected entry, in the scenario's written order.
type Injection struct {
	Channel string `json:"channel"`
	Text    string `json:"text"`
}

// RunMessage starts a run (schema: run).
type RunMessage struct {
	Type                string `json:"type"`
	ID                  string `json:"id"`
	Spec                Spec   `json:"spec"`
	JournalDir          string `json:"journal_dir,omitempty"`
	ReportJournalPoints bool   `json:"report_journal_points,omitempty"`
	WireSink            bool   `json:"wire_sink,omitempty"`
	WireMeasure         bool   `json:"wire_measure,omitempty"`
}

// ResumeMessage resumes a journal in a new process (schema: resume).
type ResumeMessage struct {
	Type                string `json:"type"`
	ID                  string `json:"id"`
	Spec                Spec   `json:"spec"`
	JournalDir          string `json:"journal_dir"`
	Phase               int    `json:"phase,omitempty"`
	TearTail            bool   `json:"tear_tail,omitempty"`
	Damage              string `json:"damage,omitempty"`
	WireSink            bool   `json:"wire_sink,omitempty"`
	WireMeasure         bool   `json:"wire_measure,omitempty"`
	ReportJournalPoints bool   `json:"report_journal_points,omitempty"`
}

// ModelCall asks the scenario's model (schema: model_call).
type ModelCall struct {
	Type  string        `json:"type"`
	Call  int           `json:"call"`
	Phase int           `json:"phase"`
	Input []ChatMessage `json:"input"`
}

// ModelResult answers a ModelCall: Output, or Error (schema: model_result).
type ModelResult struct {
	Type   string      `json:"type"`
	Call   int         `json:"call"`
	Output *string     `json:"output,omitempty"`
	Error  *NamedError `json:"error,omitempty"`
}

// HandlerCall runs a tool's scripted handler (schema: handler_call).
type HandlerCall struct {
	Type  string `json:"type"`
	Call  int    `json:"call"`
	Phase int    `json:"phase"`
	Tool  string `json:"tool"`
	// Arguments as the handler received them; empty is left out, which
	// means {} (docs/protocol.md).
	Arguments map[string]any `json:"arguments,omitempty"`
}

// HandlerResult answers a HandlerCall: Output, Error or EnvError
// (schema: handler_result).
type HandlerResult struct {
	Type     string      `json:"type"`
	Call     int         `json:"call"`
	Output   *string     `json:"output,omitempty"`
	Error    *NamedError `json:"error,omitempty"`
	EnvError *string     `json:"env_error,omitempty"`
}

// ExecuteCall asks the scripted project executor (schema: execute_call).
type ExecuteCall struct {
	Type   string `json:"type"`
	Call   int    `json:"call"`
	Phase  int    `json:"phase"`
	Action Action `json:"action"`
}

// Action is the decided action a project executor is asked to run: Kind
// is tool_call, code or none; Arguments is nil when the model's call had
// no arguments object.
type Action struct {
	Kind string `json:"kind"`
	Tool string `json:"tool,omitempty"`
	// Arguments is left out only when nil: {} and no arguments object at
	// all are two different actions (0003.D6).
	Arguments map[string]any `json:"arguments,omitzero"`
	Code      string         `json:"code,omitempty"`
}

// ExecuteResult answers an ExecuteCall (schema: execute_result).
type ExecuteResult struct {
	Type    string  `json:"type"`
	Call    int     `json:"call"`
	Outcome Outcome `json:"outcome"`
}

// Outcome is the ActionOutcome a project executor returns.
// EnvReportedCompletion is nil when the environment gives no completion
// signal: not complete, and not an error (0004 档 G).
type Outcome struct {
	Status                    string `json:"status"`
	Observation               string `json:"observation"`
	ObservationIsSynthetic    bool   `json:"observation_is_synthetic"`
	EnvReportedCompletion     *bool  `json:"env_reported_completion"`
	ObservationTruncatedChars int    `json:"observation_truncated_chars"`
}

// JournalPoint is sent before and after every journal write when the
// runner asks for points (schema: journal_point).
type JournalPoint struct {
	Type  string `json:"type"`
	Call  int    `json:"call"`
	Phase *int   `json:"phase,omitempty"`
	Point Point  `json:"point"`
}

// Point is one journal write point: When is before or after; Seq is the
// record's 1-based position; Record is run_started, model_output,
// action_intent, action_result or run_end; Step is 0 for run-level records.
type Point struct {
	When   string `json:"when"`
	Seq    int    `json:"seq"`
	Record string `json:"record"`
	Step   int    `json:"step,omitempty"`
}

// AnswerOnly is continue and released (schema: answer_only).
type AnswerOnly struct {
	Type string `json:"type"`
	Call int    `json:"call"`
}

// Cancel cancels the run, or lets its deadline pass (schema: cancel).
type Cancel struct {
	Type     string `json:"type"`
	Call     int    `json:"call"`
	Deadline bool   `json:"deadline,omitempty"`
}

// EventMessage sends one audit event to the runner's sink (schema: event).
type EventMessage struct {
	Type  string             `json:"type"`
	Call  int                `json:"call"`
	Phase int                `json:"phase"`
	Event trajectories.Event `json:"event"`
}

// EventResult is how the runner's sink took an event (schema: event_result).
type EventResult struct {
	Type  string      `json:"type"`
	Call  int         `json:"call"`
	Error *NamedError `json:"error,omitempty"`
	Panic *string     `json:"panic,omitempty"`
}

// MeasureCall asks the runner's size measure (schema: measure_call).
type MeasureCall struct {
	Type  string `json:"type"`
	Call  int    `json:"call"`
	Phase int    `json:"phase"`
	Block string `json:"block"`
	Text  string `json:"text"`
}

// MeasureResult answers a MeasureCall: Size, or Error (schema: measure_result).
type MeasureResult struct {
	Type  string      `json:"type"`
	Call  int         `json:"call"`
	Size  *int        `json:"size,omitempty"`
	Error *NamedError `json:"error,omitempty"`
}

// ResultMessage carries a run's trajectory (schema: result).
type ResultMessage struct {
	Type       string                   `json:"type"`
	ID         string                   `json:"id"`
	Trajectory *trajectories.Trajectory `json:"trajectory"`
}

// ErrorMessage says the implementation itself broke (schema: error).
type ErrorMessage struct {
	Type    string `json:"type"`
	ID      string `json:"id,omitempty"`
	Message string `json:"message"`
}

// Fork asks a fork server for a new process (schema: fork).
type Fork struct {
	Type   string `json:"type"`
	Stdin  string `json:"stdin"`
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// Machine, when set, asks for the child on a machine of its own
	// (docs/protocol.md, "Fork server"). The kit's pool cannot build one
	// (Go has no fork(2)), so its workers leave it unbuilt: the runner
	// sees that and starts every resume from the command line instead.
	Machine *Machine `json:"machine,omitempty"`
}

// Machine is the machine a fork asks its child to build (schema:
// fork.machine): journal_dir bound through, the mask hidden.
type Machine struct {
	JournalDir string   `json:"journal_dir"`
	Mask       []string `json:"mask,omitempty"`
}

// Forked names the process a fork server handed over (schema: forked).
type Forked struct {
	Type string `json:"type"`
	Pid  int    `json:"pid"`
}
