package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"path"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/internal/report"
	"github.com/polyloop/polyloop-conform/internal/shard"
	"github.com/polyloop/polyloop-conform/reference/deviation"
	"github.com/polyloop/polyloop-conform/reference/tools"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// selfcheckCmd runs the suite against the reference once as it is and once
// per named deviation, and fails when a deviation survives (no scenario
// fails), is caught only by scenarios that cite another decision, or when
// a MUST scenario catches none of them.
func selfcheckCmd(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("selfcheck", flag.ContinueOnError)
	fs.SetOutput(s.err)
	var src sources
	src.register(fs)
	glob := fs.String("mutant", "*", "only deviations whose name matches `GLOB`")
	parallel := fs.Int("p", 2, "run `N` deviations at once")
	impl := fs.String("impl", "", "run each deviation over the protocol as `CMD` --mutant NAME (e.g. \"polyloop-conform serve-reference\"); default: in process")
	shardFlag := fs.String("shard", "", "check only shard `K/N` of the deviations (the dead-weight check needs them all and is skipped)")
	timeout := fs.Duration("timeout", 10*time.Second, "time limit for one scenario")
	var out reportFlags
	out.register(fs, false)
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	if err := checkImplFlag(fs); err != nil {
		return setupError(s, err)
	}
	if _, err := path.Match(*glob, ""); err != nil {
		return setupError(s, fmt.Errorf("--mutant %q: %v", *glob, err))
	}
	if *parallel < 1 {
		return setupError(s, fmt.Errorf("-p %d: run at least one deviation at a time", *parallel))
	}
	if err := out.check(); err != nil {
		return setupError(s, err)
	}
	sh, err := shard.Parse(*shardFlag)
	if err != nil {
		return setupError(s, err)
	}
	scs, goldens, err := src.load()
	if err != nil {
		return setupError(s, err)
	}
	var devs []deviation.Deviation
	for _, d := range deviation.All() {
		if ok, _ := path.Match(*glob, string(d.Name)); ok && sh.Has(string(d.Name)) {
			devs = append(devs, d)
		}
	}
	if len(devs) == 0 {
		return setupError(s, fmt.Errorf("--mutant %q matches no deviation (in this shard)", *glob))
	}
	k := killer{scs: scs, goldens: goldens, impl: *impl, timeout: *timeout, logs: s.err}
	if clean, err := k.failures(ctx, nil); err != nil {
		return setupError(s, err)
	} else if len(clean) > 0 {
		return setupError(s, fmt.Errorf("the reference fails %d scenarios without any deviation (first: %s); fix that first", len(clean), clean[0].ID))
	}
	m, err := k.matrix(ctx, devs, *parallel)
	if err != nil {
		return setupError(s, err)
	}
	everything := *glob == "*" && sh.N <= 1
	rep := m.report(devs, scs, everything)
	name := "the reference in process"
	if *impl != "" {
		name = *impl + " --mutant NAME"
	}
	rep.Implementation = "selfcheck: " + name + report.ShardSuffix(sh.String())
	rep.Rerun = rerunCommand("selfcheck", args)
	if out.format == "text" {
		writeKillMatrix(s.out, m, devs, scs, everything)
		if out.out == "" {
			return exitOf(rep)
		}
	}
	if err := out.emit(s, rep, ""); err != nil {
		return setupError(s, err)
	}
	return exitOf(rep)
}

func exitOf(rep *report.Report) int {
	if !rep.OK() {
		return ExitFail
	}
	return ExitOK
}

// killer runs the suite against deviations of the reference.
type killer struct {
	scs     []*scenarios.Scenario
	goldens map[string][]byte
	impl    string // "" in process; else a serve-reference command line
	timeout time.Duration
	logs    io.Writer
}

// failures returns the scenarios that fail against the reference with the
// deviations in set turned on.
func (k killer) failures(ctx context.Context, set deviation.Set) ([]*scenarios.Scenario, error) {
	suite := &engine.Suite{Scenarios: k.scs, Goldens: k.goldens, Timeout: k.timeout}
	var d engine.Driver = refdriver.Driver{Schemas: &tools.SchemaCache{}, Deviations: set}
	if k.impl != "" {
		cmdline := k.impl
		for name := range set {
			cmdline += " --mutant " + string(name)
		}
		c := &protocol.Client{Command: func() *exec.Cmd { return exec.Command("/bin/sh", "-c", cmdline) }, Logs: io.Discard}
		if err := c.Start(ctx); err != nil {
			return nil, fmt.Errorf("--impl %q: %w", cmdline, err)
		}
		defer c.Close()
		d = c
	}
	var failed []*scenarios.Scenario
	for _, sc := range k.scs {
		if res := suite.Run(ctx, d, sc); res.Skipped == "" && !res.Passed() {
			failed = append(failed, sc)
		}
	}
	return failed, nil
}

