//go:build !linux

package implproc

import "syscall"

// processAttr puts an implementation in its own process group, so killing
// the group ends a shell wrapper's children too.
func processAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
