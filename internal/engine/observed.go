package engine

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/jsontext"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// SourceObserved marks a problem found by holding the trajectory to what
// the runner saw: the trajectory is the implementation's own account of
// its run, the calls the fakes received are the runner's.
const SourceObserved = "observed"

// Claimed is what the implementation itself put in the fields the runner
// fills (handler_calls, model_calls): the protocol asks for them empty,
// so anything else must agree with what was seen.
type Claimed struct {
	HandlerCalls []trajectories.HandlerCall
	ModelCalls   int
}

// ClaimedOf keeps a trajectory's own handler_calls and model_calls before
// the engine replaces them with the runner's.
func ClaimedOf(tr *trajectories.Trajectory) Claimed {
	return Claimed{HandlerCalls: append([]trajectories.HandlerCall(nil), tr.HandlerCalls...), ModelCalls: tr.ModelCalls}
}

// Observed holds a trajectory to the calls the runner received for it
// (rec.Log) and returns each disagreement as a problem whose sentence says
// what the trajectory claims and what the implementation did:
//
//   - each step's model_input is the input of the model call that produced
//     the step's output (the last call for that phase and step), and no
//     model call asks for a step the trajectory does not have unless the
//     run stopped there (0010);
//   - each handler call and project-executor call matches the action of
//     the step it belongs to: tool, arguments as written, code (0003.D4,
//     0008.D3);
//   - handler_calls and model_calls, when the implementation filled them,
//     equal what was received;
//   - while a process reports journal points, every handler and executor
//     call comes after the journal point that wrote its step's intent
//     (0002.D1: intent before action);
//   - the events the runner's sink received are the trajectory's, each
//     received when it happened (timing.go), and each step's context_size
//     is the sum of the runner's measure for its blocks (sizes.go).
func Observed(sc *scenarios.Scenario, tr *trajectories.Trajectory, claimed Claimed, rec fakes.Record) []Problem {
	return observe(sc, tr, claimed, rec).problems
}

// observe is Observed, keeping the observer for PlainSizes.
func observe(sc *scenarios.Scenario, tr *trajectories.Trajectory, claimed Claimed, rec fakes.Record) *observer {
	o := newObserver(sc, tr, rec)
	o.modelInputs()
	o.assemblyRefusal()
	o.unsettledModelCalls()
	o.actions()
	o.executeCounts()
	o.events(tr, rec)
	o.timing()
	o.measures(tr, rec)
	o.probeLast()
	o.oneIntent()
	o.sizes()
	o.claims(claimed)
	return o
}

// stepKey names a step by its phase's index and its number.
type stepKey struct{ phase, step int }

// observer is one trajectory held to one record of calls.
type observer struct {
	sc       *scenarios.Scenario
	tr       *trajectories.Trajectory
	rec      fakes.Record
	runs     []scenarios.Request
	problems []Problem
	steps    map[stepKey]*trajectories.Step
	stepAt   map[*trajectories.Step]int // a step's position, for paths
	// lastModel is the last model call for each step; last is the step of
	// the latest model call: where a stopped run stopped.
	lastModel map[stepKey]*fakes.Call
	last      stepKey
	// stopped says the run stopped in a step (cancelled, a failed call, a
	// journal write, an outcome resume cannot know): no settled step for it.
	stopped bool
	// sized is stepSizes, once computed.
	sized map[stepKey]stepSize
	// mentioned holds the phases the trajectory reports: a phase it says
	// nothing about ran in a process that died before the one that reports
	// (a crash in a later phase), and its calls are not held to this account.
	mentioned map[int]bool
}

func newObserver(sc *scenarios.Scenario, tr *trajectories.Trajectory, rec fakes.Record) *observer {
	o := &observer{sc: sc, tr: tr, rec: rec, runs: sc.Runs(), steps: map[stepKey]*trajectories.Step{},
		stepAt: map[*trajectories.Step]int{}, lastModel: map[stepKey]*fakes.Call{}, mentioned: map[int]bool{}}
	for i := range tr.Steps {
		s := &tr.Steps[i]
		o.steps[o.keyOf(s)] = s
		o.stepAt[s] = i
		o.mentioned[o.phaseOf(s.Phase)] = true
	}
	for i := range rec.Log {
		if c := &rec.Log[i]; c.Kind == fakes.CallModel {
			o.lastModel[stepKey{c.Phase, c.Step}] = c
			o.last = stepKey{c.Phase, c.Step}
		}
	}
	o.stopped = tr.Interrupted != nil || tr.RunError != nil || (tr.End != nil && tr.End.Detail != nil)
	for _, p := range tr.Phases {
		o.mentioned[o.phaseOf(p.Name)] = true
	}
	if tr.Interrupted != nil {
		o.mentioned[o.phaseOf(tr.Interrupted.Phase)] = true
	}
	if len(o.runs) == 1 {
		o.mentioned[0] = true
	}
	return o
}

