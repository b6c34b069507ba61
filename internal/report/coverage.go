package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/polyloop/polyloop-conform/internal/decisions"
	"github.com/polyloop/polyloop-conform/internal/jsontext"
)

// CoverageWriter writes the coverage matrix in one format.
type CoverageWriter func(w io.Writer, c *decisions.Coverage) error

func coverageFormats() registry[CoverageWriter] {
	return registry[CoverageWriter]{
		{"text", CoverageText, "one line per decision"},
		{"json", CoverageJSON, "for tools"},
		{"markdown", CoverageMarkdown, "a table for a pull request"},
		{"html", CoverageHTML, "one self-contained page with the decision × scenario matrix"},
	}
}

// LookupCoverage returns the writer of a coverage format.
func LookupCoverage(name string) (CoverageWriter, error) { return coverageFormats().lookup(name) }

// CoverageUsage is coverage's --format help text.
func CoverageUsage() string { return coverageFormats().usage("coverage") }

// CoverageText writes one line per decision, the problems, and a total.
func CoverageText(w io.Writer, c *decisions.Coverage) error {
	ew := &errWriter{w: w}
	for _, r := range c.Rows {
		fmt.Fprintf(ew, "%-34s %-6s %-10s %3d  %s\n", r.ID, r.Level, r.Status, len(r.Scenarios), strings.Join(r.Scenarios, " "))
		for _, d := range r.Deviations {
			fmt.Fprintf(ew, "%-34s deviation %s%s\n", "", d.Name, caughtBy(d, c.Selfcheck))
		}
	}
	for _, p := range c.Problems {
		fmt.Fprintf(ew, "PROBLEM %s\n", p)
	}
	must, covered := c.MustCovered()
	fmt.Fprintf(ew, "%d decisions, %d accepted MUST decisions of which %d have scenarios, %d scenarios, %d problems\n", len(c.Rows), must, covered, len(c.Scenarios), len(c.Problems))
	return ew.err
}

func caughtBy(d decisions.Deviation, ran bool) string {
	switch {
	case !ran:
		return ""
	case len(d.CaughtBy) == 0:
		return ": caught by no scenario"
	}
	return fmt.Sprintf(": caught by %d (%s)", len(d.CaughtBy), strings.Join(d.CaughtBy, " "))
}

// CoverageJSON writes the matrix as indented JSON.
func CoverageJSON(w io.Writer, c *decisions.Coverage) error {
	return jsontext.NewEncoder(w, "  ").Encode(c)
}

// CoverageMarkdown writes a table for a pull request's description.
func CoverageMarkdown(w io.Writer, c *decisions.Coverage) error {
	ew := &errWriter{w: w}
	fmt.Fprintln(ew, "| decision | level | status | scenarios | deviations |")
	fmt.Fprintln(ew, "|---|---|---|---|---|")
	for _, r := range c.Rows {
		var devs []string
		for _, d := range r.Deviations {
			devs = append(devs, "`"+d.Name+"`"+caughtBy(d, c.Selfcheck))
		}
		fmt.Fprintf(ew, "| `%s` | %s | %s | %s | %s |\n", r.ID, r.Level, r.Status, strings.Join(code(r.Scenarios), ", "), strings.Join(devs, "; "))
	}
	for _, p := range c.Problems {
		fmt.Fprintf(ew, "\n- **problem:** %s", p)
	}
	fmt.Fprintln(ew)
	return ew.err
}

func code(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "`" + s + "`"
	}
	return out
}

//go:embed coverage.html.tmpl
var coverageTemplate string

// CoverageHTML writes one self-contained page in the run report's look: a
// bar per design document (decisions cited by a scenario, by a MUST
// scenario, by none), the problems, one row per decision with its
// scenarios and deviations, and the decision × scenario grid.
func CoverageHTML(w io.Writer, c *decisions.Coverage) error {
	t, err := template.New("coverage").Funcs(pageFuncs()).Parse(coverageTemplate)
	if err != nil {
		return err
	}
	v := coverageView{Coverage: c, Grid: map[string]map[string]bool{}}
	v.Must, v.Covered = c.MustCovered()
	docs := map[string]int{}
	for _, r := range c.Rows {
		doc, _, _ := strings.Cut(r.ID, ".")
		i, ok := docs[doc]
		if !ok {
			i = len(v.Docs)
			docs[doc] = i
			v.Docs = append(v.Docs, coverageDoc{Name: doc})
		}
		d := &v.Docs[i]
		d.Total++
		switch {
		case len(r.Scenarios) > 0:
			d.Covered++
		case r.Status != "accepted" || r.Level != "MUST":
			d.Optional++
		default:
			d.Missing++
		}
		cells := map[string]bool{}
		for _, id := range r.Scenarios {
			cells[id] = true
		}
		v.Grid[r.ID] = cells
		row := coverageRow{Row: r, State: "covered", Show: "covered"}
		switch {
		case len(r.Scenarios) > 0:
		case r.Status == "accepted" && r.Level == "MUST":
			row.State, row.Show = "missing", "uncovered missing"
		default:
			row.State, row.Show = "optional", "uncovered"
		}
		v.Rows = append(v.Rows, row)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

type coverageView struct {
	*decisions.Coverage
	Must, Covered int
	Docs          []coverageDoc
	Rows          []coverageRow
	// Grid[decision][scenario] says the scenario cites the decision.
	Grid map[string]map[string]bool
}

type coverageDoc struct {
	Name                              string
	Total, Covered, Optional, Missing int
}

// coverageRow is one decision; State is covered, missing (an accepted
// MUST decision no scenario cites) or optional (uncited, not required),
// Show the filter values it answers to.
type coverageRow struct {
	decisions.Row
	State, Show string
}
