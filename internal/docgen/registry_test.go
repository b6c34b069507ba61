package docgen

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefresh_runsOnlyWhenAsked: without Options.Runs a block whose
// generator runs the CLI is listed as unchecked (and no CLI is built,
// which would fail here: the root has no module), while a cheap block is
// still recomputed and a stale one reported with its file and line.
func TestRefresh_runsOnlyWhenAsked(t *testing.T) {
	root := t.TempDir()
	readme := "# x\n<!-- generated: suite-size -->\nstale words\n<!-- end generated -->\n" +
		"<!-- generated: crash-points -->\nwhatever explore said once\n<!-- end generated -->\n"
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := Refresh(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stale) != 1 || res.Stale[0].Name != "suite-size" || res.Stale[0].Line != 2 {
		t.Errorf("stale %+v, want suite-size at README.md:2", res.Stale)
	}
	if strings.Join(res.Unchecked, ",") != "README.md:5 (crash-points)" {
		t.Errorf("unchecked %q, want the crash-points block", res.Unchecked)
	}
	// Asked to run, the generator tries to build the CLI in a root with
	// no module, and says so.
	if _, err := Refresh(context.Background(), root, Options{Runs: true}); err == nil || !strings.Contains(err.Error(), "README.md:5: generator \"crash-points\"") {
		t.Errorf("with Runs: err %v, want the crash-points generator's failure at README.md:5", err)
	}
}
