package generate

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// A difference's decisions are the ones it breaks (issue 54): the
// decisions of the first point where the run diverged from the
// reference's, in the order the run happened (the assembly, then the
// first differing step — its input, its output, its action before its
// outcome, its history, its counters, its events — then how the run
// stopped; the trajectory's account of a part before the events that
// report it); then, for a variant, the decisions its source scenario
// cites; then the decisions its drawn features exist for (features.go).
// Fields' decisions are docs/implementing.md's "Every trajectory field
// and the record that governs it" (fieldRecords; a test keeps the two
// equal), refined where the trajectory says more: an assembly refusal by
// its kind, the refusal table of the same guide.

// fieldRecords is implementing.md's table of fields by record, row by row.
var fieldRecords = []struct{ fields, records []string }{
	{[]string{"assembly_error", "assembly_error.kind", "assembly_error.tools", "assembly_error.message"}, []string{"0004.D1.min", "0006.D3", "0006.D6.construction", "0008.D2.names", "0010.D4", "0010.D5"}},
	{[]string{"steps", "steps[*].index", "steps[*].phase"}, []string{"0004.D5", "0003.D1"}},
	{[]string{"steps[*].model_input", "steps[*].model_input[*].role", "steps[*].model_input[*].content"}, []string{"0010.D1", "0010.D2", "0010.D3"}},
	{[]string{"steps[*].context_size"}, []string{"0010.D5"}},
	{[]string{"steps[*].model_output"}, []string{"0004.D5", "0011.D1"}},
	{[]string{"steps[*].action", "steps[*].action.kind", "steps[*].action.tool", "steps[*].action.arguments", "steps[*].action.code"}, []string{"0003.D5", "0003.D6", "0003.D5.fence"}},
	{[]string{"steps[*].action.repairs"}, []string{"0003.D6.names"}},
	{[]string{"steps[*].action.error"}, []string{"0003.D7"}},
	{[]string{"steps[*].outcome", "steps[*].outcome.status", "steps[*].outcome.observation", "steps[*].outcome.observation_is_synthetic", "steps[*].outcome.observation_truncated_chars"}, []string{"0008.D4"}},
	{[]string{"steps[*].outcome.env_reported_completion"}, []string{"0006.D5", "0004.D3"}},
	{[]string{"steps[*].history_observation"}, []string{"0007.D2"}},
	{[]string{"steps[*].counters", "steps[*].counters.effective_steps", "steps[*].counters.total_steps"}, []string{"0004.D1"}},
	{[]string{"steps[*].replayed"}, []string{"0002.D4"}},
	{[]string{"handler_calls", "handler_calls[*].tool", "handler_calls[*].arguments", "handler_calls[*].phase"}, []string{"0008.D3"}},
	{[]string{"handler_calls[*].released"}, []string{"0004.D4.release"}},
	{[]string{"model_calls"}, []string{"0003.D3"}},
	{[]string{"model_calls_released"}, []string{"0004.D4.release"}},
	{[]string{"events", "events[*].type", "events[*].phase", "events[*].step", "events[*].raw_output", "events[*].decision", "events[*].repairs"}, []string{"0011.D1", "0003.D6"}},
	{[]string{"events[*].tool", "events[*].status", "events[*].executor_observation", "events[*].error_type", "events[*].error"}, []string{"0011.D1", "0008.D4", "0008.D4.synthetic-dropped"}},
	{[]string{"events[*].reason"}, []string{"0004.D2"}},
	{[]string{"events[*].replayed"}, []string{"0002.D4", "0011.D3"}},
	{[]string{"event_sink_failures"}, []string{"0011.D2.count"}},
	{[]string{"end", "end.reason", "end.effective_steps", "end.total_steps", "end.detail", "end.detail.step", "end.detail.tool", "end.detail.during"}, []string{"0004.D2", "0004.D3.order", "0002.D4.unknown"}},
	{[]string{"phases", "phases[*].name", "phases[*].end", "phases[*].end.reason", "phases[*].end.effective_steps", "phases[*].end.total_steps", "phases[*].end.detail", "phases[*].end.detail.step", "phases[*].end.detail.tool", "phases[*].end.detail.during"}, []string{"0003.D1", "0004.D2"}},
	{[]string{"interrupted", "interrupted.step", "interrupted.during", "interrupted.tool"}, []string{"0004.D4", "0004.D4.deadline"}},
	{[]string{"interrupted.phase"}, []string{"0004.D4.phase"}},
	{[]string{"run_error", "run_error.kind", "run_error.message"}, []string{"0003.D3", "0002.D6", "0002.D5"}},
	{[]string{"resume", "resume.from"}, []string{"0002.D3"}},
	{[]string{"resume.replayed_step"}, []string{"0002.D4"}},
	{[]string{"resume.torn_tail"}, []string{"0002.D5"}},
	{[]string{"resume.crash_point"}, []string{"0002.D1"}},
}

