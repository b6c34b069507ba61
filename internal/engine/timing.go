package engine

import "github.com/polyloop/polyloop-conform/fakes"

// timing holds each event the runner's audit sink received to the moment
// it arrived, process by process (0011.D1.delivery): an event reports a
// stage that has happened and reaches the sinks before the next stage, so
// a sink that fails does so while the run is still going (0011.D2), and an
// audit store never holds an event for a record the journal lacks (0002.D1):
//
//   - run_started (or run_resumed) before the phase's first model call;
//   - a step's model_step after that step's model call was answered and
//     before the step's handler or executor call;
//   - while journal points are reported, a settlement event (tool_call,
//     code_action, decision_failed) after the point after its step's
//     action_result, and run_ended after the point after run_end.
//
// One problem per rule, at its first breach: an implementation that
// buffers its events breaks the first rule at every event.
func (o *observer) timing() {
	t := timeline{o: o, seen: map[string]bool{}, models: map[procStep]bool{}, acted: map[procStep]string{},
		opened: map[procPhase]bool{}, results: map[int]map[int]bool{}, ended: map[int]bool{}, sinkPlayed: o.played(fakes.CallEvent)}
	for i := range o.rec.Log {
		c := &o.rec.Log[i]
		switch c.Kind {
		case fakes.CallModel:
			t.model(c)
		case fakes.CallHandler, fakes.CallExecute:
			k := procStep{c.Process, c.Phase, c.Step}
			if t.acted[k] == "" {
				t.acted[k] = "handler_call " + c.Tool
				if c.Kind == fakes.CallExecute {
					t.acted[k] = "execute_call"
				}
			}
		case fakes.CallPoint:
			t.point(c)
		case fakes.CallEvent:
			t.event(c)
		}
	}
}

type procStep struct{ process, phase, step int }
type procPhase struct{ process, phase int }

// timeline is what one pass over the log has seen so far.
type timeline struct {
	o      *observer
	seen   map[string]bool     // rules already breached
	models map[procStep]bool   // model calls received
	acted  map[procStep]string // the first handler or executor call of each step
	opened map[procPhase]bool  // run_started or run_resumed received
	// results holds, per process, the steps whose action_result was
	// journalled since its latest model call; ended, the processes that
	// journalled a run_end since theirs.
	results map[int]map[int]bool
	ended   map[int]bool
	// sinkPlayed: the runner's sink received events in this run.
	sinkPlayed bool
}

func (t *timeline) breach(rule string, decisions []string, format string, args ...any) {
	if t.seen[rule] {
		return
	}
	t.seen[rule] = true
	t.o.add("events", decisions, format, args...)
}

func (t *timeline) model(c *fakes.Call) {
	t.models[procStep{c.Process, c.Phase, c.Step}] = true
	clear(t.results[c.Process])
	t.ended[c.Process] = false
	if t.sinkPlayed && !t.opened[procPhase{c.Process, c.Phase}] {
		t.breach("open", []string{"0011.D1.delivery", "0011.D2"},
			"the implementation sent the model call for %s before its audit sink received run_started (or run_resumed): events reach the sinks when they happen, not buffered to the end of the run", t.o.callName(c.Phase, c.Step))
	}
}

func (t *timeline) point(c *fakes.Call) {
	if c.When != "after" {
		return
	}
	switch c.Record {
	case "action_result":
		if t.results[c.Process] == nil {
			t.results[c.Process] = map[int]bool{}
		}
		t.results[c.Process][c.Step] = true
	case "run_end":
		t.ended[c.Process] = true
	}
}

func (t *timeline) event(c *fakes.Call) {
	ev := c.Event
	k := procStep{c.Process, c.Phase, ev.Step}
	switch ev.Type {
	case "run_started", "run_resumed":
		t.opened[procPhase{c.Process, c.Phase}] = true
	case "model_step":
		if what := t.acted[k]; what != "" {
			t.breach("model-late", []string{"0011.D1.delivery", "0011.D1"},
				"the audit sink received the model_step event of %s after the implementation sent %s for that step: a step's model event reaches the sinks before its action runs", t.o.callName(c.Phase, ev.Step), what)
		} else if !t.models[k] && t.laterModel(c) {
			t.breach("model-early", []string{"0011.D1.delivery", "0011.D1"},
				"the audit sink received the model_step event of %s before the model call for that step was answered", t.o.callName(c.Phase, ev.Step))
		}
	case "tool_call", "code_action", "decision_failed":
		if c.Points && !t.results[c.Process][ev.Step] {
			t.breach("settled-early", []string{"0011.D1.delivery", "0002.D1"},
				"the audit sink received the %s event of %s before the journal point after its action_result: a settlement event reports a result the journal already holds", ev.Type, t.o.callName(c.Phase, ev.Step))
		}
	case "run_ended":
		if c.Points && !t.ended[c.Process] {
			t.breach("ended-early", []string{"0011.D1.delivery", "0002.D2"},
				"the audit sink received run_ended before the journal point after run_end: the end reaches the sinks once the journal holds it")
		}
	}
}

// laterModel reports whether the process that sent the event sends a
// model call for the event's step after it.
func (t *timeline) laterModel(ev *fakes.Call) bool {
	after := false
	for i := range t.o.rec.Log {
		c := &t.o.rec.Log[i]
		if c == ev {
			after = true
			continue
		}
		if after && c.Kind == fakes.CallModel && c.Process == ev.Process && c.Phase == ev.Phase && c.Step == ev.Event.Step {
			return true
		}
	}
	return false
}

// played reports whether the log holds a call of the kind.
func (o *observer) played(kind string) bool {
	for i := range o.rec.Log {
		if o.rec.Log[i].Kind == kind {
			return true
		}
	}
	return false
}
