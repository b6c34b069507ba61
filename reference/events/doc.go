// Package events is the reference kernel's audit event stream: model steps
// with the raw output and the repaired decision side by side, settled
// actions, and the run's start and end.
//
// Implements 0011.D1 (raw and repaired output are both visible) and 0011.D2
// (a sink that fails or panics never stops the loop; failures are counted).
// 0011 is this project's reference interpretation of the events design doc
// that the GovDoc-SaaS note says is still to be written.
package events
