package events

import (
	"fmt"
	"sync"
)

// Event types.
const (
	TypeRunStarted     = "run_started"
	TypeRunResumed     = "run_resumed"
	TypeModelStep      = "model_step"
	TypeDecisionFailed = "decision_failed"
	TypeToolCall       = "tool_call"
	TypeCodeAction     = "code_action"
	TypeRunEnded       = "run_ended"
	// TypeRunInterrupted is emitted instead of run_ended when a run stops
	// without an end: cancelled, or its model call failed.
	TypeRunInterrupted = "run_interrupted"
)

// Event is one audit record. Fields that do not apply are empty and omitted
// from JSON; nothing time- or id-like is included, so trajectories compare.
type Event struct {
	Type        string         `json:"type"`
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
	// ObservationIsSynthetic says that Observation is the executor's own
	// sentence (0008.D4 rows one and two, a decision failure), not a
	// handler's output. It is not part of the audit record: a sink that
	// words implementation text its own way (serve-reference --reword)
	// needs it before the step reaches the trajectory.
	ObservationIsSynthetic bool `json:"-"`
}

// Sink receives events. An error or a panic from Emit is counted by the
// Stream and otherwise ignored.
type Sink interface {
	Emit(Event) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event) error

// Emit calls f.
func (f SinkFunc) Emit(e Event) error { return f(e) }

// Stream fans events out to sinks and counts their failures.
type Stream struct {
	mu       sync.Mutex
	sinks    []Sink
	failures int
	lastErr  error
}

// NewStream returns a stream over the given sinks (nil entries are skipped).
func NewStream(sinks ...Sink) *Stream {
	s := &Stream{}
	for _, k := range sinks {
		if k != nil {
			s.sinks = append(s.sinks, k)
		}
	}
	return s
}

// Emit delivers e to every sink; a failing sink never stops the others or
// the caller.
func (s *Stream) Emit(e Event) {
	if s == nil {
		return
	}
	for _, k := range s.sinks {
		if err := safeEmit(k, e); err != nil {
			s.mu.Lock()
			s.failures++
			s.lastErr = err
			s.mu.Unlock()
		}
	}
}

func safeEmit(k Sink, e Event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("event sink panicked: %v", r)
		}
	}()
	return k.Emit(e)
}

// Failures returns how many deliveries failed and the last failure.
func (s *Stream) Failures() (int, error) {
	if s == nil {
		return 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failures, s.lastErr
}

// Recorder is a Sink that keeps every event, for trajectories and tests.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

// Emit records e.
func (r *Recorder) Emit(e Event) error {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	return nil
}

// Events returns a copy of what was recorded.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}
