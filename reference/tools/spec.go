package tools

import (
	"context"
	"fmt"
)

// ReplayPolicy is a tool's answer to "may I be run twice?"; it is read only
// when resuming a step whose result was never written (0002.D4).
type ReplayPolicy string

// The two replay policies. The zero value is treated as NEVER.
const (
	ReplaySafe  ReplayPolicy = "SAFE"
	ReplayNever ReplayPolicy = "NEVER"
)

// ParseReplayPolicy accepts "SAFE", "NEVER" or "" (which means NEVER).
func ParseReplayPolicy(s string) (ReplayPolicy, error) {
	switch s {
	case "", string(ReplayNever):
		return ReplayNever, nil
	case string(ReplaySafe):
		return ReplaySafe, nil
	}
	return "", fmt.Errorf("replay policy %q is neither SAFE nor NEVER", s)
}

// ToolHandler runs one tool. It receives only the arguments the model sent,
// never the call or the spec, and returns observation text (0008.D3).
// Returning a *ToolEnvironmentError says the environment is broken; returning
// the context's error says the call was cancelled.
type ToolHandler func(ctx context.Context, arguments map[string]any) (string, error)

// ToolSpec describes one tool. Field order is the spec's: the handler was
// appended last so positional callers keep their meaning (0008.D1).
type ToolSpec struct {
	Name         string
	Description  string
	Parameters   map[string]any
	ReplayPolicy ReplayPolicy
	CompletesRun bool
	Handler      ToolHandler
}

// Replay returns the effective replay policy, NEVER when unset.
func (s *ToolSpec) Replay() ReplayPolicy {
	if s.ReplayPolicy == ReplaySafe {
		return ReplaySafe
	}
	return ReplayNever
}

// ToolEnvironmentError is what a handler returns to say "the environment is
// broken", as opposed to "the tool failed" (0008.D4.env-error).
type ToolEnvironmentError struct {
	Message string
}

func (e *ToolEnvironmentError) Error() string { return e.Message }
