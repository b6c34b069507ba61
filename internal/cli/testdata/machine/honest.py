"""Honest kernels whose runtime's start needs what a machine gives (issue
50): the Python example, started after one of these, written from the
public docs. The runner must let each start and pass.

    PYTHONPATH=adapters/python:examples/python python3 honest.py MODE

loopback  the kernel's parts talk over 127.0.0.1 (a sidecar): it binds a
          listener there and talks to it before its hello, and exits 2
          when it cannot, as an unreachable network makes it
pidfile   a stand-in for the JVM's hsperfdata: /tmp/hsperfdata_<tag>/<pid>,
          locked for the process's life and left behind when it is killed;
          a file another live process holds locked makes it warn on stdout,
          as the JVM does, which breaks the protocol
"""
import fcntl
import os
import socket
import sys

from polyloop_conform import CAPABILITIES, PROTOCOL_OPTIONS, serve
from polyloop_example import adapter
from polyloop_example.tools import ToolEnvironmentError

MODE = sys.argv[1]
TAG = os.environ.get("LIAR_TAG", "")


def loopback():
    try:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        client = socket.create_connection(server.getsockname(), timeout=5)
        peer, _ = server.accept()
        client.sendall(b"ping")
        if peer.recv(4) != b"ping":
            raise OSError("the sidecar did not answer")
        for s in (client, peer, server):
            s.close()
    except OSError as e:
        print(f"loopback kernel: the sidecar is unreachable: {e}", file=sys.stderr)
        sys.exit(2)


HELD = []  # the locked file, open for the process's life


def pidfile():
    directory = "/tmp/hsperfdata_" + TAG
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, str(os.getpid()))
    f = open(path, "a+")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        # The JVM's words, on stdout.
        print(f"[0.001s][warning][perf,memops] Cannot use file {path} because it is locked by another process (errno = {e.errno})", flush=True)
    HELD.append(f)


{"loopback": loopback, "pidfile": pidfile}[MODE]()
# The JVM forks no children: the stand-in offers no fork server, so that
# every process of it is one the runner started.
serve(adapter.run_scenario, fork_server=MODE != "pidfile", name="polyloop-honest-" + MODE, version="0.1.0",
      spec_version="polyloop-conform docs/design", capabilities=CAPABILITIES + PROTOCOL_OPTIONS,
      environment_error=ToolEnvironmentError)
