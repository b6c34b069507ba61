package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestForkServer_catchesANeverReplay: the Python kit offers a fork
// server, so a crash exploration starts the interpreter once and forks a
// child for every kill and every resume. A kernel that runs an unfinished
// NEVER action again on resume must still be caught through it (the
// journal on disk is all that crosses a kill, fork or not); with
// --no-fork every process is a new interpreter again (here run's crash
// and resume: two).
func TestForkServer_catchesANeverReplay(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	t.Parallel()
	root, _ := filepath.Abs("../..")
	path := filepath.Join(root, "adapters", "python") + string(os.PathListSeparator) + filepath.Join(root, "examples", "python")
	for _, tc := range []struct {
		name  string
		flags []string
		many  bool // one interpreter start per process
	}{
		{"fork server", []string{"explore"}, false},
		{"no fork", []string{"run", "--no-fork"}, true}, // run: two processes, a crash and a resume
	} {
		starts := filepath.Join(t.TempDir(), "starts")
		impl := "PYTHONPATH=" + path + " POLYLOOP_STARTS=" + starts + " python3 " + filepath.Join("testdata", "impls", "python-never-replayed.py")
		args := append(tc.flags, "--impl", impl, "--run", "resume.never-not-replayed", "--handshake-timeout", "60s")
		code, out, errs := run(t, args...)
		if code != ExitFail || !strings.Contains(out, "FAIL resume.never-not-replayed") {
			t.Errorf("%s: a NEVER action replayed on resume passed: exit %d\n%s\n%s", tc.name, code, out, errs)
		}
		data, _ := os.ReadFile(starts)
		n := strings.Count(string(data), "\n")
		// With the fork server: two starts, the server of first runs and
		// the server of resumes (a resume never shares a server with the
		// process it follows).
		if (tc.many && n < 2) || (!tc.many && n != 2) {
			t.Errorf("%s: %d interpreter starts", tc.name, n)
		}
	}
}

// TestForkServer_thatDies: an implementation that claims a fork server and
// dies at the first fork request. The run goes on with processes started
// from --impl, every scenario is judged, and the report says what happened.
func TestForkServer_thatDies(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	t.Parallel()
	selfImpl(t)
	impl := "python3 " + filepath.Join("testdata", "impls", "fork-server-dies.py")
	// A loaded machine can hold a Python interpreter's start past the
	// default 10 s hello and scenario limits; what is checked here is the
	// fork server's death, not the start's speed.
	code, out, errs := run(t, "run", "--impl", impl, "--handshake-timeout", "60s", "--timeout", "60s", "--run", "outcome.normal-return,validation.unknown-tool")
	if code != ExitFail || !strings.Contains(out, "2 passed, 0 failed") || !strings.Contains(out+errs, "the implementation's fork server stopped") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}
}

// TestDeadlineCrossesTheWire: a deadline scenario's cancel says deadline
// on the wire, so a kernel that takes the passing deadline for a failed
// call is caught over the protocol as in process.
func TestDeadlineCrossesTheWire(t *testing.T) {
	t.Parallel()
	exe := selfImpl(t)
	dir := t.TempDir()
	code, out, errs := run(t, "run", "--impl", exe+" serve-reference --mutant deadline-is-failure", "--run", "cancel.deadline-*", "--transcripts", dir)
	if code != ExitFail || !strings.Contains(out, "0 passed, 2 failed") {
		t.Errorf("deadline-is-failure over the protocol: exit %d\n%s\n%s", code, out, errs)
	}
	tr, _ := os.ReadFile(filepath.Join(dir, "cancel.deadline-during-tool-call.jsonl"))
	if !strings.Contains(string(tr), `"type":"cancel","call":`) || !strings.Contains(string(tr), `"deadline":true`) {
		t.Errorf("the runner's cancel does not say deadline:\n%s", tr)
	}
}