// phaseOf is the index of the phase a name names; 0 for a single request,
// -1 for a name the scenario does not have.
func (o *observer) phaseOf(name string) int {
	if len(o.runs) == 1 {
		return 0
	}
	for i, r := range o.runs {
		if r.Name == name {
			return i
		}
	}
	return -1
}

func (o *observer) keyOf(s *trajectories.Step) stepKey { return stepKey{o.phaseOf(s.Phase), s.Index} }

// earlier reports whether a call belongs to a phase that ran in a process
// before the one that reports and that the trajectory does not mention.
func (o *observer) earlier(c *fakes.Call) bool {
	return c.Kind != fakes.CallPoint && c.Process < o.rec.Process && !o.mentioned[c.Phase]
}

// modelInputs holds each step's model_input to the last model call for it.
func (o *observer) modelInputs() {
	for i := range o.tr.Steps {
		s := &o.tr.Steps[i]
		where := o.stepName(s)
		c := o.lastModel[o.keyOf(s)]
		if c == nil {
			o.add(fmt.Sprintf("steps[%d].model_input", i), []string{"0010.D1"},
				"%s: the trajectory reports a model input, but the implementation sent no model call for that step (model calls received: %s)", where, modelSteps(o.rec.Log))
			continue
		}
		if d := firstMessageDiff(s.ModelInput, c.Input); d != "" {
			o.add(fmt.Sprintf("steps[%d].model_input", i), []string{"0010.D1", "0010.D2"},
				"%s: the trajectory says the model was sent %s; the implementation sent %s (%s)", where, render(s.ModelInput), render(c.Input), d)
		}
	}
}

// assemblyRefusal: a request refused at assembly made no call.
func (o *observer) assemblyRefusal() {
	if o.tr.AssemblyError == nil {
		return
	}
	// In a phased scenario the refusal is the phase's that has neither
	// steps nor an end: the phases before it ran (0003.D1).
	var log []fakes.Call
	for _, c := range o.rec.Log {
		if len(o.sc.Runs()) == 1 || !o.mentioned[c.Phase] {
			log = append(log, c)
		}
	}
	if n := count(log, fakes.CallModel) + count(log, fakes.CallHandler) + count(log, fakes.CallExecute); n > 0 {
		o.add("assembly_error", []string{"0006.D3", "0008.D2"},
			"the trajectory says the request was refused before anything ran (%s); the implementation made %d model, handler or executor call(s)", o.tr.AssemblyError.Kind, n)
	}
}

// unsettledModelCalls: no model call asks for a step the trajectory does
// not have, unless the run stopped in it (0004.D3).
func (o *observer) unsettledModelCalls() {
	reported := map[stepKey]bool{}
	for i := range o.rec.Log {
		c := &o.rec.Log[i]
		k := stepKey{c.Phase, c.Step}
		if c.Kind != fakes.CallModel || reported[k] || o.earlier(c) || o.steps[k] != nil || o.tr.AssemblyError != nil {
			continue
		}
		if o.stopped && k == o.last {
			continue // the step the run stopped in (cancelled, or its call failed)
		}
		if o.unknownIn(c.Phase, c.Step) {
			continue // a phase that ended with an outcome resume cannot know
		}
		reported[k] = true
		o.add("steps", []string{"0004.D3"},
			"the implementation sent a model call for %s, but the trajectory has no such step and does not say the run stopped there", o.callName(c.Phase, c.Step))
	}
}

// actions holds each handler and executor call to the action of its step
// (the step of the latest model call), and, while points are reported,
// to its intent having been journalled first (0002.D1).
func (o *observer) actions() {
	intent := map[int]bool{} // steps whose intent was written since the last model call
	for i := range o.rec.Log {
		c := &o.rec.Log[i]
		if o.earlier(c) {
			continue
		}
		switch c.Kind {
		case fakes.CallModel:
			intent = map[int]bool{}
		case fakes.CallPoint:
			if c.Record == "action_intent" && c.When == "after" {
				intent[c.Step] = true
			}
		case fakes.CallHandler, fakes.CallExecute:
			o.action(c, intent[c.Step])
		}
	}
}

