"""Tests of the kit's plumbing: python3 -m unittest discover -s adapters/python/tests"""

from __future__ import annotations

import asyncio
import io
import json
import os
import pathlib
import sys
import tempfile
import unittest

from polyloop_conform import (MeasureFailure, ModelCallError, SinkFailure, TrajectoryBuilder, serve_async,
                              tear_last_record)

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "docs" / "examples"
HELLO = {"type": "hello", "suite": "polyloop-conform", "suite_version": "0.1.0", "protocol": 1}


def run_message(spec_extra: dict | None = None, **fields) -> dict:
    spec = {"scenario": "a.b", "tools": [{"name": "t", "has_handler": True}], "definition": {},
            "requests": [{"budget": {"max_effective_steps": 1, "max_total_steps": 1}, "visible_tools": None}]}
    spec.update(spec_extra or {})
    return {"type": "run", "id": "a.b", "spec": spec, **fields}


def serve_lines(run_scenario, lines: list[dict], **kwargs) -> tuple[list[dict], str]:
    """Feed lines to the kit in one go; return what it wrote, and stderr."""
    r, w = os.pipe()
    with os.fdopen(w, "wb") as f:
        for m in lines:
            f.write((json.dumps(m) + "\n").encode())
    out = io.BytesIO()
    err = io.StringIO()
    stdin = os.fdopen(r, "rb")
    old = sys.stderr
    sys.stderr = err
    try:
        asyncio.run(asyncio.wait_for(serve_async(run_scenario, name="kit-test", version="1", stdin=stdin, stdout=out, **kwargs), 10))
    finally:
        sys.stderr = old
        stdin.close()
    return [json.loads(line) for line in out.getvalue().decode().splitlines()], err.getvalue()


class Handshake(unittest.TestCase):
    def test_hello_names_the_implementation_and_its_capabilities(self):
        out, _ = serve_lines(None, [HELLO], capabilities=["json-actions"])
        self.assertEqual(out, [{"type": "hello", "protocol": 1, "name": "kit-test", "version": "1", "spec_version": "", "capabilities": ["json-actions"]}])

    def test_another_protocol_version_is_refused(self):
        out, err = serve_lines(None, [dict(HELLO, protocol=2)])
        self.assertEqual(out, [])
        self.assertIn("protocol 2", err)


class Calls(unittest.TestCase):
    def test_calls_are_numbered_and_answers_matched(self):
        async def scenario(spec, seams):
            text = await seams.model(0, [{"role": "user", "content": "go"}])
            obs = await seams.handler(0, "t", {"k": 1})
            b = TrajectoryBuilder(spec["scenario"])
            b.event("run_ended", reason=text + "/" + obs)
            return b.build()

        out, _ = serve_lines(scenario, [HELLO, run_message(),
                                        {"type": "model_result", "call": 1, "output": "m"},
                                        {"type": "handler_result", "call": 2, "output": "h"}])
        self.assertEqual(out[1], {"type": "model_call", "phase": 0, "input": [{"role": "user", "content": "go"}], "call": 1})
        self.assertEqual(out[2], {"type": "handler_call", "phase": 0, "tool": "t", "arguments": {"k": 1}, "call": 2})
        self.assertEqual(out[3]["type"], "result")
        self.assertEqual(out[3]["trajectory"]["events"], [{"type": "run_ended", "reason": "m/h"}])

    def test_handler_errors_carry_the_scripted_type_name(self):
        seen = {}

        class EnvError(Exception):
            pass

        async def scenario(spec, seams):
            for call in (1, 2):
                try:
                    await seams.handler(0, "t", {})
                except Exception as err:
                    seen[call] = (type(err).__name__, str(err))
            return TrajectoryBuilder("a.b").build()

        serve_lines(scenario, [HELLO, run_message(),
                               {"type": "handler_result", "call": 1, "error": {"type": "KeyError", "message": "'k'"}},
                               {"type": "handler_result", "call": 2, "env_error": "disk gone"}], environment_error=EnvError)
        self.assertEqual(seen, {1: ("KeyError", "'k'"), 2: ("EnvError", "disk gone")})

    def test_a_failed_model_call_raises(self):
        async def scenario(spec, seams):
            try:
                await seams.model(0, [])
            except ModelCallError as err:
                b = TrajectoryBuilder("a.b")
                b.run_error("model_call", str(err))
                return b.build()
            raise AssertionError("no error")

        out, _ = serve_lines(scenario, [HELLO, run_message(), {"type": "model_result", "call": 1, "error": {"type": "ModelCallError", "message": "502"}}])
        self.assertEqual(out[-1]["trajectory"]["run_error"], {"kind": "model_call", "message": "502"})


