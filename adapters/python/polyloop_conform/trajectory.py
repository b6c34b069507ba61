"""Building a ``polyloop.trajectory/v1`` trajectory.

The format is described field by field in docs/trajectory-format.md of the
polyloop-conform repository. The runner validates what it receives against
the schema exactly (every required field, no unknown one), so this builder
writes every required field and leaves optional ones out when they are
empty, as the format wants.
"""

from __future__ import annotations

import os
from typing import Any

FORMAT = "polyloop.trajectory/v1"


def _prune(fields: dict[str, Any]) -> dict[str, Any]:
    """Drop optional fields that carry nothing (None, "", 0, False, [])."""
    return {k: v for k, v in fields.items() if v not in (None, "", 0, False, [], {})}


def event_record(type_: str, **fields: Any) -> dict[str, Any]:
    """An audit event as the trajectory records it (and as ``Seams.sink``
    sends it to the runner): the type, then the fields that carry
    something."""
    return {"type": type_, **_prune(fields)}


class TrajectoryBuilder:
    """Collects one scenario's run and renders it with build().

    ``handler_calls`` and ``model_calls`` are left empty and 0: the runner
    fills them from what its fakes saw.
    """

    def __init__(self, scenario: str) -> None:
        self._t: dict[str, Any] = {
            "format": FORMAT,
            "scenario": scenario,
            "assembly_error": None,
            "steps": [],
            "handler_calls": [],
            "model_calls": 0,
            "events": [],
            "event_sink_failures": 0,
            "end": None,
        }

    def step(self, *, index: int, model_input: list[dict[str, Any]], context_size: int, model_output: str,
             action: dict[str, Any], outcome: dict[str, Any], history_observation: str, effective_steps: int,
             total_steps: int, replayed: bool = False, phase: str = "") -> None:
        """Append a settled step. ``action`` holds kind (tool_call, code,
        none) and, as they apply, tool, arguments, code, repairs, error;
        ``outcome`` the five ActionOutcome fields."""
        act = {"kind": action["kind"], "repairs": list(action.get("repairs") or [])}
        for key in ("tool", "code", "error"):
            if action.get(key):
                act[key] = action[key]
        if action.get("arguments") is not None:
            act["arguments"] = action["arguments"]
        step: dict[str, Any] = {"index": index}
        if phase:
            step["phase"] = phase
        step.update({
            "model_input": [{"role": m["role"], "content": m["content"]} for m in model_input],
            "context_size": context_size,
            "model_output": model_output,
            "action": act,
            "outcome": {
                "status": outcome["status"],
                "observation": outcome["observation"],
                "observation_is_synthetic": bool(outcome["observation_is_synthetic"]),
                "env_reported_completion": bool(outcome.get("env_reported_completion")),
                "observation_truncated_chars": int(outcome.get("observation_truncated_chars") or 0),
            },
            "history_observation": history_observation,
            "counters": {"effective_steps": effective_steps, "total_steps": total_steps},
            "replayed": replayed,
        })
        self._t["steps"].append(step)

    def event(self, type_: str, **fields: Any) -> None:
        """Append an audit event; empty fields are left out."""
        self._t["events"].append(event_record(type_, **fields))

    def sink_failures(self, n: int) -> None:
        self._t["event_sink_failures"] += n

    def end(self, reason: str, effective_steps: int, total_steps: int, *, detail: dict[str, Any] | None = None) -> dict[str, Any]:
        end: dict[str, Any] = {"reason": reason, "effective_steps": effective_steps, "total_steps": total_steps}
        if detail:
            end["detail"] = _prune(detail)
        self._t["end"] = end
        return end

    def phase_end(self, name: str, end: dict[str, Any]) -> None:
        self._t.setdefault("phases", []).append({"name": name, "end": end})

    def assembly_error(self, kind: str, message: str, tools: list[str] | None = None) -> None:
        self._t["assembly_error"] = {"kind": kind, "tools": sorted(tools or []), "message": message}

    def run_error(self, kind: str, message: str) -> None:
        self._t["run_error"] = {"kind": kind, "message": message}
        self._t["end"] = None

    def interrupted(self, step: int, during: str, tool: str = "", phase: str = "") -> None:
        """The run was cancelled, or its deadline passed, during this step's
        model call or tool call; phase names the phase in a phased run."""
        self._t["interrupted"] = _prune({"phase": phase, "step": step, "during": during, "tool": tool})
        self._t["end"] = None

    def resumed(self, from_: str, replayed_step: int = 0, torn_tail: bool = False) -> None:
        self._t["resume"] = {"from": from_, **_prune({"replayed_step": replayed_step, "torn_tail": torn_tail})}

    def build(self) -> dict[str, Any]:
        return self._t


def tear_last_record(path: str) -> None:
    """Cut a line-per-record journal's last record in half, as a crash
    during that write leaves it (the protocol's ``tear_tail``)."""
    with open(path, "rb") as f:
        data = f.read()
    body = data[:-1] if data.endswith(b"\n") else data
    if not body:
        raise ValueError(f"{path}: no record to tear")
    start = body.rfind(b"\n") + 1
    cut = start + (len(body) - start) // 2
    with open(path, "r+b") as f:
        f.truncate(cut)
        f.flush()
        os.fsync(f.fileno())


def damage_record(path: str, kind: str) -> None:
    """Damage a line-per-record journal the way no crash does (the
    protocol's ``damage``): ``last_checksum`` changes one byte in the middle
    of the last record, keeping its line whole; ``middle`` does the same to
    the first record, leaving the records after it intact. A journal that
    checks each record (a checksum) then finds the damage; resume must
    refuse it (0002.D5)."""
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    whole = [i for i, line in enumerate(lines) if line]
    if kind == "last_checksum" and whole:
        i = whole[-1]
    elif kind == "middle" and len(whole) >= 2:
        i = whole[0]
    else:
        raise ValueError(f"{path}: cannot damage {kind!r} in {len(whole)} record(s)")
    line = bytearray(lines[i])
    at = len(line) // 2
    line[at] = ord("y") if line[at] == ord("x") else ord("x")
    lines[i] = bytes(line)
    with open(path, "wb") as f:
        f.write(b"\n".join(lines))
        f.flush()
        os.fsync(f.fileno())
