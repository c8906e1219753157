#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check accel-csv output against the report stream it was made from.

Reads the CSV with Python's csv module (RFC 4180) and the stream with json,
works out on its own which samples each report must give (the rules of
common/samples.c, written again here in Python so that a mistake in either
shows up as a difference), and compares every row and every value:

    csv_check.py --input STREAM [--format long|wide] [--host NAME]
                 [--now MS --step MS] [--timestamp-format iso8601|unix|unix_ms]
                 [--columns LIST] [--clock-restart N] [--no-formula-escape]
                 FILE.csv [FILE.csv ...]

Several files are read in order as one output (rotation, wide continuation).
Values are compared as doubles, exactly: the CSV must hold the same double
that the JSON number (scaled as the mapping does) gives. Text cells must be
formula-escaped as OWASP recommends (a leading ' on text that starts with
= + - @ TAB or CR and is not a plain number) unless --no-formula-escape.
Exit status 0 when everything matches; 1 with the differences on stderr.
"""
import argparse
import collections
import csv
import datetime
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_v2 import derive  # noqa: E402 (format 3: what the reader derives)

# The report schema, families and rules: common/schema.c and every block of rows (common/rows.h), as test_schema
# writes them.
SCHEMA = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "schema.json"),
                        encoding="utf-8"))
LABEL_COLUMNS = [x["name"] for x in SCHEMA["labels"] if x["csv_column"] and x["kind"] != "instance"]
INSTANCE_COLUMNS = [x["name"] for x in SCHEMA["labels"] if x["csv_column"] and x["kind"] == "instance"]
LONG_COLUMNS = ["timestamp", "host", "group", "entity", "metric", "value", "unit", "metric_type", "period",
                "series"] + LABEL_COLUMNS + INSTANCE_COLUMNS + ["other_labels"]
LABEL_COLUMNS = LONG_COLUMNS[10:-1]
ROW_KEY = [x["name"] for x in SCHEMA["labels"] if (x["kind"] == "runtime" and x["name"] != "runtime_tag")
           or (x["kind"] == "device" and not x["optional"])]  # optional ones (MIG ids) name the column
WIDE_KEYS = ["timestamp", "host", "entity"] + ROW_KEY + INSTANCE_COLUMNS
WIDE_SKIP = ("runtime_tag",) + tuple(ROW_KEY)
TS_COLUMN = {"iso8601": "timestamp", "unix": "timestamp_unix", "unix_ms": "timestamp_unix_ms"}

# Families: name -> (type, unit); a histogram family's rows are its name_bucket, name_sum and name_count (counters)
FAMILIES = {f["name"]: (f["type"], f["unit"]) for f in SCHEMA["families"]}
for _f in SCHEMA["families"]:
    if _f["type"] == "histogram":
        FAMILIES.update({_f["name"] + "_bucket": ("counter", "count"), _f["name"] + "_sum": ("counter", _f["unit"]),
                         _f["name"] + "_count": ("counter", "count")})
SCOPES = {"runtime": "rt", "system": "sys", "device": "dev", "device_group": "devgrp", "monitor": "mon"}
# (scope, group, path, family, capture labels, fixed label, scale, clamp, device_type, index_label, ident,
#  unless, only_with, weight)
RULES = [(SCOPES[r["scope"]], r["group"], r["path"], r["family"], r["labels"], r["fixed"],
          r["scale"] if r["scale"] == "percent" else (0 if r["scale"] == 1 else r["scale"]), r["clamp"],
          r["device_type"], r["index_label"], r.get("ident"), r.get("unless"), r.get("only_with"), r.get("weight"))
         for r in SCHEMA["rules"]]


def applies(rule, g):
    """Endpoint runtimes: a rule's unless and only_with, keys of the group g."""
    return not (rule[11] and rule[11] in g) and not (rule[12] and rule[12] not in g)


# containers: the labels an identity gives, as common/all_rows.c's ident_label_rows (schema.json's "ident_labels").
IDENT_LABELS = SCHEMA["ident_labels"]


