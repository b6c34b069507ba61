"""A kernel that keeps its journal where a crash does not reach, and
resumes from that copy when it finds one: the Python example with its
journal patched, written from the public docs (issue 44). After a real
reboot the copy is gone and the resume starts from nothing.

    PYTHONPATH=adapters/python:examples/python python3 isolation_liar.py MODE

shm       a copy of the journal in /dev/shm, keyed by the spec
daemon    a copy held by a setsid daemon on an abstract unix socket, which
          survives the kill of the process group
tmpdaemon the same daemon on a unix socket under /tmp, left by a child of
          the fork server, which outlives the child (issue 50)
cwd       a copy in the working directory's .cache (issue 50)
home      a copy in $HOME/.cache (issue 50)
vartmp    a copy in /var/tmp (issue 50)
keyring   a copy in the user's kernel keyring (add_key through ctypes),
          which belongs to the uid, not to a mount (issue 50)
procroot  a copy in this process's /dev/shm, looked for by the resume in
          every process's /proc/<pid>/root/dev/shm (issue 50): the fork
          server's machine outlives its killed child

Modes of issue 50 run the same on a machine without isolation: each
passes there, as it did before the runner started every process on a new
machine.
"""
import ctypes
import glob
import hashlib
import json
import os
import platform
import socket
import subprocess
import sys
import time
import zlib

from polyloop_conform import CAPABILITIES, PROTOCOL_OPTIONS, serve
from polyloop_example import adapter, kernel
from polyloop_example.tools import ToolEnvironmentError

MODE = sys.argv[1]
TAG = os.environ.get("LIAR_TAG", "")
CURRENT = {"key": ""}  # the spec of the run this process holds
TAGGED = hashlib.sha1(TAG.encode()).hexdigest()[:12] + "-"
SOCKET = "\0polyloop-isolation-liar-" + hashlib.sha1(TAG.encode()).hexdigest()[:12]
if MODE == "tmpdaemon":
    SOCKET = "/tmp/polyloop-isolation-liar-" + hashlib.sha1(TAG.encode()).hexdigest()[:12] + ".sock"
FILES = {
    "shm": "/dev/shm",
    "cwd": ".cache",
    "home": os.path.join(os.path.expanduser("~"), ".cache"),
    "vartmp": "/var/tmp",
    "procroot": "/dev/shm",
}

# The daemon: a dict of journals behind a unix socket (@: abstract), gone after
# 30 s without a request.
DAEMON = r"""
import os, socket, sys
addr = sys.argv[1]
if addr.startswith("@"):
    addr = "\0" + addr[1:]  # abstract
elif os.path.exists(addr):
    try:
        socket.socket(socket.AF_UNIX).connect(addr)
        sys.exit(0)  # a daemon serves it already
    except OSError:
        os.remove(addr)  # a dead daemon's
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.bind(addr)
except OSError:
    sys.exit(0)
s.listen(16)
s.settimeout(30)
kept = {}
while True:
    try:
        c, _ = s.accept()
    except socket.timeout:
        break
    data = b""
    while True:
        b = c.recv(65536)
        if not b:
            break
        data += b
    if data.count(b"\n") < 2:
        c.close()  # a probe: is a daemon serving?
        continue
    verb, key, body = data.split(b"\n", 2)
    if verb == b"PUT":
        kept[key] = body
    elif verb == b"DEL":
        kept.pop(key, None)
    else:
        c.sendall(kept.get(key, b"\0"))
    c.close()
"""


def _key(dirpath):
    return hashlib.sha1((TAG + CURRENT["key"] + os.path.basename(dirpath)).encode()).hexdigest()


def _ask(verb, key, body=b""):
    for _ in range(50):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(SOCKET)
        except OSError:
            s.close()
            if verb == "GET":
                return None  # no daemon: nothing kept
            arg = "@" + SOCKET[1:] if SOCKET.startswith("\0") else SOCKET
            subprocess.Popen([sys.executable, "-c", DAEMON, arg], start_new_session=True,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.05)
            continue
        s.sendall(verb.encode() + b"\n" + key.encode() + b"\n" + body)
        s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
        s.close()
        return None if out == b"\0" else out
    return None


