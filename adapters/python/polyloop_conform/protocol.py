"""The stdio protocol of polyloop-conform, implementation side.

One JSON object per line on stdin (from the runner) and stdout (to it);
docs/protocol.md in the polyloop-conform repository describes every
message. This module owns the plumbing a team would otherwise write again:
the handshake, the message loop, numbering calls and matching answers,
turning the runner's ``cancel`` into ``asyncio.CancelledError`` where the
kernel awaits, acknowledging released calls, journal points, and turning
an exception in the team's code into an ``error`` message (with the
traceback on stderr) instead of a hung runner.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, BinaryIO

from . import machine
from .messages import ChatMessage, Outcome, Spec
from .numbers import dumps

PROTOCOL_VERSION = 1
MAX_LINE_BYTES = 16 << 20

#: Every capability a complete implementation claims.
CAPABILITIES = (
    "json-actions",
    "code-actions",
    "resume",
    "cancellation",
    "context-assembly",
    "events",
    "project-executor",
)

#: Protocol options: with each, the runner plays a part of a fault itself
#: instead of taking your word for it (docs/protocol.md, "Faults the runner
#: plays"). Claim one only if your kernel does what it says:
#: ``wire-sink`` (install ``Seams.sink`` as an audit sink whenever
#: ``seams.wire_sink``), ``wire-measure`` (use ``Seams.measure`` as the
#: size measure whenever ``seams.wire_measure``), ``journal-lines`` (the
#: journal is one file in ``journal_dir``, one checksummed record per line).
PROTOCOL_OPTIONS = ("wire-sink", "wire-measure", "journal-lines")

_ANSWERS = {"model_result", "handler_result", "execute_result", "continue", "cancel", "event_result", "measure_result"}


class ProtocolError(Exception):
    """The runner broke the protocol, or went away mid-call."""


class ModelCallError(Exception):
    """The model call failed: the runner's model_result carried an error.

    By design 0003 the library does not call the model again; the run stops
    without an end and reports ``run_error {kind: "model_call"}``.
    """

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(message)
        self.type_name = type_name


class SinkFailure(Exception):
    """The runner's audit sink refused an event (``faults.sink``): raised
    from ``Seams.sink``. By 0011.D2 the loop counts it and goes on."""


class MeasureFailure(Exception):
    """The runner's size measure cannot size a block (``measure_unknown``):
    raised from ``Seams.measure``. 0010.D5 says what the run does then."""


class HandlerFailure(Exception):
    """Base of the exceptions a scripted handler raises.

    The runner names the exception's type (``ValueError``, ``KeyError``);
    the kit raises an instance of a class of exactly that name, so
    ``type(err).__name__`` and ``str(err)`` are what the scenario scripted
    (``str(KeyError("x"))`` would add quotes, a class of our own does not).
    """


_failure_classes: dict[str, type[HandlerFailure]] = {}


def handler_exception(type_name: str, message: str) -> HandlerFailure:
    """An exception whose class is named type_name, with message as text."""
    cls = _failure_classes.get(type_name)
    if cls is None:
        cls = type(type_name, (HandlerFailure,), {})
        _failure_classes[type_name] = cls
    return cls(message)


def _encode(message: Mapping[str, Any]) -> bytes:
    """One protocol line: compact JSON, UTF-8, a newline."""
    return (dumps(message) + "\n").encode("utf-8")


def _hello(name: str, version: str = "0", spec_version: str = "",
           capabilities: tuple[str, ...] | list[str] = CAPABILITIES) -> dict[str, Any]:
    """The implementation's hello, with serve's defaults."""
    return {"type": "hello", "protocol": PROTOCOL_VERSION, "name": name, "version": version,
            "spec_version": spec_version, "capabilities": list(capabilities)}


class _Connection:
    """Numbered calls to the runner and their answers."""

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self._next = 0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._early: dict[int, dict[str, Any]] = {}
        self._ended = False
        # The run's deadline (Seams.deadline), which a cancel with
        # deadline lets pass.
        self.deadline: asyncio.Timeout | None = None

    def send(self, message: Mapping[str, Any]) -> None:
        self._out.write(_encode(message))
        self._out.flush()

    async def call(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a call and wait for its answer.

        A ``cancel`` answer, or cancellation of the awaiting task, raises
        CancelledError here, after telling the runner the call was released.
        """
        self._next += 1
        call = self._next
        message["call"] = call
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        if call in self._early:
            fut.set_result(self._early.pop(call))
        elif self._ended:
            fut.set_exception(ProtocolError(f"{message['type']} {call}: the runner's input has ended"))
        else:
            self._pending[call] = fut
        self.send(message)
        try:
            answer = await fut
        except asyncio.CancelledError:
            self._pending.pop(call, None)
            self.send({"type": "released", "call": call})
            raise
        if answer.get("type") == "cancel":
            # The run is cancelled (the orchestrator's lease is gone), or its
            # deadline passed: this call is abandoned, and the kernel sees
            # the cancellation here.
            self.send({"type": "released", "call": call})
            if answer.get("deadline") and self.deadline is not None:
                # Let the run's own deadline pass now: asyncio cancels this
                # task at the next await, and the deadline's scope turns the
                # cancellation into TimeoutError where the run was awaited.
                self.deadline.reschedule(asyncio.get_running_loop().time())
                await asyncio.get_running_loop().create_future()
            raise asyncio.CancelledError(f"the runner cancelled the run during {message['type']} {call}")
        return answer

    def deliver(self, answer: dict[str, Any]) -> None:
        call = answer.get("call")
        if not isinstance(call, int):
            print(f"polyloop_conform: an answer without a call number: {answer!r:.120}", file=sys.stderr)
            return
        fut = self._pending.pop(call, None)
        if fut is None:
            # An answer before its call: a transcript replayed in one go.
            self._early[call] = answer
        elif not fut.done():
            fut.set_result(answer)

    def input_ended(self) -> None:
        self._ended = True
        for call, fut in list(self._pending.items()):
            if not fut.done():
                fut.set_exception(ProtocolError(f"call {call}: the runner's input ended before its answer"))
        self._pending.clear()


