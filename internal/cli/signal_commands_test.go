package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/polyloop/polyloop-conform/internal/systrace"
)

// These tests send SIGINT or SIGTERM to the built binary in the middle of
// each command that runs work (issue 43: a signal is never a failure).
// They do not run in parallel: they look for the implementation's
// processes by their command lines, and hang.sh's marker is shared with
// TestSignalStopsTheRun, which skips while one of them runs.

// interrupted is what a command stopped by a signal left behind.
type interrupted struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// interruptMidRun starts the built binary with args and its own TMPDIR,
// waits up to 60 s (a loaded machine) until started reports the work
// under way, sends sig, and waits for the command to end. It fails the test when the work never
// starts, when the command takes more than 3 s to stop, when started's
// processes outlive it (live lists them), or when TMPDIR is not empty
// afterwards.
func interruptMidRun(t *testing.T, sig syscall.Signal, started func() bool, live func() []string, args ...string) interrupted {
	t.Helper()
	tmp := t.TempDir()
	cmd := exec.Command(selfImpl(t), args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !started() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !started() {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%v: the work never started; the signal would land on nothing:\n%s\n%s", args, stdout.String(), stderr.String())
	}
	sent := time.Now()
	cmd.Process.Signal(sig)
	// A command that ignores the signal would hang the test: after 10 s it
	// is killed, and the exit code below fails the test.
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	}()
	cmd.Wait()
	close(done)
	got := interrupted{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String(), took: time.Since(sent)}
	want := 128 + int(sig)
	if got.code != want {
		t.Errorf("%v: exit %d after %s, want %d\nstdout:\n%s\nstderr:\n%s", args, got.code, sig, want, got.stdout, got.stderr)
	}
	if got.took > 3*time.Second {
		t.Errorf("%v: took %s to stop after %s", args, got.took, sig)
	}
	t.Logf("%v: stopped %s after %s", args, got.took, sig)
	// Process groups are killed before the command returns; give the
	// kernel a moment to reap them.
	deadline = time.Now().Add(time.Second)
	for len(live()) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if left := live(); len(left) > 0 {
		t.Errorf("%v: processes outlived the command:\n%s", args, strings.Join(left, "\n"))
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("%v: temporary files left in TMPDIR: %v", args, names)
	}
	return got
}

// hangSleeping reports whether hang.sh's sleeping child runs: the
// implementation has a scenario and will never answer it.
func hangSleeping() bool {
	for _, p := range implProcesses(nil) {
		if strings.Contains(p, marker) {
			return true
		}
	}
	return false
}

func hangProcesses() []string { return implProcesses(nil) }

// jsonReport is the part of a JSON report the signal tests check.
type jsonReport struct {
	Interrupted bool `json:"interrupted"`
	NotRun      int  `json:"not_run"`
	Counts      struct {
		Failed      int `json:"failed"`
		Interrupted int `json:"interrupted"`
	} `json:"counts"`
	Rows []struct {
		Scenario  string            `json:"scenario"`
		Verdict   string            `json:"verdict"`
		Decisions []string          `json:"decisions"`
		Problems  []json.RawMessage `json:"problems"`
	} `json:"scenarios"`
}

// report reads the JSON report the stopped command wrote to path and
// holds it to noFailureJSON; it returns the report and its bytes.
func (got interrupted) report(t *testing.T, path string) (jsonReport, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no report: %v\n%s\n%s", err, got.stdout, got.stderr)
	}
	return noFailureJSON(t, data), data
}

// noFailureJSON fails the test when a JSON report of a stopped command
// counts a failure, cites a decision for a stopped row, or is not marked
// interrupted with the stopped rows counted apart.
func noFailureJSON(t *testing.T, data []byte) jsonReport {
	t.Helper()
	var r jsonReport
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("the JSON report: %v\n%s", err, data)
	}
	if !r.Interrupted || r.Counts.Failed != 0 || r.Counts.Interrupted+r.NotRun == 0 {
		t.Errorf("interrupted %v, %d failed, %d interrupted, %d not run; want interrupted, 0 failed, some stopped:\n%s", r.Interrupted, r.Counts.Failed, r.Counts.Interrupted, r.NotRun, data)
	}
	if strings.Contains(string(data), "context canceled") {
		t.Errorf("the JSON report shows the cancellation as a finding:\n%s", data)
	}
	for _, row := range r.Rows {
		if row.Verdict == "interrupted" && (len(row.Decisions) > 0 || len(row.Problems) > 0) {
			t.Errorf("the stopped row %s cites %v with %d problems", row.Scenario, row.Decisions, len(row.Problems))
		}
	}
	return r
}

