package refdriver

import (
	"context"
	"errors"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/deviation"
	"github.com/polyloop/polyloop-conform/reference/action"
	"github.com/polyloop/polyloop-conform/reference/assembly"
	"github.com/polyloop/polyloop-conform/reference/tools"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// This file is the one adapter between the reference kernel's types and
// the runner's language (the wire format: trajectories and scenarios
// types). Every conversion between the two stands here once.

// Env is the outside world a scenario runs against, in the runner's
// language: the fakes in process, the remote runner behind
// serve-reference. A handler's failures are the fakes' error values
// (*fakes.NamedError, *fakes.EnvError, *fakes.Panic, *fakes.Blocked).
type Env interface {
	Complete(ctx context.Context, phase int, input []trajectories.Message) (string, error)
	HasHandler(tool string) bool
	CallHandler(ctx context.Context, phase int, tool string, args map[string]any) (string, error)
	Execute(ctx context.Context, phase int, a trajectories.Action) (scenarios.ScriptedOutcome, error)
}

// WireMessages converts the kernel's messages to the wire's.
func WireMessages(in []assembly.Message) []trajectories.Message {
	out := make([]trajectories.Message, len(in))
	for i, m := range in {
		out[i] = trajectories.Message{Role: m.Role, Content: m.Content}
	}
	return out
}

// wireAction is an action as a trajectory and the protocol show it:
// arguments only when the model gave an object (0003.D6).
func wireAction(a action.Action, repairs []string, errText string) trajectories.Action {
	w := trajectories.Action{Kind: string(a.Kind), Tool: a.Tool, Code: a.Code, Repairs: repairs, Error: errText}
	if a.HasArgs {
		w.Arguments = a.Arguments
	}
	return w
}

// kernelOutcome is a scripted project executor's outcome in the kernel's
// shape; no completion signal reads as "not complete" (0004 档 G).
func kernelOutcome(s scenarios.ScriptedOutcome) tools.ActionOutcome {
	return tools.ActionOutcome{
		Status:                    tools.Status(s.Status),
		Observation:               s.Observation,
		ObservationIsSynthetic:    s.ObservationIsSynthetic,
		EnvReportedCompletion:     s.EnvReportedCompletion && !s.NoCompletionSignal,
		ObservationTruncatedChars: s.ObservationTruncatedChars,
	}
}

// wireOutcome is the kernel's outcome as a trajectory records it.
func wireOutcome(o tools.ActionOutcome) trajectories.Outcome {
	return trajectories.Outcome{Status: string(o.Status), Observation: o.Observation,
		ObservationIsSynthetic: o.ObservationIsSynthetic, EnvReportedCompletion: o.EnvReportedCompletion,
		ObservationTruncatedChars: o.ObservationTruncatedChars}
}

// kernelHandlerError turns a handler failure from the runner's language
// into what a Go handler of the reference returns: an environment error
// becomes a *tools.ToolEnvironmentError, a broken handler panics (as a
// real one would), anything else passes through (a *fakes.NamedError
// keeps its type name through tools.NamedError).
func kernelHandlerError(err error) error {
	var env *fakes.EnvError
	if errors.As(err, &env) {
		return &tools.ToolEnvironmentError{Message: env.Message}
	}
	var p *fakes.Panic
	if errors.As(err, &p) {
		panic(p.Err)
	}
	return err
}

// projectExecutor is a phase's project executor: the kernel's action goes
// out in the wire's shape, the scripted outcome comes back in the kernel's.
type projectExecutor struct {
	env   Env
	phase int
}

func (p projectExecutor) Execute(ctx context.Context, a action.Action) (tools.ActionOutcome, error) {
	s, err := p.env.Execute(ctx, p.phase, wireAction(a, nil, ""))
	if err != nil {
		return tools.ActionOutcome{}, err
	}
	return kernelOutcome(s), nil
}

// Driver is the reference kernel in process as the engine runs
// implementations (engine.Driver): over the fakes, with the same adapter
// serve-reference uses.
type Driver struct {
	// Schemas, when set, shares compiled tool schemas between runs; a
	// scenario's schemas are otherwise compiled for every run.
	Schemas *tools.SchemaCache
	// Deviations turns on named departures from the design (selfcheck).
	Deviations deviation.Set
	// Staged stages the failing sink and the measure's refusal in the
	// driver, as an implementation that offers neither wire-sink nor
	// wire-measure does, instead of letting the fakes play them.
	Staged bool
}

// Name names the implementation in reports.
func (Driver) Name() string { return "reference (in process)" }

// Capabilities is what the reference claims.
func (Driver) Capabilities() []string { return Capabilities() }

// Run runs sc on the reference against the fakes.
func (d Driver) Run(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env) (*trajectories.Trajectory, error) {
	// The fakes play the audit sink and the size measure, as a runner does
	// over the protocol for an implementation that offers them: the
	// failing sink and the refused block are the runner's, not the kernel's.
	o := Options{Schemas: d.Schemas, Deviations: d.Deviations, Restarted: env.Restarted}
	if !d.Staged {
		o.Sink = func(phase int, e trajectories.Event) string { return env.Emit(phase, e) }
		o.Measure = env.Measure
		o.JournalPlayed = env.JournalPlayed
		env.Offer(scenarios.PartSink)
		env.Offer(scenarios.PartMeasure)
	}
	return Run(ctx, sc, env, o)
}
