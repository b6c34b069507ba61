// Package protocol is the stdio protocol between the polyloop-conform
// runner and an implementation under test: JSON lines on the child's stdin
// and stdout, described for implementers in docs/protocol.md.
//
// Its messages (Message, and Decode, which checks each implementation
// message by its type against what docs/protocol.schema.json publishes),
// Conn, which carries them over any pair of pipes, and Exchange, the
// runner's side of one scenario's run: it answers model, handler,
// executor, event, measure and journal-point calls from the scenario's
// fakes, plays the faults it can, kills a process where a crash is
// scripted, and holds what the implementation says to what crossed the
// wire. Starting processes is internal/implproc's; the implementation
// side of the reference is internal/serveref.
package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/polyloop/polyloop-conform/internal/jsontext"
	"github.com/polyloop/polyloop-conform/internal/schema"
	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// Version is the protocol version this runner speaks.
const Version = 1

// MaxLineBytes bounds one message; a longer line fails the scenario.
const MaxLineBytes = 16 << 20

// Message types.
const (
	TypeHello         = "hello"
	TypeRun           = "run"
	TypeResume        = "resume"
	TypeModelCall     = "model_call"
	TypeModelResult   = "model_result"
	TypeHandlerCall   = "handler_call"
	TypeHandlerResult = "handler_result"
	TypeExecuteCall   = "execute_call"
	TypeExecuteResult = "execute_result"
	TypeJournalPoint  = "journal_point"
	TypeContinue      = "continue"
	TypeCancel        = "cancel"
	TypeReleased      = "released"
	TypeResult        = "result"
	TypeError         = "error"
	TypeEvent         = "event"
	TypeEventResult   = "event_result"
	TypeMeasureCall   = "measure_call"
	TypeMeasureResult = "measure_result"
	TypeFork          = "fork"
	TypeForked        = "forked"
)

// Protocol options: capabilities with which the runner plays a part of a
// fault itself (docs/protocol.md, "Faults the runner plays"). They are
// claimed in the hello like the scenario capabilities, but no scenario
// requires them: without one, the part is staged by the implementation
// and the verdict takes its word for it.
const (
	// WireSink: an audit sink that sends every event to the runner, which
	// answers it, or fails it for faults.sink.
	WireSink = "wire-sink"
	// WireMeasure: a size measure the runner answers, refusing the block
	// types of measure_unknown.
	WireMeasure = "wire-measure"
	// JournalLines: the journal is one file in journal_dir, one record per
	// line, each line with its own checksum; the runner cuts (tear_tail)
	// and damages (journal_damage) it itself.
	JournalLines = "journal-lines"
	// ForkServer: the first process, its imports done and no run begun,
	// forks a child for every process the runner needs (fork/forked).
	ForkServer = "fork-server"
)

// Message is every protocol message; Type says which fields matter.
type Message struct {
	Type string `json:"type"`

	// hello (both directions)
	Suite        string   `json:"suite,omitempty"`
	SuiteVersion string   `json:"suite_version,omitempty"`
	Protocol     int      `json:"protocol,omitempty"`
	Name         string   `json:"name,omitempty"`
	Version      string   `json:"version,omitempty"`
	SpecVersion  string   `json:"spec_version,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`

	// run, resume, result, error
	ID         string   `json:"id,omitempty"`
	Spec       *RunSpec `json:"spec,omitempty"`
	JournalDir string   `json:"journal_dir,omitempty"`
	// ReportJournalPoints asks the implementation to send a journal_point
	// before and after every journal write and wait for continue.
	ReportJournalPoints bool `json:"report_journal_points,omitempty"`
	// TearTail asks a resuming implementation to cut its journal's last
	// record in half first, as a crash during that write would.
	TearTail bool `json:"tear_tail,omitempty"`
	// Damage asks a resuming implementation to damage its journal the way
	// no crash does (last_checksum or middle) first; resume must refuse.
	Damage string `json:"damage,omitempty"`
	// WireSink and WireMeasure ask for the wire sink and the wire measure
	// (to an implementation that claims them).
	WireSink    bool                     `json:"wire_sink,omitempty"`
	WireMeasure bool                     `json:"wire_measure,omitempty"`
	Trajectory  *trajectories.Trajectory `json:"trajectory,omitempty"`
	Message     string                   `json:"message,omitempty"`

	// calls from the implementation and their answers
	Call int `json:"call,omitempty"`
	// Phase is required in model_call, handler_call and execute_call: a
	// pointer, so that phase 0 is sent and a missing phase is an error.
	Phase *int `json:"phase,omitempty"`
	// Input is a pointer so that a model call with an empty context still
	// sends "input": [].
	Input     *[]trajectories.Message `json:"input,omitempty"`
	Output    *string                 `json:"output,omitempty"`
	Tool      string                  `json:"tool,omitempty"`
	Arguments map[string]any          `json:"arguments,omitempty"`
	Action    *ActionView             `json:"action,omitempty"`
	Outcome   *Outcome                `json:"outcome,omitempty"`
	Error     *scenarios.NamedError   `json:"error,omitempty"`
	EnvError  *string                 `json:"env_error,omitempty"`
	Point     *Point                  `json:"point,omitempty"`
	// Deadline marks a cancel as the run's deadline passing.
	Deadline bool `json:"deadline,omitempty"`
	// Event is what the wire sink received (event).
	Event *trajectories.Event `json:"event,omitempty"`
	// Panic is an event_result whose sink breaks instead of failing.
	Panic *string `json:"panic,omitempty"`
	// Block and Text are a measure_call's; Size a measure_result's.
	Block string  `json:"block,omitempty"`
	Text  *string `json:"text,omitempty"`
	Size  *int    `json:"size,omitempty"`
	// Stdin, Stdout and Stderr are a fork's named pipes; Pid a forked's.
	Stdin  string `json:"stdin,omitempty"`
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	Pid    int    `json:"pid,omitempty"`
	// Machine asks a fork for a child on a new machine of its own.
	Machine *Machine `json:"machine,omitempty"`
}

