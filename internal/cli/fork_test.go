package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/isolate"
)

// TestForkServer_catchesANeverReplay: the Python kit offers a fork
// server, so a crash exploration starts the interpreter once for its
// first runs and forks a child for every kill; a resume is forked onto a
// machine of its own from a second server, or started afresh (a crash is
// a reboot: nothing a server that outlived the crash holds may reach it,
// docs/limits.md). A kernel that runs an unfinished
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

// machineRow is the part of a JSON report row the machine tests read.
type machineRow struct {
	Scenario      string `json:"scenario"`
	Verdict       string `json:"verdict"`
	Evidence      string `json:"evidence"`
	ForkedResumes int    `json:"forked_resumes"`
}

// forksMachines skips a test that needs a fork server's child to make
// namespaces and mounts: root, on Linux, with isolation on.
func forksMachines(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" || os.Geteuid() != 0 || isolate.Forced() {
		t.Skip("a fork server's child makes its machine with the privileges of root (in its user namespace): run as root on Linux, isolation on; .ci/run does")
	}
}

// TestForkServer_resumeOnMachine: the Python kit and a native fork
// server in C (testdata/cfork) fork a resume onto a new machine of its
// own, and the runner sees it so from outside and counts it in the report
// (forked_resumes). A child that leaves one part of the machine out (its
// server's network, its server's /proc) is seen not isolated: the resume
// is started from --impl, still isolated, the log names the part, and the
// report counts no forked resume.
func TestForkServer_resumeOnMachine(t *testing.T) {
	t.Parallel()
	forksMachines(t)
	exe := selfImpl(t)
	skips := filepath.Join("testdata", "impls", "machine-skips-part.py")
	for _, tc := range []struct {
		name    string
		impl    func(t *testing.T) string
		missing string
		long    bool
	}{
		{"kit", func(t *testing.T) string { return pythonKernel(t, "-m polyloop_example") }, "", false},
		{"kit skips the network", func(t *testing.T) string { return pythonKernel(t, skips+" network") }, "its network not isolated", false},
		{"kit skips /proc", func(t *testing.T) string { return pythonKernel(t, skips+" proc") }, "its proc not isolated", true},
		{"kit maps shared memory", func(t *testing.T) string { return pythonKernel(t, skips+" memory") }, "its ipc not isolated", true},
		{"C", func(t *testing.T) string { return cForkServer(t) + " " + exe + " serve-reference" }, "", false},
		{"C skips the network", func(t *testing.T) string {
			return "FORKSERVER_SKIP=network " + cForkServer(t) + " " + exe + " serve-reference"
		}, "its network not isolated", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.long {
				requireLong(t, "one skipped part is the fast tier's slice")
			}
			t.Parallel()
			row, errs := resumeOnMachine(t, tc.impl(t))
			switch {
			case tc.missing == "" && (row.ForkedResumes != 1 || strings.Contains(errs, "not seen on a new machine")):
				t.Errorf("%d forked resumes, want the one seen on its machine:\n%s", row.ForkedResumes, errs)
			case tc.missing != "" && row.ForkedResumes != 0:
				t.Errorf("%d forked resumes counted; the child left a part out and must be started from --impl", row.ForkedResumes)
			case tc.missing != "" && !strings.Contains(errs, tc.missing):
				t.Errorf("the log does not say %q:\n%s", tc.missing, errs)
			}
		})
	}
}

// resumeOnMachine runs resume.safe-replayed against impl and returns its
// report row, which must pass on observed evidence, and the log.
func resumeOnMachine(t *testing.T, impl string) (machineRow, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.json")
	code, stdout, errs := run(t, "run", "--impl", impl, "--run", "resume.safe-replayed", "--timeout", "30s", "--handshake-timeout", "60s", "--format", "json", "--out", out)
	data, _ := os.ReadFile(out)
	var rep struct {
		Rows []machineRow `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &rep); err != nil || len(rep.Rows) != 1 {
		t.Fatalf("exit %d, report %v:\n%s\n%s\n%s", code, err, data, stdout, errs)
	}
	row := rep.Rows[0]
	if code != ExitOK || row.Verdict != "pass" || row.Evidence != "observed" {
		t.Errorf("exit %d, %s on %s evidence; want a pass, observed:\n%s\n%s", code, row.Verdict, row.Evidence, stdout, errs)
	}
	return row, errs
}

// cForkServer builds testdata/cfork/forkserver.c and returns its path; it
// skips where there is no C compiler.
func cForkServer(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) for testdata/cfork/forkserver.c")
	}
	bin := filepath.Join(t.TempDir(), "forkserver")
	if out, err := exec.Command(cc, "-O2", "-Wall", "-Werror", "-o", bin, filepath.Join("testdata", "cfork", "forkserver.c")).CombinedOutput(); err != nil {
		t.Fatalf("cc forkserver.c: %v\n%s", err, out)
	}
	return bin
}

// TestForkServer_exploreOnMachines: under explore, every crash point's
// resume of the native fork server is forked onto its machine and seen
// so, and the report's row says how many.
func TestForkServer_exploreOnMachines(t *testing.T) {
	t.Parallel()
	forksMachines(t)
	exe := selfImpl(t)
	out := filepath.Join(t.TempDir(), "report.json")
	code, stdout, errs := run(t, "explore", "--impl", cForkServer(t)+" "+exe+" serve-reference", "--run", "resume.safe-replayed", "--handshake-timeout", "60s", "--format", "json", "--out", out)
	data, _ := os.ReadFile(out)
	var rep struct {
		Rows []struct {
			machineRow
			CrashPoints int `json:"crash_points"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &rep); err != nil || len(rep.Rows) != 1 || code != ExitOK {
		t.Fatalf("exit %d, report %v:\n%s\n%s\n%s", code, err, data, stdout, errs)
	}
	row := rep.Rows[0]
	if row.CrashPoints == 0 || row.ForkedResumes != row.CrashPoints {
		t.Errorf("%d resumes forked onto machines for %d crash points; want one for each:\n%s", row.ForkedResumes, row.CrashPoints, errs)
	}
}