def ident_labels(o, kind=None, key=None):
    """The labels identity object o gives, as common/samples.c: kind "pod" or "container" and key are the sum's."""
    if not isinstance(o, dict):
        return []
    out = []
    for r in IDENT_LABELS:
        if kind is not None and r.get("not_for") == kind:
            continue
        v = str_or(o, r["field"], "")
        if not v and r.get("key_of") is not None and r.get("key_of") == kind:
            v = key
        elif not v and r.get("fallback"):
            v = str_or(o, r["fallback"], "")
        if v:
            out.append((r["label"], v))
    return out


def process_identity(ids, dev, pid):
    """Process pid's identity and, in format 2, its container's id (the table's key), as common/samples.c."""
    pc = dev.get("process_containers")
    if pc is not None:
        return (pc.get(pid) if isinstance(pc, dict) else None), None
    for cid, c in (ids or {}).get("containers", {}).items():
        if isinstance(c, dict) and any(str(p) == pid for p in c.get("pids", []) if type(p) is int):
            return c, cid
    return (ids or {}).get("processes", {}).get(pid), None


def sum_identity(ids, kind, key, s):
    """A pod's or container's sum's identity: format 2's table entry, else the sum itself (format 1)."""
    o = (ids or {}).get("pods" if kind == "pod" else "containers", {}).get(key)
    return o if isinstance(o, dict) else s


INST_LABELS = [x for x in SCHEMA["labels"] if x["kind"] == "instance"]
DEVICE_LABELS = [x for x in SCHEMA["labels"] if x["kind"] == "device"]
LAST_INSTANCE = {}  # the instance labels of the last report that had instance_info (as common/samples.c)


Sample = collections.namedtuple("Sample", "family group entity labels value ts_ms period host")


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def str_or(o, k, d):
    v = o.get(k) if isinstance(o, dict) else None
    return v if isinstance(v, str) else d


def parse_iso(s):
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|\+00:00)", s or "")
    if not m:
        return None
    t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    frac = (m.group(2) or "")[:9].ljust(9, "0")
    return (int(t.timestamp()) * 10**9 + int(frac)) // 10**6


def steps_of(path):
    out = []
    for seg in path.split("."):
        if seg == "*":
            out.append(("any",))
        elif seg.startswith("*[") and seg.endswith("]"):
            out.append(("any", seg[2:-1].split(",")))  # the key, then these string fields of the member
        elif seg == "#":
            out.append(("count",))
        elif seg == "1":
            out.append(("one",))
        elif seg.startswith("{"):
            body = seg[1:-1]
            out.append(("sum", body.split("+")) if "+" in body else ("keys", body.split(",")))
        elif "[" in seg:
            key, field = seg[:-1].split("[")
            out.append(("key", key))
            out.append(("elem", field or None))
        else:
            out.append(("key", seg))
    return out


def le_text(v):
    """A bound as its le label's value (common/samples.c sample_le_text): integral "%d.0", else the shortest of
    %.15g..%.17g that reads back, with ".0" when it has neither "." nor "e"."""
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == int(v) and abs(v) < 9.2e18:
        return "%d.0" % v
    for p in (15, 16, 17):
        t = "%.*g" % (p, v)
        if float(t) == v:
            break
    return t if "." in t or "e" in t else t + ".0"


