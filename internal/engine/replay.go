package engine

import (
	"slices"

	"github.com/polyloop/polyloop-conform/fakes"
)

// oneIntent holds a SAFE replay to the intent the journal holds: the
// process that resumed and ran step k again reports no action_intent
// journal point for step k before its first model call, where the replay
// stands (0002.D4.one-intent). Journal points name no phase, so the
// window is what tells the replayed step from a later phase's step of the
// same number.
func (o *observer) oneIntent() {
	r := o.tr.Resume
	if r == nil || r.ReplayedStep < 1 {
		return
	}
	k := r.ReplayedStep
	for _, c := range o.rec.Log {
		if c.Process != o.rec.Process {
			continue
		}
		if c.Kind == fakes.CallModel {
			return
		}
		if c.Kind == fakes.CallPoint && c.Record == "action_intent" && c.Step == k {
			o.add("steps", []string{"0002.D4.one-intent"},
				"the implementation ran step %d again on resume and reported a journal point %s action_intent for it: a SAFE replay runs the intent the journal holds and writes no second one", k, c.When)
			return
		}
	}
}

// probeLast holds the measure's probe to its place in the refusal order:
// a request refused for a reason before unmeasurable_block asks the
// runner's measure nothing (0010.D5.probe-last). In a phased scenario the
// refused phase is the one the trajectory reports no end or step for.
// The decision is a SHOULD, so only a scenario that cites it holds a run
// to it: a port that probes first fails that scenario, not every refusal.
func (o *observer) probeLast() {
	ae := o.tr.AssemblyError
	if ae == nil || ae.Kind == "unmeasurable_block" || !slices.Contains(o.sc.Decisions, "0010.D5.probe-last") {
		return
	}
	n := 0
	for _, c := range o.rec.Log {
		if c.Kind == fakes.CallMeasure && (len(o.runs) == 1 || !o.mentioned[c.Phase]) {
			n++
		}
	}
	if n > 0 {
		o.add("assembly_error", []string{"0010.D5.probe-last"},
			"the trajectory says the request was refused (%s), a refusal that comes before the measure's probe; the implementation asked the runner's measure %d time(s) for that request", ae.Kind, n)
	}
}
