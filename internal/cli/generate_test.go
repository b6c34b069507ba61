package cli

import (
	"os"
	"path/filepath"
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
	code, out, errs := run(t, "generate", "--impl", mutant, "--first", "--count", "2000", "--out", dir)
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
	if code, out, errs := run(t, "generate", "--impl", exe+" serve-reference", "--from", dir, "--count", "20", "--out", t.TempDir()); code != ExitOK || !strings.Contains(out, "0 differences") {
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