def hist_rows(fam, h):
    """A latency_histograms object (docs/report-format.md §6.5) as the rows accel-csv writes: (family, le or None,
    value) for name_bucket (cumulative over the bounds, +Inf last), name_sum, name_count; [] when it is not one
    (common/samples.c refuses it as a bad value)."""
    if not isinstance(h, dict) or set(h) < {"le", "counts", "sum", "count"}:
        return []
    le, counts, sm, cnt = h["le"], h["counts"], h["sum"], h["count"]
    if not isinstance(le, list) or not isinstance(counts, list) or not is_num(sm) or not is_num(cnt) \
            or len(le) > 512 or len(counts) != len(le) + 1 or not all(is_num(x) for x in le + counts) \
            or any(float(c) < 0 for c in counts) or any(float(b) <= float(a) for a, b in zip(le, le[1:])) \
            or abs(sum(float(c) for c in counts) - float(cnt)) > 1e-9 * max(1.0, sum(float(c) for c in counts)):
        return []
    out, cum = [], 0.0
    for i, c in enumerate(counts):
        cum += float(c)
        out.append((fam + "_bucket", le_text(float(le[i])) if i < len(le) else "+Inf", cum))
    return out + [(fam + "_sum", None, float(sm)), (fam + "_count", None, float(cnt))]


def walk(node, steps, caps, emit, ident=None, anchor=None):
    """ident: for an ident rule, a one-element list the first "*" fills with (object, key) instead of a capture.
    anchor: a one-element list that holds the object the last "*" reached (a rule's weight is found from it)."""
    if not steps:
        if is_num(node):
            emit(float(node), caps)
        elif isinstance(node, (bool, dict)):
            emit(node, caps)  # only a boolean rule takes a boolean, only a histogram's an object (emit)
        return
    st, rest = steps[0], steps[1:]
    if st[0] == "key":
        if isinstance(node, dict) and st[1] in node:
            walk(node[st[1]], rest, caps, emit, ident, anchor)
    elif st[0] == "any":
        if isinstance(node, dict):
            for k, v in node.items():
                if ident is not None and ident[0] is None:
                    ident[0] = (v, k)
                    walk(v, rest, caps, emit, ident, anchor)
                    ident[0] = None
                else:
                    more = [v.get(f) if isinstance(v, dict) and isinstance(v.get(f), str) else ""
                            for f in (st[1] if len(st) > 1 else [])]
                    prev = anchor[0] if anchor else None
                    if anchor:
                        anchor[0] = v
                    walk(v, rest, caps + [k] + more, emit, ident, anchor)
                    if anchor:
                        anchor[0] = prev
    elif st[0] == "keys":
        if isinstance(node, dict):
            for k in st[1]:
                if k in node:
                    walk(node[k], rest, caps + [k], emit, None, anchor)
    elif st[0] == "elem":
        if isinstance(node, list):
            for i, v in enumerate(node):
                f = v.get(st[1]) if st[1] and isinstance(v, dict) else None
                if st[1] and isinstance(f, int) and not isinstance(f, bool):
                    cap = str(f)
                elif st[1] and isinstance(f, float):
                    cap = str(int(f)) if f == int(f) and -2**63 <= f < 2**63 else "%.17g" % f
                elif st[1] and isinstance(f, str):
                    cap = f
                else:
                    cap = str(i)
                walk(v, rest, caps + [cap], emit, None, anchor)
    elif st[0] == "sum":
        if isinstance(node, dict):
            total = 0.0
            for k in st[1]:
                if not is_num(node.get(k)):
                    return
                total += float(node[k])
            if not rest:
                emit(total, caps)
    elif st[0] == "one":
        emit(1.0, caps)
    elif st[0] == "count":
        if isinstance(node, (dict, list)):
            emit(float(len(node)), caps)


