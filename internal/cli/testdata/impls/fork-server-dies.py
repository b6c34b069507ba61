"""serve-reference behind a proxy that claims a fork server it does not
have: the first fork request ends it. The runner must say so and go on
starting processes from --impl ($POLYLOOP_REF is the polyloop-conform
binary)."""
import json
import os
import subprocess
import sys
import threading

child = subprocess.Popen([os.environ["POLYLOOP_REF"], "serve-reference", "--plain"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def pump_out():
    for line in child.stdout:
        m = json.loads(line)
        if m.get("type") == "hello":
            m["capabilities"] = m["capabilities"] + ["fork-server"]
            line = (json.dumps(m) + "\n").encode()
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


threading.Thread(target=pump_out, daemon=True).start()
for line in sys.stdin.buffer:
    if json.loads(line).get("type") == "fork":
        child.kill()
        os._exit(1)
    child.stdin.write(line)
    child.stdin.flush()
child.stdin.close()
child.wait()