// Machine is a fork's request for a child on a new machine (namespaces,
// overlay root, fresh /proc and /dev/shm) with JournalDir bound through.
type Machine struct {
	JournalDir string `json:"journal_dir"`
	// Mask lists directories to hide behind an empty tmpfs before
	// JournalDir is bound through (the runner's volume, where it has one).
	Mask []string `json:"mask,omitempty"`
}

// ActionView is an action sent to the runner's scripted project executor.
type ActionView struct {
	Kind      string `json:"kind"`
	Tool      string `json:"tool,omitempty"`
	Arguments any    `json:"arguments,omitempty"`
	Code      string `json:"code,omitempty"`
}

// Outcome is the ActionOutcome an execute_result hands to the project
// executor. Unlike a trajectory's, its env_reported_completion may be null:
// an environment that cannot tell (0004 档 G), which means "not complete".
type Outcome struct {
	Status                    string `json:"status"`
	Observation               string `json:"observation"`
	ObservationIsSynthetic    bool   `json:"observation_is_synthetic"`
	EnvReportedCompletion     *bool  `json:"env_reported_completion"`
	ObservationTruncatedChars int    `json:"observation_truncated_chars"`
}

// OutcomeOf is a scripted outcome as an execute_result carries it: no
// completion signal is null (0004 档 G).
func OutcomeOf(s scenarios.ScriptedOutcome) *Outcome {
	o := &Outcome{Status: s.Status, Observation: s.Observation, ObservationIsSynthetic: s.ObservationIsSynthetic,
		ObservationTruncatedChars: s.ObservationTruncatedChars}
	if !s.NoCompletionSignal {
		o.EnvReportedCompletion = &s.EnvReportedCompletion
	}
	return o
}

// Scripted is OutcomeOf the other way: a null completion signal is the
// scenario's no_completion_signal.
func (o *Outcome) Scripted() scenarios.ScriptedOutcome {
	return scenarios.ScriptedOutcome{Status: o.Status, Observation: o.Observation, ObservationIsSynthetic: o.ObservationIsSynthetic,
		EnvReportedCompletion: o.EnvReportedCompletion != nil && *o.EnvReportedCompletion, NoCompletionSignal: o.EnvReportedCompletion == nil,
		ObservationTruncatedChars: o.ObservationTruncatedChars}
}

// PhaseJournal is where phase i of a phased scenario keeps its journal,
// under the run's journal_dir: each phase is a run of its own (0003.D1)
// with a journal of its own (docs/protocol.md, "Crash and resume").
func PhaseJournal(journalDir string, i int) string {
	return filepath.Join(journalDir, strconv.Itoa(i))
}

// Point is a journal write point: the reference journal's own type, so a
// point on the wire, a crash point explored and a point the reference's
// hook sees are one value (its Phase is the message's phase).
type Point = journal.Point

