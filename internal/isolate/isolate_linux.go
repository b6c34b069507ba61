package isolate

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

const supported = true

// Machine is a process started on a new machine (Wrap): Start starts it,
// Parts says what the init built.
type Machine struct {
	cmd   *exec.Cmd
	parts []string
}

// flags are the namespaces of every machine; userFlags adds a user
// namespace, which makes the mounts possible without privileges and gives
// the machine keyrings of its own.
const (
	flags     = syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
	userFlags = flags | syscall.CLONE_NEWUSER
)

func wrap(cmd *exec.Cmd, self string, o Options) *Machine {
	carry, err := json.Marshal(o)
	if err != nil {
		return nil
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(append([]string(nil), env...), execEnv+"="+cmd.Path, carryEnv+"="+string(carry),
		statusEnv+"="+strconv.Itoa(3+len(cmd.ExtraFiles)))
	a := cmd.SysProcAttr
	if a == nil {
		a = &syscall.SysProcAttr{}
	}
	if o.NoUserNS {
		env = append(env, levelEnv+"=1")
		a.Cloneflags |= flags
	} else {
		a.Cloneflags |= userFlags
		// The runner's own ids become the machine's root: one id each,
		// no setgroups, as an unprivileged user may map.
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	cmd.SysProcAttr = a
	cmd.Env = env
	cmd.Path = self
	return &Machine{cmd: cmd}
}

// Start starts the wrapped command and reads the parts its init built.
// It returns the start's error as is (EPERM: the kernel refused the
// namespaces).
func (m *Machine) Start() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	m.cmd.ExtraFiles = append(m.cmd.ExtraFiles, w)
	err = m.cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		return err
	}
	// The init writes one line and closes its end before it execs the
	// implementation, or dies: either ends this read.
	line, _ := io.ReadAll(io.LimitReader(r, 4096))
	r.Close()
	m.parts = strings.Fields(string(line))
	return nil
}

// Parts lists the parts of the machine the init built (AllParts names
// them); none when the init died before its report.
func (m *Machine) Parts() []string { return append([]string(nil), m.parts...) }

func init() {
	path := os.Getenv(execEnv)
	if path == "" {
		return
	}
	if err := boot(path); err != nil {
		fmt.Fprintf(os.Stderr, "polyloop-conform isolation: %v\n", err)
		os.Exit(127)
	}
}

// boot runs as the new namespaces' init: it builds the machine (build,
// part by part), reports the parts on the status descriptor, and execs the
// implementation (path, with the runner's arguments), which becomes PID 1
// of the namespace, so its death takes every process in it along.
func boot(path string) error {
	var o Options
	if err := json.Unmarshal([]byte(os.Getenv(carryEnv)), &o); err != nil {
		return fmt.Errorf("the directories to carry (%s): %w", carryEnv, err)
	}
	status, _ := strconv.Atoi(os.Getenv(statusEnv))
	b := &builder{carry: o.Carry, mask: o.Mask, userns: os.Getenv(levelEnv) != "1"}
	parts, tmpdir := b.build()
	if status > 2 {
		syscall.Write(status, []byte(strings.Join(parts, " ")+"\n"))
		syscall.Close(status)
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case execEnv, carryEnv, statusEnv, levelEnv:
			continue
		case "TMPDIR":
			if tmpdir != "" {
				continue
			}
		}
		env = append(env, kv)
	}
	if tmpdir != "" {
		env = append(env, "TMPDIR="+tmpdir)
	}
	return syscall.Exec(path, os.Args, env)
}

// ShareVolume makes dir a shared mount of its own (a bind on itself), so
// that a mount the runner makes below it after a machine started (a FUSE
// journal, issue 51) reaches that machine, whose carried bind of dir is a
// slave of it. It needs the privilege to mount (root); without it, or on
// another OS, it returns an error and dir stays as it was. undo unmounts
// the bind (lazily: the machines may still hold it).
func ShareVolume(dir string) (undo func(), err error) {
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		return nil, fmt.Errorf("bind %s on itself: %w", dir, err)
	}
	if err := syscall.Mount("", dir, "", syscall.MS_SHARED, ""); err != nil {
		syscall.Unmount(dir, syscall.MNT_DETACH)
		return nil, fmt.Errorf("make %s shared: %w", dir, err)
	}
	return func() { syscall.Unmount(dir, syscall.MNT_DETACH) }, nil
}
