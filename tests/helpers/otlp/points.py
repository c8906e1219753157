# SPDX-License-Identifier: MIT
"""Questions about what tests/helpers/otlp/receiver.mjs took, for accel-otlp's tests.

    points.py DIR count [METRIC [KEY=VALUE...]]   data points taken (of METRIC, with those attributes)
    points.py DIR data                            data points taken but the exporter's own (accel_otlp_*)
    points.py DIR times METRIC [KEY=VALUE...]     "N distinct, M duplicates": the points' timeUnixNano
    points.py DIR stamps METRIC [KEY=VALUE...]    their distinct timeUnixNano (ms), one a line, sorted
    points.py DIR last METRIC [KEY=VALUE...]      the value of the newest point (asDouble or asInt)
    points.py DIR max METRIC [KEY=VALUE...]       the largest value of its points
    points.py DIR resource KEY                    the resource attribute KEY of the last request ("" none)
    points.py DIR log EXPR                        a Python expression over r, the list of requests.log
                                                  entries (dicts: seq, t, action, status, headers, points...)

DIR is the receiver's --dir: requests.jsonl holds each request taken as OTLP/JSON, requests.log one line per
request received.
"""
import json
import os
import sys


def requests(d):
    with open(os.path.join(d, "requests.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def attr_value(v):
    for k in ("stringValue", "intValue", "doubleValue", "boolValue"):
        if k in v:
            return str(v[k])
    return json.dumps(v)


def points(d, metric=None, want=()):
    """(metric name, attributes dict, data point) of each point taken."""
    for req in requests(d):
        for rm in req.get("resourceMetrics", []):
            for sm in rm.get("scopeMetrics", []):
                for m in sm.get("metrics", []):
                    if metric and m["name"] != metric:
                        continue
                    for kind in ("gauge", "sum", "histogram", "exponentialHistogram", "summary"):
                        for dp in m.get(kind, {}).get("dataPoints", []):
                            attrs = {a["key"]: attr_value(a["value"]) for a in dp.get("attributes", [])}
                            if all(attrs.get(k) == v for k, v in want):
                                yield m["name"], attrs, dp


def main():
    d, what, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    metric = args[0] if args else None
    want = [tuple(a.split("=", 1)) for a in args[1:]]
    if what == "count":
        print(sum(1 for _ in points(d, metric, want)))
    elif what == "data":
        print(sum(1 for name, _, _ in points(d) if not name.startswith("accel_otlp_")))
    elif what in ("times", "stamps"):
        ts = [int(dp["timeUnixNano"]) for _, _, dp in points(d, metric, want)]
        if what == "times":
            print("%d distinct, %d duplicates" % (len(set(ts)), len(ts) - len(set(ts))))
        else:
            for t in sorted(set(ts)):
                print(t // 1000000)
    elif what == "last":
        best = None
        for _, _, dp in points(d, metric, want):
            t = int(dp["timeUnixNano"])
            if best is None or t >= best[0]:
                best = (t, dp.get("asDouble", dp.get("asInt")))
        print("" if best is None else best[1])
    elif what == "max":
        vals = [float(dp.get("asDouble", dp.get("asInt", 0))) for _, _, dp in points(d, metric, want)]
        print("" if not vals else "%.15g" % max(vals))
    elif what == "resource":
        reqs = requests(d)
        val = ""
        if reqs:
            for rm in reqs[-1].get("resourceMetrics", []):
                for a in rm.get("resource", {}).get("attributes", []):
                    if a["key"] == args[0]:
                        val = attr_value(a["value"])
        print(val)
    elif what == "log":
        with open(os.path.join(d, "requests.log")) as f:
            r = [json.loads(line) for line in f if line.strip()]
        print(eval(args[0], {"r": r}))
    else:
        sys.exit("points.py: unknown question %r" % what)


if __name__ == "__main__":
    main()
