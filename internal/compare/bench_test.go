package compare_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/compare"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// syntheticTrajectory builds an n-step trajectory; each step carries a
// short model input so that size grows linearly with n.
func syntheticTrajectory(n int, lastStatus string) any {
	tr := &trajectories.Trajectory{Format: trajectories.Format, Scenario: "bench.compare", End: &trajectories.End{Reason: "total_budget_exhausted", TotalSteps: n}}
	for i := 1; i <= n; i++ {
		status := "EXECUTED"
		if i == n {
			status = lastStatus
		}
		tr.Steps = append(tr.Steps, trajectories.Step{
			Index:       i,
			ModelInput:  []trajectories.Message{{Role: "user", Content: "goal"}, {Role: "assistant", Content: "step " + strconv.Itoa(i)}},
			ModelOutput: `{"action":{"tool":"read","arguments":{"path":"a"}}}`,
			Action:      trajectories.Action{Kind: "tool_call", Tool: "read", Arguments: map[string]any{"path": "a"}, Repairs: []string{}},
			Outcome:     trajectories.Outcome{Status: status, Observation: "contents"},
			Counters:    trajectories.Counters{EffectiveSteps: i, TotalSteps: i},
		})
	}
	doc, err := trajectories.ToGeneric(tr)
	if err != nil {
		panic(err)
	}
	return doc
}

// BenchmarkDiff compares two n-step trajectories that differ in the last
// step; ms/1k-steps shows whether the cost grows linearly.
func BenchmarkDiff(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		want := syntheticTrajectory(n, "EXECUTED")
		got := syntheticTrajectory(n, "NOT_EXECUTED")
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				d, err := compare.Diff(want, got, compare.Options{})
				if err != nil || len(d) != 1 {
					b.Fatalf("%d diffs, %v", len(d), err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N)/(float64(n)/1000), "ms/1k-steps")
		})
	}
}
