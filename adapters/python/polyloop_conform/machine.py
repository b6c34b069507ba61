"""A forked child's new machine (docs/protocol.md, "Fork server").

When the runner's ``fork`` carries ``machine``, the child it asks for runs
on a machine of its own, as a process the runner starts from ``--impl``
does: new PID, mount, network, IPC, UTS and user namespaces, an overlay
over the root with its writes on a fresh tmpfs, a fresh ``/proc``, a fresh
tmpfs on ``/dev/shm``, ``lo`` up, a new session keyring, and the run's
``journal_dir`` bound through at its own path: the one thing carried from
process to process.

Python 3.11 has no ``os.unshare`` and no ``pivot_root``: both are called
through ``ctypes``. Each part that the kernel refuses is left out and said
on stderr; the runner checks the result from outside and starts the
resume from ``--impl`` when it does not see a new machine.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import platform
import socket
import struct
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2

#: Syscall numbers the C library may not wrap, by machine.
_SYSCALLS = {
    "x86_64": {"pivot_root": 155, "keyctl": 250},
    "aarch64": {"pivot_root": 41, "keyctl": 219},
    "riscv64": {"pivot_root": 41, "keyctl": 219},
}
KEYCTL_JOIN_SESSION_KEYRING = 1

#: The scratch tmpfs: the overlay's writes, discarded with the machine.
SCRATCH = "/dev/shm"

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    """unshare(2)."""
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def mount(source: str, target: str, fstype: str, flags: int, data: str = "") -> None:
    """mount(2)."""
    _check(_libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None,
                       ctypes.c_ulong(flags), data.encode() if data else None), f"mount {fstype or source} on {target}")


def _syscall(name: str, *args: object) -> int:
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is None:
        raise OSError(38, f"{name}: no syscall number known for {platform.machine()}")
    return int(_libc.syscall(ctypes.c_long(numbers[name]), *args))


def pivot_root(new_root: str) -> None:
    """Make new_root the root, and detach the old root from under it."""
    os.chdir(new_root)
    _check(_syscall("pivot_root", b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", ctypes.c_int(MNT_DETACH)), "detach the old root")
    os.chdir("/")


def _warn(part: str, err: OSError) -> None:
    print(f"polyloop_conform machine: {part} left out: {err}", file=sys.stderr)


def _mounts() -> list[tuple[str, str]]:
    """Mount points under / and their file system types, parents first."""
    out = []
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            point = fields[4].replace("\\040", " ")
            out.append((point, fields[sep + 1]))
    return out


def _skip(point: str) -> bool:
    """Mounts the machine makes afresh or binds whole."""
    return point == "/" or any(point == p or point.startswith(p + "/") for p in ("/proc", "/dev", "/sys"))


def enter_pid_namespace() -> int:
    """In the forked child: new mount, PID, network, IPC and UTS
    namespaces, owned by the server's user namespace (it needs its
    privileges for the mounts); then fork the process that becomes PID 1
    of the new PID namespace. Returns fork's answer."""
    unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    return os.fork()


def build(journal_dir: str, mask: list[str] | None = None) -> None:
    """In PID 1 of the new namespaces: the files, the network, the user
    namespace and the keyring of a new machine, each part that fails
    left out (said on stderr)."""
    cwd = os.getcwd()
    uid, gid = os.geteuid(), os.getegid()
    try:
        _files(journal_dir, cwd, mask or [])
    except OSError as err:
        _warn("the overlay root", err)
    try:
        _loopback_up()
    except OSError as err:
        _warn("lo", err)
    try:
        socket.sethostname("polyloop-machine")
    except OSError as err:
        _warn("the host name", err)
    try:
        _new_user(uid, gid)
    except OSError as err:
        _warn("the user namespace", err)
    try:
        _check(_syscall("keyctl", ctypes.c_int(KEYCTL_JOIN_SESSION_KEYRING), None), "keyctl")
    except OSError as err:
        _warn("the session keyring", err)
    try:
        os.chdir(cwd)
    except OSError:
        os.chdir("/")


def _files(journal_dir: str, cwd: str, mask: list[str]) -> None:
    """The overlay root; the other mounts overlaid where a process writes
    (the working directory, $HOME, /tmp, /var/tmp) and bound read-only
    elsewhere (an overlay costs a mount of its own); /dev with a fresh
    /dev/shm, /sys read-only, a fresh /proc, each directory of mask
    hidden behind an empty tmpfs, the journal bound through; then
    pivot_root into it."""
    writes = [cwd, os.environ.get("HOME", "/"), "/tmp", "/var/tmp"]
    mounts = _mounts()
    mount("", "/", "", MS_REC | MS_PRIVATE)
    mount("tmpfs", SCRATCH, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700")
    root = _overlay("/", "root")
    bound: list[str] = []
    for i, (point, fstype) in enumerate(mounts):
        if (_skip(point) or _under(point, [SCRATCH]) or fstype == "proc" or _under(point, bound)
                or not os.path.isdir(point) or not os.path.isdir(root + point)):
            continue
        if any(_under(w, [point]) for w in writes):
            try:
                mount(_overlay(point, f"m{i}"), root + point, "", MS_BIND | MS_REC)
                continue
            except OSError:
                pass
        mount(point, root + point, "", MS_BIND | MS_REC)
        mount("", root + point, "", MS_BIND | MS_REMOUNT | MS_RDONLY | MS_REC)
        bound.append(point)
    mount("/dev", root + "/dev", "", MS_BIND | MS_REC)
    mount("tmpfs", root + "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    try:
        mount("/sys", root + "/sys", "", MS_BIND | MS_REC)
        mount("", root + "/sys", "", MS_BIND | MS_REMOUNT | MS_RDONLY)
    except OSError as err:
        _warn("/sys", err)
    mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV)
    for hidden in mask:
        os.makedirs(root + hidden, exist_ok=True)
        mount("tmpfs", root + hidden, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    if journal_dir:
        os.makedirs(root + journal_dir, exist_ok=True)
        mount(journal_dir, root + journal_dir, "", MS_BIND | MS_REC)
    os.makedirs(root + cwd, exist_ok=True)
    pivot_root(root)


def _under(path: str, points: list[str]) -> bool:
    """Whether path is one of points or below one."""
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in points)


def _overlay(lower: str, name: str) -> str:
    """An overlay of lower with its writes on the scratch tmpfs; its path."""
    upper, work, merged = (os.path.join(SCRATCH, name, d) for d in ("upper", "work", "merged"))
    for d in (upper, work, merged):
        os.makedirs(d)
    mount("overlay", merged, "overlay", 0, f"lowerdir={lower},upperdir={upper},workdir={work}")
    return merged


def _loopback_up() -> None:
    SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s, SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def _new_user(uid: int, gid: int) -> None:
    """A new user namespace, root in it mapped to the server's ids: its
    user keyring is new, and it holds no privilege over the machine's
    other namespaces, which the server's user namespace owns."""
    unshare(CLONE_NEWUSER)
    with open("/proc/self/setgroups", "w", encoding="ascii") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w", encoding="ascii") as f:
        f.write(f"0 {uid} 1")
    with open("/proc/self/gid_map", "w", encoding="ascii") as f:
        f.write(f"0 {gid} 1")
