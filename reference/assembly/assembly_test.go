package assembly

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuild_0010_D2_D3(t *testing.T) {
	in := Input{
		RunFragment:  "run",
		Injections:   map[string][]string{"b": {"b1"}, "a": {"a1", "", "a2"}, "empty": nil},
		GoalFragment: "goal",
		History:      []Turn{{ModelOutput: "out1", Observation: "obs1"}},
		Template:     "[{observation}]",
	}
	got, size, err := Build(in, RuneCount)
	if err != nil {
		t.Fatal(err)
	}
	want := []Message{
		{RoleUser, "run"}, {RoleUser, "a1"}, {RoleUser, "a2"}, {RoleUser, "b1"}, {RoleUser, "goal"},
		{RoleAssistant, "out1"}, {RoleUser, "[obs1]"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
	if size != 3+2+2+2+4+4+6 {
		t.Errorf("size = %d", size)
	}
	for _, m := range got {
		if m.Role == "system" {
			t.Error("0010.D1: a system message was synthesised")
		}
	}
}

func TestCheckTemplate_0010_D4(t *testing.T) {
	if CheckTemplate("Observation: {observation}") != nil || !errors.Is(CheckTemplate("Observation:"), ErrNoPlaceholder) {
		t.Error("placeholder check wrong")
	}
}

func TestProbeMeasure_0010_D5(t *testing.T) {
	m := func(bt BlockType, s string) (int, error) {
		if bt == BlockObservation {
			return 0, errors.New("unknown")
		}
		return len(s), nil
	}
	if err := ProbeMeasure(m); err == nil {
		t.Error("a measure that does not know observations was accepted")
	}
	if err := ProbeMeasure(RuneCount); err != nil {
		t.Error(err)
	}
}
