// Package report renders a suite run for people (text), for tools (JSON)
// and for CI systems (JUnit XML).
package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// Verdicts a report row may carry. KnownFailing is a failure the
// known-failing list expected; Stale is a listed scenario that passed.
const (
	Pass         = "pass"
	Fail         = "fail"
	Skip         = "skip"
	KnownFailing = "known_failing"
	Stale        = "stale"
)

// Row is one scenario's line in a report.
type Row struct {
	Scenario  string   `json:"scenario"`
	Verdict   string   `json:"verdict"`
	Decisions []string `json:"decisions"`
	Problems  []string `json:"problems,omitempty"`
	// Details are the problems with their paths and values, for tools.
	Details []engine.Problem `json:"details,omitempty"`
	Note    string           `json:"note,omitempty"`
	// Stderr is what the implementation wrote to stderr while it ran this
	// scenario (over the protocol).
	Stderr   string        `json:"stderr,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

// Report is a whole run.
type Report struct {
	Implementation string   `json:"implementation"`
	Rows           []Row    `json:"scenarios"`
	Errors         []string `json:"errors,omitempty"` // run-level problems, e.g. stale known-failing patterns
	// Interrupted is true when a signal stopped the run; NotRun counts the
	// scenarios it never started.
	Interrupted bool `json:"interrupted,omitempty"`
	NotRun      int  `json:"not_run,omitempty"`
}

// Counts tallies verdicts.
type Counts struct {
	Passed, Failed, Skipped, KnownFailing int
}

// Counts returns the tallies; stale entries count as failures.
func (r *Report) Counts() Counts {
	var c Counts
	for _, row := range r.Rows {
		switch row.Verdict {
		case Pass:
			c.Passed++
		case Skip:
			c.Skipped++
		case KnownFailing:
			c.KnownFailing++
		default:
			c.Failed++
		}
	}
	return c
}

// OK reports whether the run passed as a whole.
func (r *Report) OK() bool { return r.Counts().Failed == 0 && len(r.Errors) == 0 && !r.Interrupted }

func (r *Report) sorted() []Row {
	rows := append([]Row(nil), r.Rows...)
	sort.Slice(rows, func(i, j int) bool { return rows[i].Scenario < rows[j].Scenario })
	return rows
}

// Text writes the human report: failures in full, then a summary table by
// family, then the totals line.
func Text(out io.Writer, r *Report) error {
	w := &errWriter{w: out}
	rows := r.sorted()
	fmt.Fprintf(w, "polyloop-conform: %d scenarios against %s\n", len(rows), r.Implementation)
	for _, row := range rows {
		switch row.Verdict {
		case Fail, Stale:
			fmt.Fprintf(w, "\nFAIL %s  [%s]\n", row.Scenario, strings.Join(row.Decisions, " "))
			if row.Note != "" {
				fmt.Fprintf(w, "  %s\n", row.Note)
			}
			for _, p := range row.Problems {
				fmt.Fprintf(w, "  %s\n", p)
			}
		}
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "\nERROR %s\n", e)
	}
	skips := map[string]int{}
	for _, row := range rows {
		if row.Verdict == Skip && len(row.Problems) > 0 {
			skips[row.Problems[0]]++
		}
	}
	if len(skips) > 0 {
		reasons := make([]string, 0, len(skips))
		for reason := range skips {
			reasons = append(reasons, reason)
		}
		sort.Strings(reasons)
		fmt.Fprintln(w, "\nSkipped, by the capabilities they need:")
		for _, reason := range reasons {
			fmt.Fprintf(w, "  %3d  %s\n", skips[reason], reason)
		}
	}
	fmt.Fprintln(w)
	type fam struct{ pass, fail, skip, kf int }
	fams := map[string]*fam{}
	var names []string
	for _, row := range rows {
		f := scenarios.Family(row.Scenario)
		if fams[f] == nil {
			fams[f] = &fam{}
			names = append(names, f)
		}
		switch row.Verdict {
		case Pass:
			fams[f].pass++
		case Skip:
			fams[f].skip++
		case KnownFailing:
			fams[f].kf++
		default:
			fams[f].fail++
		}
	}
	fmt.Fprintf(w, "%-14s %6s %6s %6s %6s\n", "family", "pass", "fail", "skip", "known")
	for _, n := range names {
		f := fams[n]
		fmt.Fprintf(w, "%-14s %6d %6d %6d %6d\n", n, f.pass, f.fail, f.skip, f.kf)
	}
	if r.Interrupted {
		fmt.Fprintf(w, "\nINTERRUPTED: stopped by a signal; %d scenarios did not run\n", r.NotRun)
	}
	fmt.Fprintf(w, "\n%s\n", r.Summary())
	return w.err
}

// Summary is the closing line: the verdict counts, and run-level errors
// (an unmatched known-failing pattern, a missing golden) when there are
// any, so the line never reads "0 failed" for a run that failed.
func (r *Report) Summary() string {
	c := r.Counts()
	s := fmt.Sprintf("%d passed, %d failed, %d skipped, %d known failing", c.Passed, c.Failed, c.Skipped, c.KnownFailing)
	switch n := len(r.Errors); {
	case n == 1:
		s += ", 1 error"
	case n > 1:
		s += fmt.Sprintf(", %d errors", n)
	}
	if r.Interrupted {
		s += fmt.Sprintf(", %d not run (interrupted)", r.NotRun)
	}
	return s
}

// errWriter keeps the first write error, so a report written with many
// Fprintf calls fails as a whole when its destination does.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// JSON writes the report as one JSON document.
func JSON(w io.Writer, r *Report) error {
	out := struct {
		*Report
		Counts Counts `json:"counts"`
		OK     bool   `json:"ok"`
	}{r, r.Counts(), r.OK()}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemErr string        `xml:"system-err,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// JUnit writes a JUnit XML test suite, one test case per scenario.
func JUnit(w io.Writer, r *Report) error {
	s := junitSuite{Name: "polyloop-conform: " + r.Implementation}
	var total time.Duration
	for _, row := range r.sorted() {
		fam := scenarios.Family(row.Scenario)
		c := junitCase{Name: row.Scenario, Classname: fam, Time: secs(row.Duration), SystemErr: row.Stderr}
		total += row.Duration
		body := strings.Join(append([]string{row.Note}, row.Problems...), "\n")
		switch row.Verdict {
		case Fail, Stale:
			s.Failures++
			c.Failure = &junitMessage{Message: firstLine(row), Body: strings.TrimSpace(body)}
		case Skip, KnownFailing:
			s.Skipped++
			c.Skipped = &junitMessage{Message: firstLine(row)}
		}
		s.Cases = append(s.Cases, c)
	}
	for _, e := range r.Errors {
		s.Failures++
		s.Cases = append(s.Cases, junitCase{Name: "run", Classname: "polyloop-conform", Time: "0", Failure: &junitMessage{Message: e}})
	}
	s.Tests = len(s.Cases)
	s.Time = secs(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func firstLine(r Row) string {
	if r.Note != "" {
		return r.Note
	}
	if len(r.Problems) > 0 {
		return r.Problems[0]
	}
	return r.Verdict
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
