package polylooptest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polyloop/polyloop-conform/polyloopkit"
	"github.com/polyloop/polyloop-conform/polyloopkit/refkernel"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// The tests below judge kernels through Run in a child test binary (a
// test that fails on purpose cannot fail inside this one), configured by
// these variables, over a slice of the suite (go test ./... stays cheap).
const (
	helperKernel = "POLYLOOPTEST_HELPER_KERNEL"
	helperOnly   = "POLYLOOPTEST_HELPER_ONLY"
	helperKnown  = "POLYLOOPTEST_HELPER_KNOWN"
	helperReport = "POLYLOOPTEST_HELPER_REPORT"
	helperMarker = "POLYLOOPTEST_HELPER_MARKER"
)

// TestHelperJudge is the child: it runs only when a test below starts it.
func TestHelperJudge(t *testing.T) {
	kernel := os.Getenv(helperKernel)
	if kernel == "" {
		t.Skip("started by the tests of this package only")
	}
	ids := strings.Split(os.Getenv(helperOnly), ",")
	opts := []Option{func(c *config) error { c.only = func(id string) bool { return slices.Contains(ids, id) }; return nil },
		Since("0.1.0")}
	if f := os.Getenv(helperKnown); f != "" {
		opts = append(opts, KnownFailing(f))
	}
	if f := os.Getenv(helperReport); f != "" {
		opts = append(opts, Report("json", f))
	}
	Run(t, kernels()[kernel], opts...)
}

// kernels are the kernels the child judges by name.
func kernels() map[string]polyloopkit.Kernel {
	honest := refkernel.Kernel()
	// endsElsewhere reports every end as a budget stop: the trajectory is
	// wrong against the golden and the scenario's expect (0004).
	endsElsewhere := refkernel.Kernel()
	endsElsewhere.Run = func(ctx context.Context, spec polyloopkit.Spec, seams *polyloopkit.Seams) (*trajectories.Trajectory, error) {
		tr, err := honest.Run(ctx, spec, seams)
		if err == nil && tr.End != nil {
			tr.End.Reason = "total_budget_exhausted"
		}
		return tr, err
	}
	// fromMemory resumes only when the run it resumes left a mark in this
	// process's memory, which no crash leaves to the next process.
	var started atomic.Bool
	fromMemory := refkernel.Kernel()
	fromMemory.Run = func(ctx context.Context, spec polyloopkit.Spec, seams *polyloopkit.Seams) (*trajectories.Trajectory, error) {
		if seams.Resume && !started.Load() {
			return nil, errors.New("nothing in memory to resume from")
		}
		started.Store(true)
		return honest.Run(ctx, spec, seams)
	}
	// blocks says it started, in the file helperMarker names, and never
	// answers: the run is in flight until something stops it.
	blocks := refkernel.Kernel()
	blocks.Run = func(ctx context.Context, spec polyloopkit.Spec, seams *polyloopkit.Seams) (*trajectories.Trajectory, error) {
		os.WriteFile(os.Getenv(helperMarker), nil, 0o644)
		<-make(chan struct{})
		return nil, nil
	}
	return map[string]polyloopkit.Kernel{"honest": honest, "ends-elsewhere": endsElsewhere, "from-memory": fromMemory, "blocks": blocks}
}