// killMatrix holds, per deviation (in the order given), the scenarios that
// caught it.
type killMatrix struct {
	killers [][]*scenarios.Scenario
}

// caughtBy lists the IDs of the scenarios that caught deviation i (nil
// when none did).
func (m *killMatrix) caughtBy(i int) []string {
	var ids []string
	for _, sc := range m.killers[i] {
		ids = append(ids, sc.ID)
	}
	return ids
}

func (k killer) matrix(ctx context.Context, devs []deviation.Deviation, parallel int) (*killMatrix, error) {
	m := &killMatrix{killers: make([][]*scenarios.Scenario, len(devs))}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for i, d := range devs {
		g.Go(func() error {
			var err error
			m.killers[i], err = k.failures(gctx, deviation.Set{d.Name: true})
			return err
		})
	}
	return m, g.Wait()
}

// cited reports whether one of the killers cites the deviation's decision.
func cited(killers []*scenarios.Scenario, decision string) bool {
	return slices.ContainsFunc(killers, func(sc *scenarios.Scenario) bool {
		return slices.ContainsFunc(sc.Decisions, func(id string) bool { return related(id, decision) })
	})
}

// caught counts, per scenario id, the deviations it caught.
func (m *killMatrix) caught() map[string]int {
	out := map[string]int{}
	for _, ks := range m.killers {
		for _, sc := range ks {
			out[sc.ID]++
		}
	}
	return out
}

// idle lists the MUST scenarios that caught no deviation.
func (m *killMatrix) idle(scs []*scenarios.Scenario) []string {
	c := m.caught()
	var out []string
	for _, sc := range scs {
		if sc.Level == "MUST" && c[sc.ID] == 0 {
			out = append(out, sc.ID)
		}
	}
	return out
}

// report has one row per deviation (family "deviation"): pass when some
// scenario citing its decision catches it. With every deviation checked,
// each MUST scenario that catches none is a run error (dead weight).
func (m *killMatrix) report(devs []deviation.Deviation, scs []*scenarios.Scenario, everything bool) *report.Report {
	rep := newReport("", "selfcheck", nil)
	for i, d := range devs {
		ks, ids := m.killers[i], m.caughtBy(i)
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
		for _, id := range m.idle(scs) {
			rep.Errors = append(rep.Errors, fmt.Sprintf("MUST scenario %s catches no deviation: add the deviation of the decision it checks, or sharpen it", id))
		}
	}
	return rep
}

// writeKillMatrix prints the kill matrix for people: per deviation the
// scenarios that caught it, per scenario how many deviations it caught.
func writeKillMatrix(w io.Writer, m *killMatrix, devs []deviation.Deviation, scs []*scenarios.Scenario, everything bool) {
	problems := 0
	fmt.Fprintf(w, "%-42s %-22s %6s  %s\n", "deviation", "breaks", "kills", "caught by")
	for i, d := range devs {
		ks, ids := m.killers[i], m.caughtBy(i)
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
	caught := m.caught()
	fmt.Fprintf(w, "\n%-48s %s\n", "scenario", "deviations caught")
	byCount := slices.Clone(scs)
	slices.SortStableFunc(byCount, func(a, b *scenarios.Scenario) int { return caught[b.ID] - caught[a.ID] })
	for _, sc := range byCount {
		fmt.Fprintf(w, "%-48s %d\n", sc.ID, caught[sc.ID])
	}
	idle := m.idle(scs)
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
	for _, ks := range m.killers {
		if len(ks) > 0 {
			killed++
		}
	}
	fmt.Fprintf(w, "\n%d deviations, %d killed, %d problems; %d of %d MUST scenarios catch none of these deviations\n",
		len(devs), killed, problems, len(idle), countMust(scs))
}

// related reports whether two decision IDs name the same decision or one
// refines the other (0008.D4 and 0008.D4.handler-error).
func related(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+".") || strings.HasPrefix(b, a+".")
}

func countMust(scs []*scenarios.Scenario) int {
	n := 0
	for _, sc := range scs {
		if sc.Level == "MUST" {
			n++
		}
	}
	return n
}
