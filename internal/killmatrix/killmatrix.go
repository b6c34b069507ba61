// Package killmatrix is selfcheck's verdict on the suite itself: which
// scenarios catch which named deviation of the reference. A deviation
// passes when some scenario citing its decision catches it; a MUST
// scenario that catches none is dead weight. The matrix is built from a
// function that runs the suite against a set of deviations (in process or
// over the protocol: the caller's choice), and rendered as report rows, so
// its verdicts are owned by internal/report like every other command's.
package killmatrix

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/polyloop/polyloop-conform/internal/deviation"
	"github.com/polyloop/polyloop-conform/internal/report"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// Failures runs the suite against the reference with the deviations in
// set turned on and returns the scenarios that fail.
type Failures func(ctx context.Context, set deviation.Set) ([]*scenarios.Scenario, error)

// Matrix holds, per deviation (in the order given), the scenarios that
// caught it, and which deviations a signal kept from a verdict.
type Matrix struct {
	Deviations []deviation.Deviation
	Killers    [][]*scenarios.Scenario
	// Interrupted marks the deviations whose run a signal (ctx cancelled)
	// stopped, NotRun those it kept from starting: neither is caught nor
	// missed, since a run cut short fails scenarios that say nothing.
	Interrupted, NotRun []bool
}

// Build runs the suite once per deviation, parallel at a time. When ctx
// is cancelled (a signal), the runs under way are marked interrupted and
// the rest not run; that is no error.
func Build(ctx context.Context, devs []deviation.Deviation, parallel int, run Failures) (*Matrix, error) {
	m := &Matrix{Deviations: devs, Killers: make([][]*scenarios.Scenario, len(devs)),
		Interrupted: make([]bool, len(devs)), NotRun: make([]bool, len(devs))}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, parallel))
	for i, d := range devs {
		g.Go(func() error {
			if ctx.Err() != nil {
				m.NotRun[i] = true
				return nil
			}
			ks, err := run(gctx, deviation.Set{d.Name: true})
			if ctx.Err() != nil {
				m.Interrupted[i] = true
				return nil
			}
			m.Killers[i] = ks
			return err
		})
	}
	return m, g.Wait()
}

// Stopped counts the deviations a signal stopped and those it kept from
// running.
func (m *Matrix) Stopped() (interrupted, notRun int) {
	for i := range m.Deviations {
		if m.Interrupted != nil && m.Interrupted[i] {
			interrupted++
		}
		if m.NotRun != nil && m.NotRun[i] {
			notRun++
		}
	}
	return interrupted, notRun
}

// judged reports whether deviation i ran to the end.
func (m *Matrix) judged(i int) bool {
	return (m.Interrupted == nil || !m.Interrupted[i]) && (m.NotRun == nil || !m.NotRun[i])
}

// CaughtBy lists the IDs of the scenarios that caught deviation i (nil
// when none did).
func (m *Matrix) CaughtBy(i int) []string {
	var ids []string
	for _, sc := range m.Killers[i] {
		ids = append(ids, sc.ID)
	}
	return ids
}

// Related reports whether two decision IDs name the same decision or one
// refines the other (0008.D4 and 0008.D4.handler-error).
func Related(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+".") || strings.HasPrefix(b, a+".")
}

// cited reports whether one of the killers cites the deviation's decision.
func cited(killers []*scenarios.Scenario, decision string) bool {
	return slices.ContainsFunc(killers, func(sc *scenarios.Scenario) bool {
		return slices.ContainsFunc(sc.Decisions, func(id string) bool { return Related(id, decision) })
	})
}

// Caught counts, per scenario ID, the deviations it caught.
func (m *Matrix) Caught() map[string]int {
	out := map[string]int{}
	for _, ks := range m.Killers {
		for _, sc := range ks {
			out[sc.ID]++
		}
	}
	return out
}

// Idle lists the MUST scenarios that caught no deviation.
func (m *Matrix) Idle(scs []*scenarios.Scenario) []string {
	c := m.Caught()
	var out []string
	for _, sc := range scs {
		if sc.Level == "MUST" && c[sc.ID] == 0 {
			out = append(out, sc.ID)
		}
	}
	return out
}

