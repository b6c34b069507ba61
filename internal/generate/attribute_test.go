package generate

import (
	"context"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/docs/design"
	"github.com/polyloop/polyloop-conform/internal/decisions"
	"github.com/polyloop/polyloop-conform/internal/deviation"
	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// TestFieldRecordsAreTheGuides: the records a difference at a field cites
// are the ones docs/implementing.md's "Every trajectory field and the
// record that governs it" names for it, row by row.
func TestFieldRecordsAreTheGuides(t *testing.T) {
	data, err := os.ReadFile("../../docs/implementing.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i, j := strings.Index(s, "<!-- fields-by-record:"), strings.Index(s, "<!-- end of fields-by-record -->")
	if i < 0 || j < i {
		t.Fatal("docs/implementing.md has no fields-by-record table")
	}
	field := regexp.MustCompile("`([^`]+)`")
	id := regexp.MustCompile(`\b\d{4}\.D\d+(?:\.[a-z][a-z0-9-]*[a-z0-9])*`)
	rows := 0
	for _, line := range strings.Split(s[i:j], "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 2 || !strings.HasPrefix(cells[0], "`") {
			continue
		}
		want := id.FindAllString(cells[1], -1)
		for _, m := range field.FindAllStringSubmatch(cells[0], -1) {
			if m[1] == "format" || m[1] == "scenario" {
				continue
			}
			rows++
			if got := recordsOf(m[1]); !slices.Equal(got, want) {
				t.Errorf("%s: attribution cites %v, implementing.md says %v", m[1], got, want)
			}
		}
	}
	if rows < 80 {
		t.Fatalf("read %d fields from the table; its format changed", rows)
	}
}

// TestEveryCitedDecisionExists: what a difference can cite beside its
// fields' records (refusal kinds, the features of 2,000 drawn cases)
// names records the suite has.
func TestEveryCitedDecisionExists(t *testing.T) {
	set, err := decisions.Load(design.FS)
	if err != nil {
		t.Fatal(err)
	}
	cited := map[string]bool{}
	for _, ids := range refusalRecords {
		for _, id := range ids {
			cited[id] = true
		}
	}
	r := rand.New(rand.NewPCG(9, 9))
	for range 2000 {
		s := newSpec(r)
		for _, id := range append(s.outputFeatures(0), s.caseFeatures()...) {
			cited[id] = true
		}
	}
	for id := range cited {
		if _, ok := set.ByID[id]; !ok {
			t.Errorf("a generated case may cite %s, which no record defines", id)
		}
	}
	for _, id := range []string{"0003.D5.parts", "0003.D7.shapes", "0006.D6.depth", "0002.D5", "0004.D4.deadline", "0006.D6.construction.all"} {
		if !cited[id] {
			t.Errorf("2,000 drawn cases never cite %s", id)
		}
	}
}

// TestDivergenceFollowsTheRun: a difference is filed under the first
// point where the run diverged, in the order the run happened — the
// first differing step, its action before its outcome — not under the
// first field in alphabetical order (end.reason), nor under a later
// step's.
func TestDivergenceFollowsTheRun(t *testing.T) {
	golden := []byte(`{"steps": [{"index": 1, "action": {"kind": "tool_call"}, "outcome": {}}, {"index": 2, "action": {"kind": "tool_call"}, "outcome": {}}],
		"events": [{"type": "run_started"}, {"type": "model_step", "step": 1}, {"type": "tool_call", "step": 1}, {"type": "model_step", "step": 2}, {"type": "tool_call", "step": 2}, {"type": "run_ended"}]}`)
	probs := []engine.Problem{
		{Source: "golden", Path: "end.reason"},
		{Source: "golden", Path: "events[3].decision"},
		{Source: "golden", Path: "handler_calls[1].arguments"},
		{Source: "golden", Path: "steps[1].counters.effective_steps"},
		{Source: "golden", Path: "steps[1].outcome.status"},
		{Source: "golden", Path: "steps[1].action.kind"},
		{Source: "golden", Path: "steps[2].model_input"},
	}
	got, steps := divergence(probs, golden)
	want := []string{"0003.D5", "0003.D6", "0003.D5.fence", "0011.D1", "0008.D4", "0008.D3", "0004.D1"}
	if !slices.Equal(got, want) || steps != 2 {
		t.Errorf("divergence: %v after %d steps, want %v after 2", got, steps, want)
	}
	// A run that could not finish (it asked for an output the case does
	// not script) where the reference refused: the refusal's records.
	refused := []byte(`{"assembly_error": {"kind": "invalid_schema"}, "steps": [], "events": []}`)
	if got, _ := divergence([]engine.Problem{{Source: "run", Message: "the run did not stop where the scenario expects"}}, refused); !slices.Equal(got, []string{"0006.D6.construction"}) {
		t.Errorf("a run past a refusal: %v, want [0006.D6.construction]", got)
	}
	// Both refused, differently: the order of refusals is what broke.
	if got, _ := divergence([]engine.Problem{{Source: "golden", Path: "assembly_error.kind", Want: "invalid_schema", Got: "unknown_tool"}}, refused); !slices.Contains(got, "0006.D6.refusal-order") || got[0] != "0006.D6.construction" {
		t.Errorf("two refusals: %v", got)
	}
}

// TestEndingNamesThePhase: the expect a saved difference carries loads,
// for a phased case that ended interrupted too (the loader wants the
// phase in flight named), so such a difference is saved, not an error.
func TestEndingNamesThePhase(t *testing.T) {
	tr := &trajectories.Trajectory{Interrupted: &trajectories.Interrupted{Phase: "second", Step: 1, During: "tool_call"}}
	in, _ := ending(tr)["interrupted"].(map[string]any)
	if in["phase"] != "second" {
		t.Errorf("ending of a phased interruption: %v, want its phase", in)
	}
	tr.Interrupted.Phase = ""
	in, _ = ending(tr)["interrupted"].(map[string]any)
	if _, ok := in["phase"]; ok {
		t.Errorf("ending of a single request's interruption names a phase: %v", in)
	}
}

// TestDifferencesCiteTheBrokenDecision: a deviation of the reference
// breaks one decision, and the differences generate finds with it cite
// that decision (or its parent or a child), so --since and the report
// file each difference under what the kernel got wrong. The short tier
// runs four deviations, 60 cases each, whose differences must all cite
// it (two of them break decisions no differing field names);
// POLYLOOP_LONG=1 runs every deviation on 150 cases
// and holds the share that cite it to 90% (measured 2026-12-06: 1,364 of
// 1,426, seed 7).
func TestDifferencesCiteTheBrokenDecision(t *testing.T) {
	sources, err := LoadSources(scenarios.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	devs := []deviation.Deviation{}
	for _, d := range deviation.All() {
		switch d.Name {
		case deviation.PartsMustBeStrings, deviation.PatternReadAsRE2, deviation.InvalidCallsEffective, deviation.HistoryUsesExecutorText:
			devs = append(devs, d)
		default:
			if os.Getenv("POLYLOOP_LONG") == "1" {
				devs = append(devs, d)
			}
		}
	}
	long := len(devs) > 4
	count := 60
	if long {
		count = 150
	}
	total, cited := 0, 0
	for _, d := range devs {
		sum, err := Run(context.Background(), Options{Reference: reference(nil), Impl: reference(deviation.Set{d.Name: true}), Seed: 7, Count: count, Sources: sources, Shrunk: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range sum.Found {
			total++
			if slices.ContainsFunc(f.Decisions, func(x string) bool {
				return x == d.Decision || strings.HasPrefix(x, d.Decision+".") || strings.HasPrefix(d.Decision, x+".")
			}) {
				cited++
			} else if !long {
				t.Errorf("%s breaks %s; its difference %s cites %v", d.Name, d.Decision, f.ID, f.Decisions)
			}
		}
	}
	if total == 0 {
		t.Fatalf("no deviation differed from the reference in %d cases: the test lost its cases", count)
	}
	if long && cited*10 < total*9 {
		t.Errorf("%d of %d differences cite the decision their deviation breaks; want 90%%", cited, total)
	}
	t.Logf("%d of %d differences cite the decision their deviation breaks", cited, total)
}
