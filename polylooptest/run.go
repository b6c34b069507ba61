package polylooptest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/polyloop/polyloop-conform/docs/design"
	"github.com/polyloop/polyloop-conform/internal/atomicfile"
	"github.com/polyloop/polyloop-conform/internal/decisions"
	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/report"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// judged collects the rows of the subtests that ran, for the report.
type judged struct {
	mu   sync.Mutex
	rows map[string]report.Row
}

// run judges d: one subtest per scenario, then, once all have finished,
// the run-level checks and the report.
func (c *config) run(ctx context.Context, t *testing.T, d engine.Driver) {
	t.Helper()
	all, err := scenarios.LoadEmbedded()
	if err != nil {
		t.Fatalf("polylooptest: the built-in scenarios: %v", err)
	}
	goldens, err := trajectories.Goldens()
	if err != nil {
		t.Fatalf("polylooptest: the built-in goldens: %v", err)
	}
	suite := &engine.Suite{Scenarios: all, Goldens: goldens, Timeout: c.timeout, Strict: c.strict}
	rep := newReport(d)
	rep.GoTestRun = exactly(t.Name())
	rep.Errors = append(rep.Errors, suite.Missing()...)
	if !c.requireNone {
		rep.Require = string(report.Observed)
	} else {
		rep.Require = "none"
	}
	got := &judged{rows: map[string]report.Row{}}
	t.Cleanup(func() { rep.Interrupted = ctx.Err() != nil; c.conclude(t, rep, d, all, got) })
	for _, sc := range all {
		if c.only != nil && !c.only(sc.ID) {
			continue
		}
		t.Run(sc.ID, func(t *testing.T) {
			t.Parallel()
			if ctx.Err() != nil {
				t.Skip("not run: a signal stopped the suite")
			}
			row := c.judge(ctx, suite, d, sc)
			got.mu.Lock()
			got.rows[sc.ID] = row
			got.mu.Unlock()
			c.verdict(t, d, rep, row) // rep: its rerun line only, set before any subtest
		})
	}
}

// judge runs one scenario and gives its row every mark the CLI's run
// gives it: evidence required, known failing, since.
func (c *config) judge(ctx context.Context, suite *engine.Suite, d engine.Driver, sc *scenarios.Scenario) report.Row {
	res := suite.Run(ctx, d, sc)
	row := report.RowOf(sc, res)
	if row.Verdict == report.Fail && ctx.Err() != nil {
		// Stopped by the signal, not judged: no finding, no decision.
		row.Verdict, row.Note = report.Interrupted, "interrupted by a signal before it finished"
		row.Problems, row.Decisions = nil, nil
	}
	if res.Trajectory != nil && row.Verdict == report.Fail {
		row.Trajectory, _ = trajectories.MarshalCompact(res.Trajectory) // the HTML report's timeline
	}
	if s, ok := d.(interface{ Stderr(id string) string }); ok {
		row.Stderr = s.Stderr(sc.ID) // the implementation's, over the protocol
	}
	one := &report.Report{Rows: []report.Row{row}}
	if !c.requireNone {
		report.RequireObserved(one)
	}
	report.MarkKnownFailing(&one.Rows[0], c.known)
	if c.since != nil {
		report.MarkSince(one.Rows, c.since)
	}
	return one.Rows[0]
}

// verdict ends a scenario's subtest as its row says.
func (c *config) verdict(t *testing.T, d engine.Driver, rep *report.Report, row report.Row) {
	switch row.Verdict {
	case report.Skip:
		t.Skip(row.Note)
	case report.KnownFailing:
		t.Skip(row.Note)
	case report.Interrupted:
		t.Error(row.Note)
	case report.Stale:
		t.Error(row.Note)
	case report.Fail:
		t.Error(failure(rep.RerunCommand(row.Scenario), d, row))
	}
}

