// Package report owns what a suite run says: the verdict of each scenario,
// the causes that group failures across scenarios, and the formats a run
// is written in (text, json, junit, html), chosen by name from one
// registry. Rows hold problems as data; every format renders them at the
// edge.
package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// Verdict is a scenario's outcome in a report.
type Verdict string

// The verdicts. KnownFailing is a failure a known-failing list expected;
// Stale is a listed scenario that passed (and fails the run, so the list
// only shrinks).
const (
	Pass         Verdict = "pass"
	Fail         Verdict = "fail"
	Skip         Verdict = "skip"
	KnownFailing Verdict = "known_failing"
	Stale        Verdict = "stale"
	// Interrupted is a scenario a signal stopped before it finished: it
	// neither passed nor failed, and the run as a whole is not OK.
	Interrupted Verdict = "interrupted"
)

// Problem is one thing wrong with a scenario's run, as the engine found it.
type Problem = engine.Problem

// Row is one scenario's line in a report.
type Row struct {
	Scenario  string   `json:"scenario"`
	Level     string   `json:"level,omitempty"`
	Requires  []string `json:"requires,omitempty"`
	Verdict   Verdict  `json:"verdict"`
	Decisions []string `json:"decisions"`
	// Problems are what is wrong, as data.
	Problems []Problem `json:"problems,omitempty"`
	// Note says why a row is skipped, known failing or stale, or what an
	// exploration covered ("12 crash points").
	Note string `json:"note,omitempty"`
	// Stderr is what the implementation wrote to stderr while it ran this
	// scenario (over the protocol).
	Stderr string `json:"stderr,omitempty"`
	// Transcript is the protocol exchange of a failing scenario, one
	// message per line (kept with --trace).
	Transcript string `json:"transcript,omitempty"`
	// Trajectory is what the implementation produced, for failing rows, so
	// a report can lay the run out step by step.
	Trajectory json.RawMessage `json:"trajectory,omitempty"`
	// CrashPoints counts the crash points an exploration killed and
	// resumed for this scenario.
	CrashPoints int           `json:"crash_points,omitempty"`
	Duration    time.Duration `json:"duration_ns"`
	// Evidence says what a verdict rests on: observed (the wire and the
	// files the runner read) or self-reported (a part the implementation
	// staged itself, named in EvidenceNote). Skipped rows have none.
	Evidence     Evidence `json:"evidence,omitempty"`
	EvidenceNote string   `json:"evidence_note,omitempty"`
	// TakenOnTrust names what no runner can observe in this scenario
	// (engine.Evidence): the verdict takes it on trust, and --require
	// observed does not fail it.
	TakenOnTrust []string `json:"taken_on_trust,omitempty"`
	// ForkedResumes counts the resumes forked by the implementation's
	// fork server onto a machine of their own, each seen isolated from
	// outside (namespaces, mounts, the stopped process's tree gone); any
	// other resume was started from --impl.
	ForkedResumes int `json:"forked_resumes,omitempty"`
	// ExpectOnly marks a scenario without a golden, judged by its expect
	// block alone.
	ExpectOnly bool `json:"expect_only,omitempty"`
	// Repetitions counts the runs merged into this row (run --repeat).
	Repetitions int `json:"repetitions,omitempty"`
	// NotJudged names the capabilities the implementation does not claim
	// whose fields differed here and were left unjudged.
	NotJudged []string `json:"not_judged,omitempty"`
	// ScenarioYAML is a generated case that differed, as a scenario ready
	// to add (generate, and run's generated batch).
	ScenarioYAML string `json:"scenario_yaml,omitempty"`
	// Since marks a failure against a suite version the team named (run
	// --since V): whether its scenario, or a decision it cites, is new or
	// changed since V, so yesterday's green and today's red are told apart.
	Since *Since `json:"since,omitempty"`
	// Source is the scenario a generated variant was drawn from: it keeps
	// what that scenario decides, so its difference breaks those
	// decisions (docs/generate.md).
	Source string `json:"source,omitempty"`
}

