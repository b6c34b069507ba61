package refdriver

import (
	"context"
	"errors"
	"slices"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/deviation"
	"github.com/polyloop/polyloop-conform/reference/assembly"
	"github.com/polyloop/polyloop-conform/reference/events"
	"github.com/polyloop/polyloop-conform/reference/run"
	"github.com/polyloop/polyloop-conform/reference/tools"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

func modelFor(env Env, phase int, abandon bool) func(context.Context, []assembly.Message) (string, error) {
	return func(ctx context.Context, in []assembly.Message) (string, error) {
		out, err := env.Complete(ctx, phase, WireMessages(in))
		released(err, abandon)
		return out, err
	}
}

// released marks a cancelled fake call as released: in process, the
// kernel's cancellation reached the call, which is what releasing it means
// (0004.D4.release), unless a deviation abandons it.
func released(err error, abandon bool) {
	var b *fakes.Blocked
	if errors.As(err, &b) && !abandon {
		b.Release()
	}
}

// sinks are the audit sinks of phase i's run: the recorder the trajectory
// is written from, and the runner's sink when it plays one, or else the
// scenario's failing sink, if any, staged here.
func (sr scenarioRun) sinks(rec *events.Recorder, i int) []events.Sink {
	if sr.o.Sink == nil {
		return stagedSinks(rec, sr.sc.Faults.Sink)
	}
	phase := ""
	if multi(sr.sc) {
		phase = sr.sc.Runs()[i].Name
	}
	play, reword := sr.o.Sink, sr.o.RewordSink
	return []events.Sink{rec, events.SinkFunc(func(e events.Event) error {
		we := WireEvent(e, phase)
		if reword {
			RewordEvent(&we, e.ObservationIsSynthetic)
		}
		return sinkFailure(play(i, we))
	})}
}

// sinkFailure is what a failing audit sink does for faults.sink: "error"
// returns an error, "panic" breaks; "" takes the event.
func sinkFailure(fault string) error {
	switch fault {
	case "error":
		return errors.New("audit store unavailable")
	case "panic":
		panic("audit sink bug")
	}
	return nil
}

// WireEvent is a kernel event as trajectories (and the protocol's event
// message) carry it, with its phase's name ("" outside phased scenarios).
func WireEvent(e events.Event, phase string) trajectories.Event {
	return trajectories.Event{Type: e.Type, Phase: phase, Step: e.Step, RawOutput: e.RawOutput,
		Decision: e.Decision, Repairs: e.Repairs, Tool: e.Tool, Status: e.Status, Observation: e.Observation,
		ErrorType: e.ErrorType, Error: e.Error, Reason: e.Reason, Replayed: e.Replayed}
}

func stagedSinks(rec *events.Recorder, fault string) []events.Sink {
	out := []events.Sink{rec}
	if fault != "" {
		out = append(out, events.SinkFunc(func(events.Event) error { return sinkFailure(fault) }))
	}
	return out
}

func definition(sc *scenarios.Scenario) *run.Definition {
	return &run.Definition{RunFragment: sc.Definition.RunFragment, ObservationTemplate: sc.Definition.ObservationTemplate}
}

// BuildRequest assembles phase i of sc; assembly failures come back as
// *run.AssemblyError.
func BuildRequest(sc *scenarios.Scenario, def *run.Definition, i int, env Env, o Options) (*run.Request, error) {
	seams := o.Deviations.Seams()
	r := sc.Runs()[i]
	full, visible, err := registries(sc, r, i, env, o, seams)
	if err != nil {
		return nil, run.AsAssemblyError(err)
	}
	ex, err := executorFor(r, i, env, full, visible, seams)
	if err != nil {
		return nil, err
	}
	c := run.RequestConfig{
		Definition:   def,
		GoalFragment: r.GoalFragment,
		Budget:       budget(r),
		Tools:        visible,
		Executor:     ex,
		Synthetic:    run.SyntheticObservations{NotExecuted: r.Synthetic.NotExecuted, EnvError: r.Synthetic.EnvError},
		Injections:   r.Injections.ByChannel(),
		Language:     run.Language(r.Language),
		Measure:      measureFor(r, i, o),
	}
	first := sc.Runs()[0]
	if err := seams.Request(&c, run.RequestConfig{Budget: budget(first), GoalFragment: first.GoalFragment}); err != nil {
		return nil, err
	}
	return run.NewRequest(c)
}

func budget(r scenarios.Request) run.Budget {
	return run.Budget{MaxEffectiveSteps: r.Budget.MaxEffectiveSteps, MaxTotalSteps: r.Budget.MaxTotalSteps}
}

// registries builds phase i's full registry and the visible one
// (restricted to the phase's visible tools, or the full one).
func registries(sc *scenarios.Scenario, r scenarios.Request, i int, env Env, o Options, seams deviation.Seams) (full, visible *tools.ToolRegistry, err error) {
	cache := o.Schemas
	specs := make([]tools.ToolSpec, 0, len(sc.Tools))
	for _, t := range sc.Tools {
		policy, err := tools.ParseReplayPolicy(t.Replay)
		if err != nil {
			return nil, nil, err
		}
		spec := tools.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters, ReplayPolicy: policy, CompletesRun: t.CompletesRun}
		if env.HasHandler(t.Name) {
			spec.Handler = handlerFor(env, i, t.Name, seams.Abandon())
		}
		specs = append(specs, spec)
	}
	if full, err = tools.NewRegistryWithCache(cache, seams.Specs(specs, cache)...); err != nil {
		return nil, nil, err
	}
	if r.VisibleTools == nil {
		return full, full, nil
	}
	if visible, err = full.RestrictTo(seams.Restrict(full, r.VisibleTools)...); err != nil {
		return nil, nil, err
	}
	visible, err = seams.Visible(visible, cache)
	return full, visible, err
}

// handlerFor is tool name's handler in phase i: the runner's.
func handlerFor(env Env, phase int, name string, abandon bool) tools.ToolHandler {
	return func(ctx context.Context, args map[string]any) (string, error) {
		out, err := env.CallHandler(ctx, phase, name, args)
		released(err, abandon)
		return out, kernelHandlerError(err)
	}
}

// executorFor is phase r's executor: the project's, or one derived from
// the full or the visible registry.
func executorFor(r scenarios.Request, i int, env Env, full, visible *tools.ToolRegistry, seams deviation.Seams) (run.ActionExecutor, error) {
	switch r.Executor {
	case scenarios.ExecutorProject:
		return projectExecutor{env: env, phase: i}, nil
	case scenarios.ExecutorFullRegistry:
		re, err := full.Executor()
		if err != nil {
			return nil, run.AsAssemblyError(err)
		}
		return re, nil
	}
	re, err := visible.Executor()
	if err != nil {
		return nil, seams.Refusal(run.AsAssemblyError(err))
	}
	return re, nil
}

// measureFor is phase r's size measure: the runner's when it plays one,
// else the reference's, refusing the block types the scenario names.
func measureFor(r scenarios.Request, i int, o Options) assembly.Measure {
	if play := o.Measure; play != nil {
		return func(t assembly.BlockType, text string) (int, error) { return play(i, string(t), text) }
	}
	if len(r.MeasureUnknown) == 0 {
		return nil
	}
	unknown := r.MeasureUnknown
	return func(t assembly.BlockType, text string) (int, error) {
		if slices.Contains(unknown, string(t)) {
			return 0, &fakes.Unmeasurable{Block: string(t)}
		}
		return assembly.RuneCount(t, text)
	}
}
