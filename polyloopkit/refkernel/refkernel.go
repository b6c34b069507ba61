// Package refkernel is the reference kernel (reference/) behind the Go
// kit: a polyloopkit.Kernel whose RunFunc builds the reference's registry
// and requests from the spec and answers every seam through
// polyloopkit.Seams. It is the kit's worked example and the kernel that
// examples/go and polylooptest's own tests judge; a team's kernel takes
// its place.
package refkernel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/polyloopkit"
	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/reference/tools"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// Kernel returns the reference as a kit Kernel claiming every capability
// and protocol option.
func Kernel() polyloopkit.Kernel {
	schemas := &tools.SchemaCache{}
	return polyloopkit.Kernel{Name: "polyloop-reference-kit", Version: protocol.SuiteVersion, SpecVersion: "design",
		Capabilities: polyloopkit.AllCapabilities(),
		Run: func(ctx context.Context, spec polyloopkit.Spec, seams *polyloopkit.Seams) (*trajectories.Trajectory, error) {
			return Run(ctx, spec, seams, schemas)
		}}
}

// Run runs one scenario on the reference kernel through seams. schemas
// (may be nil) shares compiled tool schemas between runs.
func Run(ctx context.Context, spec polyloopkit.Spec, seams *polyloopkit.Seams, schemas *tools.SchemaCache) (*trajectories.Trajectory, error) {
	var rs protocol.RunSpec
	data, err := json.Marshal(spec)
	if err == nil {
		err = unmarshalExact(data, &rs)
	}
	if err != nil {
		return nil, fmt.Errorf("refkernel: the spec: %w", err)
	}
	sc := protocol.ScenarioFor(&rs)
	env := &seamsEnv{seams: seams}
	o := refdriver.Options{Schemas: schemas}
	if seams.WireSink {
		o.Sink = env.sink
	}
	if seams.WireMeasure {
		o.Measure = seams.Measure
	}
	switch {
	case seams.Resume:
		return resume(ctx, sc, env, o)
	case spec.Phased && seams.JournalDir != "" && spec.Faults.JournalError == nil:
		var hookFor func(int) journal.Hook
		if seams.ReportJournalPoints {
			hookFor = env.hook
		}
		return refdriver.ProcessPhases(ctx, sc, env, seams.JournalDir, hookFor, -1, o)
	case seams.ReportJournalPoints && spec.Faults.JournalError != nil:
		o.JournalRoot, o.JournalHook = seams.JournalDir, env.hook(0)
		return refdriver.Run(ctx, sc, env, o)
	case seams.ReportJournalPoints:
		return refdriver.Process(ctx, sc, env, seams.JournalDir, env.hook(0), false, o)
	case seams.JournalDir != "" && spec.Faults.JournalError == nil:
		return refdriver.Process(ctx, sc, env, seams.JournalDir, nil, false, o)
	}
	o.JournalRoot = seams.JournalDir
	return refdriver.Run(ctx, sc, env, o)
}

// resume resumes the journal the seams name: cut or damaged first when
// asked; in a phased scenario the named phase's journal, then the phases
// after it.
func resume(ctx context.Context, sc *scenarios.Scenario, env *seamsEnv, o refdriver.Options) (*trajectories.Trajectory, error) {
	seams := env.seams
	from := 0
	if sc.Request == nil {
		from = seams.ResumePhase
	}
	dir := seams.PhaseJournal(from)
	if seams.TearTail {
		if err := refdriver.TearTail(dir); err != nil {
			return nil, err
		}
	}
	if seams.Damage != "" {
		if err := refdriver.DamageJournal(dir, seams.Damage); err != nil {
			return nil, err
		}
	}
	if sc.Request == nil {
		return refdriver.ProcessPhases(ctx, sc, env, seams.JournalDir, nil, from, o)
	}
	var hook journal.Hook
	if seams.ReportJournalPoints {
		hook = env.hook(0)
	}
	return refdriver.Process(ctx, sc, env, seams.JournalDir, hook, true, o)
}

// seamsEnv is refdriver's Env over the kit's seams: the kit's errors
// become the ones the reference's adapters know.
type seamsEnv struct{ seams *polyloopkit.Seams }

func (e *seamsEnv) Complete(ctx context.Context, phase int, input []trajectories.Message) (string, error) {
	out, err := e.seams.Model(ctx, phase, input)
	var me *polyloopkit.ModelError
	if errors.As(err, &me) {
		return "", &fakes.ModelFailure{Message: me.Message}
	}
	return out, err
}

func (e *seamsEnv) HasHandler(tool string) bool { return e.seams.HasHandler(tool) }

func (e *seamsEnv) CallHandler(ctx context.Context, phase int, tool string, args map[string]any) (string, error) {
	out, err := e.seams.Handler(ctx, phase, tool, args)
	var he *polyloopkit.HandlerError
	var ee *polyloopkit.EnvError
	switch {
	case errors.As(err, &he):
		return "", &fakes.NamedError{Type: he.Type, Message: he.Message}
	case errors.As(err, &ee):
		return "", &fakes.EnvError{Message: ee.Message}
	}
	return out, err
}

func (e *seamsEnv) Execute(ctx context.Context, phase int, a trajectories.Action) (scenarios.ScriptedOutcome, error) {
	args, err := objectOf(a.Arguments)
	if err != nil {
		return scenarios.ScriptedOutcome{}, err
	}
	o, err := e.seams.Execute(ctx, phase, polyloopkit.Action{Kind: a.Kind, Tool: a.Tool, Arguments: args, Code: a.Code})
	if err != nil {
		return scenarios.ScriptedOutcome{}, err
	}
	return scenarios.ScriptedOutcome{Status: o.Status, Observation: o.Observation, ObservationIsSynthetic: o.ObservationIsSynthetic,
		EnvReportedCompletion: o.EnvReportedCompletion != nil && *o.EnvReportedCompletion, NoCompletionSignal: o.EnvReportedCompletion == nil,
		ObservationTruncatedChars: o.ObservationTruncatedChars}, nil
}

// sink is the runner's audit sink as refdriver plays one: "" taken,
// "error" or "panic".
func (e *seamsEnv) sink(phase int, ev trajectories.Event) string {
	var se *polyloopkit.SinkError
	switch err := e.seams.Sink(phase, ev); {
	case errors.As(err, &se) && se.Panic:
		return "panic"
	case err != nil:
		return "error"
	}
	return ""
}

// hook reports the reference journal's points of phase i.
func (e *seamsEnv) hook(i int) journal.Hook {
	return func(p journal.Point) error {
		return e.seams.JournalPoint(i, polyloopkit.Point{When: p.When, Seq: p.Seq, Record: p.Record, Step: p.Step})
	}
}

// objectOf is an action's arguments as a JSON object (nil when absent).
func objectOf(v any) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	if m, ok := v.(map[string]any); ok {
		return m, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := unmarshalExact(data, &m); err != nil {
		return nil, fmt.Errorf("refkernel: the action's arguments are not an object: %s", data)
	}
	return m, nil
}

// unmarshalExact decodes data into v keeping numbers as written
// (json.Number), as the kit hands them over (0006.D6.exact-numbers).
func unmarshalExact(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}
