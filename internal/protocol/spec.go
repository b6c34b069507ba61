package protocol

import (
	"cmp"
	"slices"

	"github.com/polyloop/polyloop-conform/scenarios"
)

// RunSpec is what an implementation needs to build a scenario's registry
// and requests. It leaves out everything the runner answers itself: model
// outputs, handler behaviours, the project executor's script, expect.
type RunSpec struct {
	Scenario   string               `json:"scenario"`
	Tools      []ToolSpec           `json:"tools"`
	Definition scenarios.Definition `json:"definition"`
	Requests   []RequestSpec        `json:"requests"`
	// Phased is true when the requests are phases of one scenario (their
	// steps carry the phase name in the trajectory).
	Phased bool       `json:"phased,omitempty"`
	Faults FaultsSpec `json:"faults,omitempty"`
}

// ToolSpec is a tool as the implementation registers it.
type ToolSpec struct {
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	Parameters   map[string]any `json:"parameters,omitempty"`
	Replay       string         `json:"replay,omitempty"`
	CompletesRun bool           `json:"completes_run,omitempty"`
	// HasHandler says whether to give the spec a handler; the handler
	// itself is a handler_call to the runner.
	HasHandler bool `json:"has_handler"`
}

// RequestSpec is one run request.
type RequestSpec struct {
	Name         string              `json:"name,omitempty"`
	GoalFragment string              `json:"goal_fragment,omitempty"`
	Budget       scenarios.Budget    `json:"budget"`
	VisibleTools []string            `json:"visible_tools"` // null: every tool; []: none
	Executor     string              `json:"executor,omitempty"`
	Synthetic    scenarios.Synthetic `json:"synthetic,omitempty"`
	// Injections are in the scenario's written order, not sorted: the
	// implementation must sort channels itself (0010.D3).
	Injections     scenarios.Injections `json:"injections,omitempty"`
	Language       string               `json:"language,omitempty"`
	MeasureUnknown []string             `json:"measure_unknown,omitempty"`
}

// FaultsSpec are the faults the implementation itself must apply.
type FaultsSpec struct {
	Sink         string                  `json:"sink,omitempty"`
	JournalError *scenarios.JournalError `json:"journal_error,omitempty"`
}

// SpecFor extracts a RunSpec from a scenario.
func SpecFor(sc *scenarios.Scenario) *RunSpec {
	s := &RunSpec{Scenario: sc.ID, Definition: sc.Definition, Phased: sc.Request == nil,
		Faults: FaultsSpec{Sink: sc.Faults.Sink, JournalError: sc.Faults.JournalError}}
	for _, t := range sc.Tools {
		s.Tools = append(s.Tools, ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters,
			Replay: t.Replay, CompletesRun: t.CompletesRun, HasHandler: len(t.Handler) > 0})
	}
	if s.Tools == nil {
		s.Tools = []ToolSpec{}
	}
	testsDefaults := slices.Contains(sc.Decisions, "0007.D2.defaults")
	for _, r := range sc.Runs() {
		syn := r.Synthetic
		if !testsDefaults {
			// The default texts are this suite's choice, not the design's:
			// only the scenarios about defaults may depend on them.
			syn.NotExecuted = cmp.Or(syn.NotExecuted, scenarios.DefaultNotExecuted)
			syn.EnvError = cmp.Or(syn.EnvError, scenarios.DefaultEnvError)
		}
		s.Requests = append(s.Requests, RequestSpec{Name: r.Name, GoalFragment: r.GoalFragment, Budget: r.Budget, VisibleTools: r.VisibleTools,
			Executor: r.Executor, Synthetic: syn, Injections: r.Injections, Language: r.Language, MeasureUnknown: r.MeasureUnknown})
	}
	return s
}

// ScenarioFor rebuilds the scenario shape the reference driver reads from
// a RunSpec (the implementation side of serve-reference).
func ScenarioFor(s *RunSpec) *scenarios.Scenario {
	sc := &scenarios.Scenario{ID: s.Scenario, Definition: s.Definition,
		Faults: scenarios.Faults{Sink: s.Faults.Sink, JournalError: s.Faults.JournalError}}
	for _, t := range s.Tools {
		sc.Tools = append(sc.Tools, scenarios.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters, Replay: t.Replay, CompletesRun: t.CompletesRun})
	}
	for _, r := range s.Requests {
		req := scenarios.Request{Name: r.Name, GoalFragment: r.GoalFragment, Budget: r.Budget, VisibleTools: r.VisibleTools, Executor: r.Executor,
			Synthetic: r.Synthetic, Injections: r.Injections, Language: r.Language, MeasureUnknown: r.MeasureUnknown}
		if s.Phased {
			sc.Phases = append(sc.Phases, req)
		} else {
			sc.Request = &req
		}
	}
	return sc
}
