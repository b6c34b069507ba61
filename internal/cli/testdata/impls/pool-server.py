"""The Python example kernel behind a fork server that never calls
os.fork: the way a runtime without fork(2) (the JVM, Node.js, .NET) can
claim `fork-server` (docs/implementing.md, "The fork server without
fork(2)").

    PYTHONPATH=adapters/python:examples/python python3 pool-server.py

The first process answers `hello` like the kit's fork server. On the
first `fork` (never at `hello`) it starts a pool of workers with
subprocess: each is this file with --worker, a new interpreter that does
its imports and waits on its own stdin, a private pipe, for the three
paths of a `fork`. The server hands the next worker the paths, answers
`forked` with its pid and starts a replacement, keeping $POOL_AHEAD
(default 1) workers started ahead of the requests. A worker

- leads a session and process group of its own (start_new_session), so
  the runner's SIGKILL to its group kills it and nothing else;
- never holds the server's stdout (stdout=DEVNULL): a worker that wrote
  there would corrupt the protocol stream the runner reads;
- exits when its server dies: the server holds the only write end of the
  worker's private pipe, so the worker reads EOF there, however the
  server ended, and exits without running anything;
- once it has its paths, opens them as stdin, stdout and stderr and is a
  newly started process from then on: it waits for `hello`.

A first message other than hello or fork (a `run`, under --no-fork) makes
the server an ordinary kernel process, as the kit's prelude does.

Each start is appended to $POLYLOOP_STARTS, when set, one line each
"<event> <server> [<worker pid>]", where <server> names the server
process (its pid and a random tag: under isolation every server may have
the same pid in a namespace of its own): `impl` when a process started
from --impl is up, `fork` when a server receives its first fork request,
`spawn` when it starts a worker (a runtime start, whether or not the
worker is ever used), `worker` when a worker has done its imports. A
test tells from it what the pool cost and when it started.

POOL_AT_HELLO=1 makes the mistake this file exists to show: the pool
starts at `hello`, so every process the runner starts from --impl (the
resumes, under isolation) starts workers that no fork ever uses.
POOL_MISTAKE breaks one of the worker rules above, so a test can show it
catches each: `stdout` (a worker inherits the server's stdout), `group`
(a worker stays in the server's process group), `orphan` (a worker whose
server is gone waits on instead of exiting; it sleeps a minute).
"""
import asyncio
import json
import os
import secrets
import subprocess
import sys
import time

from polyloop_conform import CAPABILITIES, PROTOCOL_OPTIONS, serve
from polyloop_conform.protocol import PROTOCOL_VERSION, serve_async

from polyloop_example.adapter import run_scenario
from polyloop_example.tools import ToolEnvironmentError

OPTIONS = dict(name="polyloop-example", version="0.1.0", spec_version="polyloop-conform docs/design",
               environment_error=ToolEnvironmentError)


def log(*fields):
    path = os.environ.get("POLYLOOP_STARTS")
    if path:
        with open(path, "a") as f:
            f.write(" ".join(map(str, fields)) + "\n")


def send(message):
    os.write(1, (json.dumps(message, separators=(",", ":")) + "\n").encode())


def read_line(fd, buf):
    """The next line of fd, read with os.read so nothing is buffered out of
    reach of the event loop that takes over; None at the end."""
    while b"\n" not in buf:
        chunk = os.read(fd, 65536)
        if not chunk:
            return None
        buf += chunk
    i = buf.index(b"\n")
    line = bytes(buf[: i + 1])
    del buf[: i + 1]
    return line


def reap():
    """Collect the workers that ended (killed by the runner, or never
    used), so none lingers as a zombie."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


class Pool:
    def __init__(self, name, ahead):
        self.name = name
        self.ahead = ahead
        self.ready = []  # started workers not yet handed a fork, oldest first

    def start(self):
        # stdout=DEVNULL: never the server's stdout, the protocol stream.
        # stdin: the private pipe, whose EOF tells the worker its server
        # is gone. stderr is the server's: a worker that cannot start says
        # why in the runner's log, which is not the protocol stream.
        # close_fds (the default) keeps every other worker's pipe out.
        mistake = os.environ.get("POOL_MISTAKE")
        # The server's own interpreter flags (-S) hold for its workers.
        flags = ["-S"] if sys.flags.no_site else []
        worker = subprocess.Popen([sys.executable, *flags, os.path.abspath(__file__), "--worker", self.name],
                                  stdin=subprocess.PIPE,
                                  stdout=None if mistake == "stdout" else subprocess.DEVNULL,
                                  start_new_session=mistake != "group")
        log("spawn", self.name, worker.pid)
        self.ready.append(worker)

    def fill(self):
        while len(self.ready) < self.ahead:
            self.start()

    def fork(self, paths):
        if not self.ready:
            self.start()  # the first fork: nothing started at hello
        worker = self.ready.pop(0)
        worker.stdin.write((json.dumps(paths) + "\n").encode())
        worker.stdin.close()
        self.fill()
        return worker.pid


def server():
    name = f"{os.getpid()}-{secrets.token_hex(4)}"
    log("impl", name)
    capabilities = [*CAPABILITIES, *PROTOCOL_OPTIONS, "fork-server"]
    pool = Pool(name, int(os.environ.get("POOL_AHEAD", "1")))
    eager = os.environ.get("POOL_AT_HELLO") == "1"
    buf = bytearray()
    forked = False
    while True:
        line = read_line(0, buf)
        if line is None:
            return  # the pool's workers read EOF and exit with this process
        reap()
        try:
            message = json.loads(line)
            kind = message["type"]
        except (ValueError, KeyError, TypeError):
            kind = None
        if kind == "hello" and message.get("protocol") == PROTOCOL_VERSION:
            send({"type": "hello", "protocol": PROTOCOL_VERSION, "name": OPTIONS["name"], "version": OPTIONS["version"],
                  "spec_version": OPTIONS["spec_version"], "capabilities": capabilities})
            if eager:
                pool.fill()
            continue
        if kind != "fork":
            # A run: this process is the implementation itself (--no-fork).
            asyncio.run(serve_async(run_scenario, capabilities=capabilities, read_ahead=line + bytes(buf), **OPTIONS))
            return
        if not forked:
            forked = True
            log("fork", name)
        try:
            pid = pool.fork([message["stdin"], message["stdout"], message["stderr"]])
        except OSError as err:
            send({"type": "error", "message": f"pool: start a worker: {err}"})
            continue
        send({"type": "forked", "pid": pid})


def worker(server):
    log("worker", server, os.getpid())
    line = read_line(0, bytearray())
    if line is None:
        if os.environ.get("POOL_MISTAKE") == "orphan":
            time.sleep(60)
        os._exit(0)  # the server is gone: run nothing
    for fd, path, mode in zip((0, 1, 2), json.loads(line), (os.O_RDONLY, os.O_WRONLY, os.O_WRONLY)):
        opened = os.open(path, mode)
        os.dup2(opened, fd)
        os.close(opened)
    serve(run_scenario, fork_server=False, capabilities=CAPABILITIES + PROTOCOL_OPTIONS, **OPTIONS)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2])
    else:
        server()