// Since is a failing row's scenario and cited decisions compared with an
// earlier suite version (docs/versioning.md).
type Since struct {
	Version string `json:"version"`
	// Scenario is "new", "changed" or "unchanged" since Version; "" for a
	// row that is no scenario of the suite (a generated case, a team's).
	Scenario string `json:"scenario,omitempty"`
	// Decisions are the cited decisions that are "new" or "changed".
	Decisions map[string]string `json:"decisions,omitempty"`
	// Source is "new" or "changed" when the row is a variant (Row.Source)
	// of a scenario new or changed since Version; "" otherwise.
	Source string `json:"source,omitempty"`
	// SourceID is that scenario.
	SourceID string `json:"source_id,omitempty"`
}

// Label says it in a few words: "new since 0.1.0", "changed since 0.1.0",
// "changed since 0.1.0: 0003.D7 changed, 0003.D5.parts new", "changed
// since 0.1.0: its source registry.pattern-not-ecma new, 0006.D6.pattern
// new" (a generated variant), "unchanged since 0.1.0" (then the
// implementation, not the suite, moved).
func (s *Since) Label() string {
	if s == nil {
		return ""
	}
	var parts []string
	if s.Scenario == "changed" && len(s.Decisions) > 0 {
		parts = append(parts, "the scenario")
	}
	if s.Source != "" {
		parts = append(parts, "its source "+s.SourceID+" "+s.Source)
	}
	for _, id := range slices.Sorted(maps.Keys(s.Decisions)) {
		parts = append(parts, id+" "+s.Decisions[id])
	}
	switch {
	case s.Scenario == "new" || s.Scenario == "changed" && len(s.Decisions) == 0:
		return s.Scenario + " since " + s.Version
	case len(parts) > 0:
		return "changed since " + s.Version + ": " + strings.Join(parts, ", ")
	case s.Scenario == "":
		return "its decisions unchanged since " + s.Version
	}
	return "unchanged since " + s.Version
}

// Evidence is what a verdict rests on.
type Evidence string

// The kinds of evidence.
const (
	Observed     Evidence = "observed"
	SelfReported Evidence = "self-reported"
	// Trusted is a verdict whose every part the runner observed but one
	// that no runner can observe (Row.TakenOnTrust).
	Trusted Evidence = "trusted"
)

// Family is the row's scenario family (scenarios.Family).
func (r Row) Family() string { return scenarios.Family(r.Scenario) }

// Failed reports whether the row counts against the run.
func (r Row) Failed() bool { return r.Verdict == Fail || r.Verdict == Stale }

// WordingOnly reports whether the row fails on wording alone: every line
// is a sentence the design leaves open that differs from the reference's
// wording under --strict. Such a row fails the strict run, but charges no
// decision.
func (r Row) WordingOnly() bool {
	if r.Verdict != Fail {
		return false
	}
	lines := Lines(r)
	for _, l := range lines {
		if !l.Wording {
			return false
		}
	}
	return len(lines) > 0
}

// FormatVersion names the JSON report format; a reader refuses others.
const FormatVersion = "polyloop.report/v1"

// Report is a whole run.
type Report struct {
	Format       string    `json:"format"`
	SuiteVersion string    `json:"suite_version"`
	GeneratedAt  time.Time `json:"generated_at"`
	// Implementation names what ran, as its hello said.
	Implementation string `json:"implementation"`
	// Rerun is the command line that reran this run, without --run; each
	// failure is printed with it, narrowed to the scenario, plus --trace.
	Rerun string `json:"rerun,omitempty"`
	// GoTestRun, for a report polylooptest wrote, is the -run pattern of
	// the test that ran the suite: a scenario reruns as its subtest.
	GoTestRun string `json:"go_test_run,omitempty"`
	// Selection is the --run patterns the scenarios were chosen by ("" for
	// all); shards of one run share it, and merge checks that they do.
	Selection string   `json:"selection,omitempty"`
	Rows      []Row    `json:"scenarios"`
	Errors    []string `json:"errors,omitempty"` // run-level problems, e.g. stale known-failing patterns
	// Interrupted is true when a signal stopped the run; NotRun counts the
	// scenarios it never started.
	Interrupted bool `json:"interrupted,omitempty"`
	NotRun      int  `json:"not_run,omitempty"`
	// NotJudged maps each capability the implementation does not claim to
	// the fields that are therefore judged in no scenario.
	NotJudged map[string]string `json:"not_judged,omitempty"`
	// Claimed is what the implementation's hello claimed: the
	// capabilities and the protocol options, so a CI gate can see (and
	// run --capabilities can require) what a green covers.
	Claimed *Claimed `json:"claimed,omitempty"`
	// Require is the evidence the run required of every pass ("observed",
	// run's default, or "none").
	Require string `json:"require,omitempty"`
	// Seed is the seed the run drew (or was given with --seed): it draws
	// the generated batch and orders --repeat, and --seed replays both.
	// Without --seed, run and generate draw a fresh one each time
	// (docs/generate.md, "Seed"), so every report must name its own.
	Seed uint64 `json:"seed,omitempty"`
	// ShardSeeds are the seeds of a merged run's shards, by shard
	// ("K/N"), when they differ; Seed is then the seed of the shard that
	// ran the generated batch.
	ShardSeeds map[string]uint64 `json:"shard_seeds,omitempty"`
	// Decisions maps decision IDs to what they say, so a reader sees each
	// one without the design docs at hand.
	Decisions map[string]Decision `json:"decisions,omitempty"`
}

