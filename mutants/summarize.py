"""Score a gremlins run against the committed list of equivalent and
unobservable mutants.

    python3 mutants/summarize.py RESULTS.json mutants/equivalent.txt SRC_DIR

A listed mutant is keyed by file, mutator and the text of its source line
(not its line number, which moves as the code does):

    reference/run/kernel.go CONDITIONALS_NEGATION `if err != nil && k.req.dev.On(deviation.SeveralCallsFirst) {`  # reason

The score is killed / (all covered - listed), where killed counts KILLED
and TIMED OUT (a suite that hangs on a mutant fails in CI). Exit 1 when a
listed entry matches no mutant (stale list), or a lived mutant is not
listed and the score is under the target.
"""
import json
import re
import sys

TARGET = 0.95

results, listing, src = sys.argv[1], sys.argv[2], sys.argv[3]
entries = []
for n, line in enumerate(open(listing, encoding="utf-8"), 1):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    m = re.match(r"^(\S+) (\S+) `(.*)`\s+#\s*(.+)$", line)
    if not m:
        sys.exit(f"{listing}:{n}: write it as FILE MUTATOR `source line`  # reason")
    entries.append({"file": m[1], "type": m[2], "text": m[3], "reason": m[4], "line": n, "used": False})

data = json.load(open(results, encoding="utf-8"))
killed = lived = timed_out = not_covered = listed = 0
survivors = []
for f in data["files"]:
    lines = open(f"{src}/{f['file_name']}", encoding="utf-8").read().split("\n")
    for mu in f["mutations"]:
        text = lines[mu["line"] - 1].strip()
        status = mu["status"]
        if status == "NOT COVERED":
            not_covered += 1
            continue
        match = next((e for e in entries if e["file"] == f["file_name"] and e["type"] == mu["type"] and e["text"] == text), None)
        if match:
            match["used"] = True
            listed += 1
            continue
        if status == "KILLED":
            killed += 1
        elif status == "TIMED OUT":
            timed_out += 1
        elif status == "LIVED":
            lived += 1
            survivors.append(f"{f['file_name']}:{mu['line']}:{mu['column']} {mu['type']} `{text}`")
covered = killed + timed_out + lived
score = (killed + timed_out) / covered if covered else 0.0
print(f"mutants: {covered + listed} covered ({not_covered} not covered by the suite), "
      f"{listed} listed as equivalent or unobservable, {killed} killed, {timed_out} timed out, {lived} lived")
print(f"score: {killed + timed_out}/{covered} = {score:.1%} of the non-equivalent, observable mutants (target {TARGET:.0%})")
for s in survivors:
    print("  lived:", s)
ran = {f["file_name"] for f in data["files"]}
stale = [e for e in entries if not e["used"] and e["file"] in ran]  # a sample runs fewer files
for e in stale:
    print(f"  {listing}:{e['line']}: matches no mutant of this run ({e['file']} {e['type']})")
sys.exit(1 if score < TARGET else 0)
