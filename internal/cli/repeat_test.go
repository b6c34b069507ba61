package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/scenarios"
)

// TestRepeat_catchesAFlakyImplementation: an implementation wrong in one
// process start of three passes a single run; --repeat 3 runs each
// scenario on three new processes and fails it as nondeterministic,
// naming the runs.
func TestRepeat_catchesAFlakyImplementation(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	impl := "FLAKY_COUNTER=" + filepath.Join(t.TempDir(), "n") + " sh " + filepath.Join("testdata", "impls", "flaky.sh")
	code, out, errs := run(t, "run", "--impl", impl, "--run", "context.order")
	if code != ExitOK {
		t.Fatalf("one run: exit %d (the first two processes are right)\n%s\n%s", code, out, errs)
	}
	impl = "FLAKY_COUNTER=" + filepath.Join(t.TempDir(), "n") + " sh " + filepath.Join("testdata", "impls", "flaky.sh")
	code, out, errs = run(t, "run", "--impl", impl, "--run", "context.order", "--repeat", "3", "--seed", "7")
	if code != ExitFail || !strings.Contains(out, "nondeterministic: runs 1 and 3 of --repeat differ") || !strings.Contains(errs, "--seed 7") {
		t.Errorf("--repeat 3: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs = run(t, "run", "--impl", selfImpl(t)+" serve-reference", "--run", "outcome.normal-return,outcome.env-error", "--repeat", "2"); code != ExitOK || !strings.Contains(out, "2 passed, 0 failed") {
		t.Errorf("a deterministic implementation: exit %d\n%s\n%s", code, out, errs)
	}
}

func TestShuffled_seedReplays(t *testing.T) {
	var scs []*scenarios.Scenario
	for _, id := range []string{"a.a", "a.b", "a.c", "a.d"} {
		scs = append(scs, &scenarios.Scenario{ID: id})
	}
	a, b, c := shuffled(scs, 3, 42), shuffled(scs, 3, 42), shuffled(scs, 3, 43)
	if len(a) != 12 || !slices.Equal(a, b) {
		t.Errorf("the same seed gave another order")
	}
	if slices.Equal(a, c) {
		t.Errorf("two seeds gave one order")
	}
}
