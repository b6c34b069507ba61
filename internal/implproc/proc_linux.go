package implproc

import "syscall"

// processAttr puts an implementation in its own process group, so killing
// the group ends a shell wrapper's children too, and asks Linux to kill the
// process (the shell running --impl) if the runner dies without cleaning
// up, e.g. under kill -9. The implementation itself then reads end of file
// on its stdin, on which it must exit.
func processAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
