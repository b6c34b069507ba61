"""An honest port with one realistic porting mistake: serve-reference
behind a proxy that makes the kernel behave, consistently on the wire and
in its trajectory, the way a port with that mistake behaves. Each mistake
passes every scenario; generate found both (issue 37), and run's default
generated batch must fail them.

    python3 porting-mistake.py MODE      ($POLYLOOP_REF is the polyloop-conform binary)

MODE:
  drop-empty    an empty model output or observation is left out of the
                next model input (the reference keeps it as a message)
  first-broken  a refusal at registration (duplicate_tool, invalid_schema)
                names only the first broken spec

The kernel offers the protocol options serve-reference offers, so its
passes rest on what the runner observed (run requires it by default).
Numbers keep their written form: they are swapped for placeholders
before decoding and put back after encoding.
"""
import json
import os
import re
import subprocess
import sys
import threading

MODE = sys.argv[1]
if MODE not in ("drop-empty", "first-broken"):
    sys.exit("porting-mistake.py: unknown mode %r" % MODE)
child = subprocess.Popen([os.environ["POLYLOOP_REF"], "serve-reference"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def pump_in():
    for line in sys.stdin.buffer:
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()


threading.Thread(target=pump_in, daemon=True).start()

NUM = re.compile(r'"\\u0000(\d+)"')


def decode(line):
    nums = []

    def keep(text):
        nums.append(text)
        return "\0%d" % (len(nums) - 1)
    return json.loads(line, parse_int=keep, parse_float=keep), nums


def encode(m, nums):
    return NUM.sub(lambda g: nums[int(g.group(1))], json.dumps(m, ensure_ascii=False, separators=(",", ":")))


def non_empty(messages):
    return [x for x in messages if x.get("content") != ""]


def rewrite(m):
    kind = m.get("type")
    if MODE == "drop-empty" and kind == "model_call":
        m["input"] = non_empty(m["input"])
    elif MODE == "drop-empty" and kind == "result":
        for st in m["trajectory"].get("steps") or []:
            st["model_input"] = non_empty(st.get("model_input") or [])
    elif MODE == "first-broken" and kind == "result":
        err = m["trajectory"].get("assembly_error")
        if err and err.get("kind") in ("duplicate_tool", "invalid_schema"):
            err["tools"] = err["tools"][:1]
    return m


def out(text):
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


# Only the lines the mistake changes are decoded: the proxy adds as little
# time as it can to every exchange.
NEEDS = {"drop-empty": '"content":""', "first-broken": '"assembly_error":{'}[MODE]
for raw in child.stdout:
    line = raw.decode("utf-8")
    if NEEDS in line and ('"type":"model_call"' in line or '"type":"result"' in line):
        m, nums = decode(line)
        out(encode(rewrite(m), nums))
    else:
        out(line)