// Claimed is an implementation's hello, split: the capabilities that
// select scenarios, and the protocol options that let the runner play a
// part of a fault (docs/protocol.md, Handshake).
type Claimed struct {
	Capabilities []string `json:"capabilities"`
	Options      []string `json:"protocol_options,omitempty"`
}

// Decision is a decision record's title and text.
type Decision struct {
	Title string `json:"title"`
	Text  string `json:"text,omitempty"`
}

// New starts a report for an implementation, stamped now.
func New(implementation, suiteVersion string) *Report {
	return &Report{Format: FormatVersion, SuiteVersion: suiteVersion, GeneratedAt: time.Now().UTC().Truncate(time.Second), Implementation: implementation}
}

// RowOf turns an engine result into a row.
func RowOf(sc *scenarios.Scenario, res engine.Result) Row {
	row := Row{Scenario: res.Scenario, Level: sc.Level, Requires: sc.Requires, Decisions: res.Decisions, Problems: res.Problems, Duration: res.Duration, ExpectOnly: res.ExpectOnly, NotJudged: res.NotJudged}
	switch {
	case res.Skipped != "":
		row.Verdict, row.Note = Skip, res.Skipped
		return row
	case len(res.Problems) > 0:
		row.Verdict = Fail
	default:
		row.Verdict = Pass
	}
	row.Evidence = Observed
	row.ForkedResumes = res.ForkedResumes
	if row.TakenOnTrust = res.Trusted; len(row.TakenOnTrust) > 0 {
		row.Evidence = Trusted
		row.EvidenceNote = "no runner can observe " + strings.Join(row.TakenOnTrust, ", ") + "; the verdict takes it on trust"
	}
	if staged := res.Staged; len(staged) > 0 {
		row.Evidence = SelfReported
		row.EvidenceNote = "the implementation stages " + strings.Join(staged, ", ") + " itself; the verdict takes its word for that part"
	}
	if res.ExpectOnly {
		row.Note = "no golden: judged by its expect block alone"
	}
	return row
}

// Counts tallies verdicts.
type Counts struct {
	Passed       int `json:"passed"`
	Failed       int `json:"failed"`
	Skipped      int `json:"skipped"`
	KnownFailing int `json:"known_failing"`
	Interrupted  int `json:"interrupted,omitempty"`
	// Of the passes, how many rest on what the runner observed and how
	// many on the implementation's own word for a part it staged.
	PassedObserved     int `json:"passed_observed"`
	PassedSelfReported int `json:"passed_self_reported"`
	// PassedTrusted counts the passes that take on trust what no runner
	// can observe (Row.TakenOnTrust); they are not counted as observed.
	PassedTrusted int `json:"passed_trusted,omitempty"`
	// ExpectOnly counts scenarios judged by their expect block alone.
	ExpectOnly int `json:"expect_only,omitempty"`
	// Wording counts the failures on wording alone (Row.WordingOnly).
	// In a run's counts and a family's they are among Failed; in a
	// decision's (ByDecision) they are not, since they break none.
	Wording int `json:"wording,omitempty"`
}