var knownTypes = map[string]bool{TypeHello: true, TypeRun: true, TypeResume: true, TypeModelCall: true, TypeModelResult: true,
	TypeHandlerCall: true, TypeHandlerResult: true, TypeExecuteCall: true, TypeExecuteResult: true, TypeJournalPoint: true,
	TypeContinue: true, TypeCancel: true, TypeReleased: true, TypeResult: true, TypeError: true,
	TypeEvent: true, TypeEventResult: true, TypeMeasureCall: true, TypeMeasureResult: true, TypeFork: true, TypeForked: true}

// ErrBadMessage wraps every decoding failure.
var ErrBadMessage = errors.New("bad protocol message")

// resultPrefix starts a result line in its own encoding (resultChecked).
var resultPrefix = []byte(`{"type":"result",`)

// Decode parses one line, validating it against the protocol schema (and
// a result's trajectory against the trajectory schema) before it is
// decoded into a Message. Errors say what is wrong, with JSON pointers,
// and wrap ErrBadMessage.
func Decode(line []byte) (*Message, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, fmt.Errorf("%w: empty line", ErrBadMessage)
	}
	if line[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object: %s", ErrBadMessage, preview(line))
	}
	// A result is most of the bytes a scenario sends: taken in one pass
	// when it is exactly the encoding of what it decodes to.
	if bytes.HasPrefix(line, resultPrefix) {
		if m, ok := resultChecked(line); ok {
			return m, nil
		}
	}
	// One parse into the top-level keys (json.Unmarshal checks the whole
	// line's syntax first, so no separate pass is needed); the checks below
	// read the raw values they need. Into this map a line starting with
	// '{' fails only when it is not valid JSON.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(line, &top); err != nil {
		// Say what is wrong: a syntax error, or text after the object.
		dec := json.NewDecoder(bytes.NewReader(line))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%w: %v: %s", ErrBadMessage, err, preview(line))
		}
		return nil, fmt.Errorf("%w: text after the JSON object on a line: %s", ErrBadMessage, preview(line))
	}
	var t string
	if raw, ok := top["type"]; ok && kind(raw) == "string" {
		json.Unmarshal(raw, &t)
	}
	switch {
	case t == "":
		return nil, fmt.Errorf("%w: no \"type\" field: %s", ErrBadMessage, preview(line))
	case !knownTypes[t]:
		return nil, fmt.Errorf("%w: unexpected message type %q (docs/protocol.md lists the types)", ErrBadMessage, t)
	}
	if err := jsontext.CheckDuplicateKeysOfValid(line); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadMessage, err)
	}
	if _, ok := shapes[t]; ok {
		// The implementation's messages: checked by their own code.
		return typedDecode(top, t)
	}
	return decodeBySchema(line)
}

// decodeBySchema validates a message against the protocol schema (and a
// result's trajectory against the trajectory schema), then decodes it.
// It is the contract the typed checks agree with, and the way the
// runner's own messages are read back.
func decodeBySchema(raw []byte) (*Message, error) {
	doc, err := schema.DecodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v: %s", ErrBadMessage, err, preview(raw))
	}
	if err := check(doc); err != nil {
		return nil, err
	}
	return unmarshal(raw)
}

// DecodeTrusted parses one line from the runner without checking it
// against the schemas. serve-reference uses it: the runner's messages are
// built by the runner's own types, and the schema is compiled only where
// it judges something (the runner reading an implementation), so a
// reference process that the crash explorer starts twice per crash point
// does not pay for compiling it.
func DecodeTrusted(line []byte) (*Message, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object: %s", ErrBadMessage, preview(line))
	}
	m, err := unmarshal(line)
	if err != nil {
		return nil, err
	}
	if !knownTypes[m.Type] {
		return nil, fmt.Errorf("%w: unexpected message type %q (docs/protocol.md lists the types)", ErrBadMessage, m.Type)
	}
	return m, nil
}

// unmarshal decodes with numbers kept as written (json.Number): the
// arguments a handler receives are compared as the model wrote them, so
// 10 and 10.000 stay different (0003.D4, no coercion).
func unmarshal(line []byte) (*Message, error) {
	var m Message
	if err := numbersAsWritten(line, &m); err != nil {
		return nil, fmt.Errorf("%w: %v: %s", ErrBadMessage, err, preview(line))
	}
	return &m, nil
}

// Encode renders one message as a line.
func Encode(m *Message) ([]byte, error) {
	var buf bytes.Buffer
	if err := jsontext.NewEncoder(&buf, "").Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func preview(b []byte) string {
	if len(b) > 120 {
		return fmt.Sprintf("%q… (%d bytes)", b[:120], len(b))
	}
	return fmt.Sprintf("%q", b)
}
