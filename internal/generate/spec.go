package generate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// spec is a generated case in a shape that is easy to shrink; render
// turns it into a scenario.
type spec struct {
	tools       []tool
	runFragment string
	goal        string
	template    string
	injections  [][2]string // channel, entry
	eff, total  int
	visible     []string // nil: every tool
	fullExec    bool     // executor: full_registry (derived from the unrestricted registry)
	code        bool     // language: code
	unmeasured  string   // a block type the size measure cannot measure
	project     []outcome
	model       []string
	sink        string
	crash       *crash
	torn        bool
	damage      string // journal_damage after the crash
	cancel      *cancel
	modelFail   int // the step whose model call fails once (0: none)
	resume      bool
	// second, when set, is a second phase sharing the definition, with
	// its own goal, budget and model script (0003.D1).
	second *phase
	// why holds the decisions each output text was drawn for
	// (features.go); shrinking shares it, since it never writes outputs.
	why map[string][]string
}

type phase struct {
	goal       string
	eff, total int
	model      []string
}

type tool struct {
	name        string
	description string
	props       []prop
	required    []string
	broken      bool // parameters that are not a JSON Schema
	replay      string
	completes   bool
	handler     []behaviour // nil: no handler
}

// prop is one argument of a tool's schema; def, when set, is the
// schema's default, which validation never fills in (0006.D6.no-coercion).
type prop struct {
	name, typ string
	def       any
	rich      *richSchema // typ "rich": a nested, array, enum or integer shape (schemas.go)
}

type behaviour struct {
	kind string // return, echo, error, env_error
	text string
}

type outcome struct {
	status      string
	observation string
	complete    bool
}

type crash struct {
	when, record string
	step         int
	phase        string // in a phased case, the phase it stops
}

