// Package isolate makes a crash a reboot for an implementation process
// (issue 44): on Linux with the privileges for it, each process the runner
// starts gets new PID, mount, network and IPC namespaces. Killing the
// namespace's first process kills every process in it, setsid daemons
// included; a fresh tmpfs on /dev/shm and a fresh TMPDIR hold no memory of
// a predecessor; abstract unix sockets and System V IPC are per namespace.
//
// The mounts are made by the runner's own executable, re-run as the
// namespace's init before it execs the implementation (Init, called from
// this package's init function when the marker variable is set).
package isolate

import (
	"os"
	"os/exec"
)

// NoIsolationEnv, when set to 1 in the runner's environment, forces the
// "no isolation available" path (for tests, and for machines where a
// namespace start is unwanted).
const NoIsolationEnv = "POLYLOOP_NO_ISOLATION"

// execEnv carries the implementation's path into the re-run runner that
// sets up its namespaces; its presence marks that re-run.
const execEnv = "POLYLOOP_ISOLATE_EXEC"

// Forced reports whether isolation was turned off by NoIsolationEnv.
func Forced() bool { return os.Getenv(NoIsolationEnv) == "1" }

// Wrap rewrites cmd, not yet started, to start in new namespaces through
// the runner's executable, and reports whether it did; it leaves cmd as it
// was when isolation is unavailable here (another OS, forced off, or the
// runner's executable unknown). A start that the kernel refuses (EPERM) is
// the caller's to retry with Plain.
func Wrap(cmd *exec.Cmd) bool {
	if Forced() || !supported {
		return false
	}
	self, err := os.Executable()
	if err != nil {
		return false
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(append([]string(nil), env...), execEnv+"="+cmd.Path)
	cmd.Path = self
	cmd.SysProcAttr = attr(cmd.SysProcAttr)
	return true
}