// refusalRecords are the records of each assembly refusal kind
// (implementing.md, "Building a request, and the refusals").
var refusalRecords = map[string][]string{
	"duplicate_tool":               {"0006.D6.construction", "0006.D6.construction.order"},
	"invalid_schema":               {"0006.D6.construction"},
	"unknown_tool":                 {"0006.D6"},
	"missing_handler":              {"0008.D2", "0008.D2.names"},
	"invalid_budget":               {"0004.D1.min"},
	"registry_mismatch":            {"0006.D3", "0006.D3.same"},
	"template_without_placeholder": {"0010.D4", "0010.D4.spelling"},
	"unmeasurable_block":           {"0010.D5", "0010.D5.probe"},
}

// recordsOf is the records of the field at path: its own row, or its
// nearest ancestor's.
func recordsOf(path string) []string {
	p := trajectories.Pattern(path)
	for p != "" {
		for _, row := range fieldRecords {
			if slices.Contains(row.fields, p) {
				return row.records
			}
		}
		i := strings.LastIndexAny(p, ".[")
		if i <= 0 {
			break
		}
		p = p[:i]
	}
	return trajectories.FieldDecisions(path)
}

// The points of a run, in the order it happens.
const (
	atAssembly = iota // the request was built, or refused
	atResume          // the journal was read
	atStep            // a step: its parts below
	atEnd             // how the run stopped
)

// The parts of a step, in the order it happens.
const (
	partInput = iota
	partOutput
	partAction
	partModelStep // the model_step event, emitted once the action is decided
	partOutcome   // the handler's or executor's call and the outcome
	partSettled   // the settlement event
	partHistory
	partCounters
	partOther
)

// point is where in the run a difference lies.
type point struct{ at, step, part int }

func (p point) less(q point) bool {
	if p.at != q.at {
		return p.at < q.at
	}
	if p.step != q.step {
		return p.step < q.step
	}
	return p.part < q.part
}

// golden is what attribution reads of the reference's trajectory.
type golden struct {
	AssemblyError *struct {
		Kind string `json:"kind"`
	} `json:"assembly_error"`
	Steps []struct {
		Phase   string `json:"phase"`
		Index   int    `json:"index"`
		Action  struct{ Kind string }
		Outcome struct {
			Synthetic bool `json:"observation_is_synthetic"`
		}
	} `json:"steps"`
	Events []struct {
		Type  string `json:"type"`
		Step  int    `json:"step"`
		Phase string `json:"phase"`
	} `json:"events"`
}

var position = regexp.MustCompile(`^([a-z_]+)(?:\[(\d+)\])?(.*)$`)

// pointOf places a difference's path in the run.
func (g *golden) pointOf(path string) point {
	m := position.FindStringSubmatch(path)
	if m == nil {
		return point{at: atEnd}
	}
	i, _ := strconv.Atoi(m[2])
	rest := m[3]
	switch m[1] {
	case "assembly_error":
		return point{at: atAssembly}
	case "resume":
		return point{at: atResume}
	case "steps":
		if m[2] == "" {
			return point{at: atStep, step: len(g.Steps), part: partOther}
		}
		return point{at: atStep, step: i, part: stepPart(rest)}
	case "events":
		if m[2] != "" && i < len(g.Events) {
			return g.eventPoint(g.Events[i].Type, g.Events[i].Phase, g.Events[i].Step)
		}
	case "handler_calls":
		if m[2] != "" {
			return g.handlerPoint(i)
		}
	}
	return point{at: atEnd}
}

func stepPart(rest string) int {
	field, _, _ := strings.Cut(strings.TrimPrefix(rest, "."), ".")
	field, _, _ = strings.Cut(field, "[")
	switch field {
	case "model_input", "context_size":
		return partInput
	case "model_output":
		return partOutput
	case "action":
		return partAction
	case "outcome":
		return partOutcome
	case "history_observation":
		return partHistory
	case "counters":
		return partCounters
	}
	return partOther
}

// eventPoint places an event of the reference's run: at its step, after
// the output (model_step) or the outcome (a settlement event); the first
// and last events at the run's start and end.
func (g *golden) eventPoint(typ, phase string, step int) point {
	switch typ {
	case "run_started", "run_resumed":
		if step == 0 {
			return point{at: atResume}
		}
	case "run_ended", "run_interrupted":
		return point{at: atEnd}
	}
	for i, s := range g.Steps {
		if s.Phase == phase && s.Index == step {
			if typ == "model_step" {
				return point{at: atStep, step: i, part: partModelStep}
			}
			return point{at: atStep, step: i, part: partSettled}
		}
	}
	return point{at: atEnd}
}

