package cli

import (
	"fmt"
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
	// The counter is outside the machines: --carry binds it in.
	counter := t.TempDir()
	impl := "FLAKY_COUNTER=" + filepath.Join(counter, "n") + " sh " + filepath.Join("testdata", "impls", "flaky.sh")
	code, out, errs := run(t, "run", "--impl", impl, "--carry", counter, "--run", "context.order")
	if code != ExitOK {
		t.Fatalf("one run: exit %d (the first two processes are right)\n%s\n%s", code, out, errs)
	}
	counter = t.TempDir()
	impl = "FLAKY_COUNTER=" + filepath.Join(counter, "n") + " sh " + filepath.Join("testdata", "impls", "flaky.sh")
	code, out, errs = run(t, "run", "--impl", impl, "--carry", counter, "--run", "context.order", "--repeat", "3", "--seed", "7")
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

// journalScenarios are the scenarios whose run_error.message a kernel that
// follows 0002.D5 and 0002.D6 fills with the journal file's path.
const journalScenarios = "journal.result-write-error,journal.write-error-surfaces,resume.damaged-checksum-refused,resume.damaged-middle-refused"

// TestRepeat_journalPathIsNoDifference: a kernel whose run_error.message
// names its journal file (as 0002.D5 and 0002.D6 ask) differs between two
// runs only by the journal_dir the runner drew for each. --repeat compares
// the runs field by field by class, as a run is compared with its golden,
// so that is no nondeterminism — and under --strict, which compares the
// sentence word for word, the runner's directory is still not counted.
// A kernel whose own words differ between runs (its process id) is
// nondeterministic under --strict and not by default.
func TestRepeat_journalPathIsNoDifference(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	script := python(t) + " " + filepath.Join("testdata", "impls", "names-journal.py")
	// One scenario of each run_error kind is enough past the first case.
	const two = "journal.result-write-error,resume.damaged-checksum-refused"
	// Every scenario with a run_error under POLYLOOP_LONG=1; otherwise
	// one of each run_error kind, as for the other cases.
	first, firstWant := two, "2 passed, 0 failed"
	if long() {
		first, firstWant = journalScenarios, "4 passed, 0 failed"
	}
	for _, tc := range []struct {
		mode, run string
		strict    bool
		code      int
		nondet    bool
		wantText  string
	}{
		{"path", first, false, ExitOK, false, firstWant},
		// Under --strict the sentences fail against the reference's
		// wording, each run alike: a failure, not a nondeterminism.
		{"path", two, true, ExitFail, false, "0 passed, 2 failed"},
		{"pid", two, false, ExitOK, false, "2 passed, 0 failed"},
		{"pid", two, true, ExitFail, true, "0 passed, 2 failed"},
	} {
		t.Run(fmt.Sprintf("%s-strict=%v", tc.mode, tc.strict), func(t *testing.T) {
			t.Parallel()
			// The time limits are generous: each run starts a Python
			// proxy and a reference behind it, on a loaded machine too.
			args := []string{"run", "--impl", script + " " + tc.mode, "--run", tc.run, "--repeat", "2", "--seed", "3", "--timeout", "60s", "--handshake-timeout", "60s"}
			if tc.strict {
				args = append(args, "--strict")
			}
			code, out, errs := run(t, args...)
			if code != tc.code || !strings.Contains(out, tc.wantText) {
				t.Errorf("exit %d, want %d with %q\n%s\n%s", code, tc.code, tc.wantText, out, errs)
			}
			if got := strings.Contains(out, "nondeterministic"); got != tc.nondet {
				t.Errorf("nondeterministic reported: %v, want %v\n%s", got, tc.nondet, out)
			}
			// The strict report shows the sentences: they do name the
			// journal file, or the process.
			if want := map[string]string{"path": "polyloop-conform-journal-", "pid": "process "}[tc.mode]; tc.strict && !strings.Contains(out, want) {
				t.Errorf("the strict report does not show %q in a sentence:\n%s", want, out)
			}
		})
	}
}
