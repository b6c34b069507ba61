package cli

import (
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// interpreter is the Python the tests' kernels run on, resolved once per
// test process: its sys.executable, not a `python3` found on the PATH,
// which under pyenv is a shell script that costs seconds per start on a
// loaded machine (every Python kernel, every crash point).
var interpreter = sync.OnceValues(func() (string, error) {
	if _, err := exec.LookPath("python3"); err != nil {
		return "", err
	}
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	return strings.TrimSpace(string(out)), err
})

// python is the interpreter's path for an --impl command line; a test
// without python3 on the PATH is skipped, saying so. It runs with -S (no
// site module): the kernels here are standard library only and find the
// kit on PYTHONPATH, and a site-packages .pth (this machine has one that
// imports certifi) costs about 0.1 s of CPU per start, hundreds of starts
// per test run.
func python(t *testing.T) string {
	t.Helper()
	return pythonExe(t) + " " + noSite
}

// noSite is the interpreter flag that leaves the site module out.
const noSite = "-S"

// pythonExe is the interpreter's path alone, for exec.Command.
func pythonExe(t *testing.T) string {
	t.Helper()
	exe, err := interpreter()
	if err != nil {
		t.Skipf("these kernels are Python programs, and python3 is not usable here: %v", err)
	}
	if exe == "" || strings.ContainsAny(exe, " \t'\"") {
		t.Fatalf("python3's sys.executable %q cannot stand in a command line", exe)
	}
	return exe
}
