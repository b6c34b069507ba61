package generate

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/reference/action"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

// richCalls lists, for one drawn case, the rich shapes its tools use and
// the shapes a model output breaks (an invalid value of that shape sent
// for its property: below the top of the arguments for the nested and
// array shapes).
func richCalls(s *spec) (used, broken []string) {
	for _, t := range s.tools {
		for _, p := range t.props {
			if p.rich == nil {
				continue
			}
			used = append(used, p.rich.class)
			for _, m := range s.model {
				if slices.ContainsFunc(p.rich.invalid, func(v rawJSON) bool {
					return strings.Contains(m, jsonText(p.name)+": "+string(v)+",") || strings.Contains(m, jsonText(p.name)+": "+string(v)+"}")
				}) {
					broken = append(broken, p.rich.class)
				}
			}
		}
	}
	return used, broken
}

// TestDrawsEverySchemaClass: the schema shapes of issue 45 (nested
// objects, arrays, tuples, mixed-type enums and consts, integer-valued
// numbers) are drawn, with valid values and with values invalid below
// the top, often enough that every batch meets each: in 1,000 cases each
// shape is used at least 30 times and broken at least 5, and every one of
// 20 seeds' first 150 generated cases (a batch of 200 draws about that
// many specs beside its variants) uses every shape and breaks one of
// each family.
func TestDrawsEverySchemaClass(t *testing.T) {
	used, broken := map[string]int{}, map[string]int{}
	r := rand.New(rand.NewPCG(45, 45))
	for range 1000 {
		u, b := richCalls(newSpec(r))
		for _, c := range u {
			used[c]++
		}
		for _, c := range b {
			broken[c]++
		}
	}
	for _, rs := range richSchemas {
		if used[rs.class] < 30 || broken[rs.class] < 5 {
			t.Errorf("%s: used %d times and broken %d times in 1,000 cases, want at least 30 and 5", rs.class, used[rs.class], broken[rs.class])
		}
	}
	t.Logf("used %v", used)
	t.Logf("broken %v", broken)

	families := map[string][]string{
		"nested":  {"a nested object with its own required", "a nested object closed by additionalProperties"},
		"array":   {"an array with items", "an array of objects", "a tuple with prefixItems"},
		"enum":    {"an enum of mixed types", "a const number"},
		"integer": {"an integer written with a fraction or an exponent"},
	}
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		seen, hit := map[string]bool{}, map[string]bool{}
		for range 150 {
			u, b := richCalls(newSpec(r))
			for _, c := range u {
				seen[c] = true
			}
			for _, c := range b {
				hit[c] = true
			}
		}
		for _, rs := range richSchemas {
			if !seen[rs.class] {
				t.Errorf("seed %d: %s not drawn in 150 cases", seed, rs.class)
			}
		}
		for fam, classes := range families {
			if !slices.ContainsFunc(classes, func(c string) bool { return hit[c] }) {
				t.Errorf("seed %d: no %s shape broken in 150 cases", seed, fam)
			}
		}
	}
}

// The valid values of each shape pass its schema and the invalid ones do
// not, by the reference's own validator: a shape whose "invalid" value is
// valid would test nothing.
func TestRichValuesAreWhatTheySay(t *testing.T) {
	for _, rs := range richSchemas {
		for _, v := range rs.valid {
			if err := validateRich(rs, v); err != nil {
				t.Errorf("%s: %s refused: %v", rs.class, v, err)
			}
		}
		for _, v := range rs.invalid {
			if err := validateRich(rs, v); err == nil {
				t.Errorf("%s: %s accepted, want refused", rs.class, v)
			}
		}
	}
}

func validateRich(rs richSchema, v rawJSON) error {
	reg, err := tools.NewRegistry(tools.ToolSpec{Name: "t", Parameters: map[string]any{
		"type": "object", "properties": map[string]any{"v": rs.schema}}})
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(`{"v": ` + string(v) + `}`))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		return err
	}
	return reg.Validate(action.Action{Kind: action.KindToolCall, Tool: "t", Arguments: args, HasArgs: true})
}
