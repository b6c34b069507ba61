package isolate

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

const supported = true

// flags are the namespaces every isolated implementation process gets.
const flags = syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC

func attr(a *syscall.SysProcAttr) *syscall.SysProcAttr {
	if a == nil {
		a = &syscall.SysProcAttr{}
	}
	a.Cloneflags |= flags
	return a
}

func init() {
	path := os.Getenv(execEnv)
	if path == "" {
		return
	}
	if err := setUp(path); err != nil {
		fmt.Fprintf(os.Stderr, "polyloop-conform isolation: %v\n", err)
		os.Exit(127)
	}
}

// setUp runs as the new namespaces' init: it makes mounts private, gives
// the process a fresh /dev/shm and TMPDIR, and execs the implementation
// (path, with the runner's arguments), which becomes PID 1 of the
// namespace, so its death takes every process in the namespace with it.
func setUp(path string) error {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := syscall.Mount("tmpfs", "/dev/shm", "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("mount a fresh tmpfs on /dev/shm: %w", err)
	}
	tmp := filepath.Join("/dev/shm", "tmp")
	if err := os.Mkdir(tmp, 0o1777); err != nil {
		return err
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, execEnv+"=") && !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "TMPDIR="+tmp)
	return syscall.Exec(path, os.Args, env)
}

// HostPid translates pid, as a process in the PID namespace of the
// process init (a pid in the runner's namespace) sees it, to the runner's
// namespace: a fork server in namespaces of its own reports its children's
// pids as it sees them, and a signal to that number here would reach
// another process. It scans /proc for a process in init's namespace whose
// innermost pid is pid.
func HostPid(init, pid int) (int, error) {
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", init))
	if err != nil {
		return 0, fmt.Errorf("the PID namespace of process %d: %w", init, err)
	}
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	want := strconv.Itoa(pid)
	for _, d := range dirs {
		if link, err := os.Readlink(d + "/ns/pid"); err != nil || link != ns {
			continue
		}
		status, err := os.ReadFile(d + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "NSpid:" && f[len(f)-1] == want {
				return strconv.Atoi(filepath.Base(d))
			}
		}
	}
	return 0, fmt.Errorf("no process %d in the PID namespace of process %d", pid, init)
}