type cancel struct {
	step   int
	during string
	// deadline makes it the run's deadline passing instead (0004.D4.deadline).
	deadline bool
	phase    string
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// chance is true with probability p.
func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

// newSpec draws one case.
func newSpec(r *rand.Rand) *spec {
	s := &spec{runFragment: textOrBlank(r), goal: textOrBlank(r)}
	s.drawTools(r)
	s.drawRegistration(r)
	s.drawRequest(r)
	for range s.total + 1 {
		s.model = append(s.model, s.output(r))
	}
	s.breakBelowTop(r)
	s.drawFaults(r)
	if chance(r, 0.15) {
		s.drawPhase(r)
	}
	s.drawShapes(r)
	if chance(r, 0.02) {
		// A total cap of zero is refused too, not only an effective one
		// (0004.D1.min); nothing runs, so no fault is drawn.
		s.total, s.model = 0, s.model[:1]
		s.clearFaults()
		s.second = nil
	}
	return s
}

// drawTools draws 1–3 tools with names, schemas and handlers from the
// vocabularies.
func (s *spec) drawTools(r *rand.Rand) {
	for _, name := range toolNames(r, 1+r.IntN(3)) {
		t := tool{name: name, description: description(r, name), replay: pick(r, "", "SAFE", "NEVER")}
		for range r.IntN(4) {
			p := prop{name: propName(r), typ: pick(r, "string", "string", "integer", "integer", "boolean", "number")}
			if slices.ContainsFunc(t.props, func(q prop) bool { return q.name == p.name }) {
				continue
			}
			if chance(r, 0.2) {
				p.def = value(r, p.typ)
			}
			t.props = append(t.props, p)
			if chance(r, 0.6) {
				t.required = append(t.required, p.name)
			}
		}
		drawRich(r, &t)
		t.completes = chance(r, 0.25)
		if !chance(r, 0.08) {
			for range 1 + r.IntN(2) {
				t.handler = append(t.handler, drawBehaviour(r))
			}
		}
		t.broken = chance(r, 0.02)
		s.tools = append(s.tools, t)
	}
	if chance(r, 0.1) {
		// Two tools whose names differ in case only: two tools, no
		// duplicate (0006.D6.names-exact).
		if name, ok := s.caseVariant(s.tools[0].name); ok {
			t := s.tools[0]
			t.name, t.description = name, description(r, name)
			t.handler = []behaviour{drawBehaviour(r)}
			s.tools = append(s.tools, t)
		}
	}
}

func drawBehaviour(r *rand.Rand) behaviour {
	switch r.IntN(9) {
	case 0, 1:
		return behaviour{"return", text(r)}
	case 2:
		return behaviour{"return", blank(r)} // an empty return is an empty observation (0008.D4)
	case 3, 4:
		return behaviour{"echo", ""}
	case 5:
		return behaviour{"error", text(r)}
	case 6:
		// An empty or a multi-line message (0008.D4.handler-error.format).
		return behaviour{"error", pick(r, "", pick(r, multiLine...))}
	default:
		return behaviour{"env_error", text(r)}
	}
}

// drawRegistration draws the registries construction refuses: one or
// several duplicated names, one or several schemas that do not compile,
// and both at once (0006.D6.construction, 0006.D6.construction.order).
func (s *spec) drawRegistration(r *rand.Rand) {
	switch x := r.Float64(); {
	case x < 0.03:
		s.tools = append(s.tools, s.tools[0])
	case x < 0.06:
		// Several broken specs: every one must be named.
		s.tools = append(s.tools, s.tools[len(s.tools)-1], s.tools[0])
	case x < 0.09:
		for i := range s.tools {
			s.tools[i].broken = true
		}
	case x < 0.1:
		s.tools[0].broken = true
		s.tools = append(s.tools, s.tools[len(s.tools)-1])
	}
}

// drawRequest draws the budget, the visible tools, the executor, the
// language and the context's parts.
func (s *spec) drawRequest(r *rand.Rand) {
	// Caps of 1 are an edge of 0004.D1; so is the last step of a budget.
	s.eff = pick(r, 1, 1, 2, 3)
	s.total = pick(r, 1, 2, 2, 3, 4)
	if chance(r, 0.2) && len(s.tools) > 1 {
		s.visible = []string{s.tools[r.IntN(len(s.tools))].name}
	}
	if chance(r, 0.02) {
		s.visible = append(s.visible, s.unknownName(r)) // restrict_to refuses an unknown name (0006.D6)
		if chance(r, 0.5) {
			// Named twice, and another after it: each once, sorted (0006.D6.restrict-unknown).
			s.visible = append(s.visible, s.visible[len(s.visible)-1], s.unknownName(r))
		}
	}
	if chance(r, 0.08) {
		// With visible tools narrowed this is a registry mismatch; with all
		// of them, the same specs in another registry object (0006.D3.same).
		s.fullExec = true
		if s.visible == nil && chance(r, 0.5) {
			for _, t := range s.tools {
				if !slices.Contains(s.visible, t.name) {
					s.visible = append(s.visible, t.name)
				}
			}
		}
	}
	if chance(r, 0.02) {
		s.eff = 0 // refused: both caps must be at least 1 (0004.D1.min)
	}
	s.code = chance(r, 0.1)
	if chance(r, 0.03) {
		s.unmeasured = pick(r, "observation", "goal_fragment", "model_output")
	}
	if chance(r, 0.25) {
		// Invalid calls and decision failures must not reach the
		// project's executor (0003.D4, 0008.D4.validate).
		for range 1 + r.IntN(2) {
			s.project = append(s.project, outcome{status: pick(r, "EXECUTED", "EXECUTED", "NOT_EXECUTED", "ENV_ERROR"),
				observation: textOrBlank(r), complete: chance(r, 0.3)})
		}
	}
	if chance(r, 0.25) {
		for range 1 + r.IntN(3) {
			s.injections = append(s.injections, [2]string{pick(r, "skills", "cli", "a", "规范"), textOrBlank(r)})
		}
	}
	if chance(r, 0.2) {
		s.template = pick(r, "OBS {observation}", "<obs>{observation}</obs>", "工具结果：{observation}", "Tool finished.",
			"{observation} / {observation}", "Result {n}: {observation}", // two placeholders; a brace pair that is not one
			"{{observation}}", "{{literal}} {observation}", "{observation} {unknown}", "{{ {observation} }}") // doubled braces, unknown placeholders (0010.D4)
	}
}

// drawFaults draws at most one fault of a single-request case.
func (s *spec) drawFaults(r *rand.Rand) {
	switch x := r.Float64(); {
	case x < 0.08:
		s.sink = pick(r, "error", "panic")
	case x < 0.2:
		s.crash = &crash{when: pick(r, "before", "after"), record: pick(r, "model_output", "action_intent", "action_result", "run_end"), step: 1 + r.IntN(s.total)}
		if s.crash.record == "run_end" {
			s.crash.step = 0
		}
	case x < 0.26:
		// Half of them the run's deadline, resumed half the time
		// (0004.D4.deadline.resume).
		s.cancel = &cancel{step: 1 + r.IntN(s.total), during: pick(r, "model_call", "tool_call"), deadline: chance(r, 0.5)}
		s.resume = chance(r, 0.5)
	case x < 0.32:
		s.modelFail = 1 + r.IntN(s.total)
		s.resume = chance(r, 0.5)
	}
	if s.crash != nil && chance(r, 0.3) {
		s.torn = true
	} else if s.crash != nil && s.crash.record == "action_result" && s.crash.when == "after" && chance(r, 0.3) {
		s.damage = pick(r, "last_checksum", "middle") // resume refuses (0002.D5)
	}
}

func (s *spec) clearFaults() {
	s.crash, s.torn, s.damage, s.cancel, s.modelFail, s.resume = nil, false, "", nil, 0, false
}

// drawPhase adds a second phase sharing the definition, and half the
// time moves the fault into one of the phases: a crash, a cancellation
// or a deadline names the phase it stops (0002.D3, 0004.D4.phase).
func (s *spec) drawPhase(r *rand.Rand) {
	s.clearFaults()
	p := &phase{goal: textOrBlank(r), eff: pick(r, 1, 2), total: pick(r, 1, 2, 3)}
	for range p.total + 1 {
		p.model = append(p.model, s.output(r))
	}
	s.second = p
	if !chance(r, 0.5) {
		return
	}
	name, total := "first", s.total
	if chance(r, 0.5) {
		name, total = "second", p.total
	}
	if chance(r, 0.6) {
		s.crash = &crash{when: pick(r, "before", "after"), record: pick(r, "model_output", "action_intent", "action_result", "run_end"), step: 1 + r.IntN(total), phase: name}
		if s.crash.record == "run_end" {
			s.crash.step = 0
		}
		s.torn = chance(r, 0.2)
		return
	}
	s.cancel = &cancel{step: 1 + r.IntN(total), during: pick(r, "model_call", "tool_call"), deadline: chance(r, 0.3), phase: name}
	s.resume = chance(r, 0.5)
}

// value draws a valid value of a schema type.
func value(r *rand.Rand, typ string) any {
	switch typ {
	case "integer":
		return pick(r, 1, 10, 0, -3)
	case "boolean":
		return pick(r, true, false)
	case "number":
		return pick[any](r, 1.5, 2, 0.25)
	}
	return pick(r, "a", "“本市”", "../output/x", text(r))
}

// output draws one model output and notes the decisions its kind exists
// for (features.go), so a difference it causes cites them.
func (s *spec) output(r *rand.Rand) string {
	text, why := s.drawOutput(r)
	s.note(text, why...)
	return text
}

// drawOutput draws one model output: its text, and the decisions the
// kind drawn exists for.
func (s *spec) drawOutput(r *rand.Rand) (string, []string) {
	t := s.tools[r.IntN(len(s.tools))]
	if s.code {
		var out string
		if chance(r, 0.4) {
			out = pick(r, codeShapes(t)...) // whitespace and JSON, both code as written (0003.D5.fence)
		} else {
			out = pick(r, "```python\nprint("+t.name+"('a'))\n```", "print(1)", "```\nx = 1\n```", "", "  \n",
				"```python\n```", "```\n\n```", // empty blocks: no action (0003.D5.fence)
				"First I read it.\n```python\nprint("+t.name+"('a'))\n```", // prose before the fence (0003.D5.fence)
				"```python\nprint(1)\n```\nor\n```python\nprint(2)\n```")   // several blocks: no action
		}
		if strings.TrimSpace(out) == "" {
			return out, whyEmpty
		}
		return out, []string{"0003.D5", "0003.D5.fence"}
	}
	switch x := r.Float64(); {
	case x < 0.34:
		return call(t.name, validArgs(r, t)), nil
	case x < 0.42:
		// Boundary shapes, 8% together (docs/generate.md).
		shapes := []string{
			`{"plan": 3, "action": {"tool": ` + jsonText(t.name) + `, "arguments": {}}}`,                              // a plan that is not a string
			`{"action": {"tool": "", "arguments": {}}}`,                                                               // an empty tool name
			strings.TrimSuffix(call(t.name, validArgs(r, t)), "}}") + `, "note": "x"}}`,                               // a key beside arguments
			"```\n" + call(t.name, validArgs(r, t)) + "\n```",                                                         // a bare fence
			pick(r, "Here is the call:", "我先查一下。", text(r)) + "\n```json\n" + call(t.name, validArgs(r, t)) + "\n```", // prose before a fence
			"```json\n```", // an empty fence
			`{"action": {"tool": ` + jsonText(t.name) + `, "arguments": {"s": "\ud83d"}}}`, // half a surrogate pair
		}
		i := r.IntN(len(shapes))
		return shapes[i], whyBoundary[i]
	case x < 0.5:
		return "```json\n" + call(t.name, validArgs(r, t)) + "\n```", []string{"0003.D6", "0003.D6.names"}
	case x < 0.57:
		return flattened(t.name, validArgs(r, t)), []string{"0003.D6", "0003.D6.names"}
	case x < 0.68:
		why := []string{"0003.D4", "0006.D6.no-coercion", "0008.D4.validate"}
		if slices.ContainsFunc(t.props, func(p prop) bool { return p.rich != nil }) {
			why = append(why, whyBelowTop...)
		}
		return call(t.name, invalidArgs(r, t)), why
	case x < 0.74:
		return call(s.unknownName(r), map[string]any{}), []string{"0003.D4", "0008.D4.validate"}
	case x < 0.8:
		return `{"action": {"tool": ` + jsonText(t.name) + `}}`, []string{"0003.D6.bare-call", "0003.D4", "0008.D4.validate"}
	case x < 0.84:
		return pick(r, "I think the work is done.", text(r)), []string{"0003.D7"}
	case x < 0.87:
		return blank(r), whyEmpty // an empty model output is still a turn of the history
	case x < 0.89:
		// Several calls in one message (0003.D7.several).
		return `{"action": [` + strings.TrimSuffix(strings.TrimPrefix(call(t.name, validArgs(r, t)), `{"action": `), "}") + `, {"tool": ` + jsonText(s.unknownName(r)) + `, "arguments": {}}]}`, []string{"0003.D7.several"}
	case x < 0.97:
		return shapeOutput(r, t), []string{"0003.D7.shapes"} // no object with an action object
	default:
		return `{"action": {"tool": ` + jsonText(t.name) + `, "arguments": {`, []string{"0003.D7"}
	}
}

func validArgs(r *rand.Rand, t tool) map[string]any {
	args := map[string]any{}
	for _, p := range t.props {
		if !slices.Contains(t.required, p.name) && chance(r, 0.5) {
			continue
		}
		if p.rich != nil {
			args[p.name] = validRich(r, p)
			continue
		}
		args[p.name] = value(r, p.typ)
		if p.typ == "integer" && chance(r, 0.1) {
			// Past 2^53, past int64 and past uint64: exact through parse,
			// validation and the wire (0006.D6.exact-numbers).
			args[p.name] = pick[rawJSON](r, "9007199254740993", "-9223372036854775809", "18446744073709551617")
		}
	}
	return args
}

// invalidArgs breaks one argument: a missing required one, or a value of
// another type, including the ones a dynamic language blurs (true where
// an integer is asked, a numeric string; 0006.D6.no-coercion).
func invalidArgs(r *rand.Rand, t tool) map[string]any {
	args := validArgs(r, t)
	if len(t.props) == 0 {
		return map[string]any{"extra": pick[any](r, 1, "x", true)} // allowed: no schema forbids it
	}
	p := propToBreak(r, t)
	if p.rich == nil && slices.Contains(t.required, p.name) && chance(r, 0.4) {
		delete(args, p.name)
		return args
	}
	switch p.typ {
	case "rich":
		args[p.name] = invalidRich(r, p)
	case "integer":
		args[p.name] = pick[any](r, "10", true, false, 1.5)
	case "number":
		args[p.name] = pick[any](r, "1.5", true)
	case "boolean":
		args[p.name] = pick[any](r, "true", 1, 0)
	default:
		args[p.name] = pick[any](r, 7, true)
	}
	return args
}

func call(name string, args map[string]any) string {
	return fmt.Sprintf(`{"action": {"tool": %s, "arguments": %s}}`, jsonText(name), compact(args))
}

func flattened(name string, args map[string]any) string {
	inner := strings.TrimPrefix(compact(args), "{")
	if inner == "}" {
		return fmt.Sprintf(`{"action": {"tool": %s}}`, jsonText(name))
	}
	return fmt.Sprintf(`{"action": {"tool": %s, %s}`, jsonText(name), inner)
}

func compact(v map[string]any) string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		switch x := v[k].(type) {
		case string:
			parts[i] = jsonText(k) + ": " + jsonText(x)
		case rawJSON:
			parts[i] = jsonText(k) + ": " + string(x)
		default:
			parts[i] = fmt.Sprintf("%s: %v", jsonText(k), x)
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
