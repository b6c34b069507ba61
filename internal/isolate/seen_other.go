//go:build !linux

package isolate

import (
	"errors"
	"time"
)

// ReadView: no namespaces to read here.
func ReadView(pid int) (*View, error) {
	return nil, errors.New("no namespaces on this system")
}

// Gone cannot see a namespace here: nothing is seen gone.
func (m *View) Gone(limit time.Duration) bool { return false }

// HostPidOf is pid: there are no PID namespaces here.
func HostPidOf(server, pid int) (int, error) { return pid, nil }

// SharedNear: no memory maps to read here.
func SharedNear(server, child int) (*View, error) {
	return nil, errors.New("no memory maps on this system")
}
