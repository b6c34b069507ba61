//go:build unix

package polyloopkit

import (
	"os"

	"golang.org/x/sys/unix"
)

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
