package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestForkServer_catchesANeverReplay: the Python kit offers a fork
// server, so a crash exploration starts the interpreter once for its
// first runs and forks a child for every kill; a resume starts afresh
// (a crash is a reboot: nothing forked from a server that outlived the
// crash may reach it, docs/limits.md). A kernel that runs an unfinished
// NEVER action again on resume must still be caught through it; and the
// fork server must save work: fewer interpreter starts than the same
// exploration with --no-fork, where every process is a new interpreter.
// The --no-fork half (a Python start for every kill) runs under
// POLYLOOP_LONG=1; the fast tier checks the catch and that the fork
// server left the kills to forks (fewer starts than the crash points).
func TestForkServer_catchesANeverReplay(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	t.Parallel()
	root, _ := filepath.Abs("../..")
	path := filepath.Join(root, "adapters", "python") + string(os.PathListSeparator) + filepath.Join(root, "examples", "python")
	starts, points := map[string]int{}, 0
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"fork server", []string{"explore"}},
		{"no fork", []string{"explore", "--no-fork"}},
	} {
		if tc.name == "no fork" && !long() {
			break
		}
		file := filepath.Join(t.TempDir(), "starts")
		report := filepath.Join(t.TempDir(), "report.json")
		impl := "PYTHONPATH=" + path + " POLYLOOP_STARTS=" + file + " " + python(t) + " " + filepath.Join("testdata", "impls", "python-never-replayed.py")
		// The NEVER scenario with the fewest journal points (10).
		// The start log is outside the machines: --carry binds it in.
		args := append(tc.flags, "--impl", impl, "--carry", filepath.Dir(file), "--run", "resume.never-crash-before-intent", "--handshake-timeout", "60s", "--format", "json", "--out", report)
		code, out, errs := run(t, args...)
		rep, _ := os.ReadFile(report)
		if code != ExitFail || !strings.Contains(string(rep), `"resume.never-crash-before-intent"`) || !strings.Contains(string(rep), "0002.D4") {
			t.Errorf("%s: a NEVER action replayed on resume passed: exit %d\n%s\n%s\n%s", tc.name, code, out, errs, rep)
		}
		data, _ := os.ReadFile(file)
		starts[tc.name] = strings.Count(string(data), "\n")
		points = explorePoints(t, report, rep)
	}
	f, n := starts["fork server"], starts["no fork"]
	t.Logf("interpreter starts: fork server %d, --no-fork %d (%d crash points)", f, n, points)
	if f < 2 || f >= 2*points {
		t.Errorf("interpreter starts: %d with the fork server for %d crash points; it must start at least its server and one resume, and fork the killed runs", f, points)
	}
	if long() && f >= n {
		t.Errorf("interpreter starts: %d with the fork server, %d with --no-fork; the fork server must start fewer", f, n)
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
	impl := python(t) + " " + filepath.Join("testdata", "impls", "fork-server-dies.py")
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

// explorePoints is the crash points a JSON report of explore (data, read
// from path) counts.
func explorePoints(t *testing.T, path string, data []byte) int {
	t.Helper()
	var r struct {
		Scenarios []struct {
			CrashPoints int `json:"crash_points"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	n := 0
	for _, sc := range r.Scenarios {
		n += sc.CrashPoints
	}
	return n
}
