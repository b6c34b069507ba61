//go:build !linux

package isolate

import (
	"errors"
	"time"
)

// ReadMachine: no namespaces to read here.
func ReadMachine(pid int) (*Machine, error) {
	return nil, errors.New("no namespaces on this system")
}

// Gone cannot see a namespace here: nothing is seen gone.
func (m *Machine) Gone(limit time.Duration) bool { return false }

// HostPidOf is pid: there are no PID namespaces here.
func HostPidOf(server, pid int) (int, error) { return pid, nil }

// SharedNear: no memory maps to read here.
func SharedNear(server, child int) (*Machine, error) {
	return nil, errors.New("no memory maps on this system")
}
