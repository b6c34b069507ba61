package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOwnScenariosWithoutGoldens: a team's scenario directory without
// goldens was refused (or failed every scenario with "no golden"); it is
// now judged by each scenario's expect block, says so, and a reviewed
// recording becomes its goldens.
func TestOwnScenariosWithoutGoldens(t *testing.T) {
	t.Parallel()
	own := t.TempDir()
	// Two of the suite's scenarios under the team's own IDs: no golden
	// exists for them (a built-in scenario copied as it is keeps its own).
	for _, id := range []string{"outcome.normal-return", "validation.unknown-tool"} {
		data, err := os.ReadFile(filepath.Join("../../scenarios", id+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		ours := "ours." + strings.SplitN(id, ".", 2)[1]
		os.WriteFile(filepath.Join(own, ours+".yaml"), []byte(strings.Replace(string(data), "id: "+id, "id: "+ours, 1)), 0o644)
	}
	code, out, errs := run(t, "run", "--scenarios", own)
	if code != ExitOK || !strings.Contains(out, "Judged by expect alone (no golden): 2") {
		t.Fatalf("own scenarios: exit %d\n%s\n%s", code, out, errs)
	}
	// An empty --goldens directory is a start, not an error.
	empty := t.TempDir()
	if code, out, errs = run(t, "run", "--scenarios", own, "--goldens", empty); code != ExitOK {
		t.Fatalf("empty --goldens: exit %d\n%s\n%s", code, out, errs)
	}
	// The expect block is the oracle: one that contradicts the run fails.
	path := filepath.Join(own, "ours.normal-return.yaml")
	data, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(data), "expect:\n  steps: 2", "expect:\n  steps: 3", 1)), 0o644)
	code, out, _ = run(t, "run", "--scenarios", own)
	if code != ExitFail || !strings.Contains(out, "steps: want 3 steps, got 2") {
		t.Errorf("a contradicting expect: exit %d\n%s", code, out)
	}
	// No golden and an empty expect: nothing would judge it; the loader
	// refuses it, naming the line.
	os.WriteFile(path, []byte(string(data[:strings.Index(string(data), "expect:")])+"expect: {}\n"), 0o644)
	code, _, errs = run(t, "run", "--scenarios", own)
	if code != ExitSetup || !strings.Contains(errs, "ours.normal-return.yaml:28: expect must say how the run ends") {
		t.Errorf("an empty expect: exit %d\n%s", code, errs)
	}
	// A reviewed recording becomes the goldens.
	os.WriteFile(path, data, 0o644)
	goldens := t.TempDir()
	if code, out, errs = run(t, "run", "--scenarios", own, "--record", goldens); code != ExitOK {
		t.Fatalf("record: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = run(t, "run", "--scenarios", own, "--goldens", goldens)
	if code != ExitOK || strings.Contains(out, "Judged by expect alone") {
		t.Errorf("with recorded goldens: exit %d\n%s\n%s", code, out, errs)
	}
}
