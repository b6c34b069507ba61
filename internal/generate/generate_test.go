package generate

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/deviation"
	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/reference/tools"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// batch is n generated cases under POLYLOOP_LONG=1, which .ci/run sets
// (README, "The tests"), and a tenth of them, from the same seed, otherwise.
func batch(n int) int {
	if os.Getenv("POLYLOOP_LONG") == "1" {
		return n
	}
	return n / 10
}

func reference(d deviation.Set) refdriver.Driver {
	return refdriver.Driver{Schemas: &tools.SchemaCache{}, Deviations: d}
}

// TestEveryCaseLoads: generated cases are valid scenarios (schema and
// cross-field rules), and the same seed gives the same cases.
func TestEveryCaseLoads(t *testing.T) {
	a, b := rand.New(rand.NewPCG(7, 7)), rand.New(rand.NewPCG(7, 7))
	for n := range batch(2000) {
		s1, s2 := newSpec(a), newSpec(b)
		y1, _, err := s1.render(caseID(7, n+1), []string{"0004.D2"}, nil)
		if err != nil {
			t.Fatalf("case %d does not load: %v\n%s", n+1, err, y1)
		}
		y2, _, _ := s2.render(caseID(7, n+1), []string{"0004.D2"}, nil)
		if string(y1) != string(y2) {
			t.Fatalf("case %d differs between two runs of one seed", n+1)
		}
	}
}

// TestReferenceAgainstItself: the reference compared with itself finds
// nothing, so every difference generate reports is the implementation's.
func TestReferenceAgainstItself(t *testing.T) {
	sources, err := LoadSources(scenarios.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	count := batch(400)
	sum, err := Run(context.Background(), Options{Reference: reference(nil), Impl: reference(nil), Seed: 1, Count: count, Sources: sources})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Found) > 0 {
		t.Fatalf("the reference differs from itself: %+v", sum.Found[0])
	}
	if sum.Cases < count || sum.Discarded > sum.Cases/2 {
		t.Errorf("%d cases compared, %d discarded: the generator makes too many cases the reference cannot run", sum.Cases, sum.Discarded)
	}
	t.Logf("%d cases, %d discarded", sum.Cases, sum.Discarded)
}

