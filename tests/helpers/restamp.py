# SPDX-License-Identifier: MIT
"""Print one report again and again, restamped: the push sinks' delivery tests feed these.

    restamp.py REPORT BASE_MS FROM TO

REPORT is a file whose first line is a report; for each i in FROM..TO it is printed with every "timestamp"
set to BASE_MS + i * 100 ms (RFC 3339, UTC) and every "period" to 0.1, one report a line.
"""
import datetime
import json
import sys


def stamp(o, ts):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == "timestamp":
                o[k] = ts
            elif k == "period":
                o[k] = 0.1
            else:
                stamp(v, ts)
    elif isinstance(o, list):
        for v in o:
            stamp(v, ts)


def main():
    with open(sys.argv[1]) as f:
        rep = json.loads(f.readline())
    base = int(sys.argv[2])
    for i in range(int(sys.argv[3]), int(sys.argv[4]) + 1):
        ms = base + i * 100
        ts = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")
        stamp(rep, ts[:-3] + "Z")
        print(json.dumps(rep))


if __name__ == "__main__":
    main()
