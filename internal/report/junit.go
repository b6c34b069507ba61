package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string      `xml:"name,attr"`
	Tests      int         `xml:"tests,attr"`
	Failures   int         `xml:"failures,attr"`
	Skipped    int         `xml:"skipped,attr"`
	Time       string      `xml:"time,attr"`
	Timestamp  string      `xml:"timestamp,attr,omitempty"`
	Properties *junitProps `xml:"properties,omitempty"`
	Cases      []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name       string        `xml:"name,attr"`
	Classname  string        `xml:"classname,attr"`
	Time       string        `xml:"time,attr"`
	Properties *junitProps   `xml:"properties,omitempty"`
	Failure    *junitMessage `xml:"failure,omitempty"`
	Skipped    *junitMessage `xml:"skipped,omitempty"`
	SystemErr  *junitText    `xml:"system-err,omitempty"`
}

type junitProps struct {
	List []junitProp `xml:"property"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",cdata"`
}

type junitText struct {
	Body string `xml:",cdata"`
}

// runProps are the run's properties, on every testsuite (JUnit has no
// place for them on testsuites): the seed, so a CI system that keeps only
// the XML still knows how to replay the run (--seed).
func runProps(r *Report) *junitProps {
	var props []junitProp
	if r.Seed != 0 {
		props = append(props, junitProp{"seed", fmt.Sprint(r.Seed)})
	}
	for _, k := range slices.SortedFunc(maps.Keys(r.ShardSeeds), compareShards) {
		props = append(props, junitProp{"seed " + k, fmt.Sprint(r.ShardSeeds[k])})
	}
	if len(props) == 0 {
		return nil
	}
	return &junitProps{List: props}
}

// JUnit writes JUnit XML: one testsuite per family, one testcase per
// scenario with classname = family and properties for its decisions, level
// and requirements. A failure's message is the first cause it shows, its
// body every line and the rerun command; known failures are skipped with
// their problems; system-err is the implementation's stderr.
func JUnit(w io.Writer, r *Report, _ Options) error {
	first := firstCauses(r)
	all := junitSuites{Name: "polyloop-conform: " + r.Implementation}
	var total time.Duration
	byFamily := map[string]int{}
	for _, row := range r.Sorted() {
		fam := row.Family()
		i, ok := byFamily[fam]
		if !ok {
			i = len(all.Suites)
			byFamily[fam] = i
			ts := ""
			if !r.GeneratedAt.IsZero() {
				ts = r.GeneratedAt.Format("2006-01-02T15:04:05")
			}
			all.Suites = append(all.Suites, junitSuite{Name: fam, Timestamp: ts, Properties: runProps(r)})
		}
		s := &all.Suites[i]
		c := junitCaseOf(r, row, first[row.Scenario])
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Skipped != nil:
			s.Skipped++
		}
		s.Tests++
		s.Time = secs(parseSecs(s.Time) + row.Duration)
		total += row.Duration
		s.Cases = append(s.Cases, c)
	}
	if len(r.Errors) > 0 {
		all.Suites = append(all.Suites, junitErrorSuite(r.Errors))
	}
	for _, s := range all.Suites {
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Skipped += s.Skipped
	}
	all.Time = secs(total)
	return writeJUnit(w, all)
}

// firstCauses maps each scenario to the first cause that names it, in
// Causes order (largest group first), so a failure's one-line message is
// the pattern it shares with others rather than its first line.
func firstCauses(r *Report) map[string]string {
	first := map[string]string{}
	for _, c := range Causes(r) {
		for _, id := range c.Scenarios {
			if _, ok := first[id]; !ok {
				first[id] = c.String()
			}
		}
	}
	return first
}

// junitCaseOf is row's testcase: its properties, its stderr, and a
// failure (Fail, Stale) or skipped (Skip, KnownFailing, Interrupted)
// element carrying the row's lines. cause is the first cause naming the
// scenario ("" if none); it becomes the failure's message.
func junitCaseOf(r *Report, row Row, cause string) junitCase {
	c := junitCase{Name: row.Scenario, Classname: row.Family(), Time: secs(row.Duration), Properties: junitRowProps(row)}
	if row.Stderr != "" {
		c.SystemErr = &junitText{Body: xmlSafe(row.Stderr)}
	}
	body := junitBody(row)
	switch row.Verdict {
	case Fail, Stale:
		msg := cause
		if msg == "" && len(body) > 0 {
			msg = body[0]
		}
		if row.Verdict == Fail {
			body = append(body, "rerun: "+r.RerunCommand(row.Scenario))
		}
		c.Failure = &junitMessage{Message: xmlSafe(msg), Body: xmlSafe(strings.Join(body, "\n"))}
	case Skip, KnownFailing, Interrupted:
		c.Skipped = &junitMessage{Message: xmlSafe(row.Note), Body: xmlSafe(strings.Join(body, "\n"))}
	}
	return c
}

// junitRowProps are a testcase's properties: its decisions always (an
// empty value when it cites none), then level, requirements, evidence,
// since and what was taken on trust only when the row has them.
func junitRowProps(row Row) *junitProps {
	props := []junitProp{{"decisions", strings.Join(row.Decisions, " ")}}
	if row.Level != "" {
		props = append(props, junitProp{"level", row.Level})
	}
	if len(row.Requires) > 0 {
		props = append(props, junitProp{"requires", strings.Join(row.Requires, " ")})
	}
	if row.Evidence != "" {
		props = append(props, junitProp{"evidence", string(row.Evidence)})
	}
	if row.EvidenceNote != "" {
		props = append(props, junitProp{"evidence_note", row.EvidenceNote})
	}
	if l := row.Since.Label(); l != "" {
		props = append(props, junitProp{"since", l})
	}
	for _, t := range row.TakenOnTrust {
		props = append(props, junitProp{"taken_on_trust", t})
	}
	return &junitProps{List: props}
}

// junitBody is the text of a failure or skipped element: the row's note,
// each of its lines, and a scenario to add when the row proposes one.
func junitBody(row Row) []string {
	var body []string
	if row.Note != "" {
		body = append(body, row.Note)
	}
	for _, l := range Lines(row) {
		body = append(body, l.String())
	}
	if row.ScenarioYAML != "" {
		body = append(body, "the scenario to add, as "+row.Scenario+".yaml:", row.ScenarioYAML)
	}
	return body
}

// junitErrorSuite holds the run's own errors (not any scenario's), one
// failed "run" testcase each, so a CI system that reads only the XML
// still turns red when the run itself went wrong.
func junitErrorSuite(errs []string) junitSuite {
	s := junitSuite{Name: "polyloop-conform", Time: "0.000"}
	for _, e := range errs {
		s.Failures++
		s.Tests++
		s.Cases = append(s.Cases, junitCase{Name: "run", Classname: "polyloop-conform", Time: "0.000", Failure: &junitMessage{Message: e}})
	}
	return s
}

// writeJUnit writes the XML header, all indented by two spaces, and a
// final newline.
func writeJUnit(w io.Writer, all junitSuites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

func parseSecs(s string) time.Duration {
	var f float64
	fmt.Sscanf(s, "%g", &f)
	return time.Duration(f * float64(time.Second))
}

// xmlSafe replaces the characters XML 1.0 cannot carry (control
// characters an implementation may write to stderr, such as colour
// escapes) with U+FFFD. encoding/xml splits a "]]>" inside CDATA itself.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF) {
			return r
		}
		return '\uFFFD'
	}, s)
}
