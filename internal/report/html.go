package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"
)

//go:embed report.html.tmpl
var htmlTemplate string

// pageCSS is the one style sheet of every HTML page the suite writes (the
// run report and the coverage matrix), inlined so a page needs nothing
// from the network.
//
//go:embed page.css
var pageCSS string

// filterJS is the one script of every HTML page: the row filter.
//
//go:embed filter.js
var filterJS string

// pageFuncs are the template functions the HTML pages share.
func pageFuncs() template.FuncMap {
	return template.FuncMap{
		"css":    func() template.CSS { return template.CSS(pageCSS) },
		"filter": func() template.JS { return template.JS(filterJS) },
		"pct":    func(n, total int) string { return fmt.Sprintf("%.2f", 100*float64(n)/float64(max(total, 1))) },
		"join":   strings.Join,
		"anchor": func(id string) string {
			return "d-" + strings.NewReplacer(".", "-").Replace(id)
		},
	}
}

// HTML writes one self-contained page (no network, no external assets):
// totals, a filter, bars per family and per decision, the causes, and per
// failing scenario its merged problems, a step-by-step timeline with the
// mismatched fields marked (want beside got), the decisions it cites
// linked to their titles, and the transcript and stderr collapsed.
func HTML(w io.Writer, r *Report, _ Options) error {
	t, err := template.New("report").Funcs(pageFuncs()).Parse(htmlTemplate)
	if err != nil {
		return err
	}
	v := htmlView{Report: r, Counts: r.Counts(), Total: len(r.Rows), Causes: Causes(r), Families: tallies(r.ByFamily()), DecisionBars: tallies(r.ByDecision())}
	// Failing scenarios first, so a handful of different failures are
	// what the page opens on; then the rest, each group by name.
	rows := r.Sorted()
	slices.SortStableFunc(rows, func(a, b Row) int { return verdictRank(a.Verdict) - verdictRank(b.Verdict) })
	for _, row := range rows {
		v.Rows = append(v.Rows, viewRow(row, r))
	}
	// A few failures are shown opened; many stay collapsed under their
	// one-line summaries, so the page stays readable with 100.
	if v.Counts.Failed <= 10 {
		for i := range v.Rows {
			v.Rows[i].Open = v.Rows[i].Failing
		}
	}
	cited := map[string]bool{}
	for _, row := range r.Rows {
		for _, id := range row.Decisions {
			cited[id] = true
		}
	}
	for _, c := range v.Causes {
		for _, id := range c.Decisions {
			cited[id] = true
		}
	}
	for _, id := range slices.Sorted(maps.Keys(r.Decisions)) {
		if !cited[id] {
			continue
		}
		v.Decisions = append(v.Decisions, htmlDecision{ID: id, Title: r.Decisions[id].Title, Text: r.Decisions[id].Text})
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

type htmlView struct {
	Report       *Report
	Counts       Counts
	Total        int
	Causes       []Cause
	Families     []htmlTally
	DecisionBars []htmlTally
	Rows         []htmlRow
	Decisions    []htmlDecision
}

type htmlTally struct {
	Tally
	Total int
}

func tallies(ts []Tally) []htmlTally {
	out := make([]htmlTally, len(ts))
	for i, t := range ts {
		out[i] = htmlTally{Tally: t, Total: t.Passed + t.Failed + t.Skipped + t.KnownFailing}
	}
	return out
}

type htmlDecision struct{ ID, Title, Text string }

type htmlRow struct {
	Row
	// Wording is set when a line is about words alone (--strict).
	Wording  bool
	Lines    []htmlLine
	Steps    []htmlStep
	Rerun    string
	Failing  bool
	Open     bool
	Verdicts string
}

type htmlLine struct {
	Text    string
	Path    string
	Marked  bool
	Wording bool
}

// htmlStep is one step of the timeline; each cell says whether a problem
// was found at or below its field.
type htmlStep struct {
	Label string
	Cells []htmlCell
}

type htmlCell struct {
	Name   string
	Got    string
	Want   string
	Marked bool
	Span   int // columns the cell spans (a row that is not a step)
}

// verdictRank orders the page's rows: what fails first.
func verdictRank(v Verdict) int {
	switch v {
	case Fail, Stale:
		return 0
	case Interrupted:
		return 1
	case KnownFailing:
		return 2
	case Pass:
		return 3
	}
	return 4
}

// timeline columns: the label, the field below steps[i], and how to show it.
var columns = []struct{ label, field string }{
	{"model input", "model_input"},
	{"action", "action"},
	{"status", "outcome.status"},
	{"observation", "outcome.observation"},
	{"counters", "counters"},
	{"context size", "context_size"},
	{"history", "history_observation"},
}

func viewRow(row Row, r *Report) htmlRow {
	v := htmlRow{Row: row, Failing: row.Failed(), Verdicts: string(row.Verdict)}
	if row.Verdict == Fail {
		v.Rerun = r.RerunCommand(row.Scenario)
	}
	lines := Lines(row)
	for _, l := range lines {
		v.Lines = append(v.Lines, htmlLine{Text: l.String(), Path: l.Path, Marked: l.Path != "", Wording: l.Wording})
		v.Wording = v.Wording || l.Wording
	}
	if len(row.Trajectory) == 0 {
		return v
	}
	var tr map[string]any
	if json.Unmarshal(row.Trajectory, &tr) != nil {
		return v
	}
	steps, _ := tr["steps"].([]any)
	// under reports whether a line is about path or something below it,
	// and returns what the design wants there.
	under := func(path string) (string, bool) {
		for _, l := range lines {
			if l.Path == path || strings.HasPrefix(l.Path, path+".") || strings.HasPrefix(l.Path, path+"[") {
				return strings.TrimPrefix(l.Sentence(), l.Path+": "), true
			}
		}
		return "", false
	}
	for i, raw := range steps {
		s, _ := raw.(map[string]any)
		st := htmlStep{Label: fmt.Sprintf("%v", s["index"])}
		if ph, ok := s["phase"].(string); ok {
			st.Label = ph + " " + st.Label
		}
		// A step the design does not have at all: every cell is marked.
		extra := false
		for _, l := range lines {
			extra = extra || l.Path == fmt.Sprintf("steps[%d]", i)
		}
		for _, c := range columns {
			// An absent field is an empty cell, not a value.
			cell := htmlCell{Name: c.label}
			if got, ok := lookup(s, c.field); ok {
				cell.Got = Describe(got)
			}
			if want, ok := under(fmt.Sprintf("steps[%d].%s", i, c.field)); ok {
				cell.Marked, cell.Want = true, want
			} else if extra {
				cell.Marked = true
			}
			st.Cells = append(st.Cells, cell)
		}
		v.Steps = append(v.Steps, st)
	}
	// What is not a step of the run has a row too, marked when it
	// differs: missing steps, how the run ended, and its events.
	for _, l := range lines {
		if l.Path == "steps" || (strings.HasPrefix(l.Path, "steps[") && indexOf(l.Path) >= len(steps)) {
			v.Steps = append(v.Steps, htmlStep{Label: "missing", Cells: wholeRow(fmt.Sprintf("%d step(s)", len(steps)), strings.TrimPrefix(l.Sentence(), l.Path+": "))})
			break
		}
	}
	endGot := describeEnd(tr)
	for _, p := range []string{"end", "interrupted", "run_error", "assembly_error", "phases", "resume"} {
		if want, ok := under(p); ok {
			v.Steps = append(v.Steps, htmlStep{Label: "end", Cells: wholeRow(endGot, p+": "+want)})
			endGot = ""
			break
		}
	}
	if endGot != "" && len(steps) > 0 {
		v.Steps = append(v.Steps, htmlStep{Label: "end", Cells: wholeRow(endGot, "")})
	}
	for _, p := range []string{"events", "event_types", "event_sink_failures"} {
		if want, ok := under(p); ok {
			evs, _ := tr["events"].([]any)
			v.Steps = append(v.Steps, htmlStep{Label: "events", Cells: wholeRow(Describe(evs), p+": "+want)})
			break
		}
	}
	return v
}

// wholeRow is a timeline row with one cell across the columns: got, and
// when want is set, marked with what the design wants.
func wholeRow(got, want string) []htmlCell {
	return []htmlCell{{Name: "all", Got: got, Want: want, Marked: want != "", Span: len(columns)}}
}

// indexOf is the index in a path that starts "steps[N]".
func indexOf(path string) int {
	var n int
	if _, err := fmt.Sscanf(path, "steps[%d]", &n); err != nil {
		return -1
	}
	return n
}

// describeEnd says how the run ended, or how it stopped without an end.
func describeEnd(tr map[string]any) string {
	switch {
	case tr["end"] != nil:
		return Describe(tr["end"])
	case tr["interrupted"] != nil:
		return "interrupted: " + Describe(tr["interrupted"])
	case tr["run_error"] != nil:
		return "stopped: " + Describe(tr["run_error"])
	case tr["assembly_error"] != nil:
		return "refused: " + Describe(tr["assembly_error"])
	}
	return ""
}

// lookup finds a dotted field below m; ok is false when it is absent.
func lookup(m map[string]any, dotted string) (any, bool) {
	var cur any = m
	for _, k := range strings.Split(dotted, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}
