package engine

import (
	"fmt"
	"unicode/utf8"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// stepSize is what the runner's measure says about one step's model input:
// the sum of its answers for the blocks (answered), the default measure's
// sum for the same blocks (plain: their code points), and the first block
// the runner was never asked to measure before the model call ("" when
// every block was), or refused set when the runner refused one.
type stepSize struct {
	answered, plain int
	missing         string
	refused         bool
}

// measureKey is one block as the runner measured it, in one phase.
type measureKey struct {
	phase       int
	block, text string
}

// stepSizes measures, for each step that has a model call, the blocks of
// the last call's input by the runner's answers given before that call
// (in any process of the run: the measure is the runner's, and a resumed
// process may size the blocks of its journal anew or keep their sizes).
// It returns nil when the runner measured nothing.
func (o *observer) stepSizes() map[stepKey]stepSize {
	if o.sized != nil || !o.played(fakes.CallMeasure) {
		return o.sized
	}
	answers := map[measureKey]int{} // -1: refused
	out := map[stepKey]stepSize{}
	for i := range o.rec.Log {
		c := &o.rec.Log[i]
		switch c.Kind {
		case fakes.CallMeasure:
			n := c.Size
			if c.Refused {
				n = -1
			}
			answers[measureKey{c.Phase, c.Block, c.Text}] = n
		case fakes.CallModel:
			k := stepKey{c.Phase, c.Step}
			if o.lastModel[k] != c || c.Phase < 0 || c.Phase >= len(o.runs) {
				continue
			}
			out[k] = sizeOf(c, blockTypesOf(o.sc.Definition, o.runs[c.Phase], c.Input), answers)
		}
	}
	o.sized = out
	return out
}

func sizeOf(c *fakes.Call, types []string, answers map[measureKey]int) stepSize {
	var s stepSize
	for j, m := range c.Input {
		s.plain += utf8.RuneCountInString(m.Content)
		n, ok := answers[measureKey{c.Phase, types[j], m.Content}]
		if types[j] == "" { // a prefix message the spec does not account for
			for _, t := range []string{"run_fragment", "injection", "goal_fragment"} {
				if n, ok = answers[measureKey{c.Phase, t, m.Content}]; ok {
					break
				}
			}
		}
		switch {
		case ok && n < 0:
			s.refused = true
		case ok:
			s.answered += n
		case s.missing == "":
			what := types[j]
			if what == "" {
				what = "prefix"
			}
			s.missing = fmt.Sprintf("message %d (a %s block, %s)", j, what, render(m.Content))
		}
	}
	return s
}

// blockTypesOf names the block type of each message of a model input
// (0010.D2, 0010.D5.names): the messages before the first model output
// are the run fragment, the non-empty injections and the goal fragment the
// request has, in that order ("" each when their number differs from the
// request's); then model outputs (assistant) and observations (user).
func blockTypesOf(def scenarios.Definition, r scenarios.Request, input []trajectories.Message) []string {
	var prefix []string
	if def.RunFragment != "" {
		prefix = append(prefix, "run_fragment")
	}
	for _, in := range r.Injections {
		if in.Text != "" {
			prefix = append(prefix, "injection")
		}
	}
	if r.GoalFragment != "" {
		prefix = append(prefix, "goal_fragment")
	}
	lead := 0
	for lead < len(input) && input[lead].Role != "assistant" {
		lead++
	}
	out := make([]string, len(input))
	for j, m := range input {
		switch {
		case j < lead && lead == len(prefix):
			out[j] = prefix[j]
		case j < lead:
			out[j] = ""
		case m.Role == "assistant":
			out[j] = "model_output"
		default:
			out[j] = "observation"
		}
	}
	return out
}

// sizes holds each step's context_size to the runner's measure, when the
// runner played it (wire-measure; in process, always): every block of the
// step's model input was measured by the runner before the model call,
// and context_size is the sum of the runner's answers (0010.D5). Over the
// protocol the runner's measure weighs each block type by a weight drawn
// per runner, so a kernel that sizes blocks itself reports other numbers.
func (o *observer) sizes() {
	sizes := o.stepSizes()
	if sizes == nil {
		return
	}
	for i := range o.tr.Steps {
		s := &o.tr.Steps[i]
		sz, ok := sizes[o.keyOf(s)]
		if !ok || sz.refused {
			continue // no model call (modelInputs says so), or a refused block (measures does)
		}
		path := fmt.Sprintf("steps[%d].context_size", i)
		switch {
		case sz.missing != "":
			o.add(path, []string{"0010.D5"}, "%s: %s of the model input was never measured by the runner's size measure before the model call; with wire_measure every block of every model input is measured by the runner", o.stepName(s), sz.missing)
		case sz.answered != s.ContextSize:
			o.add(path, []string{"0010.D5"}, "%s: the trajectory says context_size %d; the runner's size measure answered %d in all for the blocks of that model input", o.stepName(s), s.ContextSize, sz.answered)
		}
	}
}

// PlainSizes puts each step's context_size in the default measure's units
// (docs/protocol.md, "The size measure") where the runner measured every
// block of the step: there the check against the runner's answers
// (Observed) replaces the golden's and expect's comparison of
// context_size, which are written in code points; a wrong number is that
// check's problem, not a second one. A step the runner did not measure is
// left as sent, to be judged against the golden. In process the runner's
// measure counts code points, so a right number does not change.
func PlainSizes(sc *scenarios.Scenario, tr *trajectories.Trajectory, rec fakes.Record) {
	newObserver(sc, tr, rec).plainSizes()
}

func (o *observer) plainSizes() {
	sizes := o.stepSizes()
	for i := range o.tr.Steps {
		s := &o.tr.Steps[i]
		if sz, ok := sizes[o.keyOf(s)]; ok && !sz.refused && sz.missing == "" {
			s.ContextSize = sz.plain
		}
	}
}
