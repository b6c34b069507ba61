package generate

import (
	"slices"

	"github.com/polyloop/polyloop-conform/scenarios"
)

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
	tools := make([]any, len(s.tools))
	for i, t := range s.tools {
		tools[i] = t.document()
	}
	req := s.requestDoc()
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
	if faults := s.faultsDoc(); len(faults) > 0 {
		doc["faults"] = faults
	}
	return doc
}

// document is the tool's entry in the scenario's tools.
func (t tool) document() map[string]any {
	m := map[string]any{"name": t.name}
	if t.description != "" {
		m["description"] = t.description
	}
	params := map[string]any{"type": "object"}
	if t.broken {
		params = map[string]any{"type": "no-such-type"}
	}
	if len(t.props) > 0 {
		props := map[string]any{}
		for _, p := range t.props {
			ps := map[string]any{"type": p.typ}
			if p.rich != nil {
				ps = p.rich.schema
			}
			if p.def != nil {
				ps["default"] = p.def
			}
			props[p.name] = ps
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
	return m
}

// requestDoc is the case's (first) request.
func (s *spec) requestDoc() map[string]any {
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
			outs = append(outs, map[string]any{"status": o.status, "observation": o.observation, "env_reported_completion": o.complete})
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
	return req
}

// faultsDoc is the case's faults block (empty: none).
func (s *spec) faultsDoc() map[string]any {
	faults := map[string]any{}
	if s.sink != "" {
		faults["sink"] = s.sink
	}
	if c := s.crash; c != nil {
		m := map[string]any{"when": c.when, "record": c.record}
		if c.step > 0 {
			m["step"] = c.step
		}
		if c.phase != "" {
			m["phase"] = c.phase
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
		m := map[string]any{"step": c.step, "during": c.during}
		if c.phase != "" {
			m["phase"] = c.phase
		}
		faults[key] = m
	}
	return faults
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
	data, err := marshalYAML(s.document(id, decisions, expect))
	if err != nil {
		return nil, nil, err
	}
	sc, err := scenarios.Parse(id+".yaml", data)
	if err == nil && compared {
		sc.Expect = scenarios.Expect{}
	}
	return data, sc, err
}
