package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/scenarios"
)

// The whole-suite runs, explorations and generated batches are checks of
// the product, not unit tests: `go test ./...` runs each on a small slice
// (or skips it, naming the variable), and POLYLOOP_LONG=1, which .ci/run
// sets, runs them whole (README, "The tests").

// long reports whether POLYLOOP_LONG=1 asks for the long checks whole.
func long() bool { return os.Getenv("POLYLOOP_LONG") == "1" }

// requireLong skips a check that has no useful slice unless POLYLOOP_LONG=1.
func requireLong(t *testing.T, why string) {
	t.Helper()
	if !long() {
		t.Skipf("%s; POLYLOOP_LONG=1 runs it (.ci/run sets it)", why)
	}
}

// suiteSlice is the --run selection of a whole-suite check: the whole
// suite under POLYLOOP_LONG=1 (no flag), otherwise the first scenario of
// each family in ID order, a fixed sample that still meets every kind of
// scenario (resume, cancel, phases, events, govdoc, ...).
func suiteSlice(t *testing.T) []string {
	t.Helper()
	if long() {
		return nil
	}
	return []string{"--run", strings.Join(familyFirsts(t), ",")}
}

// familyFirsts is the first scenario of each family of the built-in suite.
func familyFirsts(t *testing.T) []string {
	t.Helper()
	scs, err := scenarios.LoadEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var ids []string
	for _, sc := range scs { // LoadAll's order: sorted by file name, so by ID
		if f := scenarios.Family(sc.ID); !seen[f] {
			seen[f] = true
			ids = append(ids, sc.ID)
		}
	}
	return ids
}