func (o *observer) action(c *fakes.Call, intentWritten bool) {
	what := "handler_call " + c.Tool
	if c.Kind == fakes.CallExecute {
		what = "execute_call"
	}
	if c.Points && !intentWritten {
		o.add("steps", []string{"0002.D1"},
			"the implementation sent %s for %s before the journal point after its action_intent: the action ran before its intent was written", what, o.callName(c.Phase, c.Step))
	}
	s := o.steps[stepKey{c.Phase, c.Step}]
	if s == nil {
		if !o.stopped && !o.unknownIn(c.Phase, c.Step) {
			o.add("steps", []string{"0003.D4"}, "the implementation sent %s for %s, but the trajectory has no such step", what, o.callName(c.Phase, c.Step))
		}
		return
	}
	// The path and the texts are built only for a problem: this runs for
	// every action of every scenario.
	path := func() string { return fmt.Sprintf("steps[%d].action", o.stepAt[s]) }
	if c.Kind == fakes.CallExecute {
		if got, want := actionText(c.Action), actionText(&s.Action); got != want {
			o.add(path(), []string{"0003.D4", "0008.D3"}, "%s: the trajectory says the action was %s; the implementation sent the project executor %s", o.stepName(s), want, got)
		}
		return
	}
	if s.Action.Kind != "tool_call" || s.Action.Tool != c.Tool {
		o.add(path(), []string{"0003.D4"}, "%s: the trajectory says the action was %s; the implementation called the handler of %q", o.stepName(s), actionText(&s.Action), c.Tool)
	} else if !sameArgs(s.Action.Arguments, c.Arguments) && !(s.Action.Arguments == nil && argsText(c.Arguments) == "{}") {
		o.add(path()+".arguments", []string{"0003.D4", "0006.D6.no-coercion"}, "%s: the trajectory says %s was called with %s; its handler received %s", o.stepName(s), c.Tool, argsText(s.Action.Arguments), argsText(c.Arguments))
	}
}

// executeCounts counts every project-executor call: one per executed step
// of a project phase, none for an output that is no action, and no second
// one unless the step is a SAFE replay (0002.D4, 0008.D3).
func (o *observer) executeCounts() {
	executes := map[stepKey]int{}
	for i := range o.rec.Log {
		if c := &o.rec.Log[i]; c.Kind == fakes.CallExecute && !o.earlier(c) {
			executes[stepKey{c.Phase, c.Step}]++
		}
	}
	for k, n := range executes {
		s := o.steps[k]
		switch {
		case s == nil:
			if n > 1 {
				o.add("steps", []string{"0002.D4"}, "the implementation sent the project executor %d calls for %s, which the trajectory does not settle: an action runs once", n, o.callName(k.phase, k.step))
			}
		case s.Action.Kind == "none":
			o.add(fmt.Sprintf("steps[%d].action", o.stepAt[s]), []string{"0003.D7", "0008.D3"}, "%s: the trajectory says the output was no action, yet the implementation sent the project executor %d call(s) for it", o.stepName(s), n)
		case n > 1 && !s.Replayed:
			o.add(fmt.Sprintf("steps[%d].action", o.stepAt[s]), []string{"0002.D4", "0008.D3"}, "%s: the implementation sent the project executor %d calls for one action that is not a replayed SAFE step: an action runs once", o.stepName(s), n)
		}
	}
	for i := range o.tr.Steps {
		s := &o.tr.Steps[i]
		ph := o.phaseOf(s.Phase)
		if ph < 0 || ph >= len(o.runs) || o.runs[ph].Executor != "project" || s.Action.Kind == "none" || s.Outcome.Status == "NOT_EXECUTED" {
			continue
		}
		if executes[stepKey{ph, s.Index}] == 0 {
			o.add(fmt.Sprintf("steps[%d].outcome", i), []string{"0008.D3"}, "%s: the trajectory reports the action %s, but no execute_call for it reached the project executor", o.stepName(s), strings.ToLower(s.Outcome.Status))
		}
	}
}

