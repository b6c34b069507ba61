package generate

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// shapeClasses are the draws of issue 45 outside schemas, each a test on
// a drawn spec.
var shapeClasses = map[string]func(s *spec) bool{
	"arguments that are no object": func(s *spec) bool {
		return anyOutput(s, func(m string) bool {
			return !s.code && (strings.Contains(m, `"arguments": null`) || strings.Contains(m, `"arguments": "{`) ||
				strings.Contains(m, `"arguments": [`) || strings.Contains(m, `"arguments": 1}`) || strings.Contains(m, `"arguments": true}`))
		})
	},
	"an action that is no object": func(s *spec) bool {
		return anyOutput(s, func(m string) bool {
			return !s.code && (strings.HasPrefix(m, `{"action": "`) || m == `{"action": null}` || m == `{"action": 7}` || m == `{"action": {}}`)
		})
	},
	"a top-level array": func(s *spec) bool {
		return anyOutput(s, func(m string) bool { return !s.code && strings.HasPrefix(m, `[{"action"`) })
	},
	"a top-level scalar or empty object": func(s *spec) bool {
		return anyOutput(s, func(m string) bool {
			return !s.code && (strings.HasPrefix(m, `"{`) || slices.Contains([]string{"42", "true", "null", "{}"}, m))
		})
	},
	"code with whitespace at its edges": func(s *spec) bool {
		return anyOutput(s, func(m string) bool {
			return s.code && (strings.HasPrefix(m, " ") || strings.HasSuffix(m, "  \n\n") || strings.Contains(m, "```python\n    "))
		})
	},
	"JSON written as code": func(s *spec) bool {
		return anyOutput(s, func(m string) bool { return s.code && (strings.HasPrefix(m, "{") || strings.HasPrefix(m, "[")) })
	},
	"a later phase's cap below one": func(s *spec) bool {
		return s.second != nil && (s.second.eff < 1 || s.second.total < 1)
	},
	"one text under two block types": func(s *spec) bool {
		return strings.TrimSpace(s.goal) != "" && s.goal == s.runFragment
	},
}

func anyOutput(s *spec, f func(string) bool) bool {
	if slices.ContainsFunc(s.model, f) {
		return true
	}
	return s.second != nil && slices.ContainsFunc(s.second.model, f)
}

// TestDrawsEveryShape: each class above is drawn in every batch. A run's
// 200 cases hold about 150 generated specs when sources are given (a
// quarter are variants); 200 seeds, each one batch, must each meet every
// class at least once.
func TestDrawsEveryShape(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		counts := map[string]int{}
		for range 150 {
			s := newSpec(r)
			for name, f := range shapeClasses {
				if f(s) {
					counts[name]++
				}
			}
		}
		for name := range shapeClasses {
			if counts[name] == 0 {
				t.Errorf("seed %d: %s not drawn in 150 cases", seed, name)
			}
		}
		if seed == 1 {
			t.Logf("seed 1: %v", counts)
		}
	}
}
