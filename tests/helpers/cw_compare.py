#!/usr/bin/python3
"""Compare what the test receiver accepted with what should have arrived.

Usage: cw_compare.py EXPECTED RECORDS [--allow-dup] [--names N1,N2]
  EXPECTED: JSON lines {"name", "ts", "value"} (tests/helpers/cw_gen.py)
  RECORDS:  cw_receiver.py's --record file
Datums are matched on (name, timestamp, value) as multisets. Prints one
summary line; exits 0 when nothing is missing or extra (duplicates, which
at-least-once delivery may produce after a lost answer, only with
--allow-dup).
"""

import argparse
import collections
import json
import sys


def load(path, names):
    c = collections.Counter()
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if names and r["name"] not in names:
                continue
            c[(r["name"], r["ts"], float(r["value"]))] += 1
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("expected")
    ap.add_argument("records")
    ap.add_argument("--allow-dup", action="store_true")
    ap.add_argument("--names")
    a = ap.parse_args()
    names = set(a.names.split(",")) if a.names else None
    want, got = load(a.expected, names), load(a.records, names)
    missing = want - got
    dup = sum(max(0, got[k] - want[k]) for k in got if k in want)
    extra = sum(v for k, v in got.items() if k not in want)
    print("expected %d, received %d, missing %d, extra %d, duplicates %d" % (
        sum(want.values()), sum(got.values()), sum(missing.values()), extra,
        dup))
    for k in list(missing)[:5]:
        print("missing: %s" % (k,))
    for k in [k for k in got if k not in want][:5]:
        print("extra: %s" % (k,))
    bad = missing or extra or (dup and not a.allow_dup)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
