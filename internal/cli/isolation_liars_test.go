package cli

import (
	"crypto/sha1"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/isolate"
)

// isolationLiar is the command line of testdata/liars/isolation_liar.py in
// mode, with a tag of its own so that tests running at once keep apart.
func isolationLiar(t *testing.T, mode string) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("isolation needs Linux namespaces")
	}
	return "LIAR_TAG=" + liarTag(t.Name()) + " " + pythonKernel(t, filepath.Join("testdata", "liars", "isolation_liar.py")+" "+mode)
}

// liarTag is the LIAR_TAG of the test named name.
func liarTag(name string) string { return strings.NewReplacer("/", "-", " ", "-").Replace(name) }

// TestIsolation_liars: kernels that keep a copy of their journal where a
// process-group kill does not reach and resume from it: /dev/shm, a setsid
// daemon on an abstract unix socket (issue 44); the working directory's
// .cache, $HOME/.cache, /var/tmp, the user's kernel keyring, a daemon a
// fork server's child left on a unix socket under /tmp, another process's
// /dev/shm through /proc/<pid>/root (issue 50). They passed run and
// explore before each process was started on a new machine; now each
// resumed process finds no copy, as on another machine that mounts the
// same journal, and redoes completed work, which the report says with
// 0002.D3. Nothing they wrote is left on the runner's machine.
func TestIsolation_liars(t *testing.T) {
	t.Parallel()
	home, _ := os.UserHomeDir()
	modes := []string{"shm", "daemon", "cwd", "home", "vartmp", "keyring", "tmpdaemon", "procroot"}
	t.Cleanup(func() {
		// Where a machine that does not isolate would have let them write:
		// the copies of this test's liars (named for their tags).
		for _, mode := range modes {
			for _, cmd := range []string{"run", "explore"} {
				sum := sha1.Sum([]byte(liarTag(t.Name() + "/" + mode + "/" + cmd)))
				for _, dir := range []string{"/dev/shm", ".cache", home + "/.cache", "/var/tmp", "/tmp"} {
					left, _ := filepath.Glob(filepath.Join(dir, "polyloop-isolation-liar-"+hex.EncodeToString(sum[:])[:12]+"*"))
					for _, f := range left {
						os.Remove(f)
						t.Errorf("%s, a liar's copy, was left on the runner's machine", f)
					}
				}
			}
		}
	})
	for _, mode := range modes {
		for _, cmd := range []string{"run", "explore"} {
			t.Run(mode+"/"+cmd, func(t *testing.T) {
				if cmd == "explore" {
					// The same namespaces as run, which pins the catch;
					// every exploration in go test runs isolated too.
					requireLong(t, "explores a Python liar at every point")
				}
				t.Parallel()
				code, out, errs := run(t, cmd, "--impl", isolationLiar(t, mode), "--run", "resume.crash-before-end", "--timeout", "30s", "--handshake-timeout", "60s")
				if code != ExitFail {
					t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitFail, out, errs)
				}
				if !strings.Contains(out, "0 passed, 1 failed") || !strings.Contains(out, "0002.D3") {
					t.Errorf("the report does not fail resume.crash-before-end on 0002.D3:\n%s", out)
				}
				if strings.Contains(out, "not isolated") || strings.Contains(out, "without isolation") {
					t.Errorf("the report says a process was not isolated on a machine that isolates:\n%s", out)
				}
			})
		}
	}
}

// TestIsolation_honest: an honest kernel resumes from journal_dir, which
// isolation leaves shared (the disk survives a reboot): the Python example
// passes every resume scenario with each process in namespaces of its own.
func TestIsolation_honest(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("isolation needs Linux namespaces")
	}
	impl := pythonKernel(t, "-m polyloop_example")
	// One SAFE replay and one resume of a second phase; .ci/run's Python
	// step runs the whole suite, this family included, isolated as here.
	sel := "resume.safe-replayed,resume.crash-in-second-phase"
	code, out, errs := run(t, "run", "--impl", impl, "--run", sel, "--timeout", "30s", "--handshake-timeout", "60s")
	if code != ExitOK || strings.Contains(out, "isolation") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}
}

// TestIsolation_unavailable: on a machine that refuses the namespaces
// (forced here with POLYLOOP_NO_ISOLATION=1), the /dev/shm liar's resume
// is not isolated and passes on its own word: --require observed (the
// default) fails it, naming the isolation; --require none lists it as
// resting on the implementation and passes. The runner is a process of
// its own, given the variable, so the test runs in parallel.
func TestIsolation_unavailable(t *testing.T) {
	t.Parallel()
	impl := isolationLiar(t, "shm")
	t.Cleanup(func() {
		// Not isolated, the liar wrote its copies into this machine's
		// /dev/shm.
		left, _ := filepath.Glob("/dev/shm/polyloop-isolation-liar-*")
		for _, f := range left {
			os.Remove(f)
		}
	})
	for _, tc := range []struct {
		require string
		code    int
		want    string
	}{
		{"observed", ExitFail, "the resume's isolation"},
		{"none", ExitOK, "1 self-reported"},
	} {
		code, out, errs := runBuiltEnv(t, []string{isolate.NoIsolationEnv + "=1"}, "run", "--require", tc.require, "--impl", impl, "--run", "resume.safe-replayed", "--timeout", "30s", "--handshake-timeout", "60s")
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("--require %s: exit %d, want %d, and a report saying %q\n%s\n%s", tc.require, code, tc.code, tc.want, out, errs)
		}
	}
}

// honestKernel is the command line of testdata/machine/honest.py in mode.
func honestKernel(t *testing.T, mode string) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("a machine needs Linux namespaces")
	}
	tag := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	return "LIAR_TAG=" + tag + " " + pythonKernel(t, filepath.Join("testdata", "machine", "honest.py")+" "+mode)
}

// TestMachine_honest: runtimes whose start needs what a machine gives
// start and pass (issue 50). A kernel whose parts talk over 127.0.0.1
// finds lo up; two processes side by side, each a small PID of its own
// machine, do not collide on a file in /tmp named for that PID (a stand-in
// for the JVM's /tmp/hsperfdata_<user>/<pid>, which warns on stdout), and
// leave nothing in the runner's /tmp.
func TestMachine_honest(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"loopback", "pidfile"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			impl := honestKernel(t, mode)
			left := "/tmp/hsperfdata_" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
			defer os.RemoveAll(left)
			sel := "resume.safe-replayed,resume.crash-in-second-phase"
			code, out, errs := run(t, "run", "-p", "2", "--impl", impl, "--run", sel, "--timeout", "30s", "--handshake-timeout", "60s")
			if code != ExitOK || strings.Contains(out, "isolation") {
				t.Errorf("exit %d, want %d, isolated\n%s\n%s", code, ExitOK, out, errs)
			}
			if _, err := os.Stat(left); err == nil {
				t.Errorf("%s, written on the implementation's machines, is left in the runner's /tmp", left)
			}
		})
	}
}
