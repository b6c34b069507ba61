"""Lying about time and size: serve-reference (with every protocol option)
behind a proxy that keeps each message's content and changes when it
reaches the runner, or who did the measuring. The trajectory stays the
reference's, so a runner that compares events by content and order, and
takes context_size from the implementation, passes every one of them.

    python3 wire_liar.py MODE      ($POLYLOOP_REF is the polyloop-conform binary)

MODE is one of:

  events-buffered    every event is answered by the proxy and held until the
                     run's result, then sent to the runner all at once: the
                     audit sink sees nothing while the run goes on.
  settles-early      a step's settlement event reaches the runner before the
                     journal points of its action_result: the audit store
                     hears of a result the journal does not hold yet.
  sizes-itself       the kernel is not given the runner's measure; the proxy
                     probes it once per block type (empty text), and the
                     kernel sizes every block with its own code points.
  drops-capabilities the next release: the same kernel, whose hello no
                     longer claims context-assembly and events.
  hides-end          a kernel that keeps its journal in a format of its own
                     (no journal-lines) and journals an end for a cancelled
                     run beside the records it reads back: the trajectory
                     says the run did not end; only the journal says it did.
"""
import json
import os
import subprocess
import sys
import threading

MODE = sys.argv[1]
child = subprocess.Popen([os.environ["POLYLOOP_REF"], "serve-reference"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
lock = threading.Lock()
SWALLOW = set()  # runner answers to calls the proxy already answered itself
JOURNAL = [None]  # the journal_dir of the latest run
BLOCKS = ("run_fragment", "injection", "goal_fragment", "model_output", "observation")
probe_call = [3000000]


def to_child(data):
    with lock:
        child.stdin.write(data)
        child.stdin.flush()


def out(text):
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def pump_in():
    for line in sys.stdin.buffer:
        m = json.loads(line)
        if m.get("call") in SWALLOW and m["type"] in ("event_result", "continue", "measure_result"):
            SWALLOW.discard(m["call"])
            continue
        if m["type"] == "run":
            JOURNAL[0] = m.get("journal_dir")
        if MODE == "sizes-itself" and m["type"] in ("run", "resume") and m.get("wire_measure"):
            del m["wire_measure"]
            for block in BLOCKS:
                probe_call[0] += 1
                SWALLOW.add(probe_call[0])
                out(json.dumps({"type": "measure_call", "call": probe_call[0], "phase": 0, "block": block, "text": ""}))
            line = (json.dumps(m, ensure_ascii=False) + "\n").encode()
        to_child(line)
    child.stdin.close()


threading.Thread(target=pump_in, daemon=True).start()

held = []  # events-buffered: events; settles-early: action_result points
for raw in child.stdout:
    line = raw.decode("utf-8")
    m = json.loads(line)
    kind = m["type"]
    if MODE == "drops-capabilities" and kind == "hello":
        m["capabilities"] = [c for c in m["capabilities"] if c not in ("context-assembly", "events")]
        out(json.dumps(m, ensure_ascii=False))
    elif MODE == "hides-end" and kind == "hello":
        m["capabilities"] = [c for c in m["capabilities"] if c != "journal-lines"]
        out(json.dumps(m, ensure_ascii=False))
    elif MODE == "hides-end" and kind == "result" and m["trajectory"].get("interrupted") and JOURNAL[0]:
        with open(os.path.join(JOURNAL[0], "run_end"), "w") as f:
            f.write('{"type":"run_end","reason":"cancelled"}\n')
        out(line)
    elif MODE == "events-buffered" and kind == "event":
        held.append(line)
        SWALLOW.add(m["call"])
        to_child(('{"type":"event_result","call":%d}\n' % m["call"]).encode())
    elif MODE == "events-buffered" and kind in ("result", "error"):
        for e in held:
            out(e)
        held = []
        out(line)
    elif MODE == "settles-early" and kind == "journal_point" and m["point"]["record"] == "action_result":
        held.append(line)
        SWALLOW.add(m["call"])
        to_child(('{"type":"continue","call":%d}\n' % m["call"]).encode())
    elif MODE == "settles-early" and held and kind in ("event", "result", "error"):
        out(line)
        for p in held:
            out(p)
        held = []
    else:
        out(line)
