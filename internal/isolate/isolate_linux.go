package isolate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

const supported = true

// Machine is a process started on a new machine (Wrap): Start starts it,
// Parts says what the init built.
type Machine struct {
	cmd   *exec.Cmd
	parts []string
	// syncs is Options.Syncs; observed is set once the init handed over
	// its filter's listener, which a goroutine then serves.
	syncs    func(SyncCall)
	observed bool
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
	if o.Syncs != nil {
		env = append(env, syncsEnv+"=1")
	}
	cmd.SysProcAttr = a
	cmd.Env = env
	cmd.Path = self
	return &Machine{cmd: cmd, syncs: o.Syncs}
}

// Start starts the wrapped command and reads the parts its init built,
// and the listener of its seccomp filter where Options.Syncs asked for
// one. It returns the start's error as is (EPERM: the kernel refused the
// namespaces).
func (m *Machine) Start() error {
	// A socket, not a pipe: the listener crosses it as SCM_RIGHTS.
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	theirs := os.NewFile(uintptr(fds[1]), "status")
	m.cmd.ExtraFiles = append(m.cmd.ExtraFiles, theirs)
	err = m.cmd.Start()
	theirs.Close()
	if err != nil {
		unix.Close(fds[0])
		return err
	}
	// The init sends one message and closes its end before it execs the
	// implementation, or dies: either ends this read.
	line, listener := readStatus(fds[0])
	unix.Close(fds[0])
	m.parts = strings.Fields(line)
	if listener >= 0 {
		if m.syncs == nil {
			unix.Close(listener)
		} else {
			m.observed = true
			go serveSyncs(listener, m.syncs)
		}
	}
	return nil
}

// readStatus reads the init's one message: the parts line, and the
// descriptor it carries, or -1.
func readStatus(fd int) (string, int) {
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return "", -1
		}
		listener := -1
		msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
		for i := range msgs {
			got, err := unix.ParseUnixRights(&msgs[i])
			for _, f := range got {
				if err == nil && listener < 0 {
					listener = f
				} else {
					unix.Close(f)
				}
			}
		}
		return string(buf[:n]), listener
	}
}

// SyncsObserved reports whether the runner hears of the machine's syncfs
// and sync calls (Options.Syncs): false where the init could not install
// its filter (it says why on its stderr).
func (m *Machine) SyncsObserved() bool { return m.observed }

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
	var rights []byte
	listener := -1
	if os.Getenv(syncsEnv) == "1" && status > 2 {
		fd, note, err := listenSyncs()
		switch {
		case err != nil:
			fmt.Fprintf(os.Stderr, "polyloop-conform isolation: syncfs and sync are not observed on this machine (%v)\n", err)
		default:
			if note != "" {
				fmt.Fprintf(os.Stderr, "polyloop-conform isolation: %s\n", note)
			}
			listener, rights = fd, unix.UnixRights(fd)
		}
	}
	if status > 2 {
		unix.Sendmsg(status, []byte(strings.Join(parts, " ")+"\n"), rights, nil, 0)
		syscall.Close(status)
	}
	if listener >= 0 {
		unix.Close(listener) // the runner holds it now
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case execEnv, carryEnv, statusEnv, levelEnv, syncsEnv:
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