class Seams:
    """What the kit hands to the team's code for one scenario.

    The run message's fields are attributes (``spec``, ``journal_dir``,
    ``report_journal_points``, ``resume``, ``tear_tail``, ``damage``); the coroutines are
    the outside world of the scenario, scripted by the runner.
    """

    def __init__(self, conn: _Connection, message: dict[str, Any], environment_error: Callable[[str], Exception]) -> None:
        self._conn = conn
        self._environment_error = environment_error
        self.id: str = message["id"]
        self.spec: Spec = message["spec"]
        self.resume: bool = message["type"] == "resume"
        self.tear_tail: bool = bool(message.get("tear_tail"))
        # "last_checksum" or "middle": damage the journal before resuming;
        # resume must then refuse it (0002.D5). None when not asked.
        self.damage: str | None = message.get("damage")
        # In a phased scenario, the phase a resume starts from: resume its
        # journal, then run the phases after it (the earlier ones ended in
        # the process that died).
        self.resume_phase: int = int(message.get("phase") or 0)
        self.journal_dir: str | None = message.get("journal_dir")
        self.report_journal_points: bool = bool(message.get("report_journal_points"))
        # The runner plays the audit sink and the size measure (only sent to
        # an implementation that claims wire-sink and wire-measure).
        self.wire_sink: bool = bool(message.get("wire_sink"))
        self.wire_measure: bool = bool(message.get("wire_measure"))
        self._handlers = {t["name"]: bool(t.get("has_handler")) for t in self.spec["tools"]}

    async def model(self, phase: int, messages: Sequence[ChatMessage] | Sequence[Mapping[str, str]]) -> str:
        """Ask the scenario's model; ``messages`` as the model would get them."""
        answer = await self._conn.call({"type": "model_call", "phase": phase, "input": [dict(m) for m in messages]})
        if "error" in answer:
            err = answer["error"]
            raise ModelCallError(str(err.get("type", "ModelCallError")), str(err.get("message", "")))
        return str(answer["output"])

    def has_handler(self, tool: str) -> bool:
        """Whether the spec gives this tool a handler."""
        return self._handlers.get(tool, False)

    async def handler(self, phase: int, tool: str, arguments: Mapping[str, Any]) -> str:
        """Run a tool's scripted handler: return its text, or raise."""
        answer = await self._conn.call({"type": "handler_call", "phase": phase, "tool": tool, "arguments": dict(arguments)})
        if "error" in answer:
            err = answer["error"]
            raise handler_exception(err["type"], err["message"])
        if "env_error" in answer:
            raise self._environment_error(str(answer["env_error"]))
        return str(answer["output"])

    async def execute(self, phase: int, action: Mapping[str, Any]) -> Outcome:
        """Ask the scripted project executor; returns the five outcome fields
        (``env_reported_completion`` may be None: no completion signal)."""
        answer = await self._conn.call({"type": "execute_call", "phase": phase, "action": dict(action)})
        outcome: Outcome = answer["outcome"]
        return outcome

    async def sink(self, phase: int, event: Mapping[str, Any]) -> None:
        """The runner's audit sink: send it one event (as the trajectory
        records it) and raise SinkFailure if the runner fails it."""
        answer = await self._conn.call({"type": "event", "phase": phase, "event": dict(event)})
        if "error" in answer:
            raise SinkFailure(f"{answer['error']['type']}: {answer['error']['message']}")
        if "panic" in answer:
            raise SinkFailure(f"the audit sink broke: {answer['panic']}")

    async def measure(self, phase: int, block: str, text: str) -> int:
        """The runner's size measure for one block (text is empty when the
        measure is probed); raises MeasureFailure when it cannot size it."""
        answer = await self._conn.call({"type": "measure_call", "phase": phase, "block": block, "text": text})
        if "error" in answer:
            raise MeasureFailure(answer["error"]["message"])
        return int(answer["size"])

    @contextlib.asynccontextmanager
    async def deadline(self) -> AsyncIterator[None]:
        """The run's deadline, which the runner lets pass during a call
        (``faults.deadline``): run the kernel inside it and catch
        ``TimeoutError`` around it, as a caller of a real deadline would.
        Without it, a deadline reaches the kernel as a plain cancellation."""
        async with asyncio.timeout(None) as scope:
            self._conn.deadline = scope
            try:
                yield
            finally:
                self._conn.deadline = None

    def phase_journal(self, phase: int) -> str | None:
        """The directory of a phase's journal: ``journal_dir`` itself for a
        single request, ``journal_dir/<phase>`` in a phased scenario, where
        each phase is a run with a journal of its own."""
        if self.journal_dir is None:
            return None
        return os.path.join(self.journal_dir, str(phase)) if self.spec.get("phased") else self.journal_dir

    async def journal_point(self, when: str, seq: int, record: str, step: int = 0, phase: int = 0) -> None:
        """Call before and after every journal write (``phase``: whose
        journal, in a phased scenario). When the runner asked for journal
        points it may kill the process here (a crash test)."""
        if not self.report_journal_points:
            return
        point: dict[str, Any] = {"when": when, "seq": seq, "record": record}
        if step:
            point["step"] = step
        message: dict[str, Any] = {"type": "journal_point", "point": point}
        if self.spec.get("phased"):
            message["phase"] = phase
        await self._conn.call(message)


