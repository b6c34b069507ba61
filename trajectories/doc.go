// Package trajectories holds the trajectory format polyloop.trajectory/v1,
// its JSON Schema, and the golden trajectories, one per scenario, embedded
// so the CLI can verify without the source tree.
//
// A trajectory is what one implementation did for one scenario: every step
// with the model input as sent, the raw output, the decision, the
// ActionOutcome under its spec field names, the history observation and the
// counters; the handler calls the runner's fakes saw; the audit events; and
// the end. Nothing volatile (times, ids, paths) is recorded, so two runs of
// one scenario produce byte-identical trajectories.
package trajectories
