package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestScenarioYAMLInEveryFormat: a generated case that differed carries
// the scenario to add, and every format shows it; its rerun command
// points at the saved scenario, not at the suite's.
func TestScenarioYAMLInEveryFormat(t *testing.T) {
	r := New("impl", "0.1.0")
	r.Rows = []Row{{Scenario: "generated.s3-c7", Verdict: Fail, Decisions: []string{"0010.D2"},
		Problems:     []Problem{{Source: "golden", Path: "steps[1].model_input", Message: "golden: steps[1].model_input differs"}},
		ScenarioYAML: "id: generated.s3-c7\ntitle: A generated case\n"}}
	for _, format := range []string{"text", "json", "junit", "html"} {
		w, err := Lookup(format)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := w(&b, r, Options{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "title: A generated case") {
			t.Errorf("%s lacks the scenario to add:\n%s", format, b.String())
		}
	}
	if got := r.RerunCommand("generated.s3-c7"); !strings.Contains(got, "--scenarios DIR --goldens DIR") {
		t.Errorf("rerun of a generated case: %s", got)
	}
}
