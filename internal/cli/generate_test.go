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
	if code, out, errs := run(t, "generate", "--impl", exe+" serve-reference", "--count", "30", "--out", t.TempDir()); code != ExitOK || !strings.Contains(out, "30 cases") || !strings.Contains(out, "0 differences") {
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