func (c *Counts) add(v Verdict) {
	switch v {
	case Pass:
		c.Passed++
	case Skip:
		c.Skipped++
	case KnownFailing:
		c.KnownFailing++
	case Interrupted:
		c.Interrupted++
	default:
		c.Failed++
	}
}

// Counts returns the tallies; stale entries count as failures.
func (r *Report) Counts() Counts {
	var c Counts
	for _, row := range r.Rows {
		c.add(row.Verdict)
		if row.Verdict == Pass {
			switch row.Evidence {
			case SelfReported:
				c.PassedSelfReported++
			case Trusted:
				c.PassedTrusted++
			default:
				c.PassedObserved++
			}
		}
		if row.ExpectOnly {
			c.ExpectOnly++
		}
		if row.WordingOnly() {
			c.Wording++
		}
	}
	return c
}

// OK reports whether the run passed as a whole.
func (r *Report) OK() bool { return r.Counts().Failed == 0 && len(r.Errors) == 0 && !r.Interrupted }

// RequireEvidence adds a run-level error to a report that has no failure
// but no evidence either: no scenario passed (every one was skipped, known
// failing or not run). A team gates its CI on exit 0, so exit 0 must mean
// that something was shown to conform. It returns the sentence, or "".
func (r *Report) RequireEvidence() string {
	c := r.Counts()
	if c.Failed > 0 || c.Passed > 0 || r.Interrupted {
		return ""
	}
	msg := fmt.Sprintf("no scenario passed (%d skipped, %d known failing): a run that shows nothing conforming is not a pass; claim the capabilities the implementation has (docs/protocol.md, Handshake) or select scenarios it can run", c.Skipped, c.KnownFailing)
	if len(r.Rows) == 0 {
		msg = "no scenario ran: a run that shows nothing conforming is not a pass; check --run, --shard and the capabilities the implementation claims"
	}
	r.Errors = append(r.Errors, msg)
	return msg
}

// RequireObserved turns every pass that rests on the implementation's
// own word into a failure (run --require observed), for CI gates that want
// proof of every verdict.
func RequireObserved(r *Report) {
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Verdict != Pass || row.Evidence != SelfReported {
			continue
		}
		row.Verdict = Fail
		row.Problems = append(row.Problems, Problem{Source: "evidence", Message: "passed on the implementation's own word, and --require observed asks for proof: " + row.EvidenceNote, Decisions: row.Decisions})
	}
}

// Summary is the closing line: the verdict counts, and run-level errors
// (an unmatched known-failing pattern, a missing golden) when there are
// any, so the line never reads "0 failed" for a run that failed.
func (r *Report) Summary() string {
	c := r.Counts()
	s := fmt.Sprintf("%d passed, %d failed, %d skipped, %d known failing", c.Passed, c.Failed, c.Skipped, c.KnownFailing)
	if c.Wording > 0 {
		s = fmt.Sprintf("%d passed, %d failed (%d on wording alone, --strict), %d skipped, %d known failing", c.Passed, c.Failed, c.Wording, c.Skipped, c.KnownFailing)
	}
	switch {
	case c.PassedSelfReported > 0 && c.PassedTrusted > 0:
		s += fmt.Sprintf(" (of the passes: %d observed, %d taken on trust, %d self-reported)", c.PassedObserved, c.PassedTrusted, c.PassedSelfReported)
	case c.PassedSelfReported > 0:
		s += fmt.Sprintf(" (of the passes: %d observed, %d self-reported)", c.PassedObserved, c.PassedSelfReported)
	case c.PassedTrusted > 0:
		s += fmt.Sprintf(" (of the passes: %d observed, %d taken on trust)", c.PassedObserved, c.PassedTrusted)
	}
	switch n := len(r.Errors); {
	case n == 1:
		s += ", 1 error"
	case n > 1:
		s += fmt.Sprintf(", %d errors", n)
	}
	if r.Interrupted {
		s += fmt.Sprintf(", %d interrupted, %d not run (stopped by a signal)", c.Interrupted, r.NotRun)
	}
	if seed := r.SeedLine(); seed != "" {
		s += "; " + seed
	}
	return s
}

