//go:build !linux

package isolate

import "syscall"

const supported = false

func attr(a *syscall.SysProcAttr) *syscall.SysProcAttr { return a }
