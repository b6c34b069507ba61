"""The run loop: context assembly (0010), settlement (0003, 0007, 0008),
the stop judge (0004), the journal and resume (0002), audit events (0011).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import zlib
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from polyloop_conform import Number, dumps

from .actions import parse_code, parse_json
from .tools import Action, ActionOutcome, RegistryError, RegistryExecutor, ReplayPolicy, Status, ToolRegistry

BLOCK_TYPES = ("run_fragment", "injection", "goal_fragment", "model_output", "observation")
PLACEHOLDER = "{observation}"

Model = Callable[[list[dict]], Awaitable[str]]
# A measure and a sink may be plain functions or coroutines (a measure or
# an audit store across a connection: the conformance runner's wire-measure
# and wire-sink).
Measure = Callable[[str, str], "int | Awaitable[int]"]
Sink = Callable[[dict], "None | Awaitable[None]"]


def code_points(block_type: str, text: str) -> int:
    return len(text)


async def measured(measure: Measure, block_type: str, text: str) -> int:
    n = measure(block_type, text)
    return await n if inspect.isawaitable(n) else n


def view(act: Action) -> dict[str, Any]:
    """The decided action as events show it and a project executor gets it:
    kind, then code, or tool and (when the call had one) arguments."""
    v: dict[str, Any] = {"kind": act.kind}
    if act.kind == "code":
        v["code"] = act.code
    else:
        v["tool"] = act.tool
        if act.arguments is not None:
            v["arguments"] = act.arguments
    return v


@dataclass
class Definition:
    """What every request of an agent shares (0003.D1); the goal is per request."""
    run_fragment: str = ""
    observation_template: str = ""


@dataclass
class Budget:
    max_effective_steps: int
    max_total_steps: int


@dataclass
class SyntheticObservations:
    # The defaults are the ones 0007.D2.defaults records (a SHOULD).
    not_executed: str = "The action was not executed."
    env_error: str = "The environment reported an error; the action did not complete."


@dataclass
class Request:
    definition: Definition
    budget: Budget
    tools: ToolRegistry
    executor: Any  # a RegistryExecutor or an async callable(Action) -> ActionOutcome
    goal_fragment: str = ""
    synthetic: SyntheticObservations = field(default_factory=SyntheticObservations)
    injections: Mapping[str, list[str]] = field(default_factory=dict)
    language: str = "json"
    measure: Measure = code_points

    def __post_init__(self) -> None:
        b = self.budget
        if b.max_effective_steps < 1 or b.max_total_steps < 1:
            raise RegistryError("invalid_budget", f"caps must be at least 1, got {b.max_effective_steps} and {b.max_total_steps}")
        if isinstance(self.executor, RegistryExecutor) and not self.executor.registry.same_as(self.tools):
            mine, visible = set(self.executor.registry.names()), set(self.tools.names())
            raise RegistryError("registry_mismatch", "the executor dispatches other tools than the model sees", sorted(mine ^ visible))
        template = self.definition.observation_template or PLACEHOLDER
        if PLACEHOLDER not in template:
            raise RegistryError("template_without_placeholder", f"the observation template has no {PLACEHOLDER}")

    async def probe(self) -> None:
        """Ask the measure about every block type before anything runs, so
        one that cannot size a block refuses the request (0010.D5.probe).
        A part of building the request: call it before the run starts."""
        for t in BLOCK_TYPES:
            try:
                await measured(self.measure, t, "")
            except Exception as err:
                raise RegistryError("unmeasurable_block", f"the size measure cannot measure {t} blocks: {err}") from err


class JournalWriteError(Exception):
    def __init__(self, record: str, seq: int, err: OSError) -> None:
        super().__init__(f"could not journal {record} (record {seq}): {err.strerror or err}")


class JournalDamaged(Exception):
    pass


JournalPoint = Callable[[str, int, str, int], Awaitable[None]]


class Journal:
    """One JSON object per line, fsynced per record; a last line without its
    newline is a torn write (0002.D5)."""

    NAME = "journal.jsonl"

    def __init__(self, directory: str, point: JournalPoint | None = None,
                 fault: Callable[[str, int], OSError | None] | None = None) -> None:
        self.path = os.path.join(directory, self.NAME)
        os.makedirs(directory, exist_ok=True)
        self.point = point
        self.fault = fault
        self.count = 0

    def read(self) -> tuple[list[dict], bool]:
        """The records, and whether a torn last record was cut off."""
        if not os.path.exists(self.path):
            return [], False
        with open(self.path, "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        torn = lines[-1] != b""
        whole = lines[:-1]
        records = []
        for i, line in enumerate(whole):
            # "crc32-hex SP json": a whole line that fails its checksum is
            # damage no crash leaves, and resume refuses it (0002.D5).
            crc, _, body = line.partition(b" ")
            try:
                if int(crc, 16) != zlib.crc32(body):
                    raise ValueError("checksum mismatch")
                records.append(json.loads(body, parse_float=Number))
            except ValueError as err:
                raise JournalDamaged(f"record {i + 1} is damaged, not torn by a crash ({err})") from err
        if torn:
            with open(self.path, "r+b") as f:
                f.truncate(len(data) - len(lines[-1]))
                os.fsync(f.fileno())
        self.count = len(records)
        return records, torn

    async def write(self, record: dict) -> None:
        seq = self.count + 1
        step = record.get("step", 0)
        if self.point:
            await self.point("before", seq, record["type"], step)
        err = self.fault(record["type"], step) if self.fault else None
        if err is not None:
            raise JournalWriteError(record["type"], seq, err)
        body = dumps(record).encode("utf-8")
        line = b"%08x %s\n" % (zlib.crc32(body), body)
        new = not os.path.exists(self.path)
        with open(self.path, "ab") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())
        if new:
            # A new file's name is durable once its directory is synced:
            # without it a power cut can lose the whole journal (0002.D1).
            d = os.open(os.path.dirname(self.path), os.O_RDONLY)
            try:
                os.fsync(d)
            finally:
                os.close(d)
        self.count = seq
        if self.point:
            await self.point("after", seq, record["type"], step)


@dataclass
class Stop:
    """Where a run stopped without an end (cancelled, or the model failed)."""
    step: int
    during: str
    tool: str = ""


class Run:
    """One run of one request. steps, end and stop are read by the caller,
    also after CancelledError passed out of start() or resume()."""

    def __init__(self, request: Request, model: Model, sinks: list[Sink], journal: Journal | None = None) -> None:
        self.req = request
        self.model = model
        self.sinks = sinks
        self.journal = journal
        self.steps: list[dict] = []
        self.effective = 0
        self.total = 0
        self.sink_failures = 0
        self.end: dict | None = None
        self.stop: Stop | None = None
        self.resumed_from = ""
        self.replayed_step = 0
        self.torn_tail = False

    # --- audit ---
    async def emit(self, event: dict) -> None:
        for sink in self.sinks:
            try:
                delivered = sink(dict(event))
                if inspect.isawaitable(delivered):
                    await delivered
            except Exception:  # a failing sink never stops the loop (GovDoc 六)
                self.sink_failures += 1

    # --- context ---
    async def context(self) -> tuple[list[dict], int]:
        template = self.req.definition.observation_template or PLACEHOLDER
        blocks: list[tuple[str, str, str]] = []
        if self.req.definition.run_fragment:
            blocks.append(("run_fragment", "user", self.req.definition.run_fragment))
        for channel in sorted(self.req.injections):
            for text in self.req.injections[channel]:
                if text:
                    blocks.append(("injection", "user", text))
        if self.req.goal_fragment:
            blocks.append(("goal_fragment", "user", self.req.goal_fragment))
        for s in self.steps:
            blocks.append(("model_output", "assistant", s["model_output"]))
            blocks.append(("observation", "user", template.replace(PLACEHOLDER, s["history_observation"])))
        size = 0
        for t, _, text in blocks:
            size += await measured(self.req.measure, t, text)
        return [{"role": role, "content": text} for _, role, text in blocks], size

    # --- the loop ---
    async def start(self) -> dict:
        if self.journal:
            await self.journal.write({"type": "run_started"})
        await self.emit({"type": "run_started"})
        return await self.loop()

    async def loop(self) -> dict:
        while True:
            index = len(self.steps) + 1
            messages, size = await self.context()
            try:
                output = await self.model(messages)
            except BaseException:
                await self.halt(Stop(index, "model_call"))
                raise
            if self.journal:
                await self.journal.write({"type": "model_output", "step": index, "output": output})
            reason = await self.settle(index, messages, size, output, replay=False)
            if reason:
                return await self.finish(reason)

    async def halt(self, stop: Stop) -> None:
        self.stop = stop
        await self.emit({"type": "run_interrupted", "step": stop.step, "tool": stop.tool})

    def decide(self, output: str) -> Action:
        return parse_code(output) if self.req.language == "code" else parse_json(output)

    async def settle(self, index: int, messages: list[dict], size: int, output: str, *, replay: bool) -> str:
        act = self.decide(output)
        event: dict[str, Any] = {"type": "model_step", "step": index, "raw_output": output, "repairs": list(act.repairs)}
        if act.kind == "none":
            event["error"] = act.error
        else:
            event["decision"] = view(act)
        await self.emit(event)
        error_type = ""
        completed = False
        if act.kind == "none":
            outcome = ActionOutcome(Status.NOT_EXECUTED, f"no action could be read from the output: {act.error}", True)
            kind = "decision_failed"
        else:
            kind = "code_action" if act.kind == "code" else "tool_call"
            outcome, error_type, completed = await self.execute(index, act, replay)
        if outcome.status == Status.EXECUTED:
            history = outcome.observation
            self.effective += 1
        elif outcome.status == Status.ENV_ERROR:
            history = self.req.synthetic.env_error
        else:
            history = self.req.synthetic.not_executed
        self.total += 1
        action: dict[str, Any] = {"kind": act.kind, "repairs": list(act.repairs)}
        if act.kind == "tool_call":
            action["tool"] = act.tool
            if act.arguments is not None:
                action["arguments"] = act.arguments
        elif act.kind == "code":
            action["code"] = act.code
        else:
            action["error"] = act.error
        step = {
            "index": index, "model_input": messages, "context_size": size, "model_output": output,
            "action": action,
            "outcome": {"status": outcome.status.value, "observation": outcome.observation,
                        "observation_is_synthetic": outcome.observation_is_synthetic,
                        "env_reported_completion": bool(outcome.env_reported_completion),
                        "observation_truncated_chars": outcome.observation_truncated_chars},
            "history_observation": history,
            "counters": {"effective_steps": self.effective, "total_steps": self.total},
            "replayed": replay, "completed_by_tool": completed,
        }
        settled = {"type": kind, "step": index, "status": outcome.status.value, "executor_observation": outcome.observation,
                   "error_type": error_type, "replayed": replay}
        if kind == "tool_call":
            settled["tool"] = act.tool
        if self.journal:
            await self.journal.write({"type": "action_result", "step": index, "settled": step})
        self.steps.append(step)
        await self.emit(settled)
        return self.judge(step)

    def judge(self, step: dict) -> str:
        out = step["outcome"]
        if out["status"] == "ENV_ERROR":
            return "environment_error"
        if out["env_reported_completion"]:
            return "goal_reached_by_environment"
        if step["completed_by_tool"]:
            return "goal_reached_by_tool"
        if self.effective >= self.req.budget.max_effective_steps:
            return "effective_budget_exhausted"
        if self.total >= self.req.budget.max_total_steps:
            return "total_budget_exhausted"
        return ""

    async def execute(self, index: int, act: Action, replay: bool) -> tuple[ActionOutcome, str, bool]:
        """Validate, journal the intent, run; returns the outcome, a handler
        error's class name and whether a completes_run tool completed."""
        registry = isinstance(self.req.executor, RegistryExecutor)
        if act.kind == "tool_call":
            why = self.req.tools.validate(act)
            if why is not None:
                return ActionOutcome(Status.NOT_EXECUTED, why, True), "", False
        # Every action handed to an executor gets its intent first, even a
        # code action the derived executor will refuse (0002.D1.executor).
        spec = self.req.tools.lookup(act.tool) if act.kind == "tool_call" else None
        policy = spec.replay_policy if spec else ReplayPolicy.NEVER
        if self.journal and not replay:
            await self.journal.write({"type": "action_intent", "step": index, "tool": act.tool,
                                      "arguments": act.arguments, "replay": policy.value})
        try:
            if registry:
                settled = await self.req.executor.settle(act)
                outcome, error_type = settled.outcome, settled.error_type
            else:
                outcome, error_type = await self.req.executor(view(act)), ""
        except asyncio.CancelledError:
            await self.halt(Stop(index, "tool_call", act.tool))
            raise
        completed = bool(spec and spec.completes_run and outcome.status == Status.EXECUTED and not error_type)
        if outcome.status == Status.ENV_ERROR:
            completed = False
        return outcome, error_type, completed

    async def finish(self, reason: str, detail: dict | None = None) -> dict:
        end: dict[str, Any] = {"reason": reason, "effective_steps": self.effective, "total_steps": self.total}
        if detail:
            end["detail"] = detail
        if self.journal:
            await self.journal.write({"type": "run_end", "end": end})
        await self.emit({"type": "run_ended", "reason": reason})
        self.end = end
        return end

    # --- resume (0002) ---
    async def resume(self) -> dict:
        assert self.journal is not None
        records, self.torn_tail = self.journal.read()
        pending: dict | None = None
        intent: dict | None = None
        for r in records:
            if r["type"] == "model_output":
                pending, intent = r, None
            elif r["type"] == "action_intent":
                intent = r
            elif r["type"] == "action_result":
                step = r["settled"]
                self.steps.append(step)
                self.effective = step["counters"]["effective_steps"]
                self.total = step["counters"]["total_steps"]
                pending, intent = None, None
            elif r["type"] == "run_end":
                self.resumed_from = "run_end"
                self.end = r["end"]
                return self.end
        self.resumed_from = "step" if self.steps or pending else "start"
        if not records:
            await self.journal.write({"type": "run_started"})
        await self.emit({"type": "run_resumed", "step": len(self.steps) + 1})
        if pending is None and self.steps:
            reason = self.judge(self.steps[-1])  # a crash between result and end
            if reason:
                return await self.finish(reason)
        if pending is not None:
            messages, size = await self.context()
            index, output = pending["step"], pending["output"]
            if intent is None:
                reason = await self.settle(index, messages, size, output, replay=False)
            elif intent.get("replay") != "SAFE":
                # Whether a NEVER action ran is unknown: a person decides.
                detail = {"step": index}
                if intent.get("tool"):
                    detail["tool"] = intent["tool"]
                return await self.finish("resume_outcome_unknown", detail)
            else:
                self.replayed_step = index
                reason = await self.settle(index, messages, size, output, replay=True)
            if reason:
                return await self.finish(reason)
        return await self.loop()