// SeedLine names the run's seed, "seed S" (--seed S replays the run), or
// each shard's, "seeds by shard: 1/2 S1, 2/2 S2", when a merge joined
// shards that drew their own; "" when the run used none.
func (r *Report) SeedLine() string {
	if len(r.ShardSeeds) > 0 {
		var parts []string
		for _, k := range slices.SortedFunc(maps.Keys(r.ShardSeeds), compareShards) {
			parts = append(parts, fmt.Sprintf("%s %d", k, r.ShardSeeds[k]))
		}
		return "seeds by shard: " + strings.Join(parts, ", ")
	}
	if r.Seed == 0 {
		return ""
	}
	return fmt.Sprintf("seed %d", r.Seed)
}

// compareShards orders "K/N" names by K.
func compareShards(a, b string) int {
	ka, _, _ := strings.Cut(a, "/")
	kb, _, _ := strings.Cut(b, "/")
	na, _ := strconv.Atoi(ka)
	nb, _ := strconv.Atoi(kb)
	return cmp.Or(cmp.Compare(na, nb), strings.Compare(a, b))
}

// Sorted returns the rows by scenario id.
func (r *Report) Sorted() []Row {
	rows := slices.Clone(r.Rows)
	slices.SortFunc(rows, func(a, b Row) int { return strings.Compare(a.Scenario, b.Scenario) })
	return rows
}

// RerunCommand is the command that reruns one scenario with a trace.
func (r *Report) RerunCommand(id string) string {
	if r.GoTestRun != "" {
		return fmt.Sprintf("go test -run '%s/^%s$' -v", r.GoTestRun, regexp.QuoteMeta(id))
	}
	base := r.Rerun
	if base == "" {
		base = "polyloop-conform run"
	}
	if strings.HasPrefix(id, "generated.") && !strings.Contains(base, "--scenarios") {
		// A generated case is a scenario once saved (run --generate-out,
		// generate --save), not one of the suite's.
		return fmt.Sprintf("%s --scenarios DIR --goldens DIR --run '%s' --trace, DIR holding %s.yaml and .json (run --generate-out DIR saves both)", base, id, id)
	}
	return fmt.Sprintf("%s --run '%s' --trace", base, id)
}

// Tally is a verdict count for one family or decision.
type Tally struct {
	Name string
	Counts
}

// ByFamily tallies the rows per family, in name order.
func (r *Report) ByFamily() []Tally {
	return tally(r.Rows, func(row Row) []string { return []string{row.Family()} })
}

// ByDecision tallies the rows per decision they cite, in ID order. A
// row that fails on wording alone (--strict) breaks none of them: it is
// counted under Wording, not Failed.
func (r *Report) ByDecision() []Tally {
	ts := tally(r.Rows, func(row Row) []string { return row.Decisions })
	wording := map[string]int{}
	for _, row := range r.Rows {
		if row.WordingOnly() {
			for _, d := range row.Decisions {
				wording[d]++
			}
		}
	}
	for i := range ts {
		ts[i].Failed -= wording[ts[i].Name]
		ts[i].Wording = wording[ts[i].Name]
	}
	return ts
}

func tally(rows []Row, keys func(Row) []string) []Tally {
	m := map[string]*Tally{}
	for _, row := range rows {
		for _, k := range keys(row) {
			t := m[k]
			if t == nil {
				t = &Tally{Name: k}
				m[k] = t
			}
			t.add(row.Verdict)
		}
	}
	out := make([]Tally, 0, len(m))
	for _, t := range m {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b Tally) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// KeepCitedDecisions drops from r.Decisions every decision that no row
// cites and no cause is governed by, so a report carries the text it
// refers to and nothing else.
func (r *Report) KeepCitedDecisions() {
	if r.Decisions == nil {
		return
	}
	cited := map[string]bool{}
	for _, row := range r.Rows {
		for _, id := range row.Decisions {
			cited[id] = true
		}
	}
	for _, c := range Causes(r) {
		for _, id := range c.Decisions {
			cited[id] = true
		}
	}
	for id := range r.Decisions {
		if !cited[id] {
			delete(r.Decisions, id)
		}
	}
}
