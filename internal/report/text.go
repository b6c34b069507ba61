package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Text writes the report for people: the causes, largest first; then each
// failure with its merged lines and the command that reruns it with a
// trace; then skips by reason, a table by family, and the totals line.
// With Brief only the causes and the totals.
func Text(out io.Writer, r *Report, o Options) error {
	w := &errWriter{w: out}
	rows := r.Sorted()
	fmt.Fprintf(w, "polyloop-conform: %d scenarios against %s\n", len(rows), r.Implementation)
	causes := Causes(r)
	if len(causes) > 0 {
		fmt.Fprintln(w, "\nCauses, largest first:")
		for i, c := range causes {
			if o.Brief && i == 8 {
				fmt.Fprintf(w, "  … and %d more causes (without --brief: every failure)\n", len(causes)-i)
				break
			}
			fmt.Fprintf(w, "  %s\n", c)
		}
	}
	if !o.Brief {
		for _, row := range rows {
			if !row.Failed() {
				continue
			}
			fmt.Fprintf(w, "\n%s %s  [%s]", strings.ToUpper(string(row.Verdict)), row.Scenario, strings.Join(row.Decisions, " "))
			if l := row.Since.Label(); l != "" {
				fmt.Fprintf(w, "  (%s)", l)
			}
			fmt.Fprintln(w)
			if row.Note != "" {
				fmt.Fprintf(w, "  %s\n", row.Note)
			}
			if row.Evidence == SelfReported {
				fmt.Fprintf(w, "  evidence: self-reported — %s\n", row.EvidenceNote)
			}
			for _, l := range Lines(row) {
				fmt.Fprintf(w, "  %s\n", l)
			}
			writeScenarioYAML(w, row)
			if o.Trace {
				writeTrace(w, row)
			}
			if row.Verdict == Fail {
				fmt.Fprintf(w, "  rerun: %s\n", r.RerunCommand(row.Scenario))
			}
		}
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "\nERROR %s\n", e)
	}
	if !o.Brief {
		writeSkips(w, rows)
		writeNotJudged(w, r.NotJudged, rows)
		writeEvidence(w, rows)
		fmt.Fprintln(w)
		fmt.Fprintf(w, "%-14s %6s %6s %6s %6s\n", "family", "pass", "fail", "skip", "known")
		for _, t := range r.ByFamily() {
			fmt.Fprintf(w, "%-14s %6d %6d %6d %6d\n", t.Name, t.Passed, t.Failed, t.Skipped, t.KnownFailing)
		}
	}
	if r.Interrupted {
		fmt.Fprintf(w, "\nINTERRUPTED: stopped by a signal; %d scenarios did not run\n", r.NotRun)
	}
	fmt.Fprintf(w, "\n%s\n", r.Summary())
	return w.err
}

// writeScenarioYAML prints a generated case that differed, indented, as
// the scenario to add.
func writeScenarioYAML(w io.Writer, row Row) {
	if row.ScenarioYAML == "" {
		return
	}
	fmt.Fprintf(w, "  the scenario to add, as %s.yaml:\n", row.Scenario)
	for _, l := range strings.Split(strings.TrimRight(row.ScenarioYAML, "\n"), "\n") {
		fmt.Fprintf(w, "    %s\n", l)
	}
}

func writeTrace(w io.Writer, row Row) {
	if row.Transcript != "" {
		fmt.Fprintln(w, "  protocol exchange (runner >, implementation <):")
		for _, l := range strings.Split(strings.TrimRight(row.Transcript, "\n"), "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
	} else {
		fmt.Fprintln(w, "  protocol exchange: none recorded (in process, or the implementation never started)")
	}
	if row.Stderr != "" {
		fmt.Fprintln(w, "  stderr:")
		for _, l := range strings.Split(strings.TrimRight(row.Stderr, "\n"), "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}

func writeSkips(w io.Writer, rows []Row) {
	skips := map[string]int{}
	for _, row := range rows {
		if row.Verdict == Skip && row.Note != "" {
			skips[row.Note]++
		}
	}
	if len(skips) == 0 {
		return
	}
	reasons := make([]string, 0, len(skips))
	for reason := range skips {
		reasons = append(reasons, reason)
	}
	slices.Sort(reasons)
	fmt.Fprintln(w, "\nSkipped, by the capabilities they need:")
	for _, reason := range reasons {
		fmt.Fprintf(w, "  %3d  %s\n", skips[reason], reason)
	}
}

// writeNotJudged lists, per capability the implementation does not
// claim, the fields no scenario judged, and in how many scenarios they
// differed from the design's: a path, not a switch (docs/implementing.md).
func writeNotJudged(w io.Writer, notJudged map[string]string, rows []Row) {
	if len(notJudged) == 0 {
		return
	}
	differed := map[string]int{}
	for _, row := range rows {
		for _, c := range row.NotJudged {
			differed[c]++
		}
	}
	caps := slices.Sorted(maps.Keys(notJudged))
	fmt.Fprintln(w, "\nNot judged, by the capabilities not claimed:")
	for _, c := range caps {
		fmt.Fprintf(w, "  %-17s %s (differed in %d scenario(s), not counted)\n", c, notJudged[c], differed[c])
	}
}

// writeEvidence lists the passes that rest on the implementation's own
// word, and the scenarios judged without a golden, so a reader of a green
// report sees what it does not prove.
func writeEvidence(w io.Writer, rows []Row) {
	var self, expectOnly []string
	trusted := map[string][]string{} // what is taken on trust -> scenarios
	for _, row := range rows {
		if row.Verdict == Pass && row.Evidence == SelfReported {
			self = append(self, row.Scenario)
		}
		if row.Verdict == Pass {
			for _, t := range row.TakenOnTrust {
				trusted[t] = append(trusted[t], row.Scenario)
			}
		}
		if row.ExpectOnly && row.Verdict != Skip {
			expectOnly = append(expectOnly, row.Scenario)
		}
	}
	if len(self) > 0 {
		fmt.Fprintf(w, "\nSelf-reported passes (the implementation staged a fault itself; --require observed fails them): %d\n  %s\n", len(self), strings.Join(self, ", "))
	}
	if len(trusted) > 0 {
		fmt.Fprintln(w, "\nTaken on trust (no runner can observe it; --require observed does not fail it; docs/limits.md):")
		for _, what := range slices.Sorted(maps.Keys(trusted)) {
			fmt.Fprintf(w, "  %s: %d\n    %s\n", what, len(trusted[what]), strings.Join(trusted[what], ", "))
		}
	}
	if len(expectOnly) > 0 {
		fmt.Fprintf(w, "\nJudged by expect alone (no golden): %d\n  %s\n", len(expectOnly), strings.Join(expectOnly, ", "))
	}
}
