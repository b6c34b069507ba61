"""The reference, with run_error.message naming what 0002.D5 and 0002.D6
ask an error to name: the journal file. Run by run the runner draws a new
journal_dir, so the sentence differs between two runs of one scenario
although the implementation behaves the same.

    python3 names-journal.py path   the message names the journal file
    python3 names-journal.py pid    the message names the process by a
                                    number of its own drawing (a pid would
                                    not do: isolated, every process is
                                    PID 1 of its namespace), so the wording
                                    itself differs between runs

($POLYLOOP_REF is the polyloop-conform binary.)
"""
import json
import os
import re
import subprocess
import sys
import threading

MODE = sys.argv[1]
child = subprocess.Popen([os.environ["POLYLOOP_REF"], "serve-reference"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
journal = {"dir": ""}


def pump_in():
    for line in sys.stdin.buffer:
        m = re.search(rb'"journal_dir":"([^"]*)"', line)
        if m:
            journal["dir"] = m.group(1).decode("utf-8")
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()


threading.Thread(target=pump_in, daemon=True).start()

# The result is rewritten as text, so that every number keeps its form.
ERROR = re.compile(r'("run_error":\{"kind":"[a-z_]+","message":")')
for raw in child.stdout:
    line = raw.decode("utf-8")
    if '"type":"result"' in line:
        if MODE == "path":
            where = json.dumps(os.path.join(journal["dir"], "journal.jsonl"))[1:-1]
        else:
            where = "process %d" % int.from_bytes(os.urandom(4), "big")
        line = ERROR.sub(lambda m: m.group(1) + where + ": ", line)
    sys.stdout.write(line)
    sys.stdout.flush()
