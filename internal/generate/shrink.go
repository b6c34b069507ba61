package generate

import "slices"

// candidates lists smaller variants of s, most drastic first: fewer
// faults, tools and steps; then simpler budgets, context, schemas,
// handlers and outputs.
func candidates(s *spec) []*spec {
	var out []*spec
	add := func(f func(c *spec) bool) {
		c := s.clone()
		if f(c) {
			out = append(out, c)
		}
	}
	add(func(c *spec) bool { ok := c.sink != ""; c.sink = ""; return ok })
	add(func(c *spec) bool { ok := c.crash != nil; c.crash, c.torn, c.damage = nil, false, ""; return ok })
	add(func(c *spec) bool { ok := c.cancel != nil; c.cancel = nil; return ok })
	add(func(c *spec) bool { ok := c.modelFail > 0; c.modelFail, c.resume = 0, false; return ok })
	add(func(c *spec) bool { ok := c.torn; c.torn = false; return ok })
	add(func(c *spec) bool { ok := c.damage != ""; c.damage = ""; return ok })
	add(func(c *spec) bool { ok := c.second != nil; c.second = nil; return ok })
	if s.second != nil {
		for i := range s.second.model {
			add(func(c *spec) bool {
				if len(c.second.model) < 2 {
					return false
				}
				c.second.model = slices.Delete(c.second.model, i, i+1)
				return true
			})
		}
		add(func(c *spec) bool { ok := c.second.total > 1; c.second.total--; return ok })
		add(func(c *spec) bool { ok := c.second.eff > 1; c.second.eff--; return ok })
		add(func(c *spec) bool { ok := c.second.goal != ""; c.second.goal = ""; return ok })
	}
	add(func(c *spec) bool { ok := c.unmeasured != ""; c.unmeasured = ""; return ok })
	add(func(c *spec) bool { ok := c.fullExec; c.fullExec = false; return ok })
	for i := range s.tools {
		add(func(c *spec) bool {
			if len(c.tools) < 2 {
				return false
			}
			name := c.tools[i].name
			c.tools = slices.Delete(c.tools, i, i+1)
			c.visible = slices.DeleteFunc(c.visible, func(v string) bool { return v == name })
			if c.visible != nil && len(c.visible) == 0 {
				c.visible = nil
			}
			return true
		})
	}
	for i := range s.model {
		add(func(c *spec) bool {
			if len(c.model) < 2 {
				return false
			}
			c.model = slices.Delete(c.model, i, i+1)
			return true
		})
	}
	add(func(c *spec) bool { ok := c.total > 1; c.total--; return ok })
	add(func(c *spec) bool { ok := c.eff > 1; c.eff--; return ok })
	add(func(c *spec) bool { ok := c.injections != nil; c.injections = nil; return ok })
	add(func(c *spec) bool { ok := c.template != ""; c.template = ""; return ok })
	add(func(c *spec) bool { ok := c.visible != nil; c.visible = nil; return ok })
	add(func(c *spec) bool { ok := c.project != nil; c.project = nil; return ok })
	add(func(c *spec) bool { ok := c.runFragment != ""; c.runFragment = ""; return ok })
	for i := range s.tools {
		add(func(c *spec) bool {
			if len(c.tools[i].handler) < 2 {
				return false
			}
			c.tools[i].handler = c.tools[i].handler[:1]
			return true
		})
		add(func(c *spec) bool {
			ok := len(c.tools[i].props) > 0
			c.tools[i].props, c.tools[i].required = nil, nil
			return ok
		})
		add(func(c *spec) bool { ok := c.tools[i].replay != ""; c.tools[i].replay = ""; return ok })
		add(func(c *spec) bool { ok := c.tools[i].description != ""; c.tools[i].description = ""; return ok })
		add(func(c *spec) bool { ok := c.tools[i].completes; c.tools[i].completes = false; return ok })
	}
	return out
}

func (s *spec) clone() *spec {
	c := *s
	c.tools = make([]tool, len(s.tools))
	for i, t := range s.tools {
		t.props = slices.Clone(t.props)
		t.required = slices.Clone(t.required)
		t.handler = slices.Clone(t.handler)
		c.tools[i] = t
	}
	c.injections = slices.Clone(s.injections)
	c.visible = slices.Clone(s.visible)
	c.project = slices.Clone(s.project)
	c.model = slices.Clone(s.model)
	if s.crash != nil {
		cr := *s.crash
		c.crash = &cr
	}
	if s.cancel != nil {
		cn := *s.cancel
		c.cancel = &cn
	}
	if s.second != nil {
		p := *s.second
		p.model = slices.Clone(s.second.model)
		c.second = &p
	}
	return &c
}
