"""The Python example kernel with one deviation: on resume, an unfinished
NEVER action is run again as if it were SAFE (0002.D4), the mistake a
crash exploration exists to catch. Each start of the interpreter is
appended to $POLYLOOP_STARTS, so a test can tell a fork server (one
start) from a process per kill (many).

    PYTHONPATH=adapters/python:examples/python python3 python-never-replayed.py
"""
import os
import runpy

import polyloop_example.kernel as kernel

if os.environ.get("POLYLOOP_STARTS"):
    with open(os.environ["POLYLOOP_STARTS"], "a") as f:
        f.write(f"{os.getpid()}\n")

_read = kernel.Journal.read


def _replay_everything(self):
    records, torn = _read(self)
    for r in records:
        if r.get("type") == "action_intent":
            r["replay"] = "SAFE"
    return records, torn


kernel.Journal.read = _replay_everything
runpy.run_module("polyloop_example", run_name="__main__")
