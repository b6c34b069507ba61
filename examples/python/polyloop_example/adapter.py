"""Wires the example kernel to polyloop-conform through the adapter kit.

run_scenario builds the registry and requests a scenario's spec describes
(docs/protocol.md, "run.spec"), runs them against the kit's seams and turns
what happened into a trajectory.
"""

from __future__ import annotations

import asyncio
import errno
from typing import Any

from polyloop_conform import (ModelCallError, Seams, TrajectoryBuilder, damage_record, event_record,
                              tear_last_record)

from .kernel import (Budget, Definition, Journal, JournalDamaged, JournalWriteError, Request, Run,
                     SyntheticObservations, code_points)
from .tools import ActionOutcome, RegistryError, ReplayPolicy, Status, ToolRegistry, ToolSpec

ERRNOS = {"ENOSPC": errno.ENOSPC, "EACCES": errno.EACCES, "EIO": errno.EIO}


def _handler(seams: Seams, phase: int, name: str):
    async def call(arguments):
        return await seams.handler(phase, name, arguments)
    return call


def _project_executor(seams: Seams, phase: int):
    async def execute(action: dict) -> ActionOutcome:
        o = await seams.execute(phase, action)
        return ActionOutcome(Status(o["status"]), o["observation"], bool(o["observation_is_synthetic"]),
                             o["env_reported_completion"], int(o["observation_truncated_chars"]))
    return execute


def _measure(seams: Seams, phase: int, unknown: list[str]):
    if seams.wire_measure:
        # The runner is the measure: it refuses the blocks it cannot size.
        async def remote(block_type: str, text: str) -> int:
            return await seams.measure(phase, block_type, text)
        return remote

    def measure(block_type: str, text: str) -> int:
        if block_type in unknown:
            raise ValueError(f"no rule for {block_type} blocks")
        return code_points(block_type, text)
    return measure


def build_request(spec: dict, seams: Seams, phase: int) -> Request:
    specs = [ToolSpec(name=t["name"], description=t.get("description", ""), parameters=t.get("parameters"),
                      replay_policy=ReplayPolicy(t.get("replay") or "NEVER"), completes_run=bool(t.get("completes_run")),
                      handler=_handler(seams, phase, t["name"]) if t.get("has_handler") else None)
             for t in spec["tools"]]
    full = ToolRegistry(specs)
    r = spec["requests"][phase]
    visible = full if r.get("visible_tools") is None else full.restrict_to(r["visible_tools"])
    kind = r.get("executor") or "registry"
    if kind == "project":
        executor: Any = _project_executor(seams, phase)
    elif kind == "full_registry":
        executor = full.executor()
    else:
        executor = visible.executor()
    injections: dict[str, list[str]] = {}
    for entry in r.get("injections") or []:
        injections.setdefault(entry["channel"], []).append(entry["text"])
    syn = r.get("synthetic") or {}
    d = spec.get("definition") or {}
    return Request(
        definition=Definition(run_fragment=d.get("run_fragment", ""), observation_template=d.get("observation_template", "")),
        budget=Budget(r["budget"]["max_effective_steps"], r["budget"]["max_total_steps"]),
        tools=visible, executor=executor, goal_fragment=r.get("goal_fragment", ""),
        synthetic=SyntheticObservations(**{k: v for k, v in (("not_executed", syn.get("not_executed")), ("env_error", syn.get("env_error"))) if v}),
        injections=injections, language=r.get("language") or "json",
        measure=_measure(seams, phase, r.get("measure_unknown") or []))


def _sinks(recorded: list[dict], fault: str | None, seams: Seams, phase: int, name: str):
    sinks: list[Any] = [recorded.append]
    if seams.wire_sink:
        # The runner is an audit sink too, and plays the failing one.
        async def remote(event: dict) -> None:
            fields = dict(event)
            await seams.sink(phase, event_record(fields.pop("type"), phase=name, **fields))
        sinks.append(remote)
        return sinks
    if fault == "error":
        def failing(event: dict) -> None:
            raise OSError("the audit store refused the event")
        sinks.append(failing)
    elif fault == "panic":
        def broken(event: dict) -> None:
            raise RuntimeError("bug in the audit sink")
        sinks.append(broken)
    return sinks


def _record(b: TrajectoryBuilder, run: Run, events: list[dict], phase: str) -> None:
    for s in run.steps:
        b.step(index=s["index"], phase=phase, model_input=s["model_input"], context_size=s["context_size"],
               model_output=s["model_output"], action=s["action"], outcome=s["outcome"],
               history_observation=s["history_observation"], effective_steps=s["counters"]["effective_steps"],
               total_steps=s["counters"]["total_steps"], replayed=s["replayed"])
    for e in events:
        b.event(e.pop("type"), phase=phase, **e)
    b.sink_failures(run.sink_failures)


async def run_scenario(spec: dict, seams: Seams) -> dict:
    b = TrajectoryBuilder(spec["scenario"])
    phased = bool(spec.get("phased"))
    faults = spec.get("faults") or {}
    for phase, r in enumerate(spec["requests"]):
        name = r.get("name", "") if phased else ""
        if seams.resume and phase < seams.resume_phase:
            continue  # ended in the process that died; not run again
        try:
            req = build_request(spec, seams, phase)
            await req.probe()
        except RegistryError as err:
            b.assembly_error(err.kind, str(err), err.tools)
            return b.build()
        journal = None
        if seams.journal_dir:
            fault = None
            if faults.get("journal_error"):
                je = faults["journal_error"]

                def fault(record: str, step: int, je=je) -> OSError | None:
                    if record == je["record"] and (not je.get("step") or je["step"] == step):
                        code = ERRNOS[je["errno"]]
                        return OSError(code, f"injected {je['errno']}")
                    return None

            async def point(when: str, seq: int, record: str, step: int, phase: int = phase) -> None:
                await seams.journal_point(when, seq, record, step, phase)

            journal = Journal(seams.phase_journal(phase), point, fault)
        events: list[dict] = []

        async def model(messages, phase=phase):
            return await seams.model(phase, messages)

        run = Run(req, model, _sinks(events, faults.get("sink"), seams, phase, name), journal)
        try:
            async with seams.deadline():
                if seams.resume and phase == seams.resume_phase:
                    if seams.tear_tail:
                        tear_last_record(journal.path)
                    if seams.damage:
                        damage_record(journal.path, seams.damage)
                    end = await run.resume()
                else:
                    end = await run.start()
        except (asyncio.CancelledError, TimeoutError):
            # Cancelled (a lost lease), or the deadline passed: the run
            # stops without an end, and either way the same (0004.D4).
            _record(b, run, events, name)
            b.interrupted(run.stop.step, run.stop.during, run.stop.tool, phase=name)
            return b.build()
        except ModelCallError as err:
            _record(b, run, events, name)
            b.run_error("model_call", str(err))
            return b.build()
        except JournalWriteError as err:
            _record(b, run, events, name)
            b.run_error("journal_write", str(err))
            return b.build()
        except JournalDamaged as err:
            # Resume refuses a journal no crash could have left (0002.D5):
            # nothing is settled again, nothing runs.
            b.run_error("journal_damaged", str(err))
            return b.build()
        _record(b, run, events, name)
        if seams.resume and phase == seams.resume_phase:
            b.resumed(run.resumed_from, run.replayed_step, run.torn_tail)
        ended = b.end(end["reason"], end["effective_steps"], end["total_steps"], detail=end.get("detail"))
        if phased:
            b.phase_end(name, ended)
    return b.build()