class Cancellation(unittest.TestCase):
    def test_cancel_raises_in_the_awaiting_code_and_the_call_is_released(self):
        async def scenario(spec, seams):
            try:
                await seams.handler(0, "t", {})
            except asyncio.CancelledError:
                b = TrajectoryBuilder("a.b")
                b.interrupted(1, "tool_call", "t")
                return b.build()
            raise AssertionError("the cancel did not reach the handler's caller")

        out, _ = serve_lines(scenario, [HELLO, run_message(), {"type": "cancel", "call": 1}])
        self.assertEqual([m["type"] for m in out], ["hello", "handler_call", "released", "result"])
        self.assertEqual(out[2], {"type": "released", "call": 1})
        self.assertEqual(out[3]["trajectory"]["interrupted"], {"step": 1, "during": "tool_call", "tool": "t"})

    def test_cancelled_error_escaping_is_an_error_message(self):
        async def scenario(spec, seams):
            await seams.model(0, [])

        out, _ = serve_lines(scenario, [HELLO, run_message(), {"type": "cancel", "call": 1}])
        self.assertEqual(out[-1]["type"], "error")
        self.assertIn("CancelledError", out[-1]["message"])


class JournalPoints(unittest.TestCase):
    def test_points_wait_for_continue_only_when_asked(self):
        order = []

        async def scenario(spec, seams):
            await seams.journal_point("before", 1, "run_started")
            order.append("written")
            await seams.journal_point("after", 1, "run_started")
            return TrajectoryBuilder("a.b").build()

        out, _ = serve_lines(scenario, [HELLO, run_message(report_journal_points=True, journal_dir="/tmp/x"),
                                        {"type": "continue", "call": 1}, {"type": "continue", "call": 2}])
        self.assertEqual(out[1], {"type": "journal_point", "point": {"when": "before", "seq": 1, "record": "run_started"}, "call": 1})
        self.assertEqual([m["type"] for m in out], ["hello", "journal_point", "journal_point", "result"])
        out, _ = serve_lines(scenario, [HELLO, run_message()])
        self.assertEqual([m["type"] for m in out], ["hello", "result"])

    def test_tear_last_record_cuts_it_in_half(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "j")
            with open(p, "wb") as f:
                f.write(b'{"a":1}\n{"b":22222}\n')
            tear_last_record(p)
            with open(p, "rb") as f:
                self.assertEqual(f.read(), b'{"a":1}\n{"b":')


