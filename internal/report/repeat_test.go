package report

import (
	"strings"
	"testing"
)

// TestMergeRepetitionsStoppedIsNoFailure: a repetition a signal stopped
// is not compared with the runs that finished before it; the scenario
// reads as interrupted, with no problem, while a real difference between
// finished runs still fails.
func TestMergeRepetitionsStoppedIsNoFailure(t *testing.T) {
	row := func(v Verdict) Row { return Row{Scenario: "resume.x", Verdict: v} }
	cases := []struct {
		name     string
		verdicts []Verdict
		want     Verdict
		problem  string
	}{
		{"pass then stopped", []Verdict{Pass, Interrupted}, Interrupted, ""},
		{"pass, pass, stopped", []Verdict{Pass, Pass, Interrupted}, Interrupted, ""},
		{"stopped first, then pass", []Verdict{Interrupted, Pass}, Interrupted, ""},
		{"all stopped", []Verdict{Interrupted, Interrupted}, Interrupted, ""},
		{"all pass", []Verdict{Pass, Pass, Pass}, Pass, ""},
		{"finished runs differ, then stopped", []Verdict{Pass, Fail, Interrupted}, Fail, "runs 1 and 2 of --repeat differ: verdict pass, then fail"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var reps []Repetition
			for i, v := range c.verdicts {
				reps = append(reps, Repetition{Row: row(v), N: i + 1})
			}
			got := MergeRepetitions(reps, false)
			if len(got) != 1 {
				t.Fatalf("%d rows, want 1", len(got))
			}
			if got[0].Verdict != c.want {
				t.Errorf("verdict %s, want %s (problems %v)", got[0].Verdict, c.want, got[0].Problems)
			}
			if got[0].Repetitions != len(c.verdicts) {
				t.Errorf("repetitions %d, want %d", got[0].Repetitions, len(c.verdicts))
			}
			var msgs []string
			for _, p := range got[0].Problems {
				msgs = append(msgs, p.Message)
			}
			all := strings.Join(msgs, "\n")
			if c.problem == "" && len(msgs) > 0 {
				t.Errorf("problems on a stop: %s", all)
			}
			if c.problem != "" && !strings.Contains(all, c.problem) {
				t.Errorf("problems %q, want one saying %q", all, c.problem)
			}
		})
	}
}
