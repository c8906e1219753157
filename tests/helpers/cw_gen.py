#!/usr/bin/python3
"""Generate accel-monitor reports whose every value is unique, for the
accel-cloudwatch delivery tests: report i carries memory_used_bytes =
BASE + i, so the receiver's records can be matched to the input datum by
datum. Standard library only.

Usage: cw_gen.py [--count N] [--rate R] [--age-s S] [--step-ms MS]
                 [--base B] [--instance-id ID] [--bad-at K] [--old-at K]
                 [--runtimes M] [--expected FILE]
  --rate R      reports per second (0: as fast as possible)
  --age-s S     the first report is S seconds in the past (default 0)
  --bad-at K    report K's memory_used_bytes is 1e300 (CloudWatch refuses it)
  --old-at K    report K is timestamped 15 days ago
  --runtimes M  add M runtimes with memory_used (2 datums each) per report
  --expected F  write the datums that should arrive (JSON lines: name, ts, value)
"""

import argparse
import datetime
import json
import sys
import time


def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).isoformat(
        timespec="milliseconds").replace("+00:00", "Z")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--rate", type=float, default=0)
    ap.add_argument("--age-s", type=float, default=0)
    ap.add_argument("--step-ms", type=int, default=1)
    ap.add_argument("--base", type=int, default=1000000)
    ap.add_argument("--instance-id", default="i-0fedcba9876543210")
    ap.add_argument("--bad-at", type=int, default=-1)
    ap.add_argument("--old-at", type=int, default=-1)
    ap.add_argument("--runtimes", type=int, default=0)
    ap.add_argument("--expected")
    a = ap.parse_args()

    exp = open(a.expected, "w") if a.expected else None
    t0 = time.time() - a.age_s
    for i in range(a.count):
        if a.rate:
            t = time.time()
        else:
            t = t0 + i * a.step_ms / 1000.0
        if i == a.old_at:
            t = time.time() - 15 * 86400
        ts = iso(t)
        used = 1e300 if i == a.bad_at else a.base + i
        mem = {"period": 1.0, "timestamp": ts, "error": "",
               "memory_total_bytes": 8000000000, "memory_used_bytes": used,
               "swap_total_bytes": 0, "swap_used_bytes": i}
        rts = []
        for r in range(a.runtimes):
            rts.append({"pid": 100 + r, "runtime_tag": "app%d" % r,
                        "address": "process:app%d" % r, "error": "",
                        "report": {"memory_used": {
                            "period": 1.0, "timestamp": ts, "error": "",
                            "runtime_used_bytes": {"host": a.base * 2 + i * 10 + r,
                                                   "device": 0}}}})
        rep = {"timestamp": ts, "monitor": {"version": "0.1.0", "seq": i},
               "runtime_data": rts, "device_data": [],
               "system_data": {"memory_info": mem},
               "instance_info": {"instance_id": a.instance_id,
                                 "instance_type": "inf2.xlarge", "error": ""}}
        sys.stdout.write(json.dumps(rep, separators=(",", ":")) + "\n")
        sys.stdout.flush()
        if exp and i != a.old_at:
            ms = ts
            for name, v in (("SystemMemoryTotal", 8000000000.0),
                            ("SystemMemoryUsed", float(used)),
                            ("SystemSwapTotal", 0.0),
                            ("SystemSwapUsed", float(i))):
                if name == "SystemMemoryUsed" and i == a.bad_at:
                    continue
                exp.write(json.dumps({"name": name, "ts": ms, "value": v}) + "\n")
            for r in range(a.runtimes):
                exp.write(json.dumps({"name": "RuntimeMemoryUsed", "ts": ms,
                                      "value": float(a.base * 2 + i * 10 + r)}) + "\n")
                exp.write(json.dumps({"name": "RuntimeMemoryUsed", "ts": ms,
                                      "value": 0.0}) + "\n")
        if a.rate:
            time.sleep(1.0 / a.rate)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(0)
