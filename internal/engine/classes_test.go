package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// transformed is the reference with its trajectory changed after the run,
// standing in for an implementation that words or decides differently.
type transformed struct {
	refdriver.Driver
	change func(*trajectories.Trajectory)
}

func (d transformed) Run(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env) (*trajectories.Trajectory, error) {
	tr, err := d.Driver.Run(ctx, sc, env)
	if err == nil {
		d.change(tr)
	}
	return tr, err
}

func wholeSuite(t *testing.T, strict bool) *Suite {
	t.Helper()
	scs, err := scenarios.LoadEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	g, err := trajectories.Goldens()
	if err != nil {
		t.Fatal(err)
	}
	return &Suite{Scenarios: scs, Goldens: g, Strict: strict}
}

// TestRewordedReferencePassesByDefault is the suite's fairness check: an
// implementation that words every sentence the design leaves open its own
// way passes every scenario, and only the strict profile notices, naming
// implementation-text fields and nothing else.
func TestRewordedReferencePassesByDefault(t *testing.T) {
	ctx := context.Background()
	d := transformed{Driver: refdriver.Driver{Staged: true}, change: refdriver.Reword}
	suite := wholeSuite(t, false)
	for _, sc := range suite.Scenarios {
		if res := suite.Run(ctx, d, sc); !res.Passed() {
			t.Errorf("%s: reworded reference fails by default:\n  %s", sc.ID, strings.Join(res.Messages(), "\n  "))
		}
	}
	strict := wholeSuite(t, true)
	failed := 0
	for _, sc := range strict.Scenarios {
		res := strict.Run(ctx, d, sc)
		if res.Passed() {
			continue
		}
		failed++
		for _, p := range res.Problems {
			if p.Source != "golden" || !textPath(p.Path) {
				t.Errorf("%s: strict failure on a field that is not implementation text: %s", sc.ID, p.Message)
			}
		}
	}
	if failed == 0 {
		t.Fatal("the strict profile passed the reworded reference: it compares no text at all")
	}
	t.Logf("strict profile: %d of %d scenarios fail on wording alone", failed, len(strict.Scenarios))
}

func textPath(p string) bool {
	for _, suffix := range []string{".message", ".error", ".observation", ".executor_observation"} {
		if strings.HasSuffix(p, suffix) {
			return true
		}
	}
	return false
}

// TestRewordingANormativeFieldFails: the text class is no blanket
// exemption. An observation the design fixes (a handler's returned text,
// the environment error's text) or the history the model sees is still
// compared exactly.
func TestRewordingANormativeFieldFails(t *testing.T) {
	ctx := context.Background()
	suite := wholeSuite(t, false)
	cases := []struct {
		scenario, path string
		change         func(*trajectories.Trajectory)
	}{
		{"outcome.normal-return", "steps[0].outcome.observation", func(tr *trajectories.Trajectory) { tr.Steps[0].Outcome.Observation = "Reworded." }},
		{"outcome.env-error", "steps[0].outcome.observation", func(tr *trajectories.Trajectory) { tr.Steps[0].Outcome.Observation = "Reworded." }},
		{"validation.unknown-tool", "steps[0].history_observation", func(tr *trajectories.Trajectory) { tr.Steps[0].HistoryObservation = "Reworded." }},
		{"validation.unknown-tool", "steps[0].outcome.observation", func(tr *trajectories.Trajectory) { tr.Steps[0].Outcome.Observation = "" }},
		{"budget.zero-cap-refused", "assembly_error.kind", func(tr *trajectories.Trajectory) { tr.AssemblyError.Kind = "bad_budget" }},
		{"parse.fenced-json", "steps[0].action.repairs", func(tr *trajectories.Trajectory) { tr.Steps[0].Action.Repairs = []string{"strip_fence"} }},
	}
	for _, c := range cases {
		t.Run(c.scenario+"/"+c.path, func(t *testing.T) {
			var sc *scenarios.Scenario
			for _, s := range suite.Scenarios {
				if s.ID == c.scenario {
					sc = s
				}
			}
			if sc == nil {
				t.Fatalf("no scenario %s", c.scenario)
			}
			res := suite.Run(ctx, transformed{change: c.change}, sc)
			if res.Passed() {
				t.Fatalf("passed; want a failure at %s", c.path)
			}
			found := false
			for _, p := range res.Problems {
				found = found || p.Path == c.path
			}
			if !found {
				t.Errorf("no problem at %s:\n  %s", c.path, strings.Join(res.Messages(), "\n  "))
			}
		})
	}
}

// TestUnsortedInjectionsFail: an implementation that places injections in
// the caller's order instead of sorting channels (0010.D3) fails
// context.injections-sorted. The fake model answers by step, not by input,
// so such an implementation's trajectory is the reference's with the
// injected messages of each model input in the scenario's written order.
func TestUnsortedInjectionsFail(t *testing.T) {
	suite := wholeSuite(t, false)
	var sc *scenarios.Scenario
	for _, s := range suite.Scenarios {
		if s.ID == "context.injections-sorted" {
			sc = s
		}
	}
	if sc == nil {
		t.Fatal("no scenario context.injections-sorted")
	}
	written := sc.Request.Injections
	unsorted := func(tr *trajectories.Trajectory) {
		for i := range tr.Steps {
			in := tr.Steps[i].ModelInput
			for j, e := range written {
				in[j].Content = e.Text
			}
		}
	}
	res := suite.Run(context.Background(), transformed{change: unsorted}, sc)
	if res.Passed() {
		t.Fatal("an implementation that keeps the caller's channel order passed context.injections-sorted")
	}
	var paths []string
	for _, p := range res.Problems {
		paths = append(paths, p.Source+" "+p.Path)
	}
	joined := strings.Join(paths, "\n")
	if !strings.Contains(joined, "expect steps[0].model_input") || !strings.Contains(joined, "golden steps[0].model_input[0].content") {
		t.Errorf("failure does not point at the model input:\n%s", joined)
	}
}

// slow stands for an implementation that is still running when the time
// limit cancels it and then reports its cancelled run.
type slow struct{ refdriver.Driver }

func (slow) Run(ctx context.Context, sc *scenarios.Scenario, _ *fakes.Env) (*trajectories.Trajectory, error) {
	<-ctx.Done()
	return &trajectories.Trajectory{Format: trajectories.Format, Scenario: sc.ID, Interrupted: &trajectories.Interrupted{Step: 1, During: "model_call"}}, nil
}

// TestTimeoutIsReportedAsATimeout: a run the deadline cut short fails as a
// timeout, not as a cancelled run whose fields differ from the golden.
func TestTimeoutIsReportedAsATimeout(t *testing.T) {
	suite := wholeSuite(t, false)
	suite.Timeout = 20 * time.Millisecond
	res := suite.Run(context.Background(), slow{}, suite.Scenarios[0])
	if res.Passed() || len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Message, "timed out after 20ms (--timeout)") {
		t.Errorf("%q", res.Messages())
	}
}