// TestFindsAndShrinksADeviation: a reference that counts invalid calls as
// effective is found, shrunk to a few steps and tools, and the saved case
// loads as a normal scenario that fails the deviation again.
func TestFindsAndShrinksADeviation(t *testing.T) {
	dir := t.TempDir()
	dev := reference(deviation.Set{deviation.InvalidCallsEffective: true})
	sum, err := Run(context.Background(), Options{Reference: reference(nil), Impl: dev, Seed: 3, Count: 2000, Out: dir, Stop: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Found) == 0 {
		t.Fatalf("invalid-calls-effective survived %d cases", sum.Cases)
	}
	f := sum.Found[0]
	if f.Steps > 3 || f.Tools > 2 {
		t.Errorf("shrunk to %d steps and %d tools, want at most 3 and 2", f.Steps, f.Tools)
	}
	data, err := os.ReadFile(filepath.Join(dir, f.ID+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse(f.ID+".yaml", data)
	if err != nil {
		t.Fatalf("the saved case does not load: %v", err)
	}
	golden, err := os.ReadFile(filepath.Join(dir, f.ID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	suite := &engine.Suite{Scenarios: []*scenarios.Scenario{sc}, Goldens: map[string][]byte{sc.ID: golden}}
	if res := suite.Run(context.Background(), reference(nil), sc); !res.Passed() {
		t.Errorf("the reference fails its own saved case: %v", res.Messages())
	}
	res := suite.Run(context.Background(), dev, sc)
	if res.Passed() {
		t.Fatal("the saved case passes the deviating implementation")
	}
	if got, _ := divergence(res.Problems, golden); len(got) == 0 || got[0] != f.Decisions[0] {
		t.Errorf("the saved case fails with decisions %v, generate reported %v", got, f.Decisions)
	}
	t.Logf("found at case %d, shrunk in %d steps to %d steps and %d tools, decisions %v", f.Case, sum.Shrinks, f.Steps, f.Tools, f.Decisions)
}

// BenchmarkGenerate measures generated cases compared per second, the
// reference against itself in process (each case runs the reference
// twice and judges once).
func BenchmarkGenerate(b *testing.B) {
	cases := 0
	for b.Loop() {
		sum, err := Run(context.Background(), Options{Reference: reference(nil), Impl: reference(nil), Seed: 11, Count: 500})
		if err != nil || len(sum.Found) > 0 {
			b.Fatal(err, sum.Found)
		}
		cases += sum.Cases
	}
	b.ReportMetric(float64(cases)/b.Elapsed().Seconds(), "cases/s")
}

// TestEveryVariantLoads: variants of every scenario of the suite load,
// and rename every tool.
func TestEveryVariantLoads(t *testing.T) {
	sources, err := LoadSources(scenarios.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 5))
	for _, src := range sources {
		v := newVariant(r, src)
		y, sc, err := v.render(caseID(5, 1), []string{"0004.D2"}, nil)
		if err != nil {
			t.Fatalf("a variant of %s does not load: %v\n%s", src.ID, err, y)
		}
		orig, _ := scenarios.Parse(src.ID+".yaml", src.raw)
		for i, tl := range sc.Tools {
			if slices.ContainsFunc(orig.Tools, func(o scenarios.Tool) bool { return o.Name == tl.Name }) {
				t.Errorf("a variant of %s keeps the tool name %q (tool %d)", src.ID, tl.Name, i)
			}
		}
	}
}

// TestDrawsEveryClass: the classes issue 37 found slipping through are
// drawn, each often enough that a batch of a few hundred cases meets it.
func TestDrawsEveryClass(t *testing.T) {
	has := func(xs []string, f func(string) bool) bool { return slices.ContainsFunc(xs, f) }
	classes := map[string]func(s *spec) bool{
		"true where an integer is asked": func(s *spec) bool {
			return has(s.model, func(m string) bool { return strings.Contains(m, ": true") || strings.Contains(m, ": false") })
		},
		"a schema default": func(s *spec) bool {
			return slices.ContainsFunc(s.tools, func(t tool) bool { return slices.ContainsFunc(t.props, func(p prop) bool { return p.def != nil }) })
		},
		"a white-space fragment": func(s *spec) bool { return s.goal != "" && strings.TrimSpace(s.goal) == "" },
		"an empty return": func(s *spec) bool {
			return slices.ContainsFunc(s.tools, func(t tool) bool { return slices.Contains(t.handler, behaviour{"return", ""}) })
		},
		"a multi-line error message": func(s *spec) bool {
			return slices.ContainsFunc(s.tools, func(t tool) bool {
				return slices.ContainsFunc(t.handler, func(b behaviour) bool { return b.kind == "error" && strings.Contains(b.text, "\n") })
			})
		},
		"an empty fence": func(s *spec) bool {
			return has(s.model, func(m string) bool { return m == "```python\n```" || m == "```json\n```" })
		},
		"prose before a JSON fence": func(s *spec) bool {
			return has(s.model, func(m string) bool { return strings.Contains(m, "\n```json\n{") })
		},
		"doubled braces":         func(s *spec) bool { return strings.Contains(s.template, "{{") },
		"an unknown placeholder": func(s *spec) bool { return strings.Contains(s.template, "{unknown}") },
		"an invalid call to a project executor": func(s *spec) bool {
			return s.project != nil && has(s.model, func(m string) bool {
				return strings.HasSuffix(m, `"arguments": {`) || strings.Contains(m, `"tool": ""`)
			})
		},
		"a code action to a project executor": func(s *spec) bool { return s.project != nil && s.code },
		"an empty model output":               func(s *spec) bool { return slices.Contains(s.model, "") },
		"several broken specs": func(s *spec) bool {
			broken := 0
			for _, t := range s.tools {
				if t.broken {
					broken++
				}
			}
			return broken > 1 || len(s.tools) > 2 && s.tools[len(s.tools)-1].name == s.tools[0].name && s.tools[len(s.tools)-2].name != s.tools[0].name
		},
		"a crash in a phase":  func(s *spec) bool { return s.crash != nil && s.crash.phase != "" },
		"a cancel in a phase": func(s *spec) bool { return s.cancel != nil && s.cancel.phase != "" },
	}
	counts := map[string]int{}
	r := rand.New(rand.NewPCG(9, 9))
	for range 1000 {
		s := newSpec(r)
		for name, f := range classes {
			if f(s) {
				counts[name]++
			}
		}
	}
	for name := range classes {
		if counts[name] < 5 {
			t.Errorf("%s: drawn %d times in 1,000 cases, want at least 5", name, counts[name])
		}
	}
	t.Logf("%v", counts)
}

// cancelling is an implementation during whose run of case stopAt a signal
// comes: it cancels the run's context, then runs the case under it, as a
// process whose runner was stopped would.
type cancelling struct {
	engine.Driver
	cancel func()
	runs   *int
	stopAt int
}

func (c cancelling) Run(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env) (*trajectories.Trajectory, error) {
	if *c.runs++; *c.runs == c.stopAt {
		c.cancel()
	}
	return c.Driver.Run(ctx, sc, env)
}

// TestASignalIsNoDifference: the case a cancelled context cut short is
// reported as interrupted, not as a difference, and nothing is saved;
// the cases compared before it still count.
func TestASignalIsNoDifference(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	runs := 0
	impl := cancelling{Driver: reference(nil), cancel: cancel, runs: &runs, stopAt: 3}
	sum, err := Run(ctx, Options{Reference: reference(nil), Impl: impl, Seed: 3, Count: 10, Out: dir})
	if err == nil || ctx.Err() == nil {
		t.Fatalf("err %v after the signal, want the context's", err)
	}
	if len(sum.Found) > 0 || sum.Interrupted == 0 || sum.Cases != 2 {
		t.Errorf("%d differences, case %d interrupted, %d compared; want none, one, 2 (the cases before it)", len(sum.Found), sum.Interrupted, sum.Cases)
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("the stopped case was saved: %d files", len(entries))
	}
}