// TestSignalRepeatIsNoFailure: SIGTERM while run --repeat waits on a
// hanging implementation exits 143 with a JSON report whose stopped
// repetition is interrupted, not a nondeterminism failure.
func TestSignalRepeatIsNoFailure(t *testing.T) {
	if len(implProcesses(t)) > 0 {
		t.Skip("a hang.sh from another test is still running")
	}
	out := filepath.Join(t.TempDir(), "report.json")
	got := interruptMidRun(t, syscall.SIGTERM, hangSleeping, hangProcesses,
		"run", "--impl", "sh testdata/impls/hang.sh", "--run", "resume.safe-replayed", "--repeat", "3", "--timeout", "60s", "--format", "json", "--out", out)
	r, data := got.report(t, out)
	if r.Counts.Interrupted != 1 {
		t.Errorf("%d interrupted rows, want the one scenario:\n%s", r.Counts.Interrupted, data)
	}
	// On a file, standard output has the summary line.
	if !strings.Contains(got.stdout, "1 interrupted,") || strings.Contains(got.stdout, "1 failed") {
		t.Errorf("summary:\n%s", got.stdout)
	}
}

// TestSignalRepeatMidScenarioIsNoFailure: SIGTERM during the second run
// of a scenario whose first run of --repeat passed. The stopped run is no
// run to compare: the scenario reads as interrupted, not as a
// nondeterministic failure ("verdict pass, then interrupted").
func TestSignalRepeatMidScenarioIsNoFailure(t *testing.T) {
	if len(implProcesses(t)) > 0 {
		t.Skip("a hang.sh from another test is still running")
	}
	// The counter file must outlive each process: no fresh files per
	// process here, the test is about --repeat, not isolation.
	t.Setenv("POLYLOOP_NO_ISOLATION", "1")
	out := filepath.Join(t.TempDir(), "report.json")
	impl := "PASS_COUNTER=" + filepath.Join(t.TempDir(), "n") + " sh " + filepath.Join("testdata", "impls", "pass-then-hang.sh")
	got := interruptMidRun(t, syscall.SIGTERM, hangSleeping, hangProcesses,
		"run", "--impl", impl, "--run", "context.order", "--repeat", "3", "-p", "1", "--timeout", "60s", "--format", "json", "--out", out)
	r, data := got.report(t, out)
	if r.Counts.Interrupted != 1 || len(r.Rows) != 1 || len(r.Rows[0].Problems) > 0 {
		t.Errorf("want the one scenario interrupted, with no problem:\n%s", data)
	}
	if !strings.Contains(got.stdout, "1 interrupted,") || strings.Contains(got.stdout, "1 failed") {
		t.Errorf("summary:\n%s", got.stdout)
	}
}

// TestSignalGenerateIsNoFailure: SIGINT while generate waits on a hanging
// implementation exits 130; the JSON report has no difference citing a
// decision, the case the signal stopped is counted interrupted, the cases
// never drawn not run, and nothing is saved as a difference.
func TestSignalGenerateIsNoFailure(t *testing.T) {

	if len(implProcesses(t)) > 0 {
		t.Skip("a hang.sh from another test is still running")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "report.json")
	got := interruptMidRun(t, syscall.SIGINT, hangSleeping, hangProcesses,
		"generate", "--impl", "sh testdata/impls/hang.sh", "--count", "5", "--seed", "7", "--timeout", "60s", "--out", filepath.Join(dir, "found"), "--format", "json", "--report-out", out)
	r, data := got.report(t, out)
	// The first case was stopped; the other four were never drawn.
	if r.Counts.Interrupted != 1 || r.NotRun != 4 {
		t.Errorf("%d interrupted, %d not run; want 1 and 4:\n%s", r.Counts.Interrupted, r.NotRun, data)
	}
	if !strings.Contains(got.stdout, "1 interrupted, 4 not run") || strings.Contains(got.stdout, "1 failed") {
		t.Errorf("summary:\n%s", got.stdout)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "found")); len(entries) > 0 {
		t.Errorf("the stopped case was saved as a difference: %d files", len(entries))
	}
}

// serveReferences lists the running serve-reference processes of the
// built binary whose arguments start with args.
func serveReferences(exe, args string) []string {
	return processes(func(c string) bool { return strings.HasPrefix(c, exe+" serve-reference"+args) })
}

