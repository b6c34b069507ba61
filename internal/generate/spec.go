package generate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/polyloop/polyloop-conform/scenarios"
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
}

type phase struct {
	goal       string
	eff, total int
	model      []string
}

type tool struct {
	name      string
	props     []prop
	required  []string
	broken    bool // parameters that are not a JSON Schema
	replay    string
	completes bool
	handler   []behaviour // nil: no handler
}

type prop struct{ name, typ string }

type behaviour struct {
	kind string // return, echo, error, env_error
	text string
}

type outcome struct {
	status   string
	complete bool
}

type crash struct {
	when, record string
	step         int
}

type cancel struct {
	step   int
	during string
	// deadline makes it the run's deadline passing instead (0004.D4.deadline).
	deadline bool
}

var (
	toolNames = []string{"read", "write", "search", "submit"}
	propNames = []string{"path", "query", "limit"}
)

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// chance is true with probability p.
func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

// newSpec draws one case.
func newSpec(r *rand.Rand) *spec {
	s := &spec{runFragment: pick(r, "", "Run.", "你是审核专家。"), goal: pick(r, "Goal.", "", "按计划审核：\n1. 核对")}
	n := 1 + r.IntN(3)
	for _, name := range toolNames[:n] {
		t := tool{name: name, replay: pick(r, "", "SAFE", "NEVER")}
		for _, p := range propNames[:r.IntN(4)] {
			typ := "string"
			if p == "limit" {
				typ = "integer"
			}
			t.props = append(t.props, prop{p, typ})
			if chance(r, 0.6) {
				t.required = append(t.required, p)
			}
		}
		if name == "submit" || chance(r, 0.15) {
			t.completes = true
		}
		if !chance(r, 0.08) {
			k := 1 + r.IntN(2)
			for range k {
				t.handler = append(t.handler, pick(r,
					behaviour{"return", "ok"}, behaviour{"return", "contents of a"}, behaviour{"echo", ""},
					behaviour{"error", "unknown month"}, behaviour{"env_error", "disk unavailable"},
					behaviour{"error", ""})) // an empty message (0008.D4.handler-error.format)
			}
		}
		t.broken = chance(r, 0.02)
		s.tools = append(s.tools, t)
	}
	if chance(r, 0.03) {
		// Two specs of one name: a construction error (0006.D6.construction).
		s.tools = append(s.tools, s.tools[0])
	}
	// Caps of 1 are an edge of 0004.D1; so is the last step of a budget.
	s.eff = pick(r, 1, 1, 2, 3)
	s.total = pick(r, 1, 2, 2, 3, 4)
	if chance(r, 0.2) && len(s.tools) > 1 {
		s.visible = []string{s.tools[r.IntN(len(s.tools))].name}
	}
	if chance(r, 0.02) {
		s.visible = append(s.visible, "nope") // restrict_to refuses an unknown name (0006.D6)
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
	if chance(r, 0.08) {
		s.code = true
	}
	if chance(r, 0.03) {
		s.unmeasured = pick(r, "observation", "goal_fragment", "model_output")
	}
	if chance(r, 0.15) {
		for range 1 + r.IntN(2) {
			s.project = append(s.project, outcome{status: pick(r, "EXECUTED", "EXECUTED", "NOT_EXECUTED", "ENV_ERROR"), complete: chance(r, 0.3)})
		}
	}
	if chance(r, 0.25) {
		for range 1 + r.IntN(3) {
			s.injections = append(s.injections, [2]string{pick(r, "skills", "cli", "a"), pick(r, "Skill text.", "", "CLI help.")})
		}
	}
	if chance(r, 0.2) {
		s.template = pick(r, "OBS {observation}", "<obs>{observation}</obs>", "工具结果：{observation}", "Tool finished.",
			"{observation} / {observation}", "Result {n}: {observation}") // two placeholders; a brace pair that is not one
	}
	for range s.total + 1 {
		s.model = append(s.model, s.output(r))
	}
	switch x := r.Float64(); {
	case x < 0.08:
		s.sink = pick(r, "error", "panic")
	case x < 0.2:
		s.crash = &crash{when: pick(r, "before", "after"), record: pick(r, "model_output", "action_intent", "action_result", "run_end"), step: 1 + r.IntN(s.total)}
		if s.crash.record == "run_end" {
			s.crash.step = 0
		}
	case x < 0.26:
		s.cancel = &cancel{step: 1 + r.IntN(s.total), during: pick(r, "model_call", "tool_call"), deadline: chance(r, 0.3)}
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
	if chance(r, 0.1) {
		// Phases run one after another with no fault in between.
		s.crash, s.torn, s.damage, s.cancel, s.modelFail, s.resume = nil, false, "", nil, 0, false
		p := &phase{goal: pick(r, "Summarize.", "", "汇总"), eff: pick(r, 1, 2), total: pick(r, 1, 2, 3)}
		for range p.total + 1 {
			p.model = append(p.model, s.output(r))
		}
		s.second = p
	}
	if chance(r, 0.02) {
		// A total cap of zero is refused too, not only an effective one
		// (0004.D1.min); nothing runs, so no fault is drawn.
		s.total, s.model = 0, s.model[:1]
		s.crash, s.torn, s.damage, s.cancel, s.modelFail, s.resume, s.second = nil, false, "", nil, 0, false, nil
	}
	return s
}

// output draws one model output.
func (s *spec) output(r *rand.Rand) string {
	t := s.tools[r.IntN(len(s.tools))]
	if s.code {
		return pick(r, "```python\nprint(read('a'))\n```", "print(1)", "```\nx = 1\n```", "",
			"First I read it.\n```python\nprint(read('a'))\n```",     // prose before the fence (0003.D5.fence)
			"```python\nprint(1)\n```\nor\n```python\nprint(2)\n```") // several blocks: no action
	}
	switch x := r.Float64(); {
	case x < 0.37:
		return call(t.name, validArgs(r, t))
	case x < 0.45:
		// Boundary shapes, 8% together (docs/generate.md).
		return pick(r,
			`{"plan": 3, "action": {"tool": "`+t.name+`", "arguments": {}}}`,          // a plan that is not a string
			`{"action": {"tool": "", "arguments": {}}}`,                               // an empty tool name
			strings.TrimSuffix(call(t.name, validArgs(r, t)), "}}")+`, "note": "x"}}`, // a key beside arguments
			"```\n"+call(t.name, validArgs(r, t))+"\n```",                             // a bare fence
			"Here is the call:\n```json\n"+call(t.name, validArgs(r, t))+"\n```")      // prose before a fence
	case x < 0.55:
		return "```json\n" + call(t.name, validArgs(r, t)) + "\n```"
	case x < 0.63:
		return flattened(t.name, validArgs(r, t))
	case x < 0.73:
		return call(t.name, invalidArgs(r, t))
	case x < 0.8:
		return call("nope", map[string]any{})
	case x < 0.86:
		return `{"action": {"tool": "` + t.name + `"}}`
	case x < 0.9:
		return "I think the work is done."
	case x < 0.93:
		// Several calls in one message (0003.D7.several).
		return `{"action": [` + strings.TrimSuffix(strings.TrimPrefix(call(t.name, validArgs(r, t)), `{"action": `), "}") + `, {"tool": "nope", "arguments": {}}]}`
	default:
		return `{"action": {"tool": "` + t.name + `", "arguments": {`
	}
}

func validArgs(r *rand.Rand, t tool) map[string]any {
	args := map[string]any{}
	for _, p := range t.props {
		if !slices.Contains(t.required, p.name) && chance(r, 0.5) {
			continue
		}
		if p.typ == "integer" {
			args[p.name] = pick(r, 1, 10, 0)
		} else {
			args[p.name] = pick(r, "a", "“本市”", "../output/x")
		}
	}
	return args
}

func invalidArgs(r *rand.Rand, t tool) map[string]any {
	args := validArgs(r, t)
	if len(t.props) == 0 {
		return map[string]any{"extra": pick[any](r, 1, "x")} // allowed: no schema forbids it
	}
	p := t.props[r.IntN(len(t.props))]
	if slices.Contains(t.required, p.name) && chance(r, 0.5) {
		delete(args, p.name)
	} else if p.typ == "integer" {
		args[p.name] = "10" // a numeric string: no coercion (0006.D6.no-coercion)
	} else {
		args[p.name] = 7
	}
	return args
}

func call(name string, args map[string]any) string {
	return fmt.Sprintf(`{"action": {"tool": %q, "arguments": %s}}`, name, compact(args))
}

func flattened(name string, args map[string]any) string {
	inner := strings.TrimPrefix(compact(args), "{")
	if inner == "}" {
		return fmt.Sprintf(`{"action": {"tool": %q}}`, name)
	}
	return fmt.Sprintf(`{"action": {"tool": %q, %s}`, name, inner)
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
			parts[i] = fmt.Sprintf("%q: %q", k, x)
		default:
			parts[i] = fmt.Sprintf("%q: %v", k, x)
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// requires lists the capabilities the case needs.
func (s *spec) requires() []string {
	out := []string{"json-actions"}
	if s.crash != nil {
		out = append(out, "resume")
	}
	if s.cancel != nil {
		out = append(out, "cancellation")
	}
	if s.sink != "" {
		out = append(out, "events")
	}
	if s.project != nil {
		out = append(out, "project-executor")
	}
	if s.code {
		out = append(out, "code-actions")
	}
	if s.resume && !slices.Contains(out, "resume") {
		out = append(out, "resume")
	}
	if len(s.injections) > 0 || s.template != "" || s.unmeasured != "" {
		out = append(out, "context-assembly")
	}
	return out
}

// steps and toolCount are the size measures shrinking reports.
func (s *spec) steps() int {
	if s.second != nil {
		return len(s.model) + len(s.second.model)
	}
	return len(s.model)
}
func (s *spec) toolCount() int { return len(s.tools) }

// document renders the case as the scenario YAML's document.
func (s *spec) document(id string, decisions []string, expect map[string]any) map[string]any {
	var tools []any
	for _, t := range s.tools {
		m := map[string]any{"name": t.name}
		params := map[string]any{"type": "object"}
		if t.broken {
			params = map[string]any{"type": "no-such-type"}
		}
		if len(t.props) > 0 {
			props := map[string]any{}
			for _, p := range t.props {
				props[p.name] = map[string]any{"type": p.typ}
			}
			params["properties"] = props
		}
		if len(t.required) > 0 {
			params["required"] = t.required
		}
		m["parameters"] = params
		if t.replay != "" {
			m["replay"] = t.replay
		}
		if t.completes {
			m["completes_run"] = true
		}
		var hs []any
		for _, b := range t.handler {
			switch b.kind {
			case "echo":
				hs = append(hs, map[string]any{"echo": true})
			case "error":
				hs = append(hs, map[string]any{"error": map[string]any{"type": "ValueError", "message": b.text}})
			default:
				hs = append(hs, map[string]any{b.kind: b.text})
			}
		}
		if hs != nil {
			m["handler"] = hs
		}
		tools = append(tools, m)
	}
	req := map[string]any{"budget": map[string]any{"max_effective_steps": s.eff, "max_total_steps": s.total}}
	if s.goal != "" {
		req["goal_fragment"] = s.goal
	}
	if s.visible != nil {
		req["visible_tools"] = s.visible
	}
	if s.fullExec {
		req["executor"] = "full_registry"
	}
	if s.code {
		req["language"] = "code"
	}
	if s.unmeasured != "" {
		req["measure_unknown"] = []string{s.unmeasured}
	}
	if s.project != nil {
		req["executor"] = "project"
		var outs []any
		for _, o := range s.project {
			outs = append(outs, map[string]any{"status": o.status, "observation": "project says " + strings.ToLower(o.status), "env_reported_completion": o.complete})
		}
		req["project_executor"] = outs
	}
	if len(s.injections) > 0 {
		inj := map[string]any{}
		for _, e := range s.injections {
			list, _ := inj[e[0]].([]any)
			inj[e[0]] = append(list, e[1])
		}
		req["injections"] = inj
	}
	req["model"] = s.model
	doc := map[string]any{
		"id": id, "title": "A generated case: " + id, "decisions": decisions, "level": "MUST",
		"requires": s.requires(), "tools": tools, "request": req,
		"expect": expect,
	}
	if p := s.second; p != nil {
		second := map[string]any{}
		for k, v := range req {
			second[k] = v
		}
		second["name"] = "second"
		second["budget"] = map[string]any{"max_effective_steps": p.eff, "max_total_steps": p.total}
		second["model"] = p.model
		delete(second, "goal_fragment")
		if p.goal != "" {
			second["goal_fragment"] = p.goal
		}
		req["name"] = "first"
		delete(doc, "request")
		doc["phases"] = []any{req, second}
	}
	def := map[string]any{}
	if s.runFragment != "" {
		def["run_fragment"] = s.runFragment
	}
	if s.template != "" {
		def["observation_template"] = s.template
	}
	if len(def) > 0 {
		doc["definition"] = def
	}
	faults := map[string]any{}
	if s.sink != "" {
		faults["sink"] = s.sink
	}
	if c := s.crash; c != nil {
		m := map[string]any{"when": c.when, "record": c.record}
		if c.step > 0 {
			m["step"] = c.step
		}
		faults["crash"] = m
		if s.damage != "" {
			faults["journal_damage"] = s.damage
		}
		if s.torn {
			faults["torn_tail"] = true
		}
	}
	if s.modelFail > 0 {
		faults["model_failure"] = map[string]any{"step": s.modelFail, "message": "gateway timeout"}
	}
	if s.resume {
		faults["resume"] = true
	}
	if c := s.cancel; c != nil {
		key := "cancel"
		if c.deadline {
			key = "deadline"
		}
		faults[key] = map[string]any{"step": c.step, "during": c.during}
	}
	if len(faults) > 0 {
		doc["faults"] = faults
	}
	return doc
}

// render returns the case as scenario YAML and the parsed scenario. A
// case being compared has no expect of its own (the reference's
// trajectory is its only oracle): expect is nil then, and the loader's
// rule that every expect says how the run ends is met by a placeholder
// that is dropped after loading.
func (s *spec) render(id string, decisions []string, expect map[string]any) ([]byte, *scenarios.Scenario, error) {
	compared := expect == nil
	if compared {
		expect = map[string]any{"end": map[string]any{"reason": "goal_reached_by_tool"}}
	}
	data, err := yaml.Marshal(s.document(id, decisions, expect))
	if err != nil {
		return nil, nil, err
	}
	sc, err := scenarios.Parse(id+".yaml", data)
	if err == nil && compared {
		sc.Expect = scenarios.Expect{}
	}
	return data, sc, err
}