// handlerPoint places the reference's k-th handler call at the outcome
// of the k-th step that called a handler: a tool call whose observation
// the library did not write.
func (g *golden) handlerPoint(k int) point {
	for i, s := range g.Steps {
		if s.Action.Kind == "tool_call" && !s.Outcome.Synthetic {
			if k == 0 {
				return point{at: atStep, step: i, part: partOutcome}
			}
			k--
		}
	}
	return point{at: atEnd}
}

// divergence is the decisions of the first point where the run diverged,
// in run order, and how many steps had begun by then (0 when no step
// had, or the point is unknown). Problems without a path (the run could
// not finish: it asked for an output the scenario does not script) are
// placed where the reference stopped: its refusal, or its end.
func divergence(probs []engine.Problem, goldenJSON []byte) (ids []string, steps int) {
	var g golden
	_ = json.Unmarshal(goldenJSON, &g) // the reference's own trajectory: it parses
	type placed struct {
		p   point
		ids []string
		own bool // a field of the step itself, before what the runner saw of it
	}
	var all []placed
	for _, pr := range probs {
		if pr.Wording {
			continue // breaks no decision
		}
		if pr.Path == "" {
			at := point{at: atEnd, step: len(g.Steps)}
			ds := recordsOf("end")
			if g.AssemblyError != nil {
				at, ds = point{at: atAssembly}, refusalRecords[g.AssemblyError.Kind]
			}
			all = append(all, placed{at, ds, false})
			continue
		}
		ds := recordsOf(pr.Path)
		if pr.Source == "observed" && len(pr.Decisions) > 0 {
			ds = pr.Decisions // the wire check knows what it breaks
		}
		if trajectories.Pattern(pr.Path) == "assembly_error" || strings.HasPrefix(pr.Path, "assembly_error.") {
			ds = refusalDecisions(g, pr)
		}
		all = append(all, placed{g.pointOf(pr.Path), ds, strings.HasPrefix(pr.Path, "steps[")})
	}
	if len(all) == 0 {
		return nil, 0
	}
	first := all[0].p
	for _, x := range all[1:] {
		if x.p.less(first) {
			first = x.p
		}
	}
	slices.SortStableFunc(all, func(a, b placed) int {
		if a.p.part != b.p.part {
			return a.p.part - b.p.part
		}
		return boolOrder(b.own) - boolOrder(a.own)
	})
	for _, x := range all {
		if x.p.at == first.at && x.p.step == first.step {
			ids = appendNew(ids, x.ids...)
		}
	}
	if first.at == atStep {
		steps = first.step + 1
	}
	return ids, steps
}

func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}

// refusalDecisions are the records of the refusals a difference at
// assembly_error names: the reference's kind, the implementation's, and
// the refusal order when both refused but differently.
func refusalDecisions(g golden, pr engine.Problem) []string {
	var ids []string
	want := ""
	if g.AssemblyError != nil {
		want = g.AssemblyError.Kind
		ids = appendNew(ids, refusalRecords[want]...)
	}
	got := kindOf(pr.Got)
	if pr.Path == "assembly_error.kind" {
		if s, ok := pr.Got.(string); ok {
			got = s
		}
	}
	ids = appendNew(ids, refusalRecords[got]...)
	if want != "" && got != "" && want != got {
		ids = appendNew(ids, "0006.D6.refusal-order")
	}
	if len(ids) == 0 {
		return recordsOf("assembly_error")
	}
	return ids
}

func kindOf(v any) string {
	if m, ok := v.(map[string]any); ok {
		s, _ := m["kind"].(string)
		return s
	}
	return ""
}

// attribution is the decisions a difference breaks (above) and, for a
// variant, the scenario it was drawn from.
func attribution(c drawnCase, probs []engine.Problem, goldenJSON []byte) (ids []string, source string) {
	ids, steps := divergence(probs, goldenJSON)
	switch x := c.(type) {
	case *variant:
		ids = appendNew(ids, x.decisions...)
		source = x.source
	case *spec:
		ids = appendNew(ids, x.outputFeatures(steps)...)
		ids = appendNew(ids, x.caseFeatures()...)
	}
	return ids, source
}

// placeholder is what a case cites while it is compared: the loader
// wants a decision, and the case has none of its own until a difference
// is attributed.
var placeholder = []string{"0004.D2"}

// cite gives each problem the decisions of its own field in place of the
// placeholder the compared case cited, in its data and its sentence.
func cite(probs []engine.Problem) []engine.Problem {
	out := slices.Clone(probs)
	suffix := " (" + strings.Join(placeholder, ", ") + ")"
	for i, p := range out {
		if !slices.Equal(p.Decisions, placeholder) || p.Path == "" {
			continue
		}
		ds := recordsOf(p.Path)
		if len(ds) == 0 {
			continue
		}
		out[i].Decisions = ds
		if strings.HasSuffix(p.Message, suffix) {
			out[i].Message = strings.TrimSuffix(p.Message, suffix) + " (" + strings.Join(ds, ", ") + ")"
		}
	}
	return out
}