// failure is a failing scenario's message: the scenario, the suite's
// version, each problem with the decisions it breaks, what moved since
// the version named with Since, and the command that reruns it.
func failure(rerun string, d engine.Driver, row report.Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s failed against %s (suite %s)", row.Scenario, d.Name(), protocol.SuiteVersion)
	if row.Since != nil {
		fmt.Fprintf(&b, ", %s", row.Since.Label())
	}
	b.WriteString(":")
	for _, p := range row.Problems {
		fmt.Fprintf(&b, "\n  %s", p.Message)
		if len(p.Decisions) > 0 && !strings.Contains(p.Message, p.Decisions[0]) {
			fmt.Fprintf(&b, " (%s)", strings.Join(p.Decisions, ", ")) // the sentence does not cite them itself
		}
	}
	fmt.Fprintf(&b, "\n  rerun: %s; the scenario and its decisions: polyloop-conform show %s", rerun, row.Scenario)
	return b.String()
}

// conclude runs once every subtest has finished: what the kernel claimed
// against Capabilities, the known-failing list's patterns, a run that
// showed nothing, and the report.
func (c *config) conclude(t *testing.T, rep *report.Report, d engine.Driver, all []*scenarios.Scenario, got *judged) {
	ids := make([]string, len(all))
	for i, sc := range all {
		ids[i] = sc.ID
		if row, ok := got.rows[sc.ID]; ok {
			rep.Rows = append(rep.Rows, row)
		}
	}
	rep.NotRun = len(all) - len(rep.Rows)
	if p, ok := d.(interface{ Problems() []string }); ok {
		rep.Errors = append(rep.Errors, p.Problems()...) // the runner's own: a fork server that stopped
	}
	claimClaims(rep, d.Capabilities(), c.capabilities)
	report.ApplyKnownFailing(rep, c.known, ids)
	if len(rep.Rows) > 0 {
		rep.RequireEvidence() // as run: a selection that shows nothing conforming fails
	}
	if rep.Interrupted {
		t.Errorf("polylooptest (suite %s): interrupted by a signal: %d scenario(s) not run", protocol.SuiteVersion, rep.NotRun)
	}
	for _, e := range rep.Errors {
		t.Errorf("polylooptest (suite %s): %s", protocol.SuiteVersion, e)
	}
	if c.write == nil {
		return
	}
	rep.KeepCitedDecisions()
	var buf bytes.Buffer
	if err := c.write(&buf, rep, report.Options{}); err != nil {
		t.Errorf("polylooptest: write the %s report: %v", c.format, err)
		return
	}
	if err := atomicfile.Output(c.out, buf.Bytes()); err != nil {
		t.Errorf("polylooptest: write the report: %v", err)
		return
	}
	t.Logf("%s (report in %s)", rep.Summary(), c.out)
}

// claimClaims records what the kernel claimed and adds an error naming
// each expected capability it does not claim.
func claimClaims(rep *report.Report, claimed, expected []string) {
	options := protocol.ProtocolOptions()
	rep.Claimed = &report.Claimed{Capabilities: []string{}}
	for _, cp := range claimed {
		if slices.Contains(options, cp) {
			rep.Claimed.Options = append(rep.Claimed.Options, cp)
		} else {
			rep.Claimed.Capabilities = append(rep.Claimed.Capabilities, cp)
		}
	}
	var missing []string
	for _, cp := range expected {
		if !slices.Contains(claimed, cp) {
			missing = append(missing, cp)
		}
	}
	if len(missing) > 0 {
		rep.Errors = append(rep.Errors, fmt.Sprintf("the kernel does not claim %s, which Capabilities expects: its hello claims %s; a release that stops claiming a capability skips its scenarios, so the test fails instead",
			strings.Join(missing, ", "), strings.Join(claimed, ", ")))
	}
	if len(claimed) == 0 {
		rep.Errors = append(rep.Errors, "the kernel claims no capability (Kernel.Capabilities is empty), so no scenario can test it; claim what it implements (docs/protocol.md, Handshake)")
	}
}

// newReport starts the report with the decisions' titles and texts.
func newReport(d engine.Driver) *report.Report {
	rep := report.New(d.Name(), protocol.SuiteVersion)
	if uj := engine.Unjudged(d.Capabilities()); len(uj) > 0 {
		rep.NotJudged = uj
	}
	if set, err := decisions.Load(design.FS); err == nil {
		rep.Decisions = map[string]report.Decision{}
		for id, dd := range set.ByID {
			rep.Decisions[id] = report.Decision{Title: dd.Title, Text: dd.Body()}
		}
	}
	return rep
}