// TestSignalSelfcheckIsNoFailure: SIGTERM while selfcheck runs the suite
// over the protocol against deviations of the reference exits 143; the
// deviations under way are interrupted (neither caught nor missed, no
// decision cited), the others not run.
func TestSignalSelfcheckIsNoFailure(t *testing.T) {
	exe := selfImpl(t)
	if len(serveReferences(exe, "")) > 0 {
		t.Skip("a serve-reference from another test is still running")
	}
	out := filepath.Join(t.TempDir(), "report.json")
	// Three scenarios, so the baseline run before the first deviation
	// takes a moment, not the whole suite over the protocol (4 s on 2
	// cores, in a test that runs alone).
	scen := scenarioDir(t, "outcome.normal-return", "resume.safe-replayed", "validation.unknown-tool")
	// The signal comes once a deviation's run has started its process.
	mutant := func() bool { return len(serveReferences(exe, " --mutant")) > 0 }
	got := interruptMidRun(t, syscall.SIGTERM, mutant, func() []string { return serveReferences(exe, "") },
		"selfcheck", "--impl", exe+" serve-reference", "--scenarios", scen, "-p", "2", "--format", "json", "--out", out)
	r, data := got.report(t, out)
	if r.Counts.Interrupted == 0 || r.NotRun == 0 {
		t.Errorf("%d interrupted, %d not run; want the deviations under way and the rest:\n%s", r.Counts.Interrupted, r.NotRun, data)
	}
	if !strings.Contains(got.stdout, " interrupted, ") || strings.Contains(got.stdout, "MUST scenario") {
		t.Errorf("summary:\n%s", got.stdout)
	}
}

// TestSignalVerifyIsNoFailure: SIGINT while verify blocks reading a
// trajectory (a FIFO nobody writes) exits 130; the file read before
// passes, the blocked one is interrupted, and no scenario whose file was
// never read is called missing.
func TestSignalVerifyIsNoFailure(t *testing.T) {
	dir := t.TempDir()
	golden, err := os.ReadFile("../../trajectories/outcome.normal-return.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "outcome.normal-return.json"), golden, 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "resume.safe-replayed.json") // sorted after the other
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	// A writer's non-blocking open succeeds once verify has opened the
	// FIFO to read it; held open without a byte, it keeps verify reading.
	writer := -1
	defer func() {
		if writer >= 0 {
			syscall.Close(writer)
		}
	}()
	reading := func() bool {
		if writer < 0 {
			writer, _ = syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK, 0)
		}
		return writer >= 0
	}
	got := interruptMidRun(t, syscall.SIGINT, reading, func() []string { return nil }, "verify", dir)
	for _, bad := range []string{"FAIL", "missing"} {
		if strings.Contains(got.stdout, bad) {
			t.Errorf("a stopped verify reads as a failure (%q):\n%s", bad, got.stdout)
		}
	}
	for _, want := range []string{"ok   " + dir + "/outcome.normal-return.json", "INTERRUPTED " + fifo, "INTERRUPTED: stopped by a signal", "1 passed, 0 failed, 1 interrupted, 0 not run"} {
		if !strings.Contains(got.stdout, want) {
			t.Errorf("no %q in:\n%s\n%s", want, got.stdout, got.stderr)
		}
	}
}

// TestSignalPowerLossIsNoFailure: SIGINT while explore --power-loss traces
// a hanging implementation under strace exits 130; the JSON report marks
// the scenario the signal stopped interrupted, the ones never started
// not run, and cites no decision; neither the implementation nor its
// tracer outlives the command.
func TestSignalPowerLossIsNoFailure(t *testing.T) {
	if err := systrace.Available(); err != nil {
		t.Skip(err) // the sentence says what to install
	}
	if len(implProcesses(t)) > 0 {
		t.Skip("a hang.sh from another test is still running")
	}
	out := filepath.Join(t.TempDir(), "report.json")
	tracers := func() []string {
		return append(hangProcesses(), processes(func(c string) bool {
			return strings.HasPrefix(c, "strace ") && strings.Contains(c, "hang.sh")
		})...)
	}
	got := interruptMidRun(t, syscall.SIGINT, hangSleeping, tracers,
		"explore", "--power-loss", "--impl", "sh testdata/impls/hang.sh", "--run", "resume.safe-replayed,resume.crash-before-end", "-p", "1", "--timeout", "60s", "--format", "json", "--out", out)
	r, data := got.report(t, out)
	if r.Counts.Interrupted != 1 || r.NotRun != 1 {
		t.Errorf("%d interrupted, %d not run; want 1 and 1:\n%s", r.Counts.Interrupted, r.NotRun, data)
	}
	if !strings.Contains(got.stdout, "1 interrupted") || strings.Contains(got.stdout, "1 failed") {
		t.Errorf("summary:\n%s", got.stdout)
	}
}
