package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/protocol"
)

// TestRun_SinceMarksFailures: run --since 0.1.0 tells a failure the suite
// moved under (a scenario new since 0.1.0, a cited decision whose record
// changed) from one it did not (the implementation moved), in the report;
// a version without a manifest is a set-up error naming the known ones.
func TestRun_SinceMarksFailures(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "report.json")
	ids := "budget.effective-cap,executor.project-invalid-calls-not-forwarded,govdoc.real-fenced-finding-keeps-curly-quotes,outcome.normal-return"
	code, stdout, errs := run(t, "run", "--impl", selfImpl(t)+" serve-reference --mutant invalid-calls-effective", "--run", ids, "--since", "0.1.0", "--format", "json", "--out", out)
	if code != ExitFail {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitFail, stdout, errs)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	type since struct {
		Version, Scenario string
		Decisions         map[string]string
	}
	var rep struct {
		Scenarios []struct {
			Scenario, Verdict string
			Since             *since
		}
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	// Each row must carry at least the marks below; a record the suite
	// changes later (here 0008.D4.validate, say) may add a "changed"
	// decision to a row, never drop one or change the scenario's mark.
	sinceCovers := func(got, want *since) bool {
		if got == nil || want == nil {
			return got == want
		}
		if got.Version != want.Version || got.Scenario != want.Scenario {
			return false
		}
		for d, mark := range want.Decisions {
			if got.Decisions[d] != mark {
				return false
			}
		}
		for _, mark := range got.Decisions {
			if mark != "changed" && mark != "new" {
				return false
			}
		}
		return true
	}
	want := map[string]*since{
		"budget.effective-cap":                          {Version: "0.1.0", Scenario: "unchanged"},
		"executor.project-invalid-calls-not-forwarded":  {Version: "0.1.0", Scenario: "new", Decisions: map[string]string{"0003.D7": "changed"}},
		"govdoc.real-fenced-finding-keeps-curly-quotes": {Version: "0.1.0", Scenario: "unchanged", Decisions: map[string]string{"0003.D7": "changed"}},
		"outcome.normal-return":                         nil, // passes: not marked
	}
	for _, row := range rep.Scenarios {
		w, ok := want[row.Scenario]
		if !ok {
			t.Errorf("unexpected row %s", row.Scenario)
			continue
		}
		if !sinceCovers(row.Since, w) {
			t.Errorf("%s (%s): since %+v, want %+v", row.Scenario, row.Verdict, row.Since, w)
		}
		delete(want, row.Scenario)
	}
	if len(want) > 0 {
		t.Errorf("rows missing: %v", want)
	}
	if code, _, errs := run(t, "run", "--since", "0.0.9"); code != ExitSetup || !strings.Contains(errs, `no suite version "0.0.9"`) || !strings.Contains(errs, "0.1.0") {
		t.Errorf("--since 0.0.9: exit %d, %s", code, errs)
	}
}

// TestVersionCommand: version prints the suite's version; --since lists
// what moved since a version, in the changelog's words.
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	code, out, errs := run(t, "version")
	if code != ExitOK || !strings.HasPrefix(out, "polyloop-conform suite "+protocol.SuiteVersion+" (protocol ") {
		t.Fatalf("version: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = run(t, "version", "--since", "0.1.0")
	for _, want := range []string{"Since 0.1.0:", "Breaking since 0.1.0", "### Decisions new", "`0003.D5.parts` (MUST)", "### Scenarios new", "`parse.duplicate-keys` (MUST)"} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("version --since 0.1.0: exit %d, lacks %q\n%s\n%s", code, want, out, errs)
		}
	}
	if code, _, errs := run(t, "version", "--since", "0.0.1"); code != ExitSetup || !strings.Contains(errs, `no suite version "0.0.1"`) {
		t.Errorf("version --since 0.0.1: exit %d, %s", code, errs)
	}
}

// TestRun_SinceMarksGeneratedFailuresByWhatTheyBreak: a kernel that
// follows suite 0.1.0's decisions where 0.2.0 added some (a plan that is
// not a string refused, 0003.D5.parts; pattern read as RE2,
// 0006.D6.pattern) fails generated cases on those decisions, and under
// run --since 0.1.0 every such failure is marked new or changed, never
// unchanged: a generated case cites the decisions of the first point where
// the run diverged, its source scenario's and its drawn features' (issue
// 54). Seed 8's first 120 cases hold both kinds of failure (seed 1 held both until the
// generator drew the edges of text and numbers, issue 52).
func TestRun_SinceMarksGeneratedFailuresByWhatTheyBreak(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "report.json")
	impl := selfImpl(t) + " serve-reference --mutant plan-and-reflection-must-be-strings --mutant pattern-read-as-re2"
	code, stdout, errs := run(t, "run", "--impl", impl, "--run", "outcome.normal-return", "--generate", "120", "--seed", "8", "--since", "0.1.0", "--format", "json", "--out", out)
	if code != ExitFail {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitFail, stdout, errs)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Scenarios []struct {
			Scenario, Verdict, Source string
			Decisions                 []string
			Since                     *struct {
				Scenario, Source string
				SourceID         string `json:"source_id"`
				Decisions        map[string]string
			}
		}
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	broken := []string{"0003.D5.parts", "0006.D6.pattern"}
	seen := map[string]int{}
	for _, row := range rep.Scenarios {
		if row.Verdict != "fail" {
			continue
		}
		if !strings.HasPrefix(row.Scenario, "generated.") {
			t.Errorf("%s fails: only generated cases should", row.Scenario)
			continue
		}
		if row.Since == nil {
			t.Errorf("%s: not marked", row.Scenario)
			continue
		}
		marked := ""
		for _, d := range broken {
			if m := row.Since.Decisions[d]; m == "new" || m == "changed" {
				marked = d
			}
		}
		if marked == "" {
			t.Errorf("%s (source %q) cites %v, marked %+v: neither %v marked new, so a failure on a decision new since 0.1.0 reads as unchanged", row.Scenario, row.Source, row.Decisions, row.Since, broken)
			continue
		}
		seen[marked]++
		if marked == "0006.D6.pattern" && (row.Source == "" || row.Since.SourceID != row.Source || row.Since.Source != "new") {
			t.Errorf("%s: a variant of %q, its source marked %q %q", row.Scenario, row.Source, row.Since.SourceID, row.Since.Source)
		}
	}
	for _, d := range broken {
		if seen[d] == 0 {
			t.Errorf("no failure on %s among seed 8's first 120 cases (%v): the test lost its case", d, seen)
		}
	}
}
