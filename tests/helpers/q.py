#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""q.py FILE EXPR [ARG...]: evaluate a Python expression over a report stream.

Each complete line of FILE is parsed as a JSON object into the list L; what
follows the last newline is in `partial`; the ARGs are in A (integers where
they look like one). Helpers for runtime entries: ents(line, index),
ent(line, index, pid), grp(entry, group). Exit 0 when the expression is true,
1 when false (with what was seen), 2 when a line is not a JSON object.
"""
import json
import sys

path, expr = sys.argv[1], sys.argv[2]
A = [int(a) if a.lstrip("-").isdigit() else a for a in sys.argv[3:]]
with open(path, encoding="utf-8") as f:
    raw = f.read().split("\n")
partial = raw.pop()
L = []
for i, s in enumerate(raw):
    try:
        v = json.loads(s)
    except ValueError as e:
        print("line %d is not JSON (%s): %r" % (i + 1, e, s[:300]))
        sys.exit(2)
    if not isinstance(v, dict):
        print("line %d is not a JSON object: %r" % (i + 1, s[:300]))
        sys.exit(2)
    L.append(v)


def ents(line, index):
    return [e for e in line["runtime_data"] if e["runtime_index"] == index]


def ent(line, index, pid):
    for e in ents(line, index):
        if e["pid"] == pid:
            return e
    return None


def grp(e, name):
    return (e or {}).get("report", {}).get(name)


r = eval(expr, dict(globals()))
if not r:
    print("false over %d line(s): %s  [A=%s]" % (len(L), expr, A))
    for l in L[-3:]:
        print("  %s" % json.dumps(l.get("runtime_data"))[:600])
sys.exit(0 if r else 1)
