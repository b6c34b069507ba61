package engine

import (
	"slices"
	"strings"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// Evidence names what a verdict on sc rests on besides what the runner
// saw (docs/protocol.md, "Evidence"; docs/limits.md):
//
// staged lists the parts of the scenario's faults the implementation
// staged itself although a protocol option lets the runner play them
// (the failing audit sink, the measure's refusal, the cut or damaged
// journal), and what a journal the runner cannot read must hold (a run
// that stopped without an end journals no end, 0004.D4): a verdict with a
// staged part is self-reported, and run --require observed fails it.
//
// trusted lists what no runner can observe whatever the implementation
// offers: a journal write that fails inside its file system, the work a
// cancelled or timed-out kernel abandons beyond the calls it released,
// and a refusal, which makes no call at all, so that the kernel's refusal
// and an adapter's look the same. A verdict with trusted parts only is
// taken on trust, and --require observed does not fail it.
func Evidence(sc *scenarios.Scenario, played map[string]bool, rec fakes.Record) (staged, trusted []string) {
	if sc.Faults.Sink != "" && !played[scenarios.PartSink] {
		staged = append(staged, "faults.sink (the failing audit sink and event_sink_failures)")
	}
	// A request refused before the measure's probe asks the measure
	// nothing (0010.D5.probe-last): offered and unasked, the runner's
	// measure saw all there was to see.
	unasked := rec.Offered[scenarios.PartMeasure] && sc.Expect.AssemblyError != nil && sc.Expect.AssemblyError.Kind != "unmeasurable_block"
	for _, r := range sc.Runs() {
		if len(r.MeasureUnknown) > 0 && !played[scenarios.PartMeasure] && !unasked {
			staged = append(staged, "measure_unknown (the size measure's refusal)")
			break
		}
	}
	if sc.Faults.TornTail && !played[scenarios.PartJournal] {
		staged = append(staged, "tear_tail (the cut of the journal's last record)")
	}
	if sc.Faults.JournalDamage != "" && !played[scenarios.PartJournal] {
		staged = append(staged, "journal_damage (the damage to the journal)")
	}
	interruption, _ := sc.Faults.Interruption()
	stops := interruption != nil || sc.Faults.ModelFailure != nil
	if stops && sc.Faults.Resume && rec.JournalOpaque {
		staged = append(staged, "what the journal of the stopped run holds (no end, 0004.D4; the runner reads the journal only with journal-lines)")
	}
	if rec.ResumeNotIsolated {
		what := "on no machine of its own"
		if len(rec.ResumeMissing) > 0 {
			what = "on a machine without its own " + strings.Join(rec.ResumeMissing, ", ")
		}
		staged = append(staged, "the resume's isolation (the resumed process started "+what+", so state the crashed one left in files, memory, a keyring or a daemon may have reached it: docs/limits.md, Isolation)")
	}
	if sc.Faults.JournalError != nil {
		trusted = append(trusted, "faults.journal_error (the failing journal write: the file system is the implementation's)")
	}
	if interruption != nil || blocks(sc) {
		trusted = append(trusted, "the cancellation (that the kernel abandoned its work beyond the calls it released)")
	}
	if sc.Expect.AssemblyError != nil || sc.Faults.JournalDamage != "" {
		trusted = append(trusted, "the refusal (a refused request or journal makes no call: the kernel's refusal and an adapter's look alike)")
	}
	return staged, trusted
}

// blocks reports whether a model turn or a handler of sc blocks until the
// runner cancels the run.
func blocks(sc *scenarios.Scenario) bool {
	for _, r := range sc.Runs() {
		if slices.ContainsFunc(r.Model, func(m scenarios.ModelTurn) bool { return m.Block }) {
			return true
		}
	}
	for _, t := range sc.Tools {
		if slices.ContainsFunc(t.Handler, func(b scenarios.Behaviour) bool { return b.Block }) {
			return true
		}
	}
	return false
}
