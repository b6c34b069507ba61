package crashpoint

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// TestJudge_textByClass: the resumed process may word anew a sentence the
// design leaves to the implementation (here the executor's own sentence
// for an action it did not run, 0008.D4): explore compares the two runs
// of one implementation by class, as a run is compared with its golden.
// The text rule still holds: a stack trace in that sentence is a failure.
func TestJudge_textByClass(t *testing.T) {
	sc := load(t, "outcome.no-tool-call.yaml")
	if !Eligible(sc) {
		t.Fatal("outcome.no-tool-call is no longer explorable; pick another scenario with a synthetic observation")
	}
	data, err := os.ReadFile("../../trajectories/outcome.no-tool-call.json")
	if err != nil {
		t.Fatal(err)
	}
	baseTr, _, err := trajectories.Parse("golden", data)
	if err != nil {
		t.Fatal(err)
	}
	base, err := NewBaseline(baseTr, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := protocol.Point{When: after, Record: recordModelOutput, Step: 2}
	for _, tc := range []struct {
		sentence string
		fails    int
	}{
		{"the executor here runs no code", 0},
		{"Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError", 1},
	} {
		got, doc, err := trajectories.Parse("resumed", []byte(strings.Replace(string(data), "this executor runs tool calls only, and the action holds no tool call", quoted(t, tc.sentence), 1)))
		if err != nil {
			t.Fatal(err)
		}
		if got.Steps[0].Outcome.Observation == baseTr.Steps[0].Outcome.Observation {
			t.Fatal("the test did not reword the first step's observation")
		}
		fails := Judge(sc, base, p, got, doc, map[string]int{}, map[int]int{}, &Counts{})
		if len(fails) != tc.fails {
			t.Errorf("observation %q: %d failures, want %d: %q", tc.sentence, len(fails), tc.fails, fails)
		}
		if tc.fails > 0 && len(fails) > 0 && !strings.Contains(fails[0], "steps[0].outcome.observation: implementation text must not carry a stack trace") {
			t.Errorf("failure %q does not name the text rule", fails[0])
		}
	}
}

// quoted is s as it stands inside a JSON string.
func quoted(t *testing.T, s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b[1 : len(b)-1])
}
