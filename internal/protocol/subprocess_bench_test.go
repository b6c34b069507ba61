package protocol_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/implproc"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// The benchmark of the whole wire stays here, beside BenchmarkDecode, so
// that bench/run measures both packages' work where it always has.

// BenchmarkSuiteSubprocess runs every scenario over the stdio protocol
// against one long-lived serve-reference process (a second one starts
// only where a scenario kills the first).
func BenchmarkSuiteSubprocess(b *testing.B) {
	exe := filepath.Join(b.TempDir(), "polyloop-conform")
	if out, err := exec.Command("go", "build", "-o", exe, "../../cmd/polyloop-conform").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	scs, err := scenarios.LoadEmbedded()
	if err != nil {
		b.Fatal(err)
	}
	g, err := trajectories.Goldens()
	if err != nil {
		b.Fatal(err)
	}
	if list := os.Getenv("POLYLOOP_BENCH_IDS"); list != "" {
		scs = onlyListed(b, scs, list)
	}
	ctx := context.Background()
	c := &implproc.Client{Command: func() *exec.Cmd { return exec.Command(exe, "serve-reference", "--plain") }}
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	suite := &engine.Suite{Scenarios: scs, Goldens: g}
	var longLived []*scenarios.Scenario
	for _, sc := range scs {
		if sc.Faults.Crash == nil && !sc.Faults.Resume {
			longLived = append(longLived, sc)
		}
	}
	// long-lived: every scenario one process can run; all: with the crash
	// scenarios, each of which kills its process and starts another.
	for _, set := range []struct {
		name string
		scs  []*scenarios.Scenario
	}{{"long-lived", longLived}, {"all", scs}} {
		b.Run(set.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				for _, sc := range set.scs {
					if res := suite.Run(ctx, c, sc); !res.Passed() {
						b.Fatalf("%s: %v", sc.ID, res.Messages())
					}
				}
			}
			b.ReportMetric(float64(b.N*len(set.scs))/b.Elapsed().Seconds(), "scenarios/s")
		})
	}
}

// onlyListed keeps the scenarios whose IDs the file list names, one a
// line: POLYLOOP_BENCH_IDS compares two commits on the same scenarios
// (docs/performance.md, "The wire, 2026-12-05"). An ID not in the suite
// fails the benchmark rather than measure fewer scenarios than named.
func onlyListed(b *testing.B, scs []*scenarios.Scenario, list string) []*scenarios.Scenario {
	data, err := os.ReadFile(list)
	if err != nil {
		b.Fatal(err)
	}
	want := map[string]bool{}
	for _, id := range strings.Fields(string(data)) {
		want[id] = true
	}
	var out []*scenarios.Scenario
	for _, sc := range scs {
		if want[sc.ID] {
			out = append(out, sc)
			delete(want, sc.ID)
		}
	}
	if len(want) > 0 {
		b.Fatalf("POLYLOOP_BENCH_IDS: %d IDs not in the suite: %v", len(want), want)
	}
	return out
}