// claims holds handler_calls and model_calls, when the implementation
// filled them, to what the runner received.
func (o *observer) claims(claimed Claimed) {
	if len(claimed.HandlerCalls) > 0 {
		a, _ := jsontext.Marshal(claimed.HandlerCalls)
		b, _ := jsontext.Marshal(append([]trajectories.HandlerCall{}, o.rec.HandlerCalls...))
		if string(a) != string(b) {
			o.add("handler_calls", []string{"0008.D3"}, "the trajectory says the handlers were called %s; the runner's handlers received %s", a, b)
		}
	}
	if claimed.ModelCalls != 0 && claimed.ModelCalls != o.rec.ModelCalls {
		o.add("model_calls", []string{"0003.D3"}, "the trajectory says %d model call(s); the runner received %d", claimed.ModelCalls, o.rec.ModelCalls)
	}
}

func (o *observer) add(path string, decisions []string, format string, args ...any) {
	stmt := fmt.Sprintf(format, args...)
	o.problems = append(o.problems, Problem{Source: SourceObserved, Path: path, Statement: stmt,
		Message: "observed: " + stmt + " (" + strings.Join(decisions, ", ") + ")", Decisions: decisions})
}

func (o *observer) stepName(s *trajectories.Step) string {
	if s.Phase != "" {
		return fmt.Sprintf("step %d of phase %s", s.Index, s.Phase)
	}
	return fmt.Sprintf("step %d", s.Index)
}

func (o *observer) callName(phase, step int) string {
	if len(o.runs) > 1 && phase >= 0 && phase < len(o.runs) {
		return fmt.Sprintf("step %d of phase %s", step, o.runs[phase].Name)
	}
	return fmt.Sprintf("step %d", step)
}

func count(log []fakes.Call, kind string) int {
	n := 0
	for _, c := range log {
		if c.Kind == kind {
			n++
		}
	}
	return n
}

