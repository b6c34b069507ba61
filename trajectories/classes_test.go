package trajectories

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/compare"
)

func TestFields_everyFieldHasAClass(t *testing.T) {
	fs, err := Fields()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, f := range fs {
		seen[f.Path] = f.Class
		if f.Meaning == "" {
			t.Errorf("%s has no description", f.Path)
		}
	}
	for path, want := range map[string]string{
		"steps[*].outcome.status":                   "normative",
		"steps[*].outcome.observation":              ClassTextIfSynthetic,
		"steps[*].action.error":                     "text",
		"steps[*].action.repairs":                   "vocabulary",
		"assembly_error.message":                    "text",
		"assembly_error.kind":                       "vocabulary",
		"run_error.message":                         "text",
		"events[*].executor_observation":            ClassTextIfSynthetic,
		"events[*].type":                            "vocabulary",
		"end.detail.during":                         "normative",
		"handler_calls[*].arguments":                "normative",
		"steps[*].model_input[*].content":           "normative",
		"phases[*].end.reason":                      "normative",
		"steps[*].outcome.observation_is_synthetic": "normative",
	} {
		if seen[path] != want {
			t.Errorf("%s: class %q, want %q", path, seen[path], want)
		}
	}
}

func TestReadFields_refusesAFieldWithoutClass(t *testing.T) {
	doc := []byte(`{"type":"object","properties":{"a":{"x-compare":"normative","description":"x"},"b":{"type":"string"}}}`)
	if _, err := readFields(doc); err == nil || !strings.Contains(err.Error(), "field b has no x-compare class") {
		t.Errorf("err = %v", err)
	}
	doc = []byte(`{"type":"object","properties":{"a":{"x-compare":"loose","description":"x"}}}`)
	if _, err := readFields(doc); err == nil || !strings.Contains(err.Error(), `unknown comparison class "loose"`) {
		t.Errorf("err = %v", err)
	}
}

func TestClassifier_resolvesPathsAgainstTheGolden(t *testing.T) {
	var golden any
	if err := json.Unmarshal([]byte(`{"steps":[
		{"index":1,"outcome":{"observation_is_synthetic":true}},
		{"index":2,"outcome":{"observation_is_synthetic":false}}],
	  "events":[{"type":"run_started"},{"type":"tool_call","step":1},{"type":"tool_call","step":2}]}`), &golden); err != nil {
		t.Fatal(err)
	}
	class, err := Classifier(golden)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]compare.Class{
		"steps[0].outcome.observation":     compare.Text,
		"steps[1].outcome.observation":     compare.Normative,
		"events[1].executor_observation":   compare.Text,
		"events[2].executor_observation":   compare.Normative,
		"steps[0].outcome.status":          compare.Normative,
		"steps[0].action.error":            compare.Text,
		"steps[0].action.arguments.path":   compare.Normative,
		`steps[0].action.arguments["a b"]`: compare.Normative,
		"events[0].type":                   compare.Vocabulary,
		"assembly_error.message":           compare.Text,
		"no_such_field":                    compare.Normative,
	} {
		if got := class(path); got != want {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}
}

func TestFieldDecisions(t *testing.T) {
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"steps[3].context_size", []string{"0010.D5"}},
		{"steps[0].counters.effective_steps", []string{"0004.D1"}}, // from the parent
		{"end.reason", []string{"0004.D2"}},
		{"resume.replayed_step", []string{"0002.D4"}},
		{"scenario", nil},
	} {
		got := FieldDecisions(tc.path)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("FieldDecisions(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}