# The kernel keyring, through the system calls (no keyutils needed).
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long
ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}.get(platform.machine(), (248, 250))
USER_KEYRING, KEYCTL_SEARCH, KEYCTL_READ, KEYCTL_INVALIDATE = -4, 10, 11, 21


def _key_id(name):
    kid = LIBC.syscall(KEYCTL, KEYCTL_SEARCH, USER_KEYRING, b"user", name.encode(), 0)
    return None if kid < 0 else kid


class Store:
    def _path(self, key):
        # Named for the tag too, so that a test can tell its own copies.
        return os.path.join(FILES[MODE], "polyloop-isolation-liar-" + TAGGED + key)

    def load(self, key):
        if MODE in FILES:
            paths = [self._path(key)]
            if MODE == "procroot":
                paths = glob.glob("/proc/[0-9]*/root/dev/shm/polyloop-isolation-liar-" + TAGGED + key)
            for path in paths:
                try:
                    with open(path, "rb") as f:
                        return f.read()
                except OSError:
                    pass
            return None
        if MODE == "keyring":
            kid = _key_id("polyloop-isolation-liar-" + key)
            if kid is None:
                return None
            buf = ctypes.create_string_buffer(65536)
            n = LIBC.syscall(KEYCTL, KEYCTL_READ, kid, buf, len(buf))
            return None if n < 0 else zlib.decompress(buf.raw[:n])
        return _ask("GET", key)

    def save(self, key, data):
        if MODE in FILES:
            os.makedirs(FILES[MODE], exist_ok=True)
            with open(self._path(key), "wb") as f:
                f.write(data)
        elif MODE == "keyring":
            packed = zlib.compress(data)
            LIBC.syscall(ADD_KEY, b"user", ("polyloop-isolation-liar-" + key).encode(), packed, len(packed), USER_KEYRING)
        else:
            _ask("PUT", key, data)

    def drop(self, key):
        if MODE in FILES:
            try:
                os.remove(self._path(key))
            except FileNotFoundError:
                pass
        elif MODE == "keyring":
            kid = _key_id("polyloop-isolation-liar-" + key)
            if kid is not None:
                LIBC.syscall(KEYCTL, KEYCTL_INVALIDATE, kid)
        else:
            _ask("DEL", key)


STORE = Store()
Base = kernel.Journal


class Kept(Base):
    """A journal whose copy outside journal_dir is the one resumed from;
    a cut the runner made in journal_dir is mirrored (stat)."""

    def __init__(self, directory, point=None, fault=None):
        async def reported(when, seq, record, step):
            if when == "after":
                with open(self.path, "rb") as f:
                    STORE.save(_key(os.path.dirname(self.path)), f.read())
            if point:
                await point(when, seq, record, step)

        super().__init__(directory, reported, fault)

    def read(self):
        data = STORE.load(_key(os.path.dirname(self.path)))
        if data is None:
            return [], False  # journal_dir is never read
        size = os.path.getsize(self.path) if os.path.exists(self.path) else 0
        data = data[:size]
        real, self.path = self.path, self.path + ".kept-view"
        with open(self.path, "wb") as f:
            f.write(data)
        try:
            return super().read()
        finally:
            os.replace(self.path, real)
            self.path = real


adapter.Journal = kernel.Journal = Kept


async def run_scenario(spec, seams):
    CURRENT["key"] = json.dumps({k: v for k, v in spec.items() if k != "scenario"}, sort_keys=True)
    if not seams.resume:
        for phase in ["", "0", "1", "2", "3"]:
            STORE.drop(_key(phase))  # a new run: nothing kept yet
    return await adapter.run_scenario(spec, seams)


serve(run_scenario, name="polyloop-isolation-liar", version="0.1.0", spec_version="polyloop-conform docs/design",
      capabilities=CAPABILITIES + PROTOCOL_OPTIONS, environment_error=ToolEnvironmentError)
