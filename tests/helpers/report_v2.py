#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""report_v2: rewrite a report stream of format 3 (docs/report-format.md, "Format versions") as format 2.

Format 3 leaves two things to its reader, which every sink derives (common/derive.c); this is a second,
independent implementation of that step, from the document:
- a container's identity names its pod by "pod_uid" only: each container (and process) identity without
  the pod's names ("pod", "namespace", "qos") takes them from the pod's entry in "identities"."pods";
- a device object (and each of its "mig_devices") has no "pods" and "containers" sums: each is made from its
  "processes" ({"<pid>": bytes | joules | {"<engine>": percent}}), every process with an identity summed
  into its pod (by the identity's "pod_uid") and its container (a container's process), in the order the
  processes come: {"<key>": {"pids": [...], "memory_bytes" | "energy_joules" (device_power, marked by its
  "energy_attribution") | "engines": {...}}}, an integer while every figure is one and the sum fits int64,
  else a real.
"format_version" becomes 2. Used as a module (derive(report), in place) by report_v1.py and csv_check.py; as
a program it reads report lines on stdin and writes each on stdout, a line that is not a format-3 report
unchanged. The integration test ident_format.sh runs every sink over a stream and over this rewrite of it:
their outputs must be the same.
"""
import json
import sys

POD_KEYS = ("pod", "namespace", "qos")
INT64_MAX = 2 ** 63 - 1


def version(r):
    m = r.get("monitor") if isinstance(r, dict) else None
    if not isinstance(m, dict):
        return 0
    v = m.get("format_version", 1)
    return v if type(v) is int and 0 < v < 1000 else 1


def add(o, key, v):
    """o[key] += v as the producer summed before format 3: an integer while both are and it fits."""
    if type(v) not in (int, float):
        return
    cur = o.get(key)
    if cur is None:
        o[key] = v
    elif type(cur) is int and type(v) is int and v >= 0 and cur <= INT64_MAX - v:
        o[key] = cur + v
    else:
        o[key] = float(cur) + v


def device(dev, ids, cid_of):
    procs = dev.get("processes")
    if not isinstance(procs, dict) or "pods" in dev or "containers" in dev:
        return
    num_key = "energy_joules" if "energy_attribution" in dev else "memory_bytes"
    sums = {"pods": {}, "containers": {}}
    for key, fig in procs.items():
        if not key.isdigit() or not 0 < int(key) <= 0x3fffffff:
            continue
        cid = cid_of.get(key)
        ident = ids.get("containers", {}).get(cid) if cid is not None else ids.get("processes", {}).get(key)
        if not isinstance(ident, dict):
            continue
        targets = []
        if isinstance(ident.get("pod_uid"), str):
            targets.append(("pods", ident["pod_uid"]))
        if cid is not None:
            targets.append(("containers", cid))
        for agg, k in targets:
            s = sums[agg].setdefault(k, {"pids": []})
            s["pids"].append(int(key))
            if isinstance(fig, dict):
                eng = s.setdefault("engines", {})
                for e, v in fig.items():
                    add(eng, e, v)
            else:
                add(s, num_key, fig)
    for agg in ("pods", "containers"):
        if sums[agg]:
            dev[agg] = sums[agg]


def derive(r):
    """Format 3 to format 2, in place; other reports are left as they are."""
    ids = r.get("identities") if isinstance(r, dict) else None
    if version(r) < 3 or not isinstance(ids, dict):
        return r
    pods = ids.get("pods", {})
    for table in ("containers", "processes"):
        for o in (ids.get(table) or {}).values():
            pod = pods.get(o.get("pod_uid")) if isinstance(o, dict) and isinstance(o.get("pod_uid"), str) else None
            if isinstance(pod, dict):
                for k in POD_KEYS:
                    if isinstance(pod.get(k), str) and k not in o:
                        o[k] = pod[k]
    cid_of = {}
    for cid, c in (ids.get("containers") or {}).items():
        for p in c.get("pids", []) if isinstance(c, dict) else ():
            if (type(p) is int and p > 0) or (type(p) is float and p > 0 and p == int(p)):
                cid_of[str(int(p))] = cid
    for ent in r.get("device_data", []) if isinstance(r.get("device_data"), list) else ():
        for g in ((ent.get("report") or {}) if isinstance(ent, dict) else {}).values():
            for dev in (g.get("devices") or {}).values() if isinstance(g, dict) else ():
                if isinstance(dev, dict):
                    device(dev, ids, cid_of)
                    for mig in (dev.get("mig_devices") or {}).values():
                        if isinstance(mig, dict):
                            device(mig, ids, cid_of)
    r["monitor"]["format_version"] = 2
    return r


def main():
    for line in sys.stdin:
        try:
            r = json.loads(line)
        except ValueError:
            sys.stdout.write(line)
            continue
        if version(r) < 3:
            sys.stdout.write(line)
            continue
        sys.stdout.write(json.dumps(derive(r), separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
