package kernel_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"example.com/polyloop-kernel/kernel"
	"github.com/polyloop/polyloop-conform/polylooptest"
)

// TestConformance judges the kernel in process (each resume in a process
// of its own): `go test -run 'Conformance/^resume\.' -v` runs and names
// the resume family.
func TestConformance(t *testing.T) {
	polylooptest.Run(t, kernel.New(),
		polylooptest.Capabilities("json-actions", "resume", "cancellation", "events", "wire-sink", "journal-lines"),
		polylooptest.Since("0.1.0"),
		polylooptest.Report("json", filepath.Join(t.TempDir(), "conformance.json")))
}

// TestConformanceCommand judges the built command over the stdio
// protocol, as `polyloop-conform run --impl` does: every crash point kills
// a real process, and every resume is a new one, so every verdict is
// observed (the default). -short skips it.
func TestConformanceCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the command line is judged without -short")
	}
	bin := filepath.Join(t.TempDir(), "polyloop-go-example")
	if out, err := exec.Command("go", "build", "-o", bin, "example.com/polyloop-kernel/cmd/polyloop-go-example").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	polylooptest.RunCommand(t, bin)
}
