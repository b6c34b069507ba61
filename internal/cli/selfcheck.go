package cli

import (
	"context"
	"flag"
	"fmt"
	"path"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/reference/deviation"
	"github.com/polyloop/polyloop-conform/reference/tools"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// selfcheckCmd runs the suite against the reference once as it is and once
// per named deviation, and fails when a deviation survives (no scenario
// fails) or is caught only by scenarios that cite another decision.
func selfcheckCmd(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("selfcheck", flag.ContinueOnError)
	fs.SetOutput(s.err)
	var src sources
	src.register(fs)
	glob := fs.String("mutant", "*", "only deviations whose name matches `GLOB`")
	parallel := fs.Int("p", 2, "run `N` deviations at once")
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	if _, err := path.Match(*glob, ""); err != nil {
		return setupError(s, fmt.Errorf("--mutant %q: %v", *glob, err))
	}
	scs, goldens, err := src.load()
	if err != nil {
		return setupError(s, err)
	}
	var devs []deviation.Deviation
	for _, d := range deviation.All() {
		if ok, _ := path.Match(*glob, string(d.Name)); ok {
			devs = append(devs, d)
		}
	}
	if len(devs) == 0 {
		return setupError(s, fmt.Errorf("--mutant %q matches no deviation", *glob))
	}
	run := func(set deviation.Set) []*scenarios.Scenario {
		suite := &engine.Suite{Scenarios: scs, Goldens: goldens}
		d := engine.Reference{Schemas: &tools.SchemaCache{}, Deviations: set}
		var failed []*scenarios.Scenario
		for _, sc := range scs {
			if res := suite.Run(ctx, d, sc); res.Skipped == "" && !res.Passed() {
				failed = append(failed, sc)
			}
		}
		return failed
	}
	if clean := run(nil); len(clean) > 0 {
		return setupError(s, fmt.Errorf("the reference fails %d scenarios without any deviation (first: %s); fix that first", len(clean), clean[0].ID))
	}
	killers := make([][]*scenarios.Scenario, len(devs))
	g := new(errgroup.Group)
	g.SetLimit(max(1, *parallel))
	for i, d := range devs {
		g.Go(func() error {
			killers[i] = run(deviation.Set{d.Name: true})
			return nil
		})
	}
	g.Wait()
	caught := map[string]int{}
	problems := 0
	fmt.Fprintf(s.out, "%-42s %-22s %6s  %s\n", "deviation", "breaks", "kills", "caught by")
	for i, d := range devs {
		cited := false
		var ids []string
		for _, sc := range killers[i] {
			caught[sc.ID]++
			ids = append(ids, sc.ID)
			cited = cited || slices.ContainsFunc(sc.Decisions, func(id string) bool { return related(id, d.Decision) })
		}
		shown := ids
		if len(shown) > 4 {
			shown = append(shown[:4:4], fmt.Sprintf("… %d more", len(ids)-4))
		}
		fmt.Fprintf(s.out, "%-42s %-22s %6d  %s\n", d.Name, d.Decision, len(ids), strings.Join(shown, ", "))
		switch {
		case len(ids) == 0:
			problems++
			fmt.Fprintf(s.out, "  FAIL: no scenario catches %s; %s needs a sharper scenario (%s)\n", d.Name, d.Decision, d.What)
		case !cited:
			problems++
			fmt.Fprintf(s.out, "  FAIL: %s is caught only by scenarios that do not cite %s; cite it where the check is, or add a scenario that does\n", d.Name, d.Decision)
		}
	}
	var idle []string
	for _, sc := range scs {
		if sc.Level == "MUST" && caught[sc.ID] == 0 {
			idle = append(idle, sc.ID)
		}
	}
	if len(idle) > 0 {
		fmt.Fprintf(s.out, "\nMUST scenarios that catch none of these deviations: %s\n", strings.Join(idle, ", "))
		// Against every deviation, a MUST scenario that catches none is dead
		// weight: either it checks nothing the others do not, or a deviation
		// of its decision is missing. With --mutant choosing some, it is only
		// reported.
		if *glob == "*" {
			problems += len(idle)
			fmt.Fprintln(s.out, "  FAIL: each of these MUST scenarios catches no deviation; add the deviation of the decision it checks, or sharpen it")
		}
	}
	fmt.Fprintf(s.out, "\n%d deviations, %d killed, %d problems; %d of %d MUST scenarios catch none of these deviations\n",
		len(devs), len(devs)-countZero(killers), problems, len(idle), countMust(scs))
	if problems > 0 {
		return ExitFail
	}
	return ExitOK
}

// related reports whether two decision IDs name the same decision or one
// refines the other (0008.D4 and 0008.D4.handler-error).
func related(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+".") || strings.HasPrefix(b, a+".")
}

func countZero(ks [][]*scenarios.Scenario) int {
	n := 0
	for _, k := range ks {
		if len(k) == 0 {
			n++
		}
	}
	return n
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
