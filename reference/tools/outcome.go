package tools

// Status is the first field of an ActionOutcome.
type Status string

// The three statuses an action can settle with.
const (
	StatusExecuted    Status = "EXECUTED"
	StatusNotExecuted Status = "NOT_EXECUTED"
	StatusEnvError    Status = "ENV_ERROR"
)

// ActionOutcome is what an action executor returns for one action, with the
// five fields of design 0008 under their spec names.
type ActionOutcome struct {
	Status                    Status `json:"status"`
	Observation               string `json:"observation"`
	ObservationIsSynthetic    bool   `json:"observation_is_synthetic"`
	EnvReportedCompletion     bool   `json:"env_reported_completion"`
	ObservationTruncatedChars int    `json:"observation_truncated_chars"`
}
