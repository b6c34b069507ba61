package run

import "github.com/polyloop/polyloop-conform/reference/tools"

// StopReason is why a run ended; every run has exactly one (0004.D2).
type StopReason string

// The closed set of stop reasons.
const (
	GoalReachedByTool        StopReason = "goal_reached_by_tool"
	GoalReachedByEnvironment StopReason = "goal_reached_by_environment"
	EffectiveBudgetExhausted StopReason = "effective_budget_exhausted"
	TotalBudgetExhausted     StopReason = "total_budget_exhausted"
	EnvironmentError         StopReason = "environment_error"
	ResumeOutcomeUnknown     StopReason = "resume_outcome_unknown"
)

// StopReasons lists the closed set, for validators.
func StopReasons() []StopReason {
	return []StopReason{GoalReachedByTool, GoalReachedByEnvironment, EffectiveBudgetExhausted, TotalBudgetExhausted, EnvironmentError, ResumeOutcomeUnknown}
}

// Counters are the two step counts (0004.D1).
type Counters struct {
	EffectiveSteps int `json:"effective_steps"`
	TotalSteps     int `json:"total_steps"`
}

// Verdict is what the judge looks at after one settlement.
type Verdict struct {
	Outcome tools.ActionOutcome
	// ToolCompletedRun is true when the action called a completes_run tool
	// that executed successfully (a handler error does not count, 0004.D3.tool-error).
	ToolCompletedRun bool
	Counters         Counters
	Budget           Budget
}

// Judge returns the stop reason after a settlement, or "" to go on. The
// order is the reference interpretation recorded as 0004.D3.order:
// an environment error first, then environment completion (the stronger
// evidence wins when both paths fire, 0004.D3.both), then tool completion,
// then the effective cap, then the total cap.
func Judge(v Verdict) StopReason {
	switch {
	case v.Outcome.Status == tools.StatusEnvError:
		return EnvironmentError
	case v.Outcome.EnvReportedCompletion:
		return GoalReachedByEnvironment
	case v.ToolCompletedRun:
		return GoalReachedByTool
	case v.Counters.EffectiveSteps >= v.Budget.MaxEffectiveSteps:
		return EffectiveBudgetExhausted
	case v.Counters.TotalSteps >= v.Budget.MaxTotalSteps:
		return TotalBudgetExhausted
	}
	return ""
}
