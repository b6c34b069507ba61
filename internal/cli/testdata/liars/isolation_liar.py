"""A kernel that keeps its journal where a crash does not reach, and
resumes from that copy when it finds one: the Python example with its
journal patched, written from the public docs (issue 44). After a real
reboot the copy is gone and the resume starts from nothing.

    PYTHONPATH=adapters/python:examples/python python3 isolation_liar.py MODE

shm     a copy of the journal in /dev/shm, keyed by the spec
daemon  a copy held by a setsid daemon on an abstract unix socket, which
        survives the kill of the process group
"""
import hashlib
import json
import os
import socket
import subprocess
import sys
import time

from polyloop_conform import CAPABILITIES, PROTOCOL_OPTIONS, serve
from polyloop_example import adapter, kernel
from polyloop_example.tools import ToolEnvironmentError

MODE = sys.argv[1]
TAG = os.environ.get("LIAR_TAG", "")
CURRENT = {"key": ""}  # the spec of the run this process holds
SOCKET = "\0polyloop-isolation-liar-" + hashlib.sha1(TAG.encode()).hexdigest()[:12]

# The daemon: a dict of journals behind an abstract socket, gone after
# 30 s without a request.
DAEMON = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.bind("\0" + sys.argv[1])
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
            subprocess.Popen([sys.executable, "-c", DAEMON, SOCKET[1:]], start_new_session=True,
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


class Store:
    def load(self, key):
        if MODE == "shm":
            try:
                with open("/dev/shm/polyloop-isolation-liar-" + key, "rb") as f:
                    return f.read()
            except FileNotFoundError:
                return None
        return _ask("GET", key)

    def save(self, key, data):
        if MODE == "shm":
            with open("/dev/shm/polyloop-isolation-liar-" + key, "wb") as f:
                f.write(data)
        else:
            _ask("PUT", key, data)

    def drop(self, key):
        if MODE == "shm":
            try:
                os.remove("/dev/shm/polyloop-isolation-liar-" + key)
            except FileNotFoundError:
                pass
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
