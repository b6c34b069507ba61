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
	for _, row := range r.Sorted() {
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
	Lines    []htmlLine
	Steps    []htmlStep
	Rerun    string
	Failing  bool
	Open     bool
	Verdicts string
}

type htmlLine struct {
	Text   string
	Path   string
	Marked bool
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
}

// timeline columns: the label, the field below steps[i], and how to show it.
var columns = []struct{ label, field string }{
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
		v.Lines = append(v.Lines, htmlLine{Text: l.String(), Path: l.Path, Marked: l.Path != ""})
	}
	if len(row.Trajectory) == 0 {
		return v
	}
	var tr struct {
		Steps []map[string]any `json:"steps"`
	}
	if json.Unmarshal(row.Trajectory, &tr) != nil {
		return v
	}
	for i, s := range tr.Steps {
		st := htmlStep{Label: fmt.Sprintf("%v", s["index"])}
		if ph, ok := s["phase"].(string); ok {
			st.Label = ph + " " + st.Label
		}
		for _, c := range columns {
			cell := htmlCell{Name: c.label, Got: brief(lookup(s, c.field))}
			prefix := fmt.Sprintf("steps[%d].%s", i, c.field)
			for _, l := range lines {
				if l.Path == prefix || strings.HasPrefix(l.Path, prefix+".") || strings.HasPrefix(l.Path, prefix+"[") {
					cell.Marked = true
					cell.Want = strings.TrimPrefix(l.Statement, l.Path+": ")
				}
			}
			st.Cells = append(st.Cells, cell)
		}
		v.Steps = append(v.Steps, st)
	}
	return v
}

func lookup(m map[string]any, dotted string) any {
	var cur any = m
	for _, k := range strings.Split(dotted, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

func brief(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		if len([]rune(x)) > 140 {
			return string([]rune(x)[:140]) + "…"
		}
		return x
	case map[string]any:
		if t, ok := x["tool"].(string); ok {
			return t
		}
		if k, ok := x["kind"].(string); ok {
			return k
		}
		if e, ok := x["effective_steps"]; ok {
			return fmt.Sprintf("%v effective / %v total", e, x["total_steps"])
		}
	}
	b, _ := json.Marshal(v)
	return brief(string(b))
}
