package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestGenerateFindsShrinksAndSaves: over the protocol, the reference
// against itself shows no difference; a deviating reference is found,
// shrunk, saved, and the saved case fails it again through run.
func TestGenerateFindsShrinksAndSaves(t *testing.T) {
	t.Parallel()
	exe := selfImpl(t)
	n := "30" // cases, each two processes: ten without POLYLOOP_LONG=1
	if !long() {
		n = "10"
	}
	if code, out, errs := run(t, "generate", "--impl", exe+" serve-reference", "--count", n, "--out", t.TempDir()); code != ExitOK || !strings.Contains(out, n+" cases") || !strings.Contains(out, "0 differences") {
		t.Fatalf("the reference against itself: exit %d\n%s\n%s", code, out, errs)
	}
	dir := t.TempDir()
	mutant := exe + " serve-reference --mutant env-error-continues"
	code, out, errs := run(t, "generate", "--impl", mutant, "--seed", "1", "--first", "--count", "2000", "--save", dir)
	if code != ExitFail || !strings.Contains(out, "DIFFERENCE case") || !strings.Contains(out, "0004.D2") {
		t.Fatalf("env-error-continues: exit %d\n%s\n%s", code, out, errs)
	}
	saved, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(saved) != 1 {
		t.Fatalf("saved %v, want one scenario", saved)
	}
	data, _ := os.ReadFile(saved[0])
	if !strings.Contains(string(data), "expect is left for a person to write") {
		t.Errorf("the saved scenario does not say its expect is to be written:\n%s", data)
	}
	code, out, _ = run(t, "run", "--impl", mutant, "--scenarios", dir, "--goldens", dir, "--brief")
	if code != ExitFail || !strings.Contains(out, "0004.D2") {
		t.Errorf("the saved case against the deviation: exit %d\n%s", code, out)
	}
	if code, out, _ := run(t, "run", "--scenarios", dir, "--goldens", dir); code != ExitOK {
		t.Errorf("the saved case against the reference: exit %d\n%s", code, out)
	}
	if code, _, errs := run(t, "generate"); code != ExitSetup || !strings.Contains(errs, "needs --impl") {
		t.Errorf("generate without --impl: exit %d, %s", code, errs)
	}
}

// TestGenerateOutIsTheOldSave: generate's folder of differences is
// --save; --out, its old name, keeps working and says so, since --out is
// the report's file in run and every other command; both at once is a
// set-up error.
func TestGenerateOutIsTheOldSave(t *testing.T) {
	t.Parallel()
	exe := selfImpl(t)
	dir := t.TempDir()
	code, out, errs := run(t, "generate", "--impl", exe+" serve-reference", "--seed", "3", "--count", "3", "--out", dir)
	if code != ExitOK || !strings.Contains(errs, "--out "+dir+" is the old name of --save") || !strings.Contains(out, "0 differences") {
		t.Errorf("generate --out DIR: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs := run(t, "generate", "--impl", exe+" serve-reference", "--count", "3", "--out", dir, "--save", t.TempDir()); code != ExitSetup || !strings.Contains(errs, "give --save alone") {
		t.Errorf("generate --out and --save: exit %d, %s", code, errs)
	}
}

// TestGenerateFrom: --from draws variants of a team's scenarios beside
// the suite's; a directory without scenarios, or with one that does not
// load, is a set-up error naming it.
func TestGenerateFrom(t *testing.T) {
	t.Parallel()
	exe := selfImpl(t)
	dir := t.TempDir()
	own, err := os.ReadFile(filepath.Join("..", "..", "scenarios", "outcome.normal-return.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "outcome.normal-return.yaml"), own, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := run(t, "generate", "--impl", exe+" serve-reference", "--from", dir, "--count", "20", "--save", t.TempDir()); code != ExitOK || !strings.Contains(out, "0 differences") {
		t.Fatalf("--from a team's scenarios: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs := run(t, "generate", "--impl", exe+" serve-reference", "--from", t.TempDir()); code != ExitSetup || !strings.Contains(errs, "no *.yaml files") {
		t.Errorf("--from an empty directory: exit %d, %s", code, errs)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("id: broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, "generate", "--impl", exe+" serve-reference", "--from", dir); code != ExitSetup || !strings.Contains(errs, "broken.yaml does not load") {
		t.Errorf("--from with a broken scenario: exit %d, %s", code, errs)
	}
}

// TestGenerateSeedReplays: generate without --seed draws a fresh seed,
// names it in its report and in each difference's row with the command
// that replays it; that command (--seed S) finds the same difference in
// the same case, and another run without --seed draws another seed.
func TestGenerateSeedReplays(t *testing.T) {
	t.Parallel()
	mutant := selfImpl(t) + " serve-reference --mutant env-error-continues"
	type row struct {
		Scenario, Verdict, Note string
		YAML                    string `json:"scenario_yaml"`
	}
	generate := func(extra ...string) (uint64, row) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "report.json")
		args := append([]string{"generate", "--impl", mutant, "--first", "--count", "2000", "--save", t.TempDir(), "--format", "json", "--report-out", out}, extra...)
		if code, stdout, errs := run(t, args...); code != ExitFail {
			t.Fatalf("%v: exit %d, want %d\n%s\n%s", extra, code, ExitFail, stdout, errs)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Seed      uint64 `json:"seed"`
			Scenarios []row  `json:"scenarios"`
		}
		if err := json.Unmarshal(data, &rep); err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Scenarios {
			if r.Verdict == "fail" {
				return rep.Seed, r
			}
		}
		t.Fatalf("%v: no difference in the report:\n%s", extra, data)
		return 0, row{}
	}
	seed, first := generate()
	if seed == 0 || !strings.Contains(first.Note, fmt.Sprintf("of seed %d", seed)) {
		t.Fatalf("the report's seed %d is not the difference's: %s", seed, first.Note)
	}
	_, replay, ok := strings.Cut(first.Note, "replay: ")
	if !ok || !strings.HasSuffix(replay, fmt.Sprintf(" --seed %d", seed)) || !strings.Contains(replay, "generate --impl") {
		t.Fatalf("the difference does not name the command that replays it: %s", first.Note)
	}
	if !strings.Contains(first.YAML, "# Drawn again by: "+replay+"\n") {
		t.Errorf("the scenario to add does not name the command that draws it again:\n%s", first.YAML)
	}
	again, second := generate("--seed", strconv.FormatUint(seed, 10))
	if again != seed || second.Scenario != first.Scenario || withoutReplay(second.YAML) != withoutReplay(first.YAML) {
		t.Errorf("--seed %d replayed seed %d, %s, want %s with the same scenario", seed, again, second.Scenario, first.Scenario)
	}
	if other, _ := generate(); other == seed {
		t.Errorf("two runs without --seed both drew seed %d", seed)
	}
}

// withoutReplay drops a saved case's replay line, which names the
// command's own arguments (its --out directory).
func withoutReplay(yaml string) string {
	return regexp.MustCompile(`(?m)^# Drawn again by: .*\n`).ReplaceAllString(yaml, "")
}
