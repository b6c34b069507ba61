package protocol

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// BenchmarkSuiteSubprocess runs every scenario over the stdio protocol
// against one long-lived serve-reference process (a second one starts
// only where a scenario kills the first).
func BenchmarkSuiteSubprocess(b *testing.B) {
	exe := filepath.Join(b.TempDir(), "polyloop-conform")
	if out, err := exec.Command("go", "build", "-o", exe, "../../cmd/polyloop-conform").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	scs, err := scenarios.LoadAll(scenarios.Embedded())
	if err != nil {
		b.Fatal(err)
	}
	g, err := trajectories.Goldens()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	c := &Client{Command: func() *exec.Cmd { return exec.Command(exe, "serve-reference", "--plain") }}
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

// BenchmarkDecode decodes the implementation's messages of every recorded
// transcript in docs/examples, by the typed checks (what the runner does)
// and by the schema (the contract they agree with), for the ratio
// bench/run reports.
func BenchmarkDecode(b *testing.B) {
	var corpus [][]byte
	files, _ := filepath.Glob("../../docs/examples/*.jsonl")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range splitLines(data) {
			var e struct {
				From    string          `json:"from"`
				Message json.RawMessage `json:"message"`
			}
			if json.Unmarshal(line, &e) == nil && e.From == "implementation" {
				corpus = append(corpus, e.Message)
			}
		}
	}
	for _, d := range []struct {
		name   string
		decode func([]byte) (*Message, error)
	}{{"typed", Decode}, {"schema", decodeBySchema}} {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				for _, line := range corpus {
					if _, err := d.decode(line); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
