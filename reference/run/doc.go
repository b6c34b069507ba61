// Package run is the reference kernel's run loop: a run request built from a
// reusable definition, the model call, the decision, settlement, two step
// counters, the stop judge, the journal, and resume.
//
// Decision IDs implemented here: 0003.D1 (definition reused, budget and
// tools per request), 0003.D4 (validation before any executor; handler
// errors count as executed), 0006.D3 (a RegistryExecutor must come from the
// visible registry), 0007.D2 (per-run SyntheticObservations), 0004.D1 (two
// counters), 0004.D2 (closed set of stop reasons), 0004.D3 (both completion
// paths, and the reference interpretations for their edge cases), 0004.D4
// (cancellation), 0002.D1-D4 (journal and resume).
//
// The kernel's seams are the parts an embedder passes in: on the request
// the executor, the size measure, the parser (RequestConfig.Parser), the
// stop judge (RequestConfig.Judge) and the context assembler
// (RequestConfig.Assembler); on the run's Options the model, the audit
// sinks and the journal's file system and hook. Each defaults to the
// design's. polyloop-conform selfcheck's deviations (internal/deviation)
// wrap these seams; the few mistakes no seam reaches are Options.Departures.
package run