// Fill adds one row per deviation to rep (family "deviation"): pass when
// some scenario citing its decision catches it. With every deviation
// checked (everything), each MUST scenario that catches none is a run
// error. A deviation a signal stopped is an interrupted row citing no
// decision, one it kept from running is counted in rep.NotRun, and a
// stopped matrix judges no MUST scenario idle.
func (m *Matrix) Fill(rep *report.Report, scs []*scenarios.Scenario, everything bool) {
	interrupted, notRun := m.Stopped()
	if interrupted+notRun > 0 {
		rep.Interrupted, everything = true, false
		rep.NotRun += notRun
	}
	for i, d := range m.Deviations {
		if m.NotRun != nil && m.NotRun[i] {
			continue
		}
		if m.Interrupted != nil && m.Interrupted[i] {
			rep.Rows = append(rep.Rows, report.Row{Scenario: "deviation." + string(d.Name), Verdict: report.Interrupted,
				Note: "stopped by a signal before its run of the suite finished"})
			continue
		}
		ks, ids := m.Killers[i], m.CaughtBy(i)
		row := report.Row{Scenario: "deviation." + string(d.Name), Verdict: report.Pass, Decisions: []string{d.Decision},
			Note: fmt.Sprintf("caught by %d: %s", len(ids), strings.Join(ids, " "))}
		switch {
		case len(ks) == 0:
			row.Verdict, row.Note = report.Fail, "caught by no scenario"
			row.Problems = []report.Problem{{Source: "selfcheck", Message: fmt.Sprintf("no scenario catches %s; %s needs a sharper scenario (%s)", d.Name, d.Decision, d.What), Decisions: []string{d.Decision}}}
		case !cited(ks, d.Decision):
			row.Verdict = report.Fail
			row.Problems = []report.Problem{{Source: "selfcheck", Message: fmt.Sprintf("%s is caught only by scenarios that do not cite %s; cite it where the check is, or add a scenario that does", d.Name, d.Decision), Decisions: []string{d.Decision}}}
		}
		rep.Rows = append(rep.Rows, row)
	}
	if everything {
		for _, id := range m.Idle(scs) {
			rep.Errors = append(rep.Errors, fmt.Sprintf("MUST scenario %s catches no deviation: add the deviation of the decision it checks, or sharpen it", id))
		}
	}
}

// Write prints the matrix for people: per deviation the scenarios that
// caught it, per scenario how many deviations it caught, and the totals.
func (m *Matrix) Write(w io.Writer, scs []*scenarios.Scenario, everything bool) {
	problems := 0
	interrupted, notRun := m.Stopped()
	if interrupted+notRun > 0 {
		everything = false // an unfinished matrix judges no scenario idle
	}
	fmt.Fprintf(w, "%-42s %-22s %6s  %s\n", "deviation", "breaks", "kills", "caught by")
	for i, d := range m.Deviations {
		if !m.judged(i) {
			what := "interrupted: stopped by a signal before its run finished"
			if m.NotRun[i] {
				what = "not run (stopped by a signal)"
			}
			fmt.Fprintf(w, "%-42s %-22s %6s  %s\n", d.Name, "", "-", what)
			continue
		}
		ks, ids := m.Killers[i], m.CaughtBy(i)
		shown := ids
		if len(shown) > 4 {
			shown = append(shown[:4:4], fmt.Sprintf("… %d more", len(ids)-4))
		}
		fmt.Fprintf(w, "%-42s %-22s %6d  %s\n", d.Name, d.Decision, len(ids), strings.Join(shown, ", "))
		switch {
		case len(ids) == 0:
			problems++
			fmt.Fprintf(w, "  FAIL: no scenario catches %s; %s needs a sharper scenario (%s)\n", d.Name, d.Decision, d.What)
		case !cited(ks, d.Decision):
			problems++
			fmt.Fprintf(w, "  FAIL: %s is caught only by scenarios that do not cite %s; cite it where the check is, or add a scenario that does\n", d.Name, d.Decision)
		}
	}
	caught := m.Caught()
	fmt.Fprintf(w, "\n%-48s %s\n", "scenario", "deviations caught")
	byCount := slices.Clone(scs)
	slices.SortStableFunc(byCount, func(a, b *scenarios.Scenario) int { return caught[b.ID] - caught[a.ID] })
	for _, sc := range byCount {
		fmt.Fprintf(w, "%-48s %d\n", sc.ID, caught[sc.ID])
	}
	var idle []string
	if interrupted+notRun == 0 {
		idle = m.Idle(scs)
	}
	if len(idle) > 0 {
		fmt.Fprintf(w, "\nMUST scenarios that catch none of these deviations: %s\n", strings.Join(idle, ", "))
		// Against every deviation, a MUST scenario that catches none is dead
		// weight: either it checks nothing the others do not, or a deviation
		// of its decision is missing. With --mutant or --shard choosing
		// some, it is only reported.
		if everything {
			problems += len(idle)
			fmt.Fprintln(w, "  FAIL: each of these MUST scenarios catches no deviation; add the deviation of the decision it checks, or sharpen it")
		}
	}
	killed := 0
	for _, ks := range m.Killers {
		if len(ks) > 0 {
			killed++
		}
	}
	must := 0
	for _, sc := range scs {
		if sc.Level == "MUST" {
			must++
		}
	}
	if interrupted+notRun > 0 {
		fmt.Fprintf(w, "\nINTERRUPTED: stopped by a signal; %d deviations did not run\n", notRun)
		fmt.Fprintf(w, "\n%d deviations, %d killed, %d problems, %d interrupted, %d not run (stopped by a signal)\n",
			len(m.Deviations), killed, problems, interrupted, notRun)
		return
	}
	fmt.Fprintf(w, "\n%d deviations, %d killed, %d problems; %d of %d MUST scenarios catch none of these deviations\n",
		len(m.Deviations), killed, problems, len(idle), must)
}