def map_report(rep, now_ms):
    """The samples common/samples.c gives for one report, in its order."""
    out = []
    if "runtime_data" in rep or "monitor" in rep:
        fmt, rts = "accel", rep.get("runtime_data")
    else:
        rts = rep.get("neuron_runtime_data")
        first = rts[0] if isinstance(rts, list) and rts else None
        fmt = "2020" if "instance_data" in rep or (isinstance(first, dict) and "neuron_runtime_index" in first) else "2x"
    # Format 2 (docs/report-format.md): the identities the devices' sums and processes refer to.
    ids = rep.get("identities") if fmt == "accel" and isinstance(rep.get("identities"), dict) else None
    root_iso = str_or(rep, "timestamp", None)
    root_ms = parse_iso(root_iso) if root_iso else None
    if root_ms is None:
        root_ms = now_ms
    inst = rep.get("instance_data" if fmt == "2020" else "instance_info")
    if inst is None:
        inst = rep.get("instance_data")
    if isinstance(inst, dict) or not LAST_INSTANCE:
        inst = inst if isinstance(inst, dict) else None
        LAST_INSTANCE["labels"] = [(x["name"], str_or(inst, x["source"], "")) for x in INST_LABELS
                                   if not x["optional"] or (inst is not None and x["source"] in inst)]
        LAST_INSTANCE["host"] = str_or(inst, "hostname", "")
    ilabels = list(LAST_INSTANCE["labels"])
    host = LAST_INSTANCE["host"]
    out.append(Sample("instance_info", "instance_info", "instance", ilabels, 1.0, root_ms, 0.0, host))
    hw = rep.get("neuron_hardware_info")
    if isinstance(hw, dict) and not str_or(hw, "error", ""):
        def cnt(k):
            v = hw.get(k)
            return str(v) if isinstance(v, int) and not isinstance(v, bool) else "0"
        out.append(Sample("neuron_hardware_info", "neuron_hardware_info", "instance",
                          ilabels + [("neuron_device_count", cnt("neuron_device_count")),
                                     ("neuroncore_per_device_count", cnt("neuroncore_per_device_count"))],
                          1.0, root_ms, 0.0, host))

    def groups(scope, gs, entity, base):
        if not isinstance(gs, dict):
            return
        for name, g in gs.items():
            if not isinstance(g, dict):
                continue
            rules = [r for r in RULES if r[0] == scope and r[1] == name]
            if not rules or str_or(g, "error", ""):
                continue
            rules = [r for r in rules if applies(r, g)]
            ts = group_time(g)
            per = float(g["period"]) if is_num(g.get("period")) else 0.0
            apply(rules, g, name, entity, base, ts, per)

    def apply(rules, node, name, entity, base, ts, per, index_key=None):
        for _, _, path, fam, caps, fixed, scale, clamp, _, index_label, ident, _, _, weight in rules:
            capnames = caps.split(",") if caps else []
            first = base + ([(index_label, index_key)] if index_label else [])
            slot = [None] if ident else None
            anchor = [None]

            def emit(v, got, fam=fam, capnames=capnames, fixed=fixed, scale=scale, clamp=clamp, first=first,
                     slot=slot, ident=ident, weight=weight, anchor=anchor):
                hist = FAMILIES[fam][0] == "histogram"
                if hist != isinstance(v, dict):
                    return  # a histogram family's rule reads latency_histograms objects, and nothing else
                if (scale == "boolean") != isinstance(v, bool) and not hist:
                    return  # a boolean rule reads JSON booleans as 0 or 1, and nothing else (common/rows.h)
                if scale == "boolean":
                    v = 1.0 if v else 0.0
                if weight:
                    # a mean per request times the requests of the same object (the last "*" reached)
                    f = anchor[0]
                    for k in weight.split("."):
                        f = f.get(k) if isinstance(f, dict) else None
                    if not is_num(f):
                        return
                    v *= float(f)
                if clamp and not hist and v > clamp:
                    v = float(clamp)
                if scale == "percent":
                    v = v / 100.0  # a percent, as neuron-monitor-prometheus.py divides it
                elif scale and scale != "boolean" and not hist:
                    v *= scale
                if not hist and math.isinf(v):
                    return  # out of range once scaled: a bad value, no sample
                labels = first + [(k, v) for k, v in zip(capnames, got) if v or "*[" not in path]
                if fixed:
                    labels.append(tuple(fixed.split("=", 1)))
                if slot is not None and slot[0] is not None:
                    o, k = slot[0]
                    labels += ident_labels(sum_identity(ids, ident, k, o), ident, k)
                elif "pid" in capnames and index_key is not None and isinstance(node, dict):
                    pid = got[capnames.index("pid")] if capnames.index("pid") < len(got) else None
                    o, cid = process_identity(ids, node, pid)
                    labels += ident_labels(o, "container" if cid else None, cid)
                if hist:
                    for f, le, x in hist_rows(fam, v):
                        out.append(Sample(f, name, entity, labels + ([("le", le)] if le else []), x, ts, per, host))
                    return
                out.append(Sample(fam, name, entity, labels, v, ts, per, host))
            walk(node, steps_of(path), [], emit, slot, anchor)

    def group_time(g):
        iso = str_or(g, "timestamp", None)
        if iso and iso != root_iso and parse_iso(iso) is not None:
            return parse_iso(iso)
        return root_ms

    def devices(ent):
        dtype = str_or(ent, "device_type", "")
        rep = ent.get("report")
        if str_or(ent, "error", "") or not isinstance(rep, dict):
            return
        for name, g in rep.items():
            rules = [r for r in RULES if r[0] == "dev" and r[1] == name and r[8] in (None, dtype) and applies(r, g)]
            grules = [r for r in RULES if r[0] == "devgrp" and r[1] == name and r[8] in (None, dtype)
                      and applies(r, g)]
            if not (rules or grules) or not isinstance(g, dict) or str_or(g, "error", ""):
                continue
            per = float(g["period"]) if is_num(g.get("period")) else 0.0
            apply(grules, g, name, dtype, ilabels, group_time(g), per)
            devs = g.get("devices")
            for key, dev in (devs.items() if isinstance(devs, dict) else ()):
                if not isinstance(dev, dict) or str_or(dev, "error", ""):
                    continue
                base = ilabels + [(x["name"], dtype if x["name"] == "device_type" else key if x["name"] == "device"
                                   else str_or(dev, x["source"], "")) for x in DEVICE_LABELS if not x["optional"]]
                # Optional device labels (NVIDIA MIG instances' ids and profile): only where the device has them.
                for x in DEVICE_LABELS:
                    v = dev.get(x["source"]) if x["optional"] else None
                    if isinstance(v, str):
                        base.append((x["name"], v))
                    elif isinstance(v, int) and not isinstance(v, bool):
                        base.append((x["name"], str(v)))
                entity = dtype + ":" + key
                apply(rules, dev, name, entity, base, group_time(g), per, key)

    if isinstance(rts, list):
        for e in rts:
            if not isinstance(e, dict):
                continue
            pid = e.get("pid")
            pid_ok = isinstance(pid, int) and not isinstance(pid, bool)
            if fmt == "2020":
                idx = e.get("neuron_runtime_index")
                tag = str(idx if isinstance(idx, int) and not isinstance(idx, bool) else 0)
            else:
                tag = str_or(e, "runtime_tag" if fmt == "accel" else "neuron_runtime_tag", "")
                if not tag:
                    tag = str(pid) if pid_ok else str_or(e, "address", "")
            if str_or(e, "error", ""):
                continue
            base = ilabels + [("runtime_tag", tag)]
            if fmt != "2020" and pid_ok:
                base.append(("pid", str(pid)))
            base += ident_labels(e.get("container"))
            groups("rt", e.get("report"), tag, base)
    dd = rep.get("device_data")
    for ent in (dd if isinstance(dd, list) else ()):
        if isinstance(ent, dict):
            devices(ent)
    groups("sys", rep.get("system_data"), "system", ilabels)
    groups("mon", {"monitor": rep.get("monitor")}, "monitor", ilabels)  # the producer's self-timing
    return out


