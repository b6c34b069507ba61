package run

import (
	"testing"

	"github.com/polyloop/polyloop-conform/reference/tools"
)

func TestJudge_0004_D3_order(t *testing.T) {
	budget := Budget{MaxEffectiveSteps: 3, MaxTotalSteps: 5}
	exec := tools.ActionOutcome{Status: tools.StatusExecuted}
	envDone := tools.ActionOutcome{Status: tools.StatusExecuted, EnvReportedCompletion: true}
	cases := []struct {
		id   string
		v    Verdict
		want StopReason
	}{
		{"continue", Verdict{Outcome: exec, Counters: Counters{1, 1}, Budget: budget}, ""},
		{"0004.D2 env error", Verdict{Outcome: tools.ActionOutcome{Status: tools.StatusEnvError}, Counters: Counters{0, 1}, Budget: budget}, EnvironmentError},
		{"0004.D3.order env error beats claimed completion", Verdict{Outcome: tools.ActionOutcome{Status: tools.StatusEnvError, EnvReportedCompletion: true}, Budget: budget}, EnvironmentError},
		{"0004.D3 by environment", Verdict{Outcome: envDone, Counters: Counters{1, 1}, Budget: budget}, GoalReachedByEnvironment},
		{"0004.D3 by tool", Verdict{Outcome: exec, ToolCompletedRun: true, Counters: Counters{1, 1}, Budget: budget}, GoalReachedByTool},
		{"0004.D3.both environment wins", Verdict{Outcome: envDone, ToolCompletedRun: true, Budget: budget}, GoalReachedByEnvironment},
		{"0004.D3.order completion beats caps", Verdict{Outcome: exec, ToolCompletedRun: true, Counters: Counters{3, 5}, Budget: budget}, GoalReachedByTool},
		{"0004.D1 effective cap", Verdict{Outcome: exec, Counters: Counters{3, 4}, Budget: budget}, EffectiveBudgetExhausted},
		{"0004.D1 total cap", Verdict{Outcome: tools.ActionOutcome{Status: tools.StatusNotExecuted}, Counters: Counters{1, 5}, Budget: budget}, TotalBudgetExhausted},
		{"0004.D3.order effective before total", Verdict{Outcome: exec, Counters: Counters{3, 5}, Budget: budget}, EffectiveBudgetExhausted},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			if got := Judge(tc.v); got != tc.want {
				t.Errorf("Judge = %q, want %q", got, tc.want)
			}
		})
	}
}
