//go:build unix

package polyloopkit

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// poolable says whether Main can offer its worker pool here: it needs
// sessions of their own and a stderr it can replace.
const poolable = true

// redirectStderr makes f the process's file descriptor 2, so that what
// the kernel (or the runtime, on a panic) writes to stderr reaches the
// runner's pipe.
func redirectStderr(f *os.File) error {
	if err := unix.Dup2(int(f.Fd()), 2); err != nil {
		return err
	}
	os.Stderr = f
	return nil
}

// ownSession starts a worker as the leader of a session (and process
// group) of its own, so the runner's kill of its group is its alone.
func ownSession() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
