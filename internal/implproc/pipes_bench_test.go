package implproc

import (
	"context"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// BenchmarkSuiteOverPipes is BenchmarkSuiteSubprocess/long-lived (in
// internal/protocol) with the reference served in process over io.Pipe,
// as `serve-reference --plain` serves it: one CPU profile then holds both
// ends of the wire, the runner's and the implementation's.
func BenchmarkSuiteOverPipes(b *testing.B) {
	scs, err := scenarios.LoadEmbedded()
	if err != nil {
		b.Fatal(err)
	}
	g, err := trajectories.Goldens()
	if err != nil {
		b.Fatal(err)
	}
	c := &Client{}
	ch, done := pipeChild(c, refdriver.Capabilities())
	if _, err := c.handshake(ch, nil); err != nil {
		b.Fatal(err)
	}
	c.put(ch)
	defer func() { c.Close(); <-done }()
	suite := &engine.Suite{Scenarios: scs, Goldens: g}
	var longLived []*scenarios.Scenario
	for _, sc := range scs {
		if sc.Faults.Crash == nil && !sc.Faults.Resume {
			longLived = append(longLived, sc)
		}
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, sc := range longLived {
			if res := suite.Run(ctx, c, sc); !res.Passed() {
				b.Fatalf("%s: %v", sc.ID, res.Messages())
			}
		}
	}
	b.ReportMetric(float64(b.N*len(longLived))/b.Elapsed().Seconds(), "scenarios/s")
}
