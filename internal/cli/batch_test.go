package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/generate"
	"github.com/polyloop/polyloop-conform/internal/protocol"
)

// TestRun_generatedBatchCatchesPortingMistakes: two mistakes generate
// found in an honest port that passed every scenario (issue 37), each
// reproduced by serve-reference behind a proxy. Each fails run with the
// default settings on the generated batch alone, with the scenario to
// add in the report and in --generate-out; every scenario passes but
// the ones written for the mistake's class since (citing its decision),
// which did not exist when the batch was the only thing to catch it.
func TestRun_generatedBatchCatchesPortingMistakes(t *testing.T) {
	requireLong(t, "the whole suite and its generated batch through a Python proxy, twice (generate's tests and TestRun_generatedBatchFlags keep the batch's slice)")
	t.Parallel()
	selfImpl(t)
	for _, tc := range []struct{ mode, field, decision string }{
		{"drop-empty", "model_input", "0010.D2.turns"},                       // an empty model output or observation left out of the next input
		{"first-broken", "assembly_error.tools", "0006.D6.construction.all"}, // only the first broken spec named at registration
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			impl := "python3 " + filepath.Join("testdata", "impls", "porting-mistake.py") + " " + tc.mode
			// Generous time limits: a proxy in Python on a loaded machine
			// must not turn a slow answer into a difference.
			code, out, errs := runBuilt(t, "run", "--impl", impl, "--timeout", "120s", "--handshake-timeout", "120s", "-p", "2", "--format", "json", "--generate-out", dir)
			if code != ExitFail {
				t.Fatalf("exit %d, want %d\n%s", code, ExitFail, errs)
			}
			var rep struct {
				Scenarios []struct {
					Scenario, Verdict string
					Decisions         []string
					ScenarioYAML      string `json:"scenario_yaml"`
					Problems          []struct{ Path, Message string }
				}
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			found, pinned := 0, 0
			for _, row := range rep.Scenarios {
				generated := strings.HasPrefix(row.Scenario, "generated.")
				switch {
				case !generated && row.Verdict != "pass" && slices.Contains(row.Decisions, tc.decision):
					pinned++
				case !generated && row.Verdict != "pass":
					t.Errorf("%s: %s %v; the mistake must pass every scenario (the batch is what catches it)", row.Scenario, row.Verdict, row.Problems)
				case generated && row.Verdict == "fail":
					found++
					if !strings.Contains(fmt.Sprint(row.Problems), tc.field) {
						t.Errorf("%s differs on %v, want %s", row.Scenario, row.Problems, tc.field)
					}
					if !strings.Contains(row.ScenarioYAML, "id: "+row.Scenario) {
						t.Errorf("%s: the report lacks the scenario to add:\n%s", row.Scenario, row.ScenarioYAML)
					}
					if _, err := os.Stat(filepath.Join(dir, row.Scenario+".json")); err != nil {
						t.Errorf("--generate-out: %v", err)
					}
				}
			}
			if found == 0 {
				t.Errorf("no generated case differs:\n%s", out)
			}
			t.Logf("%d generated cases differ; %d scenarios written for the class fail too", found, pinned)
		})
	}
}

// TestRun_generatedBatchFlags: the batch runs with the whole built-in
// suite, seeded from the suite's version; a selection leaves it out
// unless --generate asks for it; --seed draws another batch; --generate
// 0 turns it off; a negative count is a set-up error.
func TestRun_generatedBatchFlags(t *testing.T) {
	t.Parallel()
	seeded := fmt.Sprintf("generated.s%d", generate.SeedOf(protocol.SuiteVersion))
	for _, tc := range []struct {
		args []string
		want string // a row the report must have ("" none generated)
	}{
		{[]string{"--run", "outcome.normal-return"}, ""},
		{[]string{"--run", "outcome.normal-return", "--generate", "20"}, seeded},
		{[]string{"--run", "outcome.normal-return", "--generate", "20", "--seed", "3"}, "generated.s3"},
		{[]string{"--generate", "0"}, ""},
	} {
		runner := run
		if tc.args[0] == "--generate" { // the whole suite: the build without the race detector
			runner = runBuilt
		}
		code, out, errs := runner(t, append([]string{"run", "--format", "json"}, tc.args...)...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s", tc.args, code, errs)
		}
		has := strings.Contains(out, `"scenario": "generated.`)
		if tc.want == "" && has || tc.want != "" && !strings.Contains(out, `"scenario": "`+tc.want+`"`) {
			t.Errorf("%v: want generated row %q:\n%s", tc.args, tc.want, out)
		}
	}
	if code, _, errs := run(t, "run", "--generate", "-2"); code != ExitSetup || !strings.Contains(errs, "--generate -2") {
		t.Errorf("--generate -2: exit %d, %s", code, errs)
	}
}