// judge runs the child on kernel over ids and returns its verbose output
// and whether it passed.
func judge(t *testing.T, kernel string, ids []string, env ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperJudge$", "-test.v")
	cmd.Env = append(os.Environ(), append(env, helperKernel+"="+kernel, helperOnly+"="+strings.Join(ids, ","))...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return string(out), err == nil
}

// A failure names the scenario, the decisions it breaks, the suite's
// version and what moved since the version named, each scenario a subtest
// of its own; the honest kernel passes the same slice.
func TestRun_failureNamesScenarioDecisionAndVersion(t *testing.T) {
	t.Parallel()
	ids := []string{"completion.by-tool", "budget.zero-cap-refused"}
	out, ok := judge(t, "honest", ids)
	if !ok || !strings.Contains(out, "--- PASS: TestHelperJudge/completion.by-tool") {
		t.Fatalf("the reference through the kit did not pass %v:\n%s", ids, out)
	}
	out, ok = judge(t, "ends-elsewhere", ids)
	if ok {
		t.Fatalf("a kernel that reports the wrong end passed:\n%s", out)
	}
	for _, want := range []string{"--- FAIL: TestHelperJudge/completion.by-tool", "completion.by-tool failed against polyloop-reference-kit",
		"(suite 0.3.0)", "since 0.1.0", "0004.D", "rerun: go test -run '^TestHelperJudge$/^completion\\.by-tool$'"} {
		if !strings.Contains(out, want) {
			t.Errorf("the failure does not say %q:\n%s", want, out)
		}
	}
}

// A resume runs in a process of its own: a kernel that resumes from what
// the stopped run left in memory fails, in process as over the protocol.
func TestRun_resumeInAProcessOfItsOwn(t *testing.T) {
	t.Parallel()
	out, ok := judge(t, "from-memory", []string{"resume.crash-after-run-started"})
	if ok || !strings.Contains(out, "nothing in memory to resume from") {
		t.Fatalf("a kernel that resumes from memory was not caught:\n%s", out)
	}
}

// The known-failing list skips a listed failure with its reason, fails a
// listed pass as stale, and the report is written where Report says.
func TestRun_knownFailingAndReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	known := filepath.Join(dir, "known.txt")
	os.WriteFile(known, []byte("completion.by-tool  # issue 7: the end is wrong\nbudget.zero-cap-refused  # listed, but it passes\n"), 0o644)
	rep := filepath.Join(dir, "report.json")
	out, ok := judge(t, "ends-elsewhere", []string{"completion.by-tool", "budget.zero-cap-refused"}, helperKnown+"="+known, helperReport+"="+rep)
	if ok {
		t.Fatalf("a stale known-failing entry passed:\n%s", out)
	}
	for _, want := range []string{"--- SKIP: TestHelperJudge/completion.by-tool", "issue 7: the end is wrong",
		"--- FAIL: TestHelperJudge/budget.zero-cap-refused", "passes but is listed as known failing"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run does not say %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(rep)
	if err != nil || !strings.Contains(string(data), `"polyloop.report/v1"`) || !strings.Contains(string(data), `"known_failing"`) {
		t.Errorf("the JSON report (%v):\n%.400s", err, data)
	}
}

// Ctrl-C during the suite stops the scenarios in flight, skips the rest,
// writes the report marked interrupted, fails the test, and leaves no
// journal directory behind.
func TestRun_interruptLeavesAReport(t *testing.T) {
	t.Parallel()
	dir, tmp := t.TempDir(), t.TempDir()
	marker, rep := filepath.Join(dir, "started"), filepath.Join(dir, "report.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperJudge$", "-test.v", "-test.parallel=1")
	cmd.Env = append(os.Environ(), helperKernel+"=blocks", helperOnly+"=resume.crash-after-run-started,completion.by-tool",
		helperMarker+"="+marker, helperReport+"="+rep, "TMPDIR="+tmp)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err == nil {
		t.Fatalf("an interrupted suite passed:\n%s", out.String())
	}
	data, err := os.ReadFile(rep)
	if err != nil || !strings.Contains(string(data), `"interrupted": true`) {
		t.Fatalf("no report marked interrupted (%v): %.300s\n%s", err, data, out.String())
	}
	if !strings.Contains(out.String(), "interrupted by a signal") || !strings.Contains(out.String(), "not run: a signal stopped the suite") {
		t.Errorf("the test output does not say the suite was interrupted:\n%s", out.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("the interrupted suite left %d file(s) in TMPDIR, %s first", len(left), left[0].Name())
	}
}

// Numbers cross the kit as written: the reference behind the kit passes
// the scenarios whose integers lie past 2^53 or 2^64, in schema bounds,
// arguments and the journal (0006.D6.exact-numbers). A kit that decodes
// a message's numbers into float64 fails all three.
func TestRun_numbersExactThroughTheKit(t *testing.T) {
	t.Parallel()
	ids := []string{"validation.big-integer-exact", "validation.big-number-fractions", "resume.text-and-numbers-through-journal"}
	if out, ok := judge(t, "honest", ids); !ok {
		t.Fatalf("the reference through the kit failed the exact-number scenarios:\n%s", out)
	}
}