def read_stream(path, now, step, restart=0):
    """The good reports of a stream, with the clock value each one is mapped with.
    restart: the stream was fed to several runs of that many reports, each starting the clock again."""
    start = now
    def no_dupes(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate key")
        return dict(pairs)

    def no_const(c):
        raise ValueError(c)

    reports = []
    with open(path, "rb") as f:
        for raw in f.read().split(b"\n"):
            line = raw.rstrip(b"\r ")
            if not line:
                continue
            try:
                rep = json.loads(line.decode("utf-8"), object_pairs_hook=no_dupes, parse_constant=no_const)
            except (ValueError, UnicodeDecodeError):
                continue
            if not isinstance(rep, dict):
                continue
            reports.append((derive(rep), now))  # format 3: what the reader derives (common/derive.c)
            now += step
            if restart and len(reports) % restart == 0:
                now = start
    return reports


def label_text(v):
    if v == "" or re.search(r'[,{}="\\\x00-\x1f]', v):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'
    return v


def series(s, skip=()):
    ls = [f"{k}={label_text(v)}" for k, v in s.labels[6:] if k not in skip]
    return s.family + ("{" + ",".join(ls) + "}" if ls else "")


def ts_text(ms, fmt):
    if fmt == "unix_ms":
        return str(ms)
    if fmt == "unix":
        sign = "-" if ms < 0 else ""
        return f"{sign}{abs(ms) // 1000}.{abs(ms) % 1000:03d}"
    t = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
ESCAPE = True  # --no-formula-escape clears it


def text_cell(v):
    """What a text cell holding v must read back as: v, with a leading ' when a spreadsheet would run it."""
    if ESCAPE and v.startswith(FORMULA_START) and not NUMBER.fullmatch(v):
        return "'" + v
    return v


def num(text, what, errs):
    try:
        return float(text)
    except ValueError:
        errs.append(f"{what}: not a number: {text!r}")
        return None


def read_csvs(files):
    """Yield (file, header, row) for each data row; an empty line followed by a new header starts a block."""
    for name in files:
        with open(name, newline="", encoding="utf-8") as f:
            header = None
            for row in csv.reader(f, strict=True):
                if header is None:
                    header = row
                elif row == []:
                    header = None
                else:
                    yield name, header, row


def check_long(reports, files, a, errs):
    cols = a.columns.split(",") if a.columns else LONG_COLUMNS
    want_header = [TS_COLUMN[a.timestamp_format] if c == "timestamp" else c for c in cols]
    if "metric" not in cols and "series" not in cols:
        errs.append("--columns must include metric or series (instance_info rows start each report)")
        return 0
    batches = []
    for name, header, row in read_csvs(files):
        if header != want_header:
            errs.append(f"{name}: header {header} != {want_header}")
            return 0
        if len(row) != len(header):
            errs.append(f"{name}: a row of {len(row)} fields, header has {len(header)}: {row}")
            continue
        rec = dict(zip(cols, row))
        if rec.get("metric", rec.get("series")) == "instance_info" or not batches:
            batches.append([])
        batches[-1].append(rec)
    if len(batches) != len(reports):
        errs.append(f"{len(batches)} reports in the CSV, {len(reports)} in the stream")
    checked = 0
    for i, ((rep, now), rows) in enumerate(zip(reports, batches)):
        want = collections.Counter()
        for s in map_report(rep, now):
            rec = {"timestamp": ts_text(s.ts_ms, a.timestamp_format), "host": s.host or a.host, "group": s.group,
                   "entity": s.entity, "metric": s.family, "value": s.value, "unit": FAMILIES[s.family][1],
                   "metric_type": FAMILIES[s.family][0], "period": s.period if s.period > 0 else "",
                   "series": series(s), "other_labels": ""}
            for c in LABEL_COLUMNS:
                rec[c] = ""
            other = []
            for i, (k, v) in enumerate(s.labels):
                if i < 6 and s.entity != "instance":
                    continue  # the host's instance labels are on its instance rows only
                if k in LABEL_COLUMNS:
                    rec[k] = v
                else:
                    other.append(f"{k}={label_text(v)}")
            rec["other_labels"] = ",".join(other)
            want[tuple((c, rec[c] if c in ("timestamp", "value", "period") else text_cell(rec[c]))
                       for c in cols)] += 1
        got = collections.Counter()
        for r in rows:
            t = []
            for c in cols:
                v = r[c]
                if c in ("value", "period") and v != "":
                    v = num(v, f"report {i + 1} {c}", errs)
                t.append((c, v))
            got[tuple(t)] += 1
            checked += 1
        for t in (want - got):
            errs.append(f"report {i + 1}: missing or different in the CSV: {dict(t)}")
        for t in (got - want):
            errs.append(f"report {i + 1}: not expected: {dict(t)}")
    return checked


def check_wide(reports, files, a, errs):
    keep = set(a.columns.split(",")) if a.columns else None
    keys = [TS_COLUMN[a.timestamp_format]] + WIDE_KEYS[1:]
    batches = []
    for name, header, row in read_csvs(files):
        if header[:len(keys)] != keys or len(set(header)) != len(header):
            errs.append(f"{name}: header starts {header[:len(keys)]}, want {keys}")
            return 0
        if len(row) != len(header):
            errs.append(f"{name}: a row of {len(row)} fields, header has {len(header)}")
            continue
        rec = dict(zip(header, row))
        # A report's rows share its time and start with its instance row (unless --columns left that out).
        if not batches or rec["entity"] == "instance" or rec[keys[0]] != batches[-1][-1][keys[0]]:
            batches.append([])
        batches[-1].append(rec)
    wanted = []
    for rep, now in reports:
        samples = map_report(rep, now)
        kept = [s for s in samples if not keep or s.family in keep or series(s, WIDE_SKIP) in keep]
        if kept:
            wanted.append((samples[0].ts_ms, kept))
    if len(batches) != len(wanted):
        errs.append(f"{len(batches)} reports in the CSV, {len(wanted)} in the stream")
    checked = 0
    for i, ((report_ms, samples), rows) in enumerate(zip(wanted, batches)):
        want = collections.Counter()
        for s in samples:
            col = series(s, WIDE_SKIP)
            if keep and s.family not in keep and col not in keep:
                continue
            labels = dict(s.labels[6:])
            key = (ts_text(report_ms, a.timestamp_format), text_cell(s.host or a.host), text_cell(s.entity)) + \
                tuple(text_cell(labels.get(k, "")) for k in ROW_KEY) + tuple(text_cell(v) for _, v in s.labels[:6])
            want[key + (col, s.value)] += 1
        got = collections.Counter()
        for r in rows:
            key = tuple(r[k] for k in keys)
            for c, v in r.items():
                if c in keys or v == "":
                    continue
                got[key + (c, num(v, f"report {i + 1} {c}", errs))] += 1
                checked += 1
        for t in (want - got):
            errs.append(f"report {i + 1}: missing or different in the CSV: {t}")
        for t in (got - want):
            errs.append(f"report {i + 1}: not expected: {t}")
    return checked


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--input", required=True)
    p.add_argument("--format", choices=("long", "wide"), default="long")
    p.add_argument("--host", default="")
    p.add_argument("--now", type=int, default=0, help="ACCEL_CSV_NOW, in unix ms")
    p.add_argument("--step", type=int, default=0, help="ACCEL_CSV_NOW_STEP, in ms")
    p.add_argument("--clock-restart", type=int, default=0, metavar="N",
                   help="the input went to several runs of N reports each; each run starts at --now")
    p.add_argument("--timestamp-format", choices=sorted(TS_COLUMN), default="iso8601")
    p.add_argument("--columns", default="")
    p.add_argument("--no-formula-escape", action="store_true", help="accel-csv ran with --no-formula-escape")
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    global ESCAPE
    ESCAPE = not a.no_formula_escape
    reports = read_stream(a.input, a.now, a.step, a.clock_restart)
    errs = []
    n = (check_wide if a.format == "wide" else check_long)(reports, a.files, a, errs)
    if errs:
        for e in errs[:40]:
            print("csv_check: " + e, file=sys.stderr)
        print(f"csv_check: {len(errs)} differences", file=sys.stderr)
        return 1
    print(f"csv_check: {len(reports)} reports, {n} values match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
