package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

func load(t *testing.T, id string) (*scenarios.Scenario, []byte) {
	t.Helper()
	scs, err := scenarios.LoadEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	g, err := trajectories.Goldens()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scs {
		if sc.ID == id {
			return sc, g[id]
		}
	}
	t.Fatalf("no scenario %s", id)
	return nil, nil
}

func TestJudge(t *testing.T) {
	sc, golden := load(t, "outcome.env-error")
	ctx := context.Background()
	cases := []struct {
		name   string
		golden []byte
		want   []string
	}{
		{"matching golden", golden, nil},
		{"golden with one field changed", []byte(strings.Replace(string(golden), `"observation": "search backend returned 503"`, `"observation": "search backend returned 500"`, 1)),
			[]string{`golden: steps[0].outcome.observation: want "search backend returned 500", got "search backend returned 503" (0008.D4.env-error, 0004.D2, 0007.D2)`}},
		{"golden contradicting expect", replaceLast(golden, `"reason": "environment_error"`, `"reason": "total_budget_exhausted"`),
			[]string{"golden contradicts expect (a bug in the golden, not a new truth): end.reason: want environment_error, got total_budget_exhausted"}},
		{"unreadable golden", []byte(`{"format": "nope"}`), []string{"golden: trajectories/outcome.env-error.json: not a valid polyloop.trajectory/v1 trajectory"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			suite := &Suite{Scenarios: []*scenarios.Scenario{sc}, Goldens: map[string][]byte{sc.ID: tc.golden}}
			// Twice: the second run takes the cached golden.
			for i := 0; i < 2; i++ {
				res := suite.Run(ctx, refdriver.Driver{}, sc)
				got := strings.Join(res.Messages(), "\n")
				if tc.want == nil && len(res.Problems) > 0 {
					t.Fatalf("run %d: problems:\n%s", i, got)
				}
				for _, w := range tc.want {
					if !strings.Contains(got, w) {
						t.Errorf("run %d: want %q in:\n%s", i, w, got)
					}
				}
				if res.Passed() != (tc.want == nil) {
					t.Errorf("run %d: passed = %v", i, res.Passed())
				}
			}
		})
	}
}

func TestMissingAndSkip(t *testing.T) {
	sc, golden := load(t, "outcome.env-error")
	suite := &Suite{Scenarios: []*scenarios.Scenario{sc}, Goldens: map[string][]byte{"orphan.golden": golden}}
	m := strings.Join(suite.Missing(), "\n")
	for _, w := range []string{"scenario outcome.env-error has no golden", "golden trajectories/orphan.golden.json has no scenario"} {
		if !strings.Contains(m, w) {
			t.Errorf("want %q in %q", w, m)
		}
	}
	res := suite.Run(context.Background(), limited{}, sc)
	if !strings.Contains(res.Skipped, "does not claim json-actions") {
		t.Errorf("skip: %+v", res)
	}
}

// limited claims no capability.
type limited struct{ refdriver.Driver }

func (limited) Capabilities() []string { return nil }

func replaceLast(b []byte, old, new string) []byte {
	s := string(b)
	i := strings.LastIndex(s, old)
	return []byte(s[:i] + new + s[i+len(old):])
}
