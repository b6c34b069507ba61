//go:build !unix

package polyloopkit

import (
	"errors"
	"os"
	"syscall"
)

// poolable is false where there are no process groups to hand a worker:
// Main then offers no fork server, and every process is started from
// the runner's command line.
const poolable = false

func redirectStderr(*os.File) error {
	return errors.New("a fork worker needs a Unix stderr to replace")
}

func ownSession() *syscall.SysProcAttr { return nil }