func modelSteps(log []fakes.Call) string {
	var out []string
	for _, c := range log {
		if c.Kind == fakes.CallModel {
			out = append(out, fmt.Sprintf("phase %d step %d", c.Phase, c.Step))
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// firstMessageDiff names where two message lists first differ, or "".
func firstMessageDiff(claimed, sent []trajectories.Message) string {
	for i := range min(len(claimed), len(sent)) {
		if claimed[i] != sent[i] {
			return fmt.Sprintf("message %d differs", i)
		}
	}
	if len(claimed) != len(sent) {
		return fmt.Sprintf("%d message(s) claimed, %d sent", len(claimed), len(sent))
	}
	return ""
}

func render(v any) string {
	b, err := jsontext.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const most = 300
	if len(b) > most {
		return string(b[:most]) + fmt.Sprintf("… (%d bytes)", len(b))
	}
	return string(b)
}

// actionText renders the decided part of an action (kind, tool,
// arguments, code), without the repairs and parse error that the
// executor is not given.
func actionText(a *trajectories.Action) string {
	if a == nil {
		return "no action"
	}
	return render(struct {
		Kind      string `json:"kind"`
		Tool      string `json:"tool,omitempty"`
		Arguments any    `json:"arguments,omitempty"`
		Code      string `json:"code,omitempty"`
	}{a.Kind, a.Tool, a.Arguments, a.Code})
}

// sameArgs reports whether two argument values are the same JSON value:
// numbers by value, whatever their spelling (0006.D6.integer).
func sameArgs(a, b any) bool {
	// Values equal in every part have the same canonical text; only the
	// others need theirs built.
	if reflect.DeepEqual(a, b) {
		return true
	}
	return argsText(jsontext.Canonical(a)) == argsText(jsontext.Canonical(b))
}

func argsText(v any) string {
	if m, ok := v.(map[string]any); ok && m == nil {
		v = nil
	}
	if v == nil {
		return "{}"
	}
	b, err := jsontext.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// events holds the trajectory's events to what the runner's audit sink
// received, when the runner played one (wire-sink; in process, always):
// the events of the last process, in order, exactly, and as many sink
// failures as the runner gave (0011.D1, 0011.D2, 0011.D2.count).
func (o *observer) events(tr *trajectories.Trajectory, rec fakes.Record) {
	var got []trajectories.Event
	played, failed := false, 0
	for _, c := range rec.Log {
		if c.Kind != fakes.CallEvent {
			continue
		}
		played = true
		if c.Process != rec.Process {
			continue
		}
		got = append(got, *c.Event)
		if c.Failed {
			failed++
		}
	}
	if !played && !rec.Offered[scenarios.PartSink] {
		return
	}
	// The first event where the two accounts part, if they do.
	i := 0
	for i < len(got) && i < len(tr.Events) && render(tr.Events[i]) == render(got[i]) {
		i++
	}
	switch {
	case i < len(got) && i < len(tr.Events):
		o.add(fmt.Sprintf("events[%d]", i), []string{"0011.D1"}, "the trajectory says event %d was %s; the audit sink received %s", i+1, render(tr.Events[i]), render(got[i]))
	case i < len(got):
		o.add("events", []string{"0011.D1"}, "the trajectory reports %d event(s); the audit sink received %d, the next one %s", len(tr.Events), len(got), render(got[i]))
	case i < len(tr.Events):
		o.add(fmt.Sprintf("events[%d]", i), []string{"0011.D1"}, "the trajectory reports event %s; the audit sink received only %d event(s)", render(tr.Events[i]), len(got))
	}
	if failed > 0 && tr.EventSinkFailures != failed {
		o.add("event_sink_failures", []string{"0011.D2", "0011.D2.count"}, "the trajectory says event_sink_failures %d; the runner's audit sink failed %d event(s)", tr.EventSinkFailures, failed)
	}
}

// measures holds the run to the runner's size measure, when the runner
// played it (wire-measure; in process, always): once the measure refused a
// block type, no model call of that phase may carry a block of the type,
// whose size nobody measured (0010.D5); and a refusal in the trajectory
// must follow a refusal of the runner's.
func (o *observer) measures(tr *trajectories.Trajectory, rec fakes.Record) {
	log := rec.Log
	runs := o.sc.Runs()
	played := false
	refused := map[int]map[string]bool{} // phase -> block types refused so far
	for _, c := range log {
		switch c.Kind {
		case fakes.CallMeasure:
			played = true
			if c.Refused {
				if refused[c.Phase] == nil {
					refused[c.Phase] = map[string]bool{}
				}
				refused[c.Phase][c.Block] = true
			}
		case fakes.CallModel:
			if c.Phase < 0 || c.Phase >= len(runs) {
				continue
			}
			for _, b := range blockTypes(o.sc.Definition, runs[c.Phase], c.Input) {
				if refused[c.Phase][b] {
					o.add("steps", []string{"0010.D5"}, "the runner's size measure refused %s blocks, yet the implementation sent the model a context with one (model call for %s): its size was never measured", b, o.callName(c.Phase, c.Step))
					return
				}
			}
		}
	}
	if !played && rec.Offered[scenarios.PartMeasure] && count(log, fakes.CallModel) > 0 {
		o.add("steps", []string{"0010.D5"}, "the runner offered its size measure (wire_measure), yet the implementation sent model calls without asking it to measure a block")
	}
	if (played || rec.Offered[scenarios.PartMeasure]) && len(refused) == 0 && tr.AssemblyError != nil && tr.AssemblyError.Kind == "unmeasurable_block" {
		o.add("assembly_error", []string{"0010.D5"}, "the trajectory says the request was refused for a block the measure cannot size; the runner's measure refused none")
	}
}

// blockTypes names the block types (0010.D5.names) a model input holds,
// from the request that built it: the fragments and injections it was
// given, then the model outputs (assistant messages) and the rendered
// observations (user messages after the first output).
func blockTypes(def scenarios.Definition, r scenarios.Request, input []trajectories.Message) []string {
	var out []string
	if def.RunFragment != "" {
		out = append(out, "run_fragment")
	}
	for _, in := range r.Injections {
		if in.Text != "" {
			out = append(out, "injection")
			break
		}
	}
	if r.GoalFragment != "" {
		out = append(out, "goal_fragment")
	}
	output, observation := false, false
	for _, m := range input {
		switch {
		case m.Role == "assistant":
			output = true
		case output:
			observation = true
		}
	}
	if output {
		out = append(out, "model_output")
	}
	if observation {
		out = append(out, "observation")
	}
	return out
}

// unknownIn reports whether a phase of a phased trajectory ended in that
// step with an end.detail (resume_outcome_unknown): a later phase's end is
// not the trajectory's end, so the top-level end.detail does not say it.
func (o *observer) unknownIn(phase, step int) bool {
	for _, p := range o.tr.Phases {
		if d := p.End.Detail; d != nil && d.Step == step && o.phaseOf(p.Name) == phase {
			return true
		}
	}
	return false
}
