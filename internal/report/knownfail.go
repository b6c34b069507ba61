package report

import (
	"fmt"

	"github.com/polyloop/polyloop-conform/internal/knownfail"
)

// ApplyKnownFailing marks the listed failures known failing and the listed
// passes stale, and records every pattern that matches none of ids (all
// the scenarios of the suite, not only those that ran) as a run error.
// The CLI and the ginkgo suite share it.
func ApplyKnownFailing(r *Report, kf *knownfail.List, ids []string) {
	if kf == nil {
		return
	}
	for i := range r.Rows {
		MarkKnownFailing(&r.Rows[i], kf)
	}
	for _, e := range kf.Everything(ids) {
		r.Errors = append(r.Errors, fmt.Sprintf("%s:%d: pattern %q matches every scenario of the suite; a list that excuses everything proves nothing: name the failing families or scenarios", kf.File, e.Line, e.Pattern))
	}
	for _, e := range kf.Unmatched(ids) {
		r.Errors = append(r.Errors, fmt.Sprintf("%s:%d: pattern %q matches no scenario; remove or fix it", kf.File, e.Line, e.Pattern))
	}
}

// MarkKnownFailing applies the list to one row: a listed failure becomes
// known failing, a listed pass stale, each with a note citing the entry.
// A generated variant whose source scenario is listed fails for the reason
// its source does, so its failure is known failing too (citing its
// source's entry); its pass is a pass, never stale: whether the generated
// batch draws a variant that meets the listed gap depends on the seed, and
// a known gap must not fail one run in three.
func MarkKnownFailing(row *Row, kf *knownfail.List) {
	if kf == nil {
		return
	}
	e, listed := kf.Match(row.Scenario)
	if !listed {
		if row.Source == "" || row.Verdict != Fail {
			return
		}
		if e, listed = kf.Match(row.Source); listed {
			row.Verdict = KnownFailing
			row.Note = fmt.Sprintf("known failing: a variant of %s (%s:%d: %s)", row.Source, kf.File, e.Line, e.Reason)
		}
		return
	}
	switch row.Verdict {
	case Fail:
		row.Verdict = KnownFailing
		row.Note = fmt.Sprintf("known failing (%s:%d: %s)", kf.File, e.Line, e.Reason)
	case Pass:
		row.Verdict = Stale
		row.Note = fmt.Sprintf("passes but is listed as known failing at %s:%d (%s); remove the entry", kf.File, e.Line, e.Pattern)
	}
}
