package engine

import (
	"context"
	"os"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/reference/tools"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// BenchmarkSuiteInProcess runs every scenario once per iteration against
// the in-process reference, judged against its golden; the scenarios/s
// metric is what bench/run reports.
func BenchmarkSuiteInProcess(b *testing.B) {
	scs, err := scenarios.LoadEmbedded()
	if err != nil {
		b.Fatal(err)
	}
	g, err := trajectories.Goldens()
	if err != nil {
		b.Fatal(err)
	}
	suite := &Suite{Scenarios: scs, Goldens: g}
	ctx := context.Background()
	ref := refdriver.Driver{Schemas: &tools.SchemaCache{}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, sc := range scs {
			if res := suite.Run(ctx, ref, sc); !res.Passed() {
				b.Fatalf("%s: %v", sc.ID, res.Messages())
			}
		}
	}
	b.ReportMetric(float64(b.N*len(scs))/b.Elapsed().Seconds(), "scenarios/s")
}

// BenchmarkSuiteInProcessTmpfs is BenchmarkSuiteInProcess with the resume
// scenarios' journals on tmpfs, where fsync costs almost nothing: the gap
// between the two is the journals' fsyncs.
func BenchmarkSuiteInProcessTmpfs(b *testing.B) {
	if st, err := os.Stat("/dev/shm"); err != nil || !st.IsDir() {
		b.Skip("no /dev/shm")
	}
	b.Setenv("TMPDIR", "/dev/shm")
	BenchmarkSuiteInProcess(b)
}