class RunnerPlayedFaults(unittest.TestCase):
    def test_a_deadline_cancel_expires_the_runs_deadline(self):
        seen = {}

        async def scenario(spec, seams):
            try:
                async with seams.deadline():
                    await seams.model(0, [])
            except TimeoutError:
                seen["timeout"] = True
            return TrajectoryBuilder(spec["scenario"]).build()

        out, _ = serve_lines(scenario, [HELLO, run_message(), {"type": "cancel", "call": 1, "deadline": True}])
        self.assertTrue(seen.get("timeout"), "the caller of the run did not see TimeoutError")
        self.assertEqual(out[2], {"type": "released", "call": 1})

    def test_a_plain_cancel_is_a_cancellation_even_inside_the_deadline(self):
        seen = {}

        async def scenario(spec, seams):
            try:
                async with seams.deadline():
                    await seams.model(0, [])
            except asyncio.CancelledError:
                seen["cancelled"] = True
            return TrajectoryBuilder(spec["scenario"]).build()

        serve_lines(scenario, [HELLO, run_message(), {"type": "cancel", "call": 1}])
        self.assertTrue(seen.get("cancelled"))

    def test_the_runners_sink_and_measure_fail_as_answered(self):
        seen = []

        async def scenario(spec, seams):
            for call in (lambda: seams.sink(0, {"type": "run_started"}), lambda: seams.measure(0, "observation", "")):
                try:
                    seen.append(await call())
                except (SinkFailure, MeasureFailure) as err:
                    seen.append(type(err).__name__)
            seen.append(await seams.measure(0, "goal_fragment", "Go."))
            return TrajectoryBuilder(spec["scenario"]).build()

        out, _ = serve_lines(scenario, [HELLO, run_message(wire_sink=True, wire_measure=True),
                                        {"type": "event_result", "call": 1, "error": {"type": "AuditStoreError", "message": "no"}},
                                        {"type": "measure_result", "call": 2, "error": {"type": "MeasureError", "message": "no rule"}},
                                        {"type": "measure_result", "call": 3, "size": 3}])
        self.assertEqual(seen, ["SinkFailure", "MeasureFailure", 3])
        self.assertEqual(out[1], {"type": "event", "phase": 0, "event": {"type": "run_started"}, "call": 1})
        self.assertEqual(out[2], {"type": "measure_call", "phase": 0, "block": "observation", "text": "", "call": 2})


class Robustness(unittest.TestCase):
    def test_an_exception_in_the_teams_code_is_an_error_with_the_traceback_on_stderr(self):
        async def scenario(spec, seams):
            raise ValueError("my kernel broke")

        out, err = serve_lines(scenario, [HELLO, run_message()])
        self.assertEqual(out[-1], {"type": "error", "id": "a.b", "message": "ValueError: my kernel broke"})
        self.assertIn("Traceback", err)

    def test_input_ending_mid_call_ends_the_run_instead_of_hanging(self):
        async def scenario(spec, seams):
            await seams.model(0, [])

        out, _ = serve_lines(scenario, [HELLO, run_message()])
        self.assertEqual(out[-1]["type"], "error")
        self.assertIn("input ended", out[-1]["message"])


class Transcripts(unittest.TestCase):
    """The runner's side of each recorded transcript, replayed through the
    kit with a scenario that makes the same calls, gives the same calls in
    the same order with the same numbers."""

    def test_recorded_exchanges(self):
        for path in sorted(EXAMPLES.glob("*.jsonl")):
            with self.subTest(path.name):
                entries = [json.loads(line) for line in path.read_text().splitlines()]
                runner = [e["message"] for e in entries if e["from"] == "runner"]
                impl = [e["message"] for e in entries if e["from"] == "implementation"]
                kinds = ("model_call", "handler_call", "execute_call", "journal_point", "released", "event", "measure_call")
                calls = [m for m in impl if m["type"] in kinds]

                async def scenario(spec, seams, calls=calls):
                    for m in calls:
                        try:
                            if m["type"] == "model_call":
                                await seams.model(m["phase"], m["input"])
                            elif m["type"] == "handler_call":
                                await seams.handler(m["phase"], m["tool"], m.get("arguments", {}))
                            elif m["type"] == "event":
                                await seams.sink(m["phase"], m["event"])
                            elif m["type"] == "measure_call":
                                await seams.measure(m["phase"], m["block"], m["text"])
                        except (SinkFailure, MeasureFailure):
                            continue  # the runner played the fault; the kernel goes on
                        except asyncio.CancelledError:
                            break
                    return TrajectoryBuilder(spec["scenario"]).build()

                out, _ = serve_lines(scenario, runner)
                got = [m for m in out if m["type"] in kinds]
                strip = lambda ms: [{k: v for k, v in m.items() if k != "arguments" or v} for m in ms]  # noqa: E731
                self.assertEqual(strip(got), strip(calls))


if __name__ == "__main__":
    unittest.main()
