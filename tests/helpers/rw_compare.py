# SPDX-License-Identifier: MIT
"""Compare what accel-prom serves with what accel-remote-write pushed into a Prometheus.

    rw_compare.py METRICS_URL PROMETHEUS_URL JOB [--at UNIX_SECONDS] [--ignore LABEL]...

Reads accel-prom's /metrics (Prometheus text 0.0.4) and the series of job JOB
from Prometheus's query API (an instant query for {job="JOB"}), leaves out the
programs' own metrics (accel_prom_*, accel_remote_write_*) and the labels the
push adds (job, instance), and compares family, label set and value of every
series. Exit 0 when they are the same; else 1, with the differences on stderr.
Prints the number of series compared on stdout.
"""
import json
import math
import sys
import urllib.parse
import urllib.request


IGNORE = ["job", "instance"]


def parse_labels(s, i):
    """Parse '{a="x",b="y"}' from s[i] == '{'; returns (dict, index after '}')."""
    labels = {}
    i += 1
    while s[i] != "}":
        eq = s.index("=", i)
        name = s[i:eq]
        assert s[eq + 1] == '"', s
        j = eq + 2
        val = []
        while s[j] != '"':
            if s[j] == "\\":
                j += 1
                val.append("\n" if s[j] == "n" else s[j])
            else:
                val.append(s[j])
            j += 1
        labels[name] = "".join(val)
        i = j + 1
        if s[i] == ",":
            i += 1
    return labels, i + 1


def exposition(url):
    out = {}
    with urllib.request.urlopen(url, timeout=10) as r:
        text = r.read().decode()
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        k = min([p for p in (line.find("{"), line.find(" ")) if p >= 0])
        name = line[:k]
        labels = {}
        rest = line[k:]
        if rest.startswith("{"):
            labels, end = parse_labels(line, k)
            rest = line[end:]
        if name.startswith("accel_prom_"):
            continue
        labels = {k: v for k, v in labels.items() if v != ""}  # an empty value is no label to Prometheus
        out[(name, tuple(sorted(labels.items())))] = float(rest.strip())
    return out


def pushed(url, job, at):
    q = {"query": '{job="%s"}' % job}
    if at:
        q["time"] = at
    with urllib.request.urlopen(url + "/api/v1/query?" + urllib.parse.urlencode(q), timeout=10) as r:
        d = json.load(r)
    assert d["status"] == "success", d
    out = {}
    for x in d["data"]["result"]:
        m = dict(x["metric"])
        name = m.pop("__name__")
        for k in IGNORE:
            m.pop(k, None)
        if name.startswith("accel_remote_write_"):
            continue
        out[(name, tuple(sorted(m.items())))] = float(x["value"][1])
    return out


def same(a, b):
    return a == b or (math.isnan(a) and math.isnan(b))


def main():
    at = None
    args = sys.argv[1:]
    if "--at" in args:
        k = args.index("--at")
        at = args[k + 1]
        del args[k:k + 2]
    while "--ignore" in args:
        k = args.index("--ignore")
        IGNORE.append(args[k + 1])
        del args[k:k + 2]
    metrics_url, prom_url, job = args
    want = exposition(metrics_url)
    got = pushed(prom_url, job, at)
    bad = 0
    for k in sorted(set(want) | set(got)):
        if k not in got:
            print("missing from Prometheus: %s %s = %r" % (k[0], dict(k[1]), want[k]), file=sys.stderr)
            bad += 1
        elif k not in want:
            print("not served by accel-prom: %s %s = %r" % (k[0], dict(k[1]), got[k]), file=sys.stderr)
            bad += 1
        elif not same(want[k], got[k]):
            print("value differs: %s %s: accel-prom %r, Prometheus %r" % (k[0], dict(k[1]), want[k], got[k]),
                  file=sys.stderr)
            bad += 1
    print(len(want))
    return 1 if bad or not want else 0


if __name__ == "__main__":
    sys.exit(main())
