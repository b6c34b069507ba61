package isolate

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel sends a FUSE file system no syncfs(2) and no sync(2) (only
// virtiofs is told), so the runner's recorder cannot see them reach its
// mount. The machine's init asks instead: a seccomp filter stops each
// syncfs and sync of every process on the machine (filters pass to every
// child, across exec), and the runner, holding the filter's listener, is
// told of the call while its caller waits, records it, and lets it go on
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE). The process sees no tracer: the
// filter sits in /proc/<pid>/status as "Seccomp: 2", as any sandbox's does.

// seccompData is the kernel's struct seccomp_data.
type seccompData struct {
	nr   int32
	arch uint32
	ip   uint64
	args [6]uint64
}

// seccompNotif is the kernel's struct seccomp_notif (80 bytes).
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	data  seccompData
}

// seccompResp is the kernel's struct seccomp_notif_resp (24 bytes).
type seccompResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// auditArch is the AUDIT_ARCH of the runner's own architecture, the one
// whose system call numbers unix.SYS_SYNC and unix.SYS_SYNCFS are.
func auditArch() (uint32, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, true
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, true
	case "riscv64":
		return unix.AUDIT_ARCH_RISCV64, true
	case "ppc64le":
		return unix.AUDIT_ARCH_PPC64LE, true
	case "s390x":
		return unix.AUDIT_ARCH_S390X, true
	}
	return 0, false
}

// syncFilter is the BPF program: on the runner's architecture, syncfs and
// sync go to the listener; every other call, and every call of another
// architecture's numbering (a 32-bit call on a 64-bit kernel, x32), is
// allowed untouched. A call the filter lets pass unseen is a sync the
// disk model never credits: no lie gains by it.
func syncFilter(arch uint32) []unix.SockFilter {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	return []unix.SockFilter{
		{Code: ld, K: 4}, // seccomp_data.arch
		{Code: jeq, K: arch, Jt: 0, Jf: 3},
		{Code: ld, K: 0}, // seccomp_data.nr
		{Code: jeq, K: unix.SYS_SYNCFS, Jt: 2, Jf: 0},
		{Code: jeq, K: unix.SYS_SYNC, Jt: 1, Jf: 0},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: unix.SECCOMP_RET_USER_NOTIF},
	}
}

// listenSyncs installs the filter on the calling thread (the one that
// execs the implementation, locked to it) and returns its listener, a
// close-on-exec descriptor. The init holds CAP_SYS_ADMIN in its user
// namespace (or the runner's privileges without one), which the kernel
// accepts in place of no_new_privs; only where it refuses (EACCES) is
// no_new_privs set, and the returned note says so.
func listenSyncs() (fd int, note string, err error) {
	arch, ok := auditArch()
	if !ok {
		return -1, "", fmt.Errorf("no system call numbers for %s", runtime.GOARCH)
	}
	runtime.LockOSThread() // never unlocked: this thread execs
	filter := syncFilter(arch)
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	install := func() (int, error) {
		r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&prog)))
		if errno != 0 {
			return -1, errno
		}
		return int(r), nil
	}
	fd, err = install()
	if errors.Is(err, unix.EACCES) {
		if perr := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); perr != nil {
			return -1, "", fmt.Errorf("seccomp: %w; no_new_privs: %w", err, perr)
		}
		note = "no_new_privs set: the kernel refused the filter without it"
		fd, err = install()
	}
	if err != nil {
		return -1, "", fmt.Errorf("seccomp filter with a listener: %w", err)
	}
	return fd, note, nil
}

// serveSyncs answers the listener until every process the filter covers
// is gone (POLLHUP): each notification is resolved while its caller
// waits (the caller's PID namespace; for syncfs, the device of the file
// system its descriptor names, read through /proc/<tid>/fd), handed to
// sink if the notification is still live after the reads
// (SECCOMP_IOCTL_NOTIF_ID_VALID: the descriptor number was the caller's
// when read), and let go on. A caller interrupted while waiting restarts
// its call with a new notification; a sync recorded twice is harmless.
func serveSyncs(fd int, sink func(SyncCall)) {
	defer unix.Close(fd)
	for {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			if pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
				return
			}
			continue
		}
		var n seccompNotif // RECV wants it zeroed
		if errno := ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); errno != 0 {
			if errno == unix.EINTR || errno == unix.ENOENT {
				continue
			}
			return
		}
		call, ok := resolve(&n)
		id := n.id
		if ok && ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) == 0 {
			sink(call)
		}
		resp := seccompResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
		ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp)) // ENOENT: the caller is gone or restarts
	}
}

func ioctl(fd int, req uint, arg unsafe.Pointer) unix.Errno {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	return errno
}

// resolve reads what a notification's call names: false for a syncfs of
// a descriptor that names nothing (the call fails EBADF).
func resolve(n *seccompNotif) (SyncCall, bool) {
	proc := "/proc/" + strconv.Itoa(int(n.pid))
	ns, err := os.Readlink(proc + "/ns/pid")
	if err != nil {
		return SyncCall{}, false
	}
	call := SyncCall{Pid: int(n.pid), PidNS: ns}
	if n.data.nr == unix.SYS_SYNC {
		call.All = true
		return call, true
	}
	fd := int32(n.data.args[0])
	if fd < 0 {
		return SyncCall{}, false
	}
	var st unix.Stat_t
	if err := unix.Stat(proc+"/fd/"+strconv.Itoa(int(fd)), &st); err != nil {
		return SyncCall{}, false
	}
	call.Dev = st.Dev
	return call, true
}
