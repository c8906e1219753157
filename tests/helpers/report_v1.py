#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""report_v1: rewrite a report stream of format 2 or 3 (docs/report-format.md, "Format versions") as format 1.

Reads report lines on stdin and writes each on stdout with its "identities" put back where format 1 had
them: every device (and MIG device) of every device group gets "process_containers" (each of its
processes' identity, from "processes" and "pids") and its "pods" and "containers" sums their names again
(pod, namespace, qos; runtime, pod_uid, pod, namespace, name and an ECS task's fields), as
monitor/host/container.c wrote them before format 2. "identities" and "monitor"."format_version" go. A
line that is not a format-2 report is written unchanged; one of format 3 is made format 2 first (report_v2.py). The integration test ident_format.sh runs every
sink over a stream and over this rewrite of it: their outputs must be the same.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_report import SUM_NAMES  # noqa: E402 (the names format 1 wrote in each sum, from schema.json)
from report_v2 import derive  # noqa: E402 (format 3 to format 2)

POD_KEYS = SUM_NAMES["pods"]
CTR_KEYS = SUM_NAMES["containers"]


def identity(ids, pid):
    """Process pid's identity: its container's (with its "id" again), else its own entry in "processes"."""
    for cid, c in ids.get("containers", {}).items():
        if int(pid) in c.get("pids", []):
            ident = {k: v for k, v in c.items() if k != "pids"}
            ident["id"] = cid
            return ident
    return ids.get("processes", {}).get(pid)


def device(dev, ids):
    pids = [k for k in dev.get("processes", {}) if isinstance(dev.get("processes"), dict)]
    pids += [str(p) for p in dev.get("pids", []) if isinstance(p, int) and str(p) not in pids]
    pc = {p: identity(ids, p) for p in pids if identity(ids, p) is not None}
    if pc:
        dev["process_containers"] = pc
    for agg, table, keys in (("pods", "pods", POD_KEYS), ("containers", "containers", CTR_KEYS)):
        for key, s in dev.get(agg, {}).items():
            ident = ids.get(table, {}).get(key, {})
            named = {k: ident[k] for k in keys if k in ident}
            named.update(s)
            dev[agg][key] = named


def main():
    for line in sys.stdin:
        try:
            r = json.loads(line)
        except ValueError:
            sys.stdout.write(line)
            continue
        ids = derive(r).pop("identities", None) if isinstance(r, dict) else None
        if ids is None:
            sys.stdout.write(line)
            continue
        r.get("monitor", {}).pop("format_version", None)
        for ent in r.get("device_data", []):
            for g in (ent.get("report") or {}).values():
                for dev in (g.get("devices") or {}).values() if isinstance(g, dict) else ():
                    if isinstance(dev, dict):
                        device(dev, ids)
                        for mig in (dev.get("mig_devices") or {}).values():
                            if isinstance(mig, dict):
                                device(mig, ids)
        sys.stdout.write(json.dumps(r, separators=(",", ":")) + "\n")


main()