RunScenario = Callable[[Spec, Seams], Awaitable[dict[str, Any]]]


async def _run_one(conn: _Connection, message: dict[str, Any], run_scenario: RunScenario, environment_error: Callable[[str], Exception]) -> None:
    seams = Seams(conn, message, environment_error)
    try:
        trajectory = await run_scenario(seams.spec, seams)
    except asyncio.CancelledError:
        conn.send({"type": "error", "id": seams.id, "message": "the scenario's code let CancelledError escape; "
                   "catch it and return the interrupted run's trajectory"})
        return
    except Exception as err:  # the team's code broke: say so, never hang
        traceback.print_exc(file=sys.stderr)
        conn.send({"type": "error", "id": seams.id, "message": f"{type(err).__name__}: {err}"})
        return
    conn.send({"type": "result", "id": seams.id, "trajectory": trajectory})


async def serve_async(run_scenario: RunScenario, *, name: str, version: str = "0", spec_version: str = "",
                      capabilities: tuple[str, ...] | list[str] = CAPABILITIES,
                      environment_error: Callable[[str], Exception] = RuntimeError,
                      stdin: Any = None, stdout: BinaryIO | None = None, read_ahead: bytes = b"") -> None:
    """Serve the protocol until stdin ends. See serve. ``read_ahead`` is
    input already read from stdin (by serve's fork-server prelude)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES + 1)
    if read_ahead:
        reader.feed_data(read_ahead)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin or sys.stdin)
    conn = _Connection(stdout or sys.stdout.buffer)
    current: asyncio.Task[None] | None = None
    while True:
        line = await reader.readline()
        if not line:
            break
        try:
            message = json.loads(line)
            kind = message["type"]
        except (ValueError, KeyError, TypeError) as err:
            print(f"polyloop_conform: not a protocol message ({err}): {line[:120]!r}", file=sys.stderr)
            break
        if kind == "hello":
            if message.get("protocol") != PROTOCOL_VERSION:
                print(f"polyloop_conform: the runner speaks protocol {message.get('protocol')}, this kit {PROTOCOL_VERSION}", file=sys.stderr)
                break
            conn.send(_hello(name, version, spec_version, capabilities))
        elif kind in ("run", "resume"):
            if current is not None:
                await current  # the runner sends the next run only after a result
            current = asyncio.create_task(_run_one(conn, message, run_scenario, environment_error))
        elif kind in _ANSWERS:
            conn.deliver(message)
        else:
            print(f"polyloop_conform: unknown message type {kind!r} from the runner", file=sys.stderr)
            break
    conn.input_ended()
    if current is not None:
        await current


def serve(run_scenario: RunScenario, *, fork_server: bool = True, **kwargs: Any) -> None:
    """Speak the protocol on stdin/stdout until stdin ends.

    ``run_scenario(spec, seams)`` is the team's coroutine: it builds the
    kernel for one scenario from ``spec`` (docs/protocol.md, "run.spec"),
    runs it against the seams, and returns the trajectory as a dict.
    ``environment_error`` is the kernel's ToolEnvironmentError class, which
    a handler raises when the scenario scripts an environment failure.

    With ``fork_server`` (where the platform has ``os.fork``) the process
    offers the runner a fork server: until its first run it answers
    ``fork`` requests with a child forked after every import is done and
    before any event loop or run exists, so a crash exploration does not
    pay an interpreter start per process. Call ``serve`` from the top of
    your program, after your imports; a process that has started other
    threads by then does not offer the fork server.
    """
    # A process with other threads cannot be forked safely (a child gets
    # their locks but not the threads): no fork server then.
    forking = fork_server and hasattr(os, "fork") and threading.active_count() == 1
    if forking:
        kwargs["capabilities"] = [*kwargs.get("capabilities", CAPABILITIES), "fork-server"]
        read_ahead = _fork_server(kwargs)
        if read_ahead is None:
            return
        kwargs["read_ahead"] = read_ahead
    asyncio.run(serve_async(run_scenario, **kwargs))


def _read_line(buf: bytearray) -> bytes | None:
    """The next line of stdin, read with os.read so nothing is buffered
    out of reach of the event loop that takes over; None at the end."""
    while b"\n" not in buf:
        chunk = os.read(0, 65536)
        if not chunk:
            return None
        buf += chunk
    i = buf.index(b"\n")
    line = bytes(buf[: i + 1])
    del buf[: i + 1]
    return line


def _fork_server(options: dict[str, Any]) -> bytes | None:
    """Answer hello and fork requests synchronously; return the input from
    the first other message on (it is the run's, for serve_async), or
    None when stdin ends. A forked child returns here too: it rewires its
    stdin, stdout and stderr to the runner's named pipes, leads a process
    group of its own, and starts over as a newly started process."""
    buf = bytearray()
    reaping = False
    while True:
        line = _read_line(buf)
        if line is None:
            return None
        try:
            message = json.loads(line)
            kind = message["type"]
        except (ValueError, KeyError, TypeError):
            return line + bytes(buf)  # serve_async reports it
        if kind == "hello" and message.get("protocol") == PROTOCOL_VERSION:
            os.write(1, _encode(_hello(**{k: options[k] for k in ("name", "version", "spec_version", "capabilities") if k in options})))
            continue
        if kind != "fork":
            return line + bytes(buf)
        if not reaping:
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
            reaping = True
        sys.stdout.flush()
        sys.stderr.flush()
        asked = message.get("machine")
        journal_dir = asked["journal_dir"] if isinstance(asked, dict) else None
        mask = list(asked.get("mask") or []) if isinstance(asked, dict) else []
        said, say = os.pipe()  # the child says the pid of the process on its machine
        pid = os.fork()
        if pid == 0:
            os.close(said)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.setsid()
            for fd, path, mode in ((0, message["stdin"], os.O_RDONLY), (1, message["stdout"], os.O_WRONLY),
                                   (2, message["stderr"], os.O_WRONLY)):
                opened = os.open(path, mode)
                os.dup2(opened, fd)
                os.close(opened)
            if journal_dir is None or not _onto_machine(journal_dir, mask, say):
                os.write(say, str(os.getpid()).encode())
                os.close(say)
            buf.clear()
            continue
        os.close(say)
        answer = _read_all(said)
        os.close(said)
        os.write(1, _encode({"type": "forked", "pid": int(answer) if answer.isdigit() else pid}))


def _read_all(fd: int) -> str:
    out = b""
    while chunk := os.read(fd, 64):
        out += chunk
    return out.decode("ascii", "replace").strip()


def _onto_machine(journal_dir: str, mask: list[str], say: int) -> bool:
    """In a forked child: go on as PID 1 of a new machine (machine.py),
    the pid of which goes to the server on ``say``; this process waits for
    it and exits. True in the process on the machine. Where the
    namespaces are refused, False: this process goes on as the child, and
    the runner, which checks from outside, starts the resume from
    --impl."""
    try:
        inner = machine.enter_pid_namespace()
    except OSError as err:
        print(f"polyloop_conform machine: no new namespaces: {err}", file=sys.stderr)
        return False
    if inner == 0:
        os.close(say)
        os.setsid()
        machine.build(journal_dir, mask)
        return True
    os.write(say, str(inner).encode())
    os.close(say)
    # Only the process on the machine holds the runner's pipes.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.waitpid(inner, 0)
    os._exit(0)
