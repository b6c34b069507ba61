//go:build !linux

package isolate

import (
	"errors"
	"os/exec"
)

const supported = false

// Machine is never made here: there are no namespaces.
type Machine struct{}

func wrap(*exec.Cmd, string, Options) *Machine { return nil }

// Start fails: no machine is made on this OS.
func (m *Machine) Start() error { return errors.New("isolate: no namespaces on this OS") }

// Parts is empty: no machine is made on this OS.
func (m *Machine) Parts() []string { return nil }

// SyncsObserved is false: no machine is made on this OS.
func (m *Machine) SyncsObserved() bool { return false }

// ShareVolume fails: no mount propagation here.
func ShareVolume(dir string) (undo func(), err error) {
	return nil, errors.New("isolate: no shared mounts on this OS")
}
