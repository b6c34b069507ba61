package trajectories

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/polyloop/polyloop-conform/internal/jsontext"
)

// Format is the value of every v1 trajectory's "format" field.
const Format = "polyloop.trajectory/v1"

// Trajectory is one scenario's recorded run. Field names are the spec's.
type Trajectory struct {
	Format        string         `json:"format"`
	Scenario      string         `json:"scenario"`
	AssemblyError *AssemblyError `json:"assembly_error"`
	Steps         []Step         `json:"steps"`
	HandlerCalls  []HandlerCall  `json:"handler_calls"`
	ModelCalls    int            `json:"model_calls"`
	// ModelCallsReleased counts cancelled model calls that were released;
	// the runner fills it.
	ModelCallsReleased int          `json:"model_calls_released,omitempty"`
	Events             []Event      `json:"events"`
	EventSinkFailures  int          `json:"event_sink_failures"`
	End                *End         `json:"end"`
	Phases             []PhaseEnd   `json:"phases,omitempty"`
	RunError           *RunError    `json:"run_error,omitempty"`
	Interrupted        *Interrupted `json:"interrupted,omitempty"`
	Resume             *Resume      `json:"resume,omitempty"`
}

// RunError is an error the run stopped with instead of an end.
type RunError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Interrupted is a run that was cancelled: it stopped without an end.
type Interrupted struct {
	// Phase names the phase that was in flight, in a phased scenario.
	Phase  string `json:"phase,omitempty"`
	Step   int    `json:"step"`
	During string `json:"during"`
	Tool   string `json:"tool,omitempty"`
}

// AssemblyError is a run that was refused before any model call.
type AssemblyError struct {
	Kind    string   `json:"kind"`
	Tools   []string `json:"tools"`
	Message string   `json:"message"`
}

// Message is one model input entry.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Action is the decision taken from the model output.
type Action struct {
	Kind string `json:"kind"`
	Tool string `json:"tool,omitempty"`
	// Arguments is absent when the call had no arguments object at all.
	Arguments any      `json:"arguments,omitempty"`
	Code      string   `json:"code,omitempty"`
	Repairs   []string `json:"repairs"`
	Error     string   `json:"error,omitempty"`
}

// Outcome is the ActionOutcome with its five spec field names.
type Outcome struct {
	Status                    string `json:"status"`
	Observation               string `json:"observation"`
	ObservationIsSynthetic    bool   `json:"observation_is_synthetic"`
	EnvReportedCompletion     bool   `json:"env_reported_completion"`
	ObservationTruncatedChars int    `json:"observation_truncated_chars"`
}

// Counters are the two step counts after a step.
type Counters struct {
	EffectiveSteps int `json:"effective_steps"`
	TotalSteps     int `json:"total_steps"`
}

// Step is one settled step. Index is 1-based within its phase.
type Step struct {
	Index              int       `json:"index"`
	Phase              string    `json:"phase,omitempty"`
	ModelInput         []Message `json:"model_input"`
	ContextSize        int       `json:"context_size"`
	ModelOutput        string    `json:"model_output"`
	Action             Action    `json:"action"`
	Outcome            Outcome   `json:"outcome"`
	HistoryObservation string    `json:"history_observation"`
	Counters           Counters  `json:"counters"`
	Replayed           bool      `json:"replayed"`
}

// HandlerCall is one call of a tool handler, as the runner's fakes saw it.
type HandlerCall struct {
	Phase     string         `json:"phase,omitempty"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	Released  bool           `json:"released,omitempty"`
}

// Event is one audit event.
type Event struct {
	Type        string         `json:"type"`
	Phase       string         `json:"phase,omitempty"`
	Step        int            `json:"step,omitempty"`
	RawOutput   string         `json:"raw_output,omitempty"`
	Decision    map[string]any `json:"decision,omitempty"`
	Repairs     []string       `json:"repairs,omitempty"`
	Tool        string         `json:"tool,omitempty"`
	Status      string         `json:"status,omitempty"`
	Observation string         `json:"executor_observation,omitempty"`
	ErrorType   string         `json:"error_type,omitempty"`
	Error       string         `json:"error,omitempty"`
	Reason      string         `json:"reason,omitempty"`
	Replayed    bool           `json:"replayed,omitempty"`
}

// EndDetail locates an interruption.
type EndDetail struct {
	Step   int    `json:"step"`
	During string `json:"during,omitempty"`
	Tool   string `json:"tool,omitempty"`
}

// End is how the (last) run ended.
type End struct {
	Reason         string     `json:"reason"`
	EffectiveSteps int        `json:"effective_steps"`
	TotalSteps     int        `json:"total_steps"`
	Detail         *EndDetail `json:"detail,omitempty"`
}

// PhaseEnd is the end of one phase of a multi-run scenario.
type PhaseEnd struct {
	Name string `json:"name"`
	End  End    `json:"end"`
}

// Resume describes a crash-and-resume scenario's recovery.
type Resume struct {
	CrashPoint   string `json:"crash_point,omitempty"`
	From         string `json:"from"`
	ReplayedStep int    `json:"replayed_step,omitempty"`
	TornTail     bool   `json:"torn_tail,omitempty"`
}

// CrashPointName renders a crash point the way a trajectory's
// resume.crash_point records it: when, record type and step
// ("after:action_intent:step1", "before:run_end"). The record's position
// in the journal is left out: it depends on how an implementation lays
// out its journal, which the design leaves open.
func CrashPointName(when, record string, step int) string {
	if step == 0 {
		return when + ":" + record
	}
	return fmt.Sprintf("%s:%s:step%d", when, record, step)
}

// Marshal renders a trajectory the way goldens are stored: normalised
// (empty lists, never null), two-space indent, no HTML escaping, trailing
// newline. Equal trajectories marshal to equal bytes.
func Marshal(t *Trajectory) ([]byte, error) { return encode(t, "  ") }

// MarshalCompact is Marshal without indentation: the form the engine
// compares byte for byte against a compacted golden.
func MarshalCompact(t *Trajectory) ([]byte, error) { return encode(t, "") }

func encode(t *Trajectory, indent string) ([]byte, error) {
	t.Normalize()
	var buf bytes.Buffer
	if err := jsontext.NewEncoder(&buf, indent).Encode(t); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

//go:embed *.json
var embedded embed.FS

// Embedded returns the golden trajectories and the trajectory schema built
// into the binary, as files (the suite's manifest hashes them).
func Embedded() fs.FS { return embedded }

// Goldens returns the embedded golden trajectories keyed by scenario ID.
func Goldens() (map[string][]byte, error) { return readGoldens(embedded) }

// GoldensFromDir reads golden trajectories from a directory on disk.
func GoldensFromDir(dir string) (map[string][]byte, error) { return readGoldens(os.DirFS(dir)) }

func readGoldens(fsys fs.FS) (map[string][]byte, error) {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := map[string][]byte{}
	for _, n := range names {
		if n == SchemaFile {
			continue
		}
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, fmt.Errorf("read golden %s: %w", n, err)
		}
		out[strings.TrimSuffix(n, ".json")] = b
	}
	return out, nil
}
