package trajectories

import (
	"errors"
	"strings"
	"testing"
)

func TestParse_schemaErrorsNamePointers(t *testing.T) {
	goldens, err := Goldens()
	if err != nil || len(goldens) == 0 {
		t.Fatalf("goldens: %v", err)
	}
	good := goldens["outcome.normal-return"]
	if _, _, err := Parse("good.json", good); err != nil {
		t.Fatalf("a golden does not validate: %v", err)
	}
	bad := strings.Replace(string(good), `"status": "EXECUTED"`, `"status": "DONE"`, 1)
	bad = strings.Replace(bad, `"format": "polyloop.trajectory/v1"`, `"format": "polyloop.trajectory/v0"`, 1)
	_, _, err = Parse("bad.json", []byte(bad))
	var ie *InvalidError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"bad.json: not a valid polyloop.trajectory/v1 trajectory", "/format:", "/steps/0/outcome/status:"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	for name, data := range map[string]string{"not json": "{", "too big": strings.Repeat(" ", MaxBytes+1)} {
		if _, _, err := Parse(name, []byte(data)); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func TestNormalize_nullAndEmptyCompareEqual(t *testing.T) {
	a := &Trajectory{Format: Format, Scenario: "a.b"}
	ga, _ := ToGeneric(a)
	b := &Trajectory{Format: Format, Scenario: "a.b", Steps: []Step{}, Events: []Event{}, HandlerCalls: []HandlerCall{}}
	gb, _ := ToGeneric(b)
	if ma, mb := ga.(map[string]any), gb.(map[string]any); len(ma["steps"].([]any)) != 0 || len(mb["steps"].([]any)) != 0 {
		t.Errorf("null and [] differ: %v vs %v", ma["steps"], mb["steps"])
	}
}
