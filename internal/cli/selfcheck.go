package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path"
	"time"

	"github.com/polyloop/polyloop-conform/internal/deviation"
	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/killmatrix"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/internal/report"
	"github.com/polyloop/polyloop-conform/internal/shard"
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
	// A signal during the clean run leaves every deviation not run: Build
	// marks them so, and the report says INTERRUPTED.
	if clean, err := k.failures(ctx, nil); err != nil && ctx.Err() == nil {
		return setupError(s, err)
	} else if len(clean) > 0 {
		return setupError(s, fmt.Errorf("the reference fails %d scenarios without any deviation (first: %s); fix that first", len(clean), clean[0].ID))
	}
	m, err := killmatrix.Build(ctx, devs, *parallel, k.failures)
	if err != nil && ctx.Err() == nil {
		return setupError(s, err)
	}
	everything := *glob == "*" && sh.N <= 1
	rep := newReport("", "selfcheck", nil)
	m.Fill(rep, scs, everything)
	name := "the reference in process"
	if *impl != "" {
		name = *impl + " --mutant NAME"
	}
	rep.Implementation = "selfcheck: " + name + report.ShardSuffix(sh.String())
	rep.Rerun = rerunCommand("selfcheck", args)
	if out.format == "text" {
		m.Write(s.out, scs, everything)
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
// deviations in set turned on; when ctx is cancelled (a signal) it returns
// ctx's error instead, since a run cut short fails scenarios that say
// nothing about the deviation.
func (k killer) failures(ctx context.Context, set deviation.Set) ([]*scenarios.Scenario, error) {
	suite := &engine.Suite{Scenarios: k.scs, Goldens: k.goldens, Timeout: k.timeout}
	var d engine.Driver = refdriver.Driver{Schemas: &tools.SchemaCache{}, Deviations: set}
	if k.impl != "" {
		// Over the protocol, started the one way every command starts an
		// implementation (newDriver).
		cmdline := k.impl
		for name := range set {
			cmdline += " --mutant " + string(name)
		}
		c, closeDriver, err := newDriver(ctx, driverConfig{impl: cmdline, logs: io.Discard})
		if err != nil {
			return nil, err
		}
		defer closeDriver()
		d = c
	}
	var failed []*scenarios.Scenario
	for _, sc := range k.scs {
		if res := suite.Run(ctx, d, sc); res.Skipped == "" && !res.Passed() {
			failed = append(failed, sc)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return failed, nil
}
