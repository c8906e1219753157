#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Strict checker for accel-monitor's report stream (docs/report-format.md).

Usage:
  accel-monitor ... | check_report.py [OPTIONS]
  check_report.py [OPTIONS] FILE...      each FILE is its own stream ("-": stdin)
  check_report.py --self-test [-v]

Every line must be one compact JSON object, terminated by "\\n", valid UTF-8,
with exactly the keys, types and ranges the document gives, at every level.
Across the lines of one stream: seq counts up by one from 0, a runtime_index
keeps its address, and a group's period equals the time since the report
that last held the same group (root timestamps, within --period-tolerance).

Options:
  --expect-groups A,B   every line's system_data holds exactly these groups
  --some                with --expect-groups: each line holds a subset, and
                        every listed group shows up in at least one line
  --no-system-errors    every system_data group has error ""
  --count N             each stream has exactly N lines
  --config FILE         the JSON config the monitor ran with: runtime_index,
                        address and the groups must match it
  --period-tolerance S  seconds (default 0.05)
  --reloads             the stream may span SIGHUP reloads: a period may be
                        shorter than the time since the previous collection,
                        and a runtime_index may change its address
  -v                    print a one-line summary on success
On failure prints "line N: json.path: what is wrong" (prefixed with the file
name when files are given) and exits 1. Standard library only.
"""

import argparse
import calendar
import copy
import json
import math
import os
import re
import sys
import tempfile
import time

EPS = 1e-6
MAX_ERRORS = 50

CPU_FIELDS = ("user", "nice", "system", "idle", "io_wait", "irq", "soft_irq")
ENVELOPE = ("period", "timestamp", "error")
# Groups, their scope and neuron-monitor's aliases: common/schema.h, as test_schema writes them.
SCHEMA = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "schema.json"),
                        encoding="utf-8"))
SYSTEM_GROUPS = tuple(g["name"] for g in SCHEMA["groups"] if g["scope"] == "system")
RUNTIME_GROUPS = tuple(g["name"] for g in SCHEMA["groups"] if g["scope"] == "runtime")
# Accepted in a config, never written in a report.
ALIASES = {g["alias"]: g["name"] for g in SCHEMA["groups"] if g["alias"]}
CONFIG_ALIASES = SCHEMA["config_aliases"]
# Groups whose data fields the format does not define yet: error only.
UNSPECIFIED = ("execution_stats", "neuroncore_counters", "hw_counters")

# execution_stats of endpoint runtimes (docs/report-format.md §6.5).
PCT_RE = re.compile(r"^p(0|[1-9][0-9]?(?:\.[0-9]+)?|100|0\.[0-9]+)$")
HIST_PCTS = ("p0", "p1", "p25", "p50", "p75", "p99", "p100")
PCT_SOURCES = ("histogram", "summary", "mixed")
LATENCY_DISTS = ("total_latency", "queue", "time_to_first_token", "time_per_output_token")
MEAN_KEYS = ("request", "queue", "compute_input", "compute_infer", "compute_output", "time_to_first_token",
             "time_per_output_token")
INFER_MODEL_KEYS = ("execution_summary", "error_summary", "latency_stats", "latency_histograms", "mean_seconds",
                    "requests_in_flight",
                    "requests_pending", "batch_size", "tokens", "kv_cache_usage_ratio", "energy_joules",
                    "energy_per_request_joules", "tokens_per_joule")
SERVER_DEVICE_KEYS = ("utilization_ratio", "memory_used_bytes", "memory_total_bytes", "power_watts",
                      "power_limit_watts", "energy_joules", "energy_total_joules", "temperature_celsius")
HOST_ERRORS = ("http_4xx", "http_5xx")  # TorchServe's host-level Requests4XX/5XX: in no model
# neuron_hw_counters.neuron_devices[]: neuron-monitor 2.x's counters (docs/report-format.md §5.3).
NEURON_HW_FIELDS = ("mem_ecc_corrected", "mem_ecc_uncorrected", "sram_ecc_corrected", "sram_ecc_uncorrected")
DEVICE_GROUPS = tuple(g["name"] for g in SCHEMA["groups"] if g["scope"] == "device")


def sum_names(agg):
    """Format 1's names in a device's pod or container sum: schema.json's "<agg>.*.{...}" field, pids aside."""
    for x in SCHEMA["fields"]:
        m = re.fullmatch(re.escape(agg) + r"\.\*\.\{(.*)\}", x["path"])
        if x["group"] == "device_memory" and m:
            return tuple(k for k in m.group(1).split(",") if k != "pids")
    raise SystemExit("check_report.py: schema.json has no %s.*.{...} field" % agg)


# containers: the names format 1 repeats in each sum (format 2: identities.pods' keys are the pods' ones)
SUM_NAMES = {"pods": sum_names("pods"), "containers": sum_names("containers")}
DEVICE_TYPES = ("nvidia", "amdgpu", "neuron", "ncs2", "hwmon", "powercap")
DEVICE_IDENTITY = ("index", "uuid", "pci_bus_id", "model", "error")
# An NVIDIA MIG instance's entry: key "<GPU index>/<GPU instance id>/<compute instance id>" and more identity.
MIG_KEY_RE = re.compile(r"^(0|[1-9][0-9]*)/(0|[1-9][0-9]*)/(0|[1-9][0-9]*)$")
MIG_IDENTITY = ("parent_uuid", "gpu_instance_id", "compute_instance_id", "mig_profile")
SNAKE_RE = re.compile(r"^[a-z][a-z0-9_]*$")
OPENVINO_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")  # "MYRIAD", "MYRIAD.1.2-ma2480"
# Fields on the group itself (next to "devices"), per device type and group.
VENDOR_GROUP = {"ncs2": {"device_utilization": {"num_devices": "int", "num_available_devices": "int"}}}
ROOT_KEYS = ("timestamp", "monitor", "runtime_data", "device_data",
             "system_data", "instance_info")
# "allocations": an owner's keys (docs/report-format.md, "Allocations"): the label ones are schema labels.
OWNER_LABELS = ("namespace", "pod", "container", "resource", "dra_claim_name", "dra_claim_namespace",
                "dra_driver_name", "dra_pool_name", "dra_device_name", "hpc_job")
assert all(any(l["name"] == k for l in SCHEMA["labels"]) for k in OWNER_LABELS), "schema.json lacks an owner label"
OWNER_LISTS = ("device_ids", "neuroncores")
# identities.pods' keys beyond the pod's names: its labels (--kubelet-pod-labels) and how many were dropped.
POD_LABEL_KEYS = ("labels", "labels_dropped")
ENTRY_KEYS = ("runtime_index", "address", "pid", "runtime_tag", "error",
              "report")
# containers: a process's container identity (monitor/host/container.h), each key only when known.
ENTRY_OPTIONAL = ("container",)
# The keys no label is made of, then every identity label's field (schema.json's "ident_labels").
CONTAINER_KEYS = ("runtime", "id", "pod_uid", "pod", "namespace", "name", "qos", "unit",
                  "ecs_cluster", "ecs_task_arn", "ecs_task_id", "ecs_task_family", "ecs_task_revision")
CONTAINER_KEYS += tuple(r["field"] for r in SCHEMA["ident_labels"] if r["field"] not in CONTAINER_KEYS)
CONTAINER_RUNTIMES = ("containerd", "cri-o", "docker", "podman", "systemd", "ecs", "fargate", "slurm")
# Slurm: a job id (%u) or, from Slurm 26.05 on cgroup v2, its SLUID; a step as its cgroup names it; a uid.
HPC_JOB_RE = re.compile(r"^([1-9][0-9]{0,9}|0|[sS][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{13})$")
HPC_STEP_RE = re.compile(r"^([0-9]{1,10}(\+[0-9]{1,10})?|batch|extern|interactive)$")
HPC_UID_RE = re.compile(r"^[0-9]{1,10}$")
# Amazon ECS: a task id is 32 hex digits or a UUID; Fargate's container id is "<task id>-<digits>".
ECS_TASK_ID_RE = re.compile(r"^([0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")
FARGATE_ID_RE = re.compile(r"^[0-9a-f]{32}-[0-9]{1,20}$")
QOS_CLASSES = ("guaranteed", "burstable", "besteffort")
CONTAINER_ID_RE = re.compile(r"^[0-9a-f]{12,64}$")
POD_UID_RE = re.compile(r"^[0-9a-f-]{16,47}$")
# A MIG device with per-process figures is attributed as a GPU is (monitor/host/container.c).
MIG_CONTAINER_KEYS = ("process_containers", "pods", "containers")
INSTANCE_KEYS = ("instance_name", "instance_id", "instance_type",
                 "instance_availability_zone", "instance_availability_zone_id",
                 "instance_region", "ami_id", "subnet_id", "error",
                 "hostname", "node_name")
TS_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$")
CPU_KEY_RE = re.compile(r"^(0|[1-9][0-9]*)$")


class Bad(Exception):
    pass


def kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a float"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    return "an object"


def join(path, key):
    if isinstance(key, int):
        return "%s[%d]" % (path, key)
    return "%s.%s" % (path, key) if path else key


def parse_ts(s):
    """ISO 8601 UTC with milliseconds -> seconds since the epoch, or None."""
    m = TS_RE.match(s) if isinstance(s, str) else None
    if not m:
        return None
    y, mo, d, h, mi, sec, ms = (int(x) for x in m.groups())
    try:
        t = calendar.timegm((y, mo, d, h, mi, sec, 0, 0, 0))
        # timegm normalises out-of-range fields; a real date survives the round trip.
        if time.gmtime(t)[:6] != (y, mo, d, h, mi, sec):
            return None
    except (OverflowError, ValueError):
        return None
    return t + ms / 1000.0


def compact(text):
    """True when no whitespace stands outside string literals."""
    in_str = esc = False
    for c in text:
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in " \t\r\n":
            return False
    return True


def no_dups(pairs):
    seen = set()
    for k, _ in pairs:
        if k in seen:
            raise Bad("duplicate key \"%s\"" % k)
        seen.add(k)
    return dict(pairs)


def no_constants(name):
    raise Bad("%s is not JSON" % name)


def load_config(path):
    """The parts of a JSON config a report can be held against."""
    if path.endswith((".yaml", ".yml")):
        raise SystemExit("check_report: --config takes JSON only: %s" % path)
    with open(path, encoding="utf-8") as f:
        cfg = json.load(f)

    def groups(lst):
        return {ALIASES.get(m["type"], m["type"]) for m in lst or []}

    for alias, canonical in CONFIG_ALIASES.items():
        if alias in cfg:
            cfg.setdefault(canonical, cfg[alias])
    rts = cfg.get("runtimes", [])
    if "system_metrics" in cfg:
        system = groups(cfg["system_metrics"])
    else:
        system = set()
    devices = []
    for d in cfg.get("devices", []) or []:
        devices.append((d.get("type", ""), groups(d.get("metrics")) if "metrics" in d
                        else set(DEVICE_GROUPS)))
    return {"runtimes": [(r.get("address", ""), groups(r.get("metrics")))
                         for r in rts],
            "system": system, "devices": devices}


class Stream:
    """The checks for one report stream."""

    def __init__(self, opts, name=None):
        self.o = opts
        self.name = name
        self.errors = []
        self.nlines = 0
        self.next_seq = 0
        self.last = {}       # group key -> root time of its last collection with data
        self.last_any = {}   # group key -> root time of its last report, an error's included
        self.addr = {}       # runtime_index -> address
        self.seen = set()    # system groups seen (for --some)
        self.ln = 0
        self.root_t = None

    # -- reporting ---------------------------------------------------------

    def err(self, path, msg):
        where = "line %d" % self.ln if self.ln else "end of input"
        if self.name:
            where = "%s: %s" % (self.name, where)
        self.errors.append("%s: %s: %s" % (where, path or "(line)", msg))

    # -- primitives --------------------------------------------------------

    def keys(self, path, obj, required, optional=()):
        """obj must be an object with every required key and nothing unknown."""
        if not isinstance(obj, dict):
            self.err(path, "expected an object, got %s" % kind(obj))
            return False
        for k in required:
            if k not in obj:
                self.err(join(path, k), "missing")
        for k in obj:
            if k not in required and k not in optional:
                hint = ""
                if k in ALIASES:
                    hint = " (a config alias; reports say \"%s\")" % ALIASES[k]
                self.err(join(path, k), "unknown key%s" % hint)
        return True

    def string(self, path, v):
        if not isinstance(v, str):
            self.err(path, "expected a string, got %s" % kind(v))
            return False
        return True

    def integer(self, path, v, lo=0):
        # From 2^63 up a u64 is written as a real that keeps its value (docs/devices.md, "64-bit values").
        if type(v) is float and v >= 2.0 ** 63 and v == int(v):
            return True
        if type(v) is not int:
            self.err(path, "expected an integer, got %s" % kind(v))
            return False
        if v < lo:
            self.err(path, "%d is below %d" % (v, lo))
            return False
        return True

    def percent(self, path, v):
        if type(v) is not float:
            self.err(path, "expected a float (percent), got %s" % kind(v))
            return False
        if not -EPS <= v <= 100 + EPS:
            self.err(path, "%r is outside 0..100" % v)
            return False
        return True

    def number(self, path, v, lo=None):
        """An integer or a float (not a boolean), at least lo when given."""
        if type(v) not in (int, float) or (type(v) is float and not math.isfinite(v)):
            self.err(path, "expected a number, got %s" % kind(v))
            return False
        if lo is not None and v < lo - EPS:
            self.err(path, "%r is below %r" % (v, lo))
            return False
        return True

    def real(self, path, v, lo=0.0):
        """A float (watts, joules): JSON numbers with a fraction part."""
        if type(v) is not float or not math.isfinite(v):
            self.err(path, "expected a float, got %s" % kind(v))
            return False
        if v < lo - EPS:
            self.err(path, "%r is below %r" % (v, lo))
            return False
        return True

    def boolean(self, path, v):
        if type(v) is not bool:
            self.err(path, "expected a boolean, got %s" % kind(v))
            return False
        return True

    def timestamp(self, path, v):
        t = parse_ts(v)
        if t is None:
            self.err(path, "expected ISO 8601 UTC with milliseconds "
                           "(YYYY-MM-DDTHH:MM:SS.mmmZ), got %s" % json.dumps(v))
        return t

    # -- groups ------------------------------------------------------------

    def envelope(self, path, g, key, data, optional=None):
        """Check a group object; data maps field -> checker (required when error is ""),
        optional the same for fields that may be absent. Returns error text."""
        optional = optional or {}
        if not self.keys(path, g, ENVELOPE, tuple(data) + tuple(optional)):
            return None
        err = g.get("error")
        if "error" in g and self.string(join(path, "error"), err) and not err:
            for k in data:
                if k not in g:
                    self.err(join(path, k), "missing (error is \"\")")
        p = g.get("period")
        if "period" in g:
            if type(p) is not float:
                self.err(join(path, "period"), "expected a float (seconds), got %s" % kind(p))
            elif not p > 0 or math.isinf(p):
                self.err(join(path, "period"), "%r is not a positive number of seconds" % p)
            else:
                # A group with an error and nothing else holds no data: the next one's may cover its time too.
                self.check_period(join(path, "period"), key, p, not err or bool(set(g) - set(ENVELOPE)))
        if "timestamp" in g:
            t = self.timestamp(join(path, "timestamp"), g["timestamp"])
            if t is not None and self.root_t is not None:
                if t < self.root_t:
                    self.err(join(path, "timestamp"), "before the report's timestamp")
                elif t > self.root_t + 1.0:
                    self.err(join(path, "timestamp"), "more than 1 s after the report's timestamp")
        for k, check in list(data.items()) + list(optional.items()):
            if k in g:
                check(join(path, k), g[k])
        return err if isinstance(err, str) else None

    def check_period(self, path, key, p, has_data=True):
        # A period runs from the group's last collection: one that reported an error (a source with no answer
        # in time) was a collection too, so "missing" is measured from it and "twice" from the last data.
        prev, prev_any = self.last.get(key), self.last_any.get(key)
        if has_data:
            self.last[key] = self.root_t
        self.last_any[key] = self.root_t
        if prev is None or self.root_t is None:
            return
        since = self.root_t - prev
        since_any = self.root_t - prev_any if prev_any is not None else since
        tol = self.o.period_tolerance
        if p > since + tol:
            self.err(path, "%.6f s, but the group's previous report was %.3f s earlier "
                           "(data would count twice)" % (p, since))
        elif p < since_any - tol and not self.o.reloads:
            since = since_any
            self.err(path, "%.6f s, but the group's previous report was %.3f s earlier "
                           "(a collection is missing; --reloads if the stream spans SIGHUP)"
                     % (p, since))

    def cpu_times(self, path, v):
        if not self.keys(path, v, CPU_FIELDS):
            return None
        ok = all([self.percent(join(path, f), v[f]) for f in CPU_FIELDS if f in v])
        if ok and len(v) == len(CPU_FIELDS):
            total = sum(v[f] for f in CPU_FIELDS)
            if total > 100 + EPS:
                self.err(path, "the seven fields sum to %r, over 100" % total)
            return v
        return None

    def vcpu_usage(self, path, g, key):
        per = {}

        def avg(p, v):
            per["avg"] = self.cpu_times(p, v)

        def usage(p, v):
            if not isinstance(v, dict):
                self.err(p, "expected an object, got %s" % kind(v))
                return
            if not v:
                self.err(p, "empty: no CPU")
            for cpu, t in v.items():
                if not CPU_KEY_RE.match(cpu):
                    self.err(join(p, cpu), "CPU key is not a decimal CPU number")
                per.setdefault("cpus", []).append(self.cpu_times(join(p, cpu), t))

        def ctxt(p, v):
            self.integer(p, v)

        self.envelope(path, g, key, {"average_usage": avg, "usage_data": usage,
                                     "context_switch_count": ctxt})
        cpus = [c for c in per.get("cpus", []) if c]
        if per.get("avg") and cpus and len(cpus) == len(per["cpus"]):
            for f in CPU_FIELDS:
                lo = min(c[f] for c in cpus)
                hi = max(c[f] for c in cpus)
                if not lo - EPS <= per["avg"][f] <= hi + EPS:
                    self.err(join(join(path, "average_usage"), f),
                             "%r is outside the per-CPU range %r..%r" % (per["avg"][f], lo, hi))

    def memory_info(self, path, g, key):
        vals = {}

        def num(p, v):
            if self.integer(p, v):
                vals[p.rsplit(".", 1)[1]] = v

        self.envelope(path, g, key, {k: num for k in (
            "memory_total_bytes", "memory_used_bytes", "swap_total_bytes", "swap_used_bytes")})
        for used, total in (("memory_used_bytes", "memory_total_bytes"),
                            ("swap_used_bytes", "swap_total_bytes")):
            if used in vals and total in vals and vals[used] > vals[total]:
                self.err(join(path, used), "%d is more than %s %d" % (vals[used], total, vals[total]))

    def neuron_hw_counters(self, path, g, key):
        def devices(p, v):
            if not isinstance(v, list):
                self.err(p, "expected an array, got %s" % kind(v))
                return
            seen = set()
            for i, d in enumerate(v):
                q = "%s[%d]" % (p, i)
                if not self.keys(q, d, ("neuron_device_index",), NEURON_HW_FIELDS):
                    continue
                for k in d:
                    self.integer(join(q, k), d[k])
                if d.get("neuron_device_index") in seen:
                    self.err(join(q, "neuron_device_index"), "%r twice" % d["neuron_device_index"])
                seen.add(d.get("neuron_device_index"))

        self.envelope(path, g, key, {"neuron_devices": devices})

    def container_usage(self, path, g, key):
        """container_usage (docs/report-format.md): one entry per container, pod or unit cgroup."""
        ident = ("runtime", "id", "pod_uid", "qos", "unit", "pod", "namespace", "container", "name",
                 "ecs_cluster", "ecs_task_arn", "ecs_task_id", "ecs_task_family", "ecs_task_revision")
        secs = ("cpu_usage_seconds", "cpu_user_seconds", "cpu_system_seconds", "cpu_throttled_seconds")
        ints = ("cpu_periods", "cpu_throttled_periods", "memory_usage_bytes", "memory_working_set_bytes",
                "memory_rss_bytes", "memory_cache_bytes", "oom_kills")

        def version(p, v):
            if v not in (1, 2) or type(v) is not int:
                self.err(p, "expected 1 or 2, got %s" % json.dumps(v))

        def containers(p, v):
            if not isinstance(v, dict):
                self.err(p, "expected an object, got %s" % kind(v))
                return
            for cg, e in v.items():
                q = join(p, cg)
                if not cg.startswith("/"):
                    self.err(q, "the key is not a cgroup path")
                if not self.keys(q, e, (), ident + secs + ints):
                    continue
                for k in ident:
                    if k in e and self.string(join(q, k), e[k]) and not e[k]:
                        self.err(join(q, k), "empty: leave it out when unknown")
                if not any(k in e for k in ("id", "pod_uid", "unit")):
                    self.err(q, "names no container, pod or unit")
                for k in secs:
                    if k in e:
                        self.real(join(q, k), e[k])
                for k in ints:
                    if k in e:
                        self.integer(join(q, k), e[k])
                if "container" in e and "id" not in e:
                    self.err(join(q, "container"), "a container name without a container id")
                pairs = (("memory_working_set_bytes", "memory_usage_bytes"), ("cpu_throttled_periods", "cpu_periods"))
                for small, big in pairs:
                    if type(e.get(small)) is int and type(e.get(big)) is int and e[small] > e[big]:
                        self.err(join(q, small), "%d is more than %s %d" % (e[small], big, e[big]))
                if ("cpu_periods" in e) != ("cpu_throttled_seconds" in e):
                    self.err(q, "the CFS fields come together")

        self.envelope(path, g, key, {"cgroup_version": version, "containers": containers})

    def unspecified(self, path, g, key, name):
        err = self.envelope(path, g, key, {})
        if err == "":
            self.err(join(path, "error"), "\"\", but the data fields of %s are not specified "
                                          "in docs/report-format.md yet" % name)

    def runtime_vcpu(self, path, g, key):
        def vcpu(p, v):
            if not self.keys(p, v, ("user", "system")):
                return
            ok = [self.percent(join(p, f), v[f]) for f in ("user", "system") if f in v]
            if len(ok) == 2 and all(ok) and v["user"] + v["system"] > 100 + EPS:
                self.err(p, "user + system = %r, over 100" % (v["user"] + v["system"]))

        self.envelope(path, g, key, {"vcpu_usage": vcpu})

    def memory_used(self, path, g, key):
        def used(p, v):
            if not self.keys(p, v, ("host", "device")):
                return
            if "host" in v:
                self.integer(join(p, "host"), v["host"])
            if "device" in v and v["device"] is not None:
                self.integer(join(p, "device"), v["device"])

        self.envelope(path, g, key, {"runtime_used_bytes": used})

    # -- execution_stats of endpoint runtimes (§6.5) ------------------------

    def pcts(self, path, v, histogram):
        """A percentile object: p<100q> -> seconds, non-decreasing in q."""
        if not isinstance(v, dict) or not v:
            self.err(path, "expected a non-empty object of percentiles, got %s" % kind(v))
            return
        got = []
        for k, x in v.items():
            m = PCT_RE.match(k)
            if not m or not 0 <= float(m.group(1)) <= 100:
                self.err(join(path, k), "not a percentile key (p0..p100)")
                continue
            if histogram and k not in HIST_PCTS:
                self.err(join(path, k), "not one of %s (percentiles from buckets)" % " ".join(HIST_PCTS))
            if self.real(join(path, k), x, 0.0):
                got.append((float(m.group(1)), k, x))
        got.sort()
        for (qa, ka, a), (qb, kb, b) in zip(got, got[1:]):
            if b < a:
                self.err(join(path, kb), "%r is below %s %r: percentiles decrease" % (b, ka, a))

    def latency_stats(self, path, v, runtime_level):
        dists = ("total_latency",) if runtime_level else LATENCY_DISTS
        if not self.keys(path, v, (), dists + ("percentile_source",)):
            return
        src = v.get("percentile_source")
        if any(d in v for d in dists):
            if "percentile_source" not in v:
                self.err(join(path, "percentile_source"), "missing")
            elif src not in (("histogram",) if runtime_level else PCT_SOURCES):
                self.err(join(path, "percentile_source"), "%s is not one of %s" % (
                    json.dumps(src), ", ".join(("histogram",) if runtime_level else PCT_SOURCES)))
        elif "percentile_source" in v:
            self.err(join(path, "percentile_source"), "without percentiles")
        for d in dists:
            if d in v:
                self.pcts(join(path, d), v[d], src == "histogram")

    def latency_histograms(self, path, v, runtime_level, stats):
        """latency_histograms (an endpoint's "latency_histograms": true): per distribution, the period's buckets
        {"le": finite bounds ascending, "counts": n + 1 integers >= 0, "sum": s, "count": the counts' sum > 0},
        only beside that distribution's percentiles from buckets."""
        dists = ("total_latency",) if runtime_level else LATENCY_DISTS
        if not self.keys(path, v, (), dists):
            return
        for d, h in v.items():
            p = join(path, d)
            if not self.keys(p, h, ("le", "counts", "sum", "count"), ()) or len(h) != 4:
                continue
            le, counts = h["le"], h["counts"]
            if not isinstance(le, list) or not all(isinstance(x, float) and math.isfinite(x) for x in le):
                self.err(join(p, "le"), "expected a list of finite floats (seconds)")
                continue
            if any(b <= a for a, b in zip(le, le[1:])):
                self.err(join(p, "le"), "bounds not ascending, each once")
            if not isinstance(counts, list) or len(counts) != len(le) + 1:
                self.err(join(p, "counts"), "expected %d counts (one per bound, then +Inf)" % (len(le) + 1))
                continue
            if all(self.integer(join(p, "counts[%d]" % i), c) for i, c in enumerate(counts)) \
                    and self.integer(join(p, "count"), h["count"]):
                if h["count"] != sum(counts) or h["count"] <= 0:
                    self.err(join(p, "count"), "%r, but the counts sum to %d (and it must be above 0)"
                             % (h["count"], sum(counts)))
            if not isinstance(h["sum"], (int, float)) or isinstance(h["sum"], bool) \
                    or not math.isfinite(h["sum"]):
                self.err(join(p, "sum"), "expected a finite number")
            src = stats.get("percentile_source") if isinstance(stats, dict) else None
            if not isinstance(stats, dict) or not isinstance(stats.get(d), dict) or src not in ("histogram", "mixed") \
                    or not set(stats[d]) <= set(HIST_PCTS):
                self.err(p, "without percentiles from buckets beside it (latency_stats.%s)" % d)

    def counts(self, path, v, allowed=None):
        if not isinstance(v, dict):
            self.err(path, "expected an object, got %s" % kind(v))
            return {}
        if allowed is not None:
            self.keys(path, v, (), allowed)
        return {k: x for k, x in v.items() if self.integer(join(path, k), x)}

    def infer_model(self, path, m):
        if not self.keys(path, m, (), INFER_MODEL_KEYS):
            return
        if "execution_summary" in m:
            self.counts(join(path, "execution_summary"), m["execution_summary"], ("completed", "failed"))
        if "error_summary" in m:
            errs = self.counts(join(path, "error_summary"), m["error_summary"])
            es = m.get("execution_summary")
            if isinstance(es, dict) and type(es.get("failed")) is int and sum(errs.values()) != es["failed"]:
                self.err(join(path, "error_summary"), "sums to %d, but execution_summary.failed is %d"
                         % (sum(errs.values()), es["failed"]))
        if "latency_stats" in m:
            self.latency_stats(join(path, "latency_stats"), m["latency_stats"], False)
        if "latency_histograms" in m:
            self.latency_histograms(join(path, "latency_histograms"), m["latency_histograms"], False,
                                    m.get("latency_stats"))
        if "mean_seconds" in m:
            ms = m["mean_seconds"]
            if self.keys(join(path, "mean_seconds"), ms, (), MEAN_KEYS):
                for k, x in ms.items():
                    self.real(join(join(path, "mean_seconds"), k), x, 0.0)
        for k in ("requests_in_flight", "requests_pending"):
            if k in m:
                self.integer(join(path, k), m[k])
        if "batch_size" in m:
            self.real(join(path, "batch_size"), m["batch_size"], 0.0)
        if "tokens" in m:
            self.counts(join(path, "tokens"), m["tokens"], ("prompt", "generation"))
        for k in ("energy_joules", "energy_per_request_joules", "tokens_per_joule"):
            if k in m:
                self.real(join(path, k), m[k], 0.0)
        if "kv_cache_usage_ratio" in m and self.real(join(path, "kv_cache_usage_ratio"), m["kv_cache_usage_ratio"]):
            if m["kv_cache_usage_ratio"] > 1 + EPS:
                self.err(join(path, "kv_cache_usage_ratio"), "%r is over 1" % m["kv_cache_usage_ratio"])

    def execution_stats(self, path, g, key):
        """execution_stats of an endpoint runtime: models, the runtime-level sums, server_devices."""
        def models(p, v):
            if not isinstance(v, dict):
                self.err(p, "expected an object of models, got %s" % kind(v))
                return
            for name, versions in v.items():
                if not isinstance(versions, dict):
                    self.err(join(p, name), "expected an object of versions, got %s" % kind(versions))
                    continue
                for ver, m in versions.items():
                    self.infer_model(join(join(p, name), ver), m)

        def devices(p, v):
            if not isinstance(v, dict):
                self.err(p, "expected an object, got %s" % kind(v))
                return
            for uuid, d in v.items():
                q = join(p, uuid)
                if not self.keys(q, d, (), SERVER_DEVICE_KEYS):
                    continue
                for k, x in d.items():
                    if k.endswith("_bytes"):
                        self.integer(join(q, k), x)
                    elif self.real(join(q, k), x) and k == "utilization_ratio" and x > 1 + EPS:
                        self.err(join(q, k), "%r is over 1" % x)
                if type(d.get("memory_used_bytes")) is int and type(d.get("memory_total_bytes")) is int \
                        and d["memory_used_bytes"] > d["memory_total_bytes"]:
                    self.err(join(q, "memory_used_bytes"), "more than memory_total_bytes")

        def summary(p, v):
            self.counts(p, v, ("completed", "failed"))

        def errors(p, v):
            self.counts(p, v)

        def latency(p, v):
            self.latency_stats(p, v, True)

        def histograms(p, v):
            self.latency_histograms(p, v, True, g.get("latency_stats"))

        def energy_j(p, v):
            self.real(p, v, 0.0)

        def energy_text(allowed):
            def check(p, v):
                if v not in allowed:
                    self.err(p, "%s is not one of %s" % (json.dumps(v), ", ".join(allowed)))
            return check

        self.envelope(path, g, key, {"models": models},
                      {"execution_summary": summary, "error_summary": errors, "latency_stats": latency,
                       "latency_histograms": histograms, "server_devices": devices, "energy_joules": energy_j,
                       "energy_source": energy_text(("processes", "devices")),
                       "energy_attribution": energy_text(("compute_time", "request_time", "requests"))})
        ms = g.get("models") if isinstance(g, dict) else None
        if not isinstance(ms, dict):
            return
        # the runtime level is the sum over the models (TorchServe's host-level http_4xx/http_5xx aside)
        per = [m for vs in ms.values() if isinstance(vs, dict) for m in vs.values() if isinstance(m, dict)]
        es = g.get("execution_summary")
        for k in ("completed", "failed"):
            vals = [m["execution_summary"][k] for m in per if isinstance(m.get("execution_summary"), dict)
                    and type(m["execution_summary"].get(k)) is int]
            got = es.get(k) if isinstance(es, dict) else None
            if vals and got != sum(vals):
                self.err(join(join(path, "execution_summary"), k), "%s, but the models sum to %d"
                         % (json.dumps(got), sum(vals)))
            elif not vals and got is not None:
                self.err(join(join(path, "execution_summary"), k), "no model has it")
        errs = {}
        for m in per:
            if isinstance(m.get("error_summary"), dict):
                for t, n in m["error_summary"].items():
                    if type(n) is int:
                        errs[t] = errs.get(t, 0) + n
        rerr = g.get("error_summary") if isinstance(g.get("error_summary"), dict) else {}
        for t in set(errs) | set(rerr):
            if t in HOST_ERRORS and t not in errs:
                continue
            if rerr.get(t) != errs.get(t):
                self.err(join(join(path, "error_summary"), t), "%s, but the models sum to %s"
                         % (json.dumps(rerr.get(t)), json.dumps(errs.get(t))))

    def group(self, path, name, g, key):
        if name == "vcpu_usage":
            self.vcpu_usage(path, g, key)
        elif name == "memory_info":
            self.memory_info(path, g, key)
        elif name == "runtime_vcpu_usage":
            self.runtime_vcpu(path, g, key)
        elif name == "memory_used":
            self.memory_used(path, g, key)
        elif name == "neuron_hw_counters":
            self.neuron_hw_counters(path, g, key)
        elif name == "container_usage":
            self.container_usage(path, g, key)
        elif name == "execution_stats" and isinstance(g, dict) and "models" in g:
            self.execution_stats(path, g, key)  # an endpoint runtime's (§6.5)
        else:
            self.unspecified(path, g, key, name)

    # -- devices (§6a) ------------------------------------------------------

    def int_map(self, path, v, key_re=None, checker=None):
        """An object of name -> value; returns it when it is one."""
        if not isinstance(v, dict):
            self.err(path, "expected an object, got %s" % kind(v))
            return None
        for k, x in v.items():
            if key_re is not None and not key_re.match(k):
                self.err(join(path, k), "bad key")
            (checker or self.integer)(join(path, k), x)
        return v

    def fixed(self, path, v, ints, bools=(), required=None):
        """An object with integer fields ints and boolean fields bools."""
        req = ints if required is None else required
        if not self.keys(path, v, req, tuple(k for k in ints + bools if k not in req)):
            return
        for k in ints:
            if k in v:
                self.integer(join(path, k), v[k])
        for k in bools:
            if k in v:
                self.boolean(join(path, k), v[k])

    def device_fields(self, gname, dtype):
        """field -> checker for the data fields of a device object in group gname."""
        pct = self.percent
        integer = self.integer
        real = self.real

        def strings(p, v):
            self.string(p, v)

        def temps(p, v):
            # An NCS stick's are keyed by the name its application gives it (ncs2_temperature_celsius's label).
            m = self.int_map(p, v, OPENVINO_NAME_RE if dtype == "ncs2" else SNAKE_RE, lambda q, x: self.number(q, x))
            if m is not None and not m:
                self.err(p, "empty: leave it out when no sensor reads")

        def clocks(p, v):
            m = self.int_map(p, v, SNAKE_RE, lambda q, x: self.number(q, x, 0))
            if m is not None and not m:
                self.err(p, "empty: leave it out when no clock reads")

        def reasons(p, v):
            if not isinstance(v, list):
                self.err(p, "expected an array, got %s" % kind(v))
                return
            for i, x in enumerate(v):
                if self.string(join(p, i), x) and not x:
                    self.err(join(p, i), "empty string")

        def procs(p, v):
            self.int_map(p, v, CPU_KEY_RE)

        def migs(p, v):
            if not isinstance(v, dict):
                self.err(p, "expected an object, got %s" % kind(v))
                return
            for k, m in v.items():
                q = join(p, k)
                if not CPU_KEY_RE.match(k):
                    self.err(q, "MIG device key is not a decimal index")
                if not self.keys(q, m, (), ("uuid", "gpu_instance_id", "compute_instance_id",
                                           "total_bytes", "used_bytes", "free_bytes") + MIG_CONTAINER_KEYS):
                    continue
                self.container_figures(q, m)
                for f, x in m.items():
                    if f in MIG_CONTAINER_KEYS:
                        continue
                    if f == "uuid":
                        self.string(join(q, f), x)
                    else:
                        self.integer(join(q, f), x)

        def ecc(p, v):
            self.fixed(p, v, ("corrected", "uncorrected"))

        def retired(p, v):
            self.fixed(p, v, ("total", "single_bit", "double_bit"), ("pending",), required=("total",))
            if isinstance(v, dict) and all(type(v.get(k)) is int for k in ("total", "single_bit", "double_bit")) \
                    and v["single_bit"] + v["double_bit"] != v["total"]:
                self.err(join(p, "total"), "%d is not single_bit + double_bit" % v["total"])

        def remapped(p, v):
            self.fixed(p, v, ("correctable", "uncorrectable"), ("pending", "failed"))

        # The fields of the group for this kind of device: every block of rows (common/rows.h).
        kinds = {"str": strings, "int": integer, "real": real, "pct": pct, "temps": temps, "clocks": clocks,
                 "reasons": reasons, "procs": procs, "mig_devices": migs, "ecc": ecc, "retired": retired,
                 "remapped": remapped}
        f = {}
        for x in SCHEMA["fields"]:
            if x["group"] == gname and x["kind"] and x["device_type"] in (None, dtype):
                f[x["path"]] = kinds.get(x["kind"]) or self.vendor_kind(x["kind"])
        return f

    def vendor_kind(self, how):
        """The checker for one kind of schema field (schema.json "fields" kinds beyond the common ones)."""
        def ints(p, v):
            if not isinstance(v, list):
                self.err(p, "expected an array, got %s" % kind(v))
                return
            for i, x in enumerate(v):
                self.integer(join(p, i), x)

        def by_key(inner, key_re=None):
            def check(p, v):
                if not isinstance(v, dict):
                    self.err(p, "expected an object, got %s" % kind(v))
                    return
                for k, x in v.items():
                    if key_re is not None and not key_re.match(k):
                        self.err(join(p, k), "bad key")
                    inner(join(p, k), x)
            return check

        def num(p, v):
            self.number(p, v)

        def string(p, v):
            self.string(p, v)

        def neuroncore(p, v):
            if not isinstance(v, dict):
                self.err(p, "expected an object, got %s" % kind(v))
                return
            for k, x in v.items():
                q = join(p, k)
                if k == "utilization_percent":
                    self.percent(q, x)
                elif k in ("status", "status_total"):
                    by_key(self.integer)(q, x)
                elif SNAKE_RE.match(k):
                    self.integer(q, x)
                else:
                    self.err(q, "unknown key")

        def nvlink(p, v):  # {"<link>": {"active": bool, "tx_bytes_per_second": x, ...}}
            if not isinstance(v, dict):
                self.err(p, "expected an object, got %s" % kind(v))
                return
            for k, x in v.items():
                q = join(p, k)
                if k == "active":
                    self.boolean(q, x)
                elif k in ("tx_bytes_per_second", "rx_bytes_per_second"):
                    self.number(q, x)
                    if type(x) in (int, float) and x < 0:
                        self.err(q, "negative")
                else:
                    self.err(q, "unknown key")

        def nvlink_errors(p, v):  # {"<link>": {"replay": n, "recovery": n, "crc_flit": n, "crc_data": n}}
            if not isinstance(v, dict):
                self.err(p, "expected an object, got %s" % kind(v))
                return
            for k, x in v.items():
                if k in ("replay", "recovery", "crc_flit", "crc_data"):
                    self.integer(join(p, k), x)
                else:
                    self.err(join(p, k), "unknown key")

        def xid_events(p, v):  # [{"xid": n, "time": "ISO 8601"}, ...]
            if not isinstance(v, list) or not v:
                self.err(p, "expected a non-empty array, got %s" % kind(v))
                return
            for i, e in enumerate(v):
                q = join(p, i)
                if not isinstance(e, dict) or sorted(e) != ["time", "xid"]:
                    self.err(q, "expected {\"xid\": n, \"time\": \"...\"}")
                    continue
                self.integer(join(q, "xid"), e["xid"])
                self.string(join(q, "time"), e["time"])

        table = {"str": string, "int": self.integer, "pct": self.percent, "num": num, "bool": self.boolean,
                 "ints": ints, "int_map": by_key(self.integer), "num_map": by_key(num),
                 "int_map_by_core": by_key(by_key(self.integer), CPU_KEY_RE),
                 "engine_pct_by_pid": by_key(by_key(self.percent), CPU_KEY_RE),
                 "neuroncores_util": by_key(neuroncore, CPU_KEY_RE),
                 "nvlink": by_key(nvlink, CPU_KEY_RE), "nvlink_errors": by_key(nvlink_errors, CPU_KEY_RE),
                 "xid_events": xid_events,
                 # containers: shapes here, sums in container_figures
                 "process_containers": by_key(lambda p, v: None, CPU_KEY_RE),
                 "pod_memory": by_key(lambda p, v: None), "container_memory": by_key(lambda p, v: None),
                 "pod_engines": by_key(lambda p, v: None), "container_engines": by_key(lambda p, v: None),
                 "pod_energy": by_key(lambda p, v: None), "container_energy": by_key(lambda p, v: None)}
        return table[how]

    def device(self, path, key, d, gname, dtype, idents):
        """One device object of a device group."""
        fields = self.device_fields(gname, dtype)
        mig = MIG_KEY_RE.match(key) if dtype == "nvidia" else None
        extra = MIG_IDENTITY if mig else ()
        if not self.keys(path, d, ("index", "error") + (("gpu_instance_id", "compute_instance_id") if mig else ()),
                         ("uuid", "pci_bus_id", "model") + extra + tuple(fields)):
            return
        if mig:
            for k, want in (("index", mig.group(1)), ("gpu_instance_id", mig.group(2)),
                            ("compute_instance_id", mig.group(3))):
                if self.integer(join(path, k), d[k]) and str(d[k]) != want:
                    self.err(join(path, k), "%d, but the MIG instance's key is \"%s\"" % (d[k], key))
        elif not CPU_KEY_RE.match(key):
            self.err(path, "device key is not a decimal device index")
        if not mig and "index" in d and self.integer(join(path, "index"), d["index"]) and str(d["index"]) != key:
            self.err(join(path, "index"), "%d, but the device's key is \"%s\"" % (d["index"], key))
        for k in ("uuid", "pci_bus_id", "model") + (("parent_uuid", "mig_profile") if mig else ()):
            if k in d and self.string(join(path, k), d[k]) and not d[k]:
                self.err(join(path, k), "empty: leave it out when the device has none")
        ident = tuple(d.get(k) for k in ("uuid", "pci_bus_id", "model") + extra)
        before = idents.setdefault(key, ident)
        if before != ident:
            self.err(path, "identity %s, but another group of this entry gives %s"
                     % (json.dumps(ident), json.dumps(before)))
        err = d.get("error")
        if "error" in d and self.string(join(path, "error"), err) and err:
            for k in d:
                if k not in DEVICE_IDENTITY + extra:
                    self.err(join(path, k), "a data field next to the device's error")
            return
        for k, check in fields.items():
            if k in d:
                check(join(path, k), d[k])
        self.device_consistency(path, d)
        self.container_figures(path, d)

    def device_consistency(self, path, d):
        """Relations between fields of one device object."""
        def num(k):
            v = d.get(k)
            return v if type(v) in (int, float) else None

        total = num("total_bytes")
        if total is not None:
            for k in ("used_bytes", "free_bytes", "reserved_bytes"):
                v = num(k)
                if v is not None and v > total:
                    self.err(join(path, k), "%d is more than total_bytes %d" % (v, total))
        for inc, tot in (("energy_joules", "energy_total_joules"), ("pcie_replays", "pcie_replays_total")):
            a, b = num(inc), num(tot)
            if a is not None and b is not None and a > b + EPS:
                self.err(join(path, inc), "%r is more than the running total %s %r" % (a, tot, b))

    def device_entry(self, path, e, seen_types):
        if not self.keys(path, e, ("device_type", "error", "report")):
            return
        dtype = e.get("device_type")
        ok_type = "device_type" in e and self.string(join(path, "device_type"), dtype)
        if ok_type and dtype not in DEVICE_TYPES:
            self.err(join(path, "device_type"), "unknown device type %s" % json.dumps(dtype))
        nth = seen_types.get(dtype, 0)
        seen_types[dtype] = nth + 1
        err = e.get("error")
        has_err = "error" in e and self.string(join(path, "error"), err) and err != ""
        rep = e.get("report")
        if "report" not in e:
            return
        if not isinstance(rep, dict):
            self.err(join(path, "report"), "expected an object, got %s" % kind(rep))
            return
        cfg = self.o.cfg
        allowed = None
        if cfg is not None and ok_type:
            allowed = set()
            for t, gs in cfg["devices"]:
                if t in (dtype, "auto"):
                    allowed |= gs
        idents = {}
        for gname, g in rep.items():
            gp = join(join(path, "report"), gname)
            if gname not in DEVICE_GROUPS:
                hint = " (a system group)" if gname in SYSTEM_GROUPS else (
                    " (a runtime group)" if gname in RUNTIME_GROUPS else "")
                self.err(gp, "unknown device group" + hint)
                continue
            if allowed is not None and gname not in allowed:
                self.err(gp, "not in the config's metrics for %s devices" % dtype)
            key = ("device", dtype if ok_type else None, nth, gname)
            gfields = {"devices": lambda p, v: None}
            extra = {k: self.vendor_kind(how) for k, how in VENDOR_GROUP.get(dtype, {}).get(gname, {}).items()}
            gerr = self.envelope(gp, g, key, gfields, extra)
            if has_err and gerr == "":
                self.err(join(gp, "error"), "\"\", but the entry has an error")
            devs = g.get("devices") if isinstance(g, dict) else None
            if devs is None:
                continue
            if gerr:
                self.err(join(gp, "devices"), "present next to the group's error")
                continue
            if not isinstance(devs, dict):
                self.err(join(gp, "devices"), "expected an object, got %s" % kind(devs))
                continue
            for k, d in devs.items():
                self.device(join(join(gp, "devices"), k), k, d, gname, dtype, idents)

    def device_data(self, dd):
        if not isinstance(dd, list):
            self.err("device_data", "expected an array, got %s" % kind(dd))
            return
        seen = {}
        for i, e in enumerate(dd):
            self.device_entry(join("device_data", i), e, seen)

    # -- sections ----------------------------------------------------------

    def system_data(self, sd):
        if not isinstance(sd, dict):
            self.err("system_data", "expected an object, got %s" % kind(sd))
            return
        cfg = self.o.cfg
        for name, g in sd.items():
            path = join("system_data", name)
            if name not in SYSTEM_GROUPS:
                self.err(path, "unknown system group" + (
                    " (a runtime group)" if name in RUNTIME_GROUPS else ""))
                continue
            if cfg is not None and name not in cfg["system"]:
                self.err(path, "not in the config's system_metrics")
            self.group(path, name, g, ("system", name))
            if self.o.no_system_errors and isinstance(g, dict) and g.get("error"):
                self.err(join(path, "error"), "not empty: %s" % json.dumps(g["error"]))
        self.seen.update(sd)
        want = self.o.expect_groups
        if want is not None:
            got = set(sd)
            extra = sorted(got - want)
            if extra:
                self.err("system_data", "unexpected group(s): %s" % ", ".join(extra))
            if not self.o.some and want - got:
                self.err("system_data", "missing group(s): %s" % ", ".join(sorted(want - got)))

    def container(self, path, c):
        """A container identity object (a runtime entry's "container", a process_containers entry)."""
        if not self.keys(path, c, (), CONTAINER_KEYS):
            return
        for k, v in c.items():
            if self.string(join(path, k), v) and not v:
                self.err(join(path, k), "empty: leave it out when unknown")
        if c.get("runtime") not in (None,) + CONTAINER_RUNTIMES:
            self.err(join(path, "runtime"), "unknown runtime %s" % json.dumps(c.get("runtime")))
        if c.get("qos") not in (None,) + QOS_CLASSES:
            self.err(join(path, "qos"), "unknown QoS class %s" % json.dumps(c.get("qos")))
        if isinstance(c.get("id"), str) and not CONTAINER_ID_RE.match(c["id"]) and not (
                c.get("runtime") == "fargate" and FARGATE_ID_RE.match(c["id"])):
            self.err(join(path, "id"), "not a container id (12 to 64 hex digits; Fargate's <task id>-<digits>)")
        if isinstance(c.get("ecs_task_id"), str) and not ECS_TASK_ID_RE.match(c["ecs_task_id"]):
            self.err(join(path, "ecs_task_id"), "not an ECS task id (32 hex digits or a UUID)")
        if isinstance(c.get("ecs_task_arn"), str) and not c["ecs_task_arn"].startswith("arn:"):
            self.err(join(path, "ecs_task_arn"), "not an ARN")
        for k in ("ecs_cluster", "ecs_task_arn", "ecs_task_family", "ecs_task_revision"):
            if k in c and "ecs_task_id" not in c:
                self.err(join(path, k), "without an ecs_task_id")
        if isinstance(c.get("pod_uid"), str) and not POD_UID_RE.match(c["pod_uid"]):
            self.err(join(path, "pod_uid"), "not a pod UID (lowercase hex and dashes)")
        for k, rx in (("hpc_job", HPC_JOB_RE), ("hpc_step", HPC_STEP_RE), ("hpc_uid", HPC_UID_RE)):
            if isinstance(c.get(k), str) and not rx.match(c[k]):
                self.err(join(path, k), "not a Slurm %s: %s" % (k[4:], json.dumps(c[k])))
        for k in ("hpc_step", "hpc_uid"):
            if k in c and "hpc_job" not in c:
                self.err(join(path, k), "without an hpc_job")
        if (c.get("runtime") == "slurm") != ("hpc_job" in c and "id" not in c):
            self.err(join(path, "runtime"), "\"slurm\" is a Slurm job's process in no container, and only that")
        if not any(k in c for k in ("id", "pod_uid", "unit", "runtime", "ecs_task_id", "hpc_job")):
            self.err(path, "names no container, pod or unit: leave the object out for a host process")
        if "unit" in c and ("id" in c or "pod_uid" in c or "hpc_job" in c):
            self.err(join(path, "unit"), "a unit next to a container or pod")
        for k in ("pod", "namespace", "qos"):
            if k in c and "pod_uid" not in c:
                self.err(join(path, k), "without a pod_uid")

    def container_figures(self, path, d):
        """A device's process_containers, pods and containers against its processes."""
        procs = d.get("processes")
        pc = d.get("process_containers", {})
        v2 = getattr(self, "by_pid", None) is not None
        if v2 and "process_containers" in d:
            self.err(join(path, "process_containers"), "in a report with identities (format 2)")
        if v2:
            # Format 2: the device's processes' identities are the report's; its sums carry no names.
            mine = set(procs) if isinstance(procs, dict) else set()
            if isinstance(d.get("pids"), list):
                mine |= {str(x) for x in d["pids"]}
            pc = {k: self.by_pid[k] for k in mine if k in self.by_pid}
        elif "process_containers" in d:
            if not isinstance(pc, dict) or not pc:
                self.err(join(path, "process_containers"), "expected a non-empty object (absent when empty)")
                pc = {}
            pids = set(procs) if isinstance(procs, dict) else set()
            if isinstance(d.get("pids"), list):
                pids |= {str(x) for x in d["pids"]}
            for k, c in pc.items():
                self.container(join(join(path, "process_containers"), k), c)
                if k not in pids:
                    self.err(join(join(path, "process_containers"), k), "not a process of the device")
        for agg, keyname in (("pods", "pod_uid"), ("containers", "id")):
            if agg not in d:
                continue
            if getattr(self, "fv", 1) >= 3:
                self.err(join(path, agg), "in a report of format 3 (the reader derives the sums)")
                continue
            a = d[agg]
            if not isinstance(a, dict) or not a:
                self.err(join(path, agg), "expected a non-empty object (absent when empty)")
                continue
            for key, o in a.items():
                q = join(join(path, agg), key)
                ident = () if v2 else SUM_NAMES[agg]
                if not self.keys(q, o, ("pids",), ident + ("memory_bytes", "engines", "energy_joules")):
                    continue
                want_mem, want_eng, members = 0, {}, o.get("pids")
                if not isinstance(members, list) or not members:
                    self.err(join(q, "pids"), "expected a non-empty array")
                    continue
                for pid in members:
                    c = pc.get(str(pid))
                    if c is None or c.get(keyname) != key:
                        self.err(join(q, "pids"), "%s is not a process of this %s in process_containers"
                                 % (json.dumps(pid), agg[:-1]))
                        continue
                    for k in ident:
                        if c.get(k) != o.get(k):
                            self.err(join(q, k), "%s, but process %s says %s"
                                     % (json.dumps(o.get(k)), pid, json.dumps(c.get(k))))
                    fig = procs.get(str(pid)) if isinstance(procs, dict) else None
                    if type(fig) in (int, float):
                        want_mem += fig
                    elif isinstance(fig, dict):
                        for e, v in fig.items():
                            want_eng[e] = want_eng.get(e, 0) + v
                for fk in ("memory_bytes", "energy_joules"):
                    if fk in o and (type(o[fk]) not in (int, float)
                                    or abs(o[fk] - want_mem) > EPS * max(1, want_mem)):
                        self.err(join(q, fk), "%r is not the sum of its processes' %r" % (o[fk], want_mem))
                if "engines" in o:
                    eng = o["engines"]
                    if not isinstance(eng, dict) or set(eng) != set(want_eng) or any(
                            abs(eng[e] - want_eng[e]) > 1e-6 for e in eng):
                        self.err(join(q, "engines"), "%s is not the sum of its processes' %s"
                                 % (json.dumps(eng), json.dumps(want_eng)))
            # Every process of a pod (container) is in it.
            for k, c in pc.items():
                if keyname in c and (c[keyname] not in a or int(k) not in a[c[keyname]].get("pids", [])) \
                        and isinstance(procs, dict) and k in procs:
                    self.err(join(join(path, "identities" if v2 else "process_containers"), k), "missing from %s" % agg)

    def entry(self, path, e, prev_index, seen):
        # An endpoint runtime (http:// or https://) also says which server it is, and with passthrough its body.
        endpoint = str(e.get("address", "")).startswith(("http://", "https://"))
        if not self.keys(path, e, ENTRY_KEYS + (("server",) if endpoint else ()),
                         ENTRY_OPTIONAL + (("exposition", "exposition_error") if endpoint else ())):
            return prev_index
        if "exposition" in e and "exposition_error" in e:
            self.err(join(path, "exposition_error"), "next to an exposition (it says why there is none)")
        for k in ("server", "exposition", "exposition_error"):
            if endpoint and k in e:
                self.string(join(path, k), e[k])
        if "container" in e:
            self.container(join(path, "container"), e["container"])
        idx = e.get("runtime_index")
        addr = e.get("address")
        pid = e.get("pid")
        err = e.get("error")
        ok_idx = "runtime_index" in e and self.integer(join(path, "runtime_index"), idx)
        ok_addr = "address" in e and self.string(join(path, "address"), addr)
        if "runtime_tag" in e:
            self.string(join(path, "runtime_tag"), e["runtime_tag"])
        has_err = "error" in e and self.string(join(path, "error"), err) and err != ""
        if "pid" in e:
            if pid is None:
                if ok_addr and addr.startswith(("pid:", "process:")) and not has_err:
                    self.err(join(path, "pid"), "null without an entry error")
            elif self.integer(join(path, "pid"), pid, 1) and ok_addr and addr.startswith("pid:"):
                if addr[4:] != str(pid):
                    self.err(join(path, "pid"), "%d is not the pid of address %s" % (pid, addr))
        if ok_idx:
            if prev_index is not None and idx < prev_index:
                self.err(join(path, "runtime_index"), "entries are not in config order")
            ident = (idx, pid if type(pid) is int else None)
            if ident in seen:
                self.err(path, "a second entry for runtime %d, pid %s" % (idx, json.dumps(pid)))
            seen.add(ident)
            cfg = self.o.cfg
            if cfg is not None:
                if idx >= len(cfg["runtimes"]):
                    self.err(join(path, "runtime_index"), "%d, but the config has %d runtime(s)"
                             % (idx, len(cfg["runtimes"])))
                elif ok_addr and addr != cfg["runtimes"][idx][0]:
                    self.err(join(path, "address"), "%s, but runtimes[%d] has address %s"
                             % (json.dumps(addr), idx, json.dumps(cfg["runtimes"][idx][0])))
            if ok_addr and not self.o.reloads:
                before = self.addr.setdefault(idx, addr)
                if before != addr:
                    self.err(join(path, "address"), "%s, but runtime %d had address %s before"
                             % (json.dumps(addr), idx, json.dumps(before)))
        rep = e.get("report")
        if "report" in e and not isinstance(rep, dict):
            self.err(join(path, "report"), "expected an object, got %s" % kind(rep))
        elif "report" in e:
            for name, g in rep.items():
                gp = join(join(path, "report"), name)
                if name not in RUNTIME_GROUPS:
                    hint = ""
                    if name in ALIASES:
                        hint = " (a config alias; reports say \"%s\")" % ALIASES[name]
                    elif name in SYSTEM_GROUPS:
                        hint = " (a system group)"
                    self.err(gp, "unknown runtime group" + hint)
                    continue
                cfg = self.o.cfg
                if cfg is not None and ok_idx and idx < len(cfg["runtimes"]) \
                        and name not in cfg["runtimes"][idx][1]:
                    self.err(gp, "not in the config's metrics for runtimes[%d]" % idx)
                key = ("runtime", idx, pid if type(pid) is int else None, name)
                self.group(gp, name, g, key)
                if has_err and isinstance(g, dict) and g.get("error") == "":
                    self.err(join(gp, "error"), "\"\", but the entry has an error")
        return idx if ok_idx else prev_index

    def runtime_data(self, rd):
        if not isinstance(rd, list):
            self.err("runtime_data", "expected an array, got %s" % kind(rd))
            return
        prev, seen = None, set()
        for i, e in enumerate(rd):
            prev = self.entry(join("runtime_data", i), e, prev, seen)

    def instance_info(self, ii):
        # pod_name, pod_namespace: the monitor's own pod (downward API), only when set
        if self.keys("instance_info", ii, INSTANCE_KEYS, ("pod_name", "pod_namespace")):
            for k in INSTANCE_KEYS + ("pod_name", "pod_namespace"):
                if k in ii:
                    self.string(join("instance_info", k), ii[k])

    def collectors(self, path, c):
        """Self-timing: {collector: {group: {seconds, cpu_seconds, success}}}, groups the schema's."""
        if not isinstance(c, dict):
            self.err(path, "expected an object, got %s" % kind(c))
            return
        for name, groups in c.items():
            p = join(path, name)
            if not isinstance(groups, dict):
                self.err(p, "expected an object, got %s" % kind(groups))
                continue
            for g, t in groups.items():
                q = join(p, g)
                if g not in SYSTEM_GROUPS + RUNTIME_GROUPS + DEVICE_GROUPS:
                    self.err(q, "unknown group")
                if not self.keys(q, t, ("seconds", "cpu_seconds", "success")):
                    continue
                for k in ("seconds", "cpu_seconds"):
                    if k in t:
                        self.number(join(q, k), t[k], 0)
                if "success" in t:
                    self.boolean(join(q, "success"), t["success"])

    def success_agrees(self, c, r):
        """A system or device group's "success" is whether it (and its device entry) has no error.

        The producer takes it from the collector's own answer, not from the JSON it wrote: the two must agree.
        Units of one device kind add up (success when every one's group is).
        """
        if not isinstance(c, dict):
            return
        want = {}
        sd = r.get("system_data")
        for g, grp in (sd.items() if isinstance(sd, dict) else ()):
            if isinstance(grp, dict) and isinstance(grp.get("error"), str):
                want[(None, g)] = grp["error"] == ""
        for i, e in enumerate(r.get("device_data") or ()):
            if not isinstance(e, dict) or not isinstance(e.get("report"), dict):
                continue
            for g, grp in e["report"].items():
                if isinstance(grp, dict) and isinstance(grp.get("error"), str):
                    k = (e.get("device_type"), g)
                    want[k] = want.get(k, True) and grp["error"] == "" and e.get("error") == ""
        for name, groups in c.items():
            for g, t in (groups.items() if isinstance(groups, dict) else ()):
                if not isinstance(t, dict) or not isinstance(t.get("success"), bool):
                    continue
                k = (name, g) if (name, g) in want else (None, g) if g in SYSTEM_GROUPS else None
                if k in want and t["success"] != want[k]:
                    self.err(join(join(join("monitor.collectors", name), g), "success"),
                             "%s, but the group %s" % (t["success"], "has no error" if want[k] else "has an error"))

    # -- lines -------------------------------------------------------------

    def identities(self, ids, fv=2):
        """Format 2's and 3's "identities": each process's identity by pid, as format 1's process_containers held it.

        Format 3: a container (or process) names its pod by pod_uid; the pod's names are the pod's entry's only
        (a container has one of them itself only where it differs from its pod's).
        """
        by_pid = {}
        if not self.keys("identities", ids, (), ("containers", "pods", "processes")):
            return by_pid
        for part in ("containers", "pods", "processes"):
            o = ids.get(part, {})
            if not isinstance(o, dict):
                self.err(join("identities", part), "expected an object, got %s" % kind(o))
                ids[part] = {}
        for cid, c in ids.get("containers", {}).items():
            p = join(join("identities", "containers"), cid)
            if not self.keys(p, c, ("pids",), tuple(k for k in CONTAINER_KEYS if k != "id")):
                continue
            self.container(p, dict({k: v for k, v in c.items() if k != "pids"}, id=cid))
            if not isinstance(c["pids"], list) or not c["pids"]:
                self.err(join(p, "pids"), "expected a non-empty array")
                continue
            for pid in c["pids"]:
                if type(pid) is not int or str(pid) in by_pid:
                    self.err(join(p, "pids"), "%s: not a pid, or one in two containers" % json.dumps(pid))
                    continue
                by_pid[str(pid)] = dict({k: v for k, v in c.items() if k != "pids"}, id=cid)
        for uid, o in ids.get("pods", {}).items():
            p = join(join("identities", "pods"), uid)
            if self.keys(p, o, (), SUM_NAMES["pods"] + POD_LABEL_KEYS) and not POD_UID_RE.match(uid):
                self.err(p, "not a pod UID (lowercase hex and dashes)")
            self.pod_labels(p, o)
        for pid, c in ids.get("processes", {}).items():
            p = join(join("identities", "processes"), pid)
            self.container(p, c)
            if isinstance(c, dict) and "id" in c:
                self.err(join(p, "id"), "a container's process: under identities.containers")
            if pid in by_pid:
                self.err(p, "also a container's process")
            by_pid[pid] = c
        # Every pod a process names has its names once, and they are the process's.
        for pid, c in by_pid.items():
            uid = c.get("pod_uid") if isinstance(c, dict) else None
            if uid is None:
                continue
            pod = ids.get("pods", {}).get(uid)
            if not isinstance(pod, dict):
                self.err(join(join("identities", "pods"), uid), "missing (process %s names it)" % pid)
                continue
            if fv >= 3 and "id" in c:
                for k in SUM_NAMES["pods"]:
                    if k in c and c[k] == pod.get(k):
                        self.err(join(join(join("identities", "containers"), c["id"]), k),
                                 "the pod's name again (format 3: its pod's entry has it)")
                    elif k not in c and k in pod:
                        c[k] = pod[k]
            for k in SUM_NAMES["pods"]:
                if pod.get(k) != c.get(k):
                    self.err(join(join(join("identities", "pods"), uid), k), "%s, but process %s says %s"
                             % (json.dumps(pod.get(k)), pid, json.dumps(c.get(k))))
        return by_pid

    def pod_labels(self, p, o):
        """A pod's "labels" (--kubelet-pod-labels): an object of strings, bounded; "labels_dropped" a count > 0."""
        if not isinstance(o, dict):
            return
        labels = o.get("labels", {"k": "v"})
        if not isinstance(labels, dict) or not labels or len(labels) > 64 or not all(
                isinstance(k, str) and k and len(k.encode()) <= 317 and isinstance(v, str) and len(v.encode()) <= 63
                for k, v in labels.items()):
            self.err(join(p, "labels"), "expected 1 to 64 labels, each key 1 to 317 bytes and value a string of "
                     "at most 63")
        n = o.get("labels_dropped", 1)
        if type(n) is not int or n <= 0:
            self.err(join(p, "labels_dropped"), "expected an integer > 0 (left out when none was dropped)")

    def allocations(self, a, device_data):
        """The root's "allocations": owners of devices this report's groups hold."""
        if not self.keys("allocations", a, ("error", "devices")):
            return
        self.string("allocations.error", a["error"])
        devs = a["devices"]
        if not isinstance(devs, dict):
            self.err("allocations.devices", "expected an object, got %s" % kind(devs))
            return
        reported = {}
        for e in device_data if isinstance(device_data, list) else ():
            if isinstance(e, dict) and isinstance(e.get("report"), dict):
                for g in e["report"].values():
                    if isinstance(g, dict) and isinstance(g.get("devices"), dict):
                        reported.setdefault(e.get("device_type"), set()).update(g["devices"])
        for t, bykey in devs.items():
            pt = join("allocations.devices", t)
            if not isinstance(bykey, dict) or not bykey:
                self.err(pt, "expected a non-empty object")
                continue
            for key, owners in bykey.items():
                pk = join(pt, key)
                if key not in reported.get(t, ()):
                    self.err(pk, "no device of the report has this key")
                if not isinstance(owners, list) or not owners:
                    self.err(pk, "expected a non-empty list of owners")
                    continue
                for i, o in enumerate(owners):
                    po = "%s[%d]" % (pk, i)
                    if not self.keys(po, o, (), OWNER_LABELS + OWNER_LISTS + ("pod_uid",)):
                        continue
                    if "pod_uid" in o and (not isinstance(o["pod_uid"], str) or not POD_UID_RE.match(o["pod_uid"])
                                           or "pod" not in o):
                        self.err(join(po, "pod_uid"), "not a pod UID (lowercase hex and dashes) of a named pod")
                    for k in OWNER_LABELS:
                        if k in o and self.string(join(po, k), o[k]) and not o[k]:
                            self.err(join(po, k), "empty (a key is left out when unknown)")
                    if "pod" not in o and "hpc_job" not in o:
                        self.err(po, "neither a pod nor an HPC job")
                    for k in OWNER_LISTS:
                        v = o.get(k, [0] if k == "neuroncores" else ["x"])
                        if not isinstance(v, list) or not v or not all(
                                (isinstance(x, int) and not isinstance(x, bool) and x >= 0) if k == "neuroncores"
                                else (isinstance(x, str) and x) for x in v):
                            self.err(join(po, k), "expected a non-empty list of %s" %
                                     ("integers >= 0" if k == "neuroncores" else "non-empty strings"))

    def identities_named(self, device_data):
        """Every process with an identity is one some device of the report names (in processes or pids)."""
        named = set()
        for ent in device_data if isinstance(device_data, list) else ():
            for g in ((ent.get("report") or {}) if isinstance(ent, dict) else {}).values():
                for d in (g.get("devices") or {}).values() if isinstance(g, dict) else ():
                    for o in [d] + list((d.get("mig_devices") or {}).values()) if isinstance(d, dict) else ():
                        if isinstance(o, dict) and isinstance(o.get("processes"), dict):
                            named |= set(o["processes"])
                        if isinstance(o, dict) and isinstance(o.get("pids"), list):
                            named |= {str(p) for p in o["pids"]}
        for pid in sorted(set(self.by_pid) - named):
            self.err("identities", "process %s: no device of the report names it" % pid)

    def report(self, r):
        self.keys("", r, ROOT_KEYS, ("identities", "allocations"))
        # Format 2 (docs/report-format.md, "Format versions"): identities once, the devices' sums refer to them.
        fv = r.get("monitor", {}).get("format_version", 1) if isinstance(r.get("monitor"), dict) else 1
        self.by_pid = self.identities(r["identities"], fv) if "identities" in r else None
        self.fv = fv
        if fv not in (1, 2, 3):
            self.err("monitor.format_version", "%s: not a format this checker knows (1, 2, 3)" % json.dumps(fv))
        elif "identities" in r and fv == 1:
            self.err("identities", "in a report of format 1 (formats 2 and 3 have them)")
        self.root_t = None
        if "timestamp" in r:
            self.root_t = self.timestamp("timestamp", r["timestamp"])
        m = r.get("monitor")
        if "monitor" in r and self.keys("monitor", m, ("version", "seq"), ("collectors", "format_version")):
            if "version" in m and self.string("monitor.version", m["version"]) and not m["version"]:
                self.err("monitor.version", "empty")
            if "seq" in m and self.integer("monitor.seq", m["seq"]):
                if m["seq"] != self.next_seq:
                    self.err("monitor.seq", "%d, expected %d" % (m["seq"], self.next_seq))
                self.next_seq = m["seq"] + 1
            if "collectors" in m:
                self.collectors("monitor.collectors", m["collectors"])
                self.success_agrees(m["collectors"], r)
        if "device_data" in r:
            self.device_data(r["device_data"])
            if self.by_pid:
                self.identities_named(r["device_data"])
        if "allocations" in r:
            self.allocations(r["allocations"], r.get("device_data", []))
        if "system_data" in r:
            self.system_data(r["system_data"])
        if "runtime_data" in r:
            self.runtime_data(r["runtime_data"])
        if "instance_info" in r:
            self.instance_info(r["instance_info"])

    def line(self, raw):
        self.nlines += 1
        self.ln = self.nlines
        if raw.endswith(b"\r"):
            self.err("", "ends in \\r\\n; lines end in \\n only")
            return
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            self.err("", "not valid UTF-8 (byte %d)" % e.start)
            return
        if not text:
            self.err("", "empty line")
            return
        try:
            r = json.loads(text, object_pairs_hook=no_dups, parse_constant=no_constants)
        except (ValueError, Bad) as e:
            self.err("", "not JSON: %s" % e)
            return
        if not isinstance(r, dict):
            self.err("", "expected a JSON object, got %s" % kind(r))
            return
        if not compact(text):
            self.err("", "not compact: whitespace outside strings")
        self.report(r)

    def feed(self, data):
        parts = data.split(b"\n")
        tail = parts.pop()
        for raw in parts:
            self.line(raw)
        if tail:
            self.line(tail)
            self.err("", "no \\n at the end of the last line")
        self.finish()

    def finish(self):
        self.ln = 0
        if self.nlines == 0:
            self.err("", "no reports")
        if self.o.count is not None and self.nlines != self.o.count:
            self.err("", "%d line(s), expected %d" % (self.nlines, self.o.count))
        if self.o.expect_groups is not None and self.o.some:
            missing = self.o.expect_groups - self.seen
            if missing:
                self.err("system_data", "never held: %s" % ", ".join(sorted(missing)))


def check_bytes(data, opts, name=None):
    s = Stream(opts, name)
    s.feed(data)
    return s


# -- self-test -------------------------------------------------------------

T0 = "2026-01-02T03:04:05.000Z"
T1 = "2026-01-02T03:04:06.000Z"


def cpu(user, system, idle):
    return {"user": user, "nice": 0.0, "system": system, "idle": idle,
            "io_wait": 0.0, "irq": 0.0, "soft_irq": 0.0}


GPU0 = {"index": 0, "uuid": "GPU-1c3b9a7e-0000-4000-8000-000000000000", "pci_bus_id": "00000000:18:00.0",
        "model": "NVIDIA H100 80GB HBM3", "error": ""}
GPU1_LOST = {"index": 1, "uuid": "GPU-2d4c0b8f-0000-4000-8000-000000000000", "pci_bus_id": "00000000:3B:00.0",
             "model": "Tesla T4", "error": "GPU is lost (NVML error 15); it is looked up again each period"}


def nvidia_entry(ts, period):
    """A device_data entry with every device group: GPU 0 reads, GPU 1 is lost."""
    def group(**fields):
        d0 = dict(GPU0)
        d0.update(fields)
        return {"period": period, "timestamp": ts, "error": "",
                "devices": {"0": d0, "1": dict(GPU1_LOST)}}

    return {"device_type": "nvidia", "error": "", "report": {
        "device_info": group(serial="1650123456789", driver_version="535.104.05",
                             memory_total_bytes=85520809984, power_limit_watts=700.0,
                             nvml_version="12.535.104.05", cuda_driver_version="12.2", mig_mode="disabled"),
        "device_utilization": group(core_percent=37.0, memory_bandwidth_percent=12.0, decoder_percent=3.0,
                                    pcie_tx_bytes_per_second=1024000, pcie_rx_bytes_per_second=2048000),
        "device_memory": group(total_bytes=1000, used_bytes=600, free_bytes=399, reserved_bytes=1,
                               processes={"41": 500, "42": 100},
                               mig_devices={"0": {"uuid": "MIG-x", "gpu_instance_id": 1, "compute_instance_id": 0,
                                                  "total_bytes": 500, "used_bytes": 1, "free_bytes": 499}}),
        "device_thermal": group(temperatures_celsius={"gpu": 45, "memory": 52}, fan_percent=30.0,
                                throttle_reasons=["gpu_idle", "sw_power_cap"]),
        "device_power": group(power_watts=250.5, energy_joules=5.0, energy_total_joules=1010.0),
        "device_clocks": group(clocks_mhz={"graphics": 1755, "sm": 1980, "memory": 2619, "video": 1530}),
        "device_errors": group(ecc_errors={"corrected": 1, "uncorrected": 0}, ecc_corrected_volatile_total=4,
                               ecc_uncorrected_volatile_total=0, ecc_corrected_aggregate_total=9,
                               ecc_uncorrected_aggregate_total=3, pcie_replays=1, pcie_replays_total=5,
                               last_xid=79, retired_pages={"total": 0, "single_bit": 0, "double_bit": 0,
                                                             "pending": False},
                               remapped_rows={"correctable": 1, "uncorrectable": 0, "pending": False,
                                              "failed": False})}}


def good_stream():
    """Two reports, one second apart, with every kind of entry."""
    inst = {"instance_name": "n", "instance_id": "i-0123456789abcdef0",
            "instance_type": "inf2.xlarge", "instance_availability_zone": "us-west-2b",
            "instance_availability_zone_id": "usw2-az2", "instance_region": "us-west-2",
            "ami_id": "ami-0abcdef1234567890", "subnet_id": "subnet-0123abcd", "error": "",
            "hostname": "h", "node_name": ""}
    why = "cannot poll \"unix:/run/neuron.sock\": this build polls pid:N and process:NAME runtimes"

    def line(seq, ts, period):
        return {
            "timestamp": ts,
            "monitor": {"version": "0.1.0", "seq": seq, "collectors": {"nvidia": {"device_power": {
                "seconds": 0.0042, "cpu_seconds": 0.0041, "success": True}}}},
            "runtime_data": [
                {"runtime_index": 0, "address": "process:sleep", "pid": 41, "runtime_tag": "sleep",
                 "error": "", "report": {
                     "runtime_vcpu_usage": {"period": period, "timestamp": ts, "error": "",
                                            "vcpu_usage": {"user": 0.5, "system": 0.25}},
                     "memory_used": {"period": period, "timestamp": ts, "error": "",
                                     "runtime_used_bytes": {"host": 1802240, "device": None}}}},
                {"runtime_index": 1, "address": "pid:999999", "pid": 999999, "runtime_tag": "",
                 "error": "no such process: 999999", "report": {}},
                {"runtime_index": 2, "address": "unix:/run/neuron.sock", "pid": None,
                 "runtime_tag": "", "error": why, "report": {
                     "execution_stats": {"period": period, "timestamp": ts, "error": why}}}],
            "device_data": [nvidia_entry(ts, period)],
            "system_data": {
                "vcpu_usage": {"period": period, "timestamp": ts, "error": "",
                               "average_usage": cpu(30.0, 10.0, 60.0),
                               "usage_data": {"0": cpu(20.0, 10.0, 70.0),
                                              "1": cpu(40.0, 10.0, 50.0)},
                               "context_switch_count": 173},
                "memory_info": {"period": period, "timestamp": ts, "error": "",
                                "memory_total_bytes": 1000, "memory_used_bytes": 600,
                                "swap_total_bytes": 0, "swap_used_bytes": 0}},
            "instance_info": inst}

    return [line(0, T0, 0.25), line(1, T1, 1.0)]


def endpoint_stats(ts, period):
    """execution_stats of an endpoint runtime as docs/report-format.md §6.5 gives it."""
    return {"period": period, "timestamp": ts, "error": "",
            "execution_summary": {"completed": 10, "failed": 2}, "error_summary": {"generic": 2, "http_4xx": 1},
            "latency_stats": {"total_latency": {"p0": 0.0, "p50": 0.25, "p100": 2.0},
                              "percentile_source": "histogram"},
            "models": {"m": {"1": {"execution_summary": {"completed": 10, "failed": 2},
                                   "error_summary": {"generic": 2},
                                   "latency_stats": {"total_latency": {"p0": 0.0, "p1": 0.001, "p25": 0.1,
                                                                       "p50": 0.25, "p75": 0.5, "p99": 1.5,
                                                                       "p100": 2.0},
                                                     "queue": {"p50": 0.001, "p90": 0.002, "p99.9": 0.004},
                                                     "percentile_source": "mixed"},
                                   "mean_seconds": {"request": 0.3, "queue": 0.001},
                                   "requests_in_flight": 3, "requests_pending": 0, "batch_size": 4.0,
                                   "tokens": {"prompt": 100, "generation": 300}, "kv_cache_usage_ratio": 0.5}},
                       "": {"": {"requests_pending": 1}}},
            "server_devices": {"GPU-1": {"utilization_ratio": 0.5, "memory_used_bytes": 1000,
                                         "memory_total_bytes": 2000, "power_watts": 100.5, "energy_joules": 25.0,
                                         "energy_total_joules": 1000.0}}}


def dump(lines):
    return b"".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
                    for r in lines)


def mutate(fn, which=0):
    def make():
        lines = good_stream()
        fn(lines[which])
        return dump(lines)
    return make


def after_error(keep_group):
    """Three reports 1 s apart; memory_info of the second an error and nothing else (keep_group), or absent;
    the third's period 1 s: measured from the second's collection."""
    def make():
        lines = good_stream()
        third = copy.deepcopy(lines[1])
        t2 = "2026-01-02T03:04:07.000Z"

        def restamp(o):
            if isinstance(o, dict):
                for k, v in o.items():
                    if k == "timestamp" and v == T1:
                        o[k] = t2
                    else:
                        restamp(v)
            elif isinstance(o, list):
                for v in o:
                    restamp(v)
        restamp(third)
        third["monitor"]["seq"] = 2
        if keep_group:
            lines[1]["system_data"]["memory_info"] = {"period": 1.0, "timestamp": lines[1]["timestamp"],
                                                      "error": "no answer in time"}
        else:
            del lines[1]["system_data"]["memory_info"]
        return dump(lines + [third])
    return make


def raw(fn):
    def make():
        return fn(dump(good_stream()))
    return make


def set_path(path, value):
    """A mutation that sets r[path...] = value (path: a list of keys)."""
    def fn(r):
        o = r
        for k in path[:-1]:
            o = o[k]
        o[path[-1]] = value
    return fn


def del_path(path):
    def fn(r):
        o = r
        for k in path[:-1]:
            o = o[k]
        del o[path[-1]]
    return fn


DE = ["device_data", 0]
DR = DE + ["report"]


def DEV0(group):
    return DR + [group, "devices", "0"]


VU = ["system_data", "vcpu_usage"]
MI = ["system_data", "memory_info"]
RT0 = ["runtime_data", 0]
RG = RT0 + ["report"]


def exited_entry(r):
    r["runtime_data"][0] = {"runtime_index": 0, "address": "process:sleep", "pid": 41,
                            "runtime_tag": "sleep", "error": "process 41 exited", "report": {}}


def error_group(r):
    r["system_data"]["vcpu_usage"] = {"period": 1.0, "timestamp": r["timestamp"],
                                      "error": "no baseline sample yet"}


def unimplemented_sys(r):
    r["system_data"]["neuron_hw_counters"] = {
        "period": 1.0, "timestamp": r["timestamp"],
        "error": "neuron_hw_counters needs the Neuron device collector"}


def first_period_any(r):
    for g in r["system_data"].values():
        g["period"] = 0.398


def utf8_tag(r):
    r["runtime_data"][0]["runtime_tag"] = "aé日本語"


def tiny_float(lines):
    return lines.replace(b'"irq":0.0,"soft_irq":0.0},"usage_data"', b'"irq":1e-07,"soft_irq":0.0},"usage_data"', 1)


# (name, stream maker, options, must pass?, text the first error must contain)
def cases():
    c = []

    def good(name, make, args=()):
        c.append((name, make, list(args), True, ""))

    def bad(name, make, want, args=()):
        c.append((name, make, list(args), False, want))

    good("good stream", raw(lambda b: b))
    good("good stream, --expect-groups", raw(lambda b: b), ["--expect-groups", "vcpu_usage,memory_info"])
    good("group with an error and no data", mutate(error_group, 1))
    good("a period from a collection that reported an error", after_error(True))
    bad("a period from a collection not reported", after_error(False), "a collection is missing")
    good("exited process entry", mutate(exited_entry, 1))
    good("unimplemented system group with an error", mutate(unimplemented_sys))
    good("any first period", mutate(first_period_any))
    good("non-ASCII text", mutate(utf8_tag))
    good("exponent float", raw(tiny_float))
    good("--some", mutate(del_path(MI), 1), ["--expect-groups", "vcpu_usage,memory_info", "--some"])
    good("--count 2", raw(lambda b: b), ["--count", "2"])

    # framing
    bad("empty input", raw(lambda b: b""), "no reports")
    bad("no final newline", raw(lambda b: b[:-1]), "no \\n at the end")
    bad("CRLF", raw(lambda b: b.replace(b"\n", b"\r\n")), "\\r\\n")
    bad("invalid UTF-8", raw(lambda b: b.replace(b'"runtime_tag":"sleep"', b'"runtime_tag":"sl\xffp"', 1)),
        "UTF-8")
    bad("blank line", raw(lambda b: b"\n" + b), "empty line")
    bad("pretty-printed", raw(lambda b: b.replace(b'{"timestamp":', b'{ "timestamp": ', 1)), "not compact")
    bad("not JSON", raw(lambda b: b.replace(b"}\n", b"\n", 1)), "not JSON")
    bad("an array", raw(lambda b: b"[" + b.split(b"\n")[0] + b"]\n"), "expected a JSON object")
    bad("duplicate key", raw(lambda b: b.replace(b'{"timestamp":', b'{"device_data":[],"timestamp":', 1)),
        "duplicate key")
    bad("NaN", raw(lambda b: b.replace(b'"user":30.0', b'"user":NaN', 1)), "not JSON")
    # root
    bad("missing instance_info", mutate(del_path(["instance_info"])), "instance_info: missing")
    bad("unknown root key", mutate(set_path(["neuron_runtime_data"], [])), "neuron_runtime_data: unknown key")
    bad("seq starts at 1", mutate(set_path(["monitor", "seq"], 1)), "monitor.seq: 1, expected 0")
    bad("seq gap", mutate(set_path(["monitor", "seq"], 2), 1), "monitor.seq: 2, expected 1")
    bad("seq a string", mutate(set_path(["monitor", "seq"], "0")), "monitor.seq: expected an integer")
    bad("version missing", mutate(del_path(["monitor", "version"])), "monitor.version: missing")
    bad("self-timing of no group", mutate(set_path(["monitor", "collectors", "nvidia", "device_powr"],
                                                   {"seconds": 0.1, "cpu_seconds": 0.1, "success": True})),
        "monitor.collectors.nvidia.device_powr: unknown group")
    bad("negative seconds", mutate(set_path(["monitor", "collectors", "nvidia", "device_power", "seconds"], -1.0)),
        "monitor.collectors.nvidia.device_power.seconds")
    bad("timestamp without ms", mutate(set_path(["timestamp"], "2026-01-02T03:04:05Z")), "timestamp: expected ISO")
    bad("timestamp not UTC", mutate(set_path(["timestamp"], "2026-01-02T03:04:05.000+01:00")), "timestamp:")
    bad("timestamp bad date", mutate(set_path(["timestamp"], "2026-02-30T03:04:05.000Z")), "timestamp:")
    bad("device entry empty", mutate(set_path(["device_data"], [{}])), "device_data[0].device_type: missing")
    bad("device_data an object", mutate(set_path(["device_data"], {})), "device_data: expected an array")
    # envelope
    bad("group timestamp before root", mutate(set_path(VU + ["timestamp"], "2026-01-02T03:04:04.999Z")),
        "vcpu_usage.timestamp: before")
    bad("group timestamp 2 s late", mutate(set_path(VU + ["timestamp"], "2026-01-02T03:04:07.000Z")),
        "vcpu_usage.timestamp: more than 1 s")
    bad("period an integer", mutate(set_path(MI + ["period"], 1), 1), "memory_info.period: expected a float")
    bad("period zero", mutate(set_path(MI + ["period"], 0.0)), "memory_info.period: 0.0 is not a positive")
    bad("period missing", mutate(del_path(MI + ["period"])), "memory_info.period: missing")
    bad("error missing", mutate(del_path(MI + ["error"])), "memory_info.error: missing")
    bad("error null", mutate(set_path(MI + ["error"], None)), "memory_info.error: expected a string")
    bad("period longer than the time since", mutate(set_path(MI + ["period"], 2.0), 1),
        "memory_info.period: 2.000000 s, but")
    bad("period shorter than the time since", mutate(set_path(MI + ["period"], 0.5), 1),
        "memory_info.period: 0.500000 s, but")
    bad("no error, data missing", mutate(del_path(MI + ["swap_used_bytes"])), "swap_used_bytes: missing (error")
    bad("unknown group key", mutate(set_path(MI + ["free_bytes"], 1)), "memory_info.free_bytes: unknown key")
    # vcpu_usage
    bad("percent over 100", mutate(set_path(VU + ["usage_data", "1", "idle"], 100.5)), "usage_data.1.idle: 100.5")
    bad("percent negative", mutate(set_path(VU + ["usage_data", "0", "irq"], -0.1)), "usage_data.0.irq: -0.1")
    bad("percent an integer", mutate(set_path(VU + ["average_usage", "nice"], 0)), "average_usage.nice: expected a float")
    bad("seven sum over 100", mutate(set_path(VU + ["usage_data", "0", "user"], 20.01)), "usage_data.0: the seven")
    bad("io_wait missing", mutate(del_path(VU + ["usage_data", "0", "io_wait"])), "usage_data.0.io_wait: missing")
    bad("steal field", mutate(set_path(VU + ["average_usage", "steal"], 0.0)), "average_usage.steal: unknown")
    bad("CPU key with a leading zero", mutate(lambda r: r["system_data"]["vcpu_usage"]["usage_data"].update(
        {"01": r["system_data"]["vcpu_usage"]["usage_data"].pop("1")})), "usage_data.01: CPU key")
    bad("CPU key cpu0", mutate(lambda r: r["system_data"]["vcpu_usage"]["usage_data"].update(
        {"cpu0": r["system_data"]["vcpu_usage"]["usage_data"].pop("0")})), "usage_data.cpu0: CPU key")
    bad("no CPUs", mutate(set_path(VU + ["usage_data"], {})), "usage_data: empty")
    bad("average outside the CPUs", mutate(lambda r: r["system_data"]["vcpu_usage"]["average_usage"].update(
        user=45.0, idle=45.0)), "average_usage.user: 45.0 is outside")
    bad("context switches a float", mutate(set_path(VU + ["context_switch_count"], 1.0)),
        "context_switch_count: expected an integer")
    # memory_info
    bad("used over total", mutate(set_path(MI + ["memory_used_bytes"], 1001)), "memory_used_bytes: 1001 is more")
    bad("swap used over total", mutate(set_path(MI + ["swap_used_bytes"], 1)), "swap_used_bytes: 1 is more")
    bad("bytes negative", mutate(set_path(MI + ["swap_total_bytes"], -1)), "swap_total_bytes: -1 is below")
    bad("bytes a float", mutate(set_path(MI + ["memory_total_bytes"], 1000.0)), "memory_total_bytes: expected an integer")
    bad("bytes a boolean", mutate(set_path(MI + ["memory_total_bytes"], True)), "expected an integer, got a boolean")
    bad("--expect-groups, one missing", mutate(del_path(MI), 1), "missing group(s): memory_info",
        ["--expect-groups", "vcpu_usage,memory_info"])
    bad("--expect-groups, one extra", mutate(unimplemented_sys), "unexpected group(s): neuron_hw_counters",
        ["--expect-groups", "vcpu_usage,memory_info"])
    bad("--some, one never seen", raw(lambda b: b), "never held: neuron_hw_counters",
        ["--expect-groups", "vcpu_usage,memory_info,neuron_hw_counters", "--some"])
    bad("--no-system-errors", mutate(error_group, 1), "vcpu_usage.error: not empty", ["--no-system-errors"])
    bad("--count 3", raw(lambda b: b), "2 line(s), expected 3", ["--count", "3"])
    bad("neuron_hw_counters without neuron_devices",
        mutate(set_path(["system_data", "neuron_hw_counters"], {"period": 0.25, "timestamp": T0, "error": ""})),
        "neuron_hw_counters.neuron_devices: missing")
    bad("neuron_hw_counters, an unknown counter",
        mutate(set_path(["system_data", "neuron_hw_counters"], {"period": 0.25, "timestamp": T0, "error": "",
                                                                 "neuron_devices": [{"neuron_device_index": 0,
                                                                                     "mem_ecc_foo": 1}]})),
        "mem_ecc_foo")
    bad("runtime group in system_data",
        mutate(set_path(["system_data", "memory_used"], {"period": 0.25, "timestamp": T0, "error": ""})),
        "system_data.memory_used: unknown system group (a runtime group)")
    # execution_stats of an endpoint runtime (§6.5), put on runtime 0 of the first report
    def es_bad(name, fn, want):
        bad("execution_stats: " + name, mutate(lambda r: (r["runtime_data"][0]["report"].update(
            execution_stats=endpoint_stats(T0, 0.25)), fn(r["runtime_data"][0]["report"]["execution_stats"]))), want)

    good("execution_stats of an endpoint", mutate(lambda r: r["runtime_data"][0]["report"].update(
        execution_stats=endpoint_stats(T0, 0.25))))
    # what monitor/endpoint/infer.c wrote for the fixture expositions (tests/unit/test_infer.c keeps it current)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "infer",
                           "groups.json")) as f:
        for name, g in json.load(f).items():
            if "models" in g:
                good("infer.c: " + name, mutate(lambda r, g=g: r["runtime_data"][0]["report"].update(
                    execution_stats=dict(g, period=0.25, timestamp=T0, error=""))))
    def with_hist(g):
        g["models"]["m"]["1"]["latency_histograms"] = {
            "total_latency": {"le": [0.1, 0.5, 2.0], "counts": [3, 4, 3, 0], "sum": 4.25, "count": 10}}
        g["latency_histograms"] = {"total_latency": {"le": [0.5], "counts": [7, 3], "sum": 4.25, "count": 10}}
        return g

    good("execution_stats with latency_histograms", mutate(lambda r: r["runtime_data"][0]["report"].update(
        execution_stats=with_hist(endpoint_stats(T0, 0.25)))))
    es_bad("histogram count not the counts' sum", lambda g: with_hist(g)["models"]["m"]["1"]["latency_histograms"][
        "total_latency"].update(count=11), "count: 11, but the counts sum to 10")
    es_bad("histogram bounds out of order", lambda g: with_hist(g)["models"]["m"]["1"]["latency_histograms"][
        "total_latency"].update(le=[0.5, 0.1, 2.0]), "bounds not ascending")
    es_bad("histogram without its +Inf count", lambda g: with_hist(g)["models"]["m"]["1"]["latency_histograms"][
        "total_latency"].update(counts=[3, 4, 3]), "expected 4 counts")
    es_bad("histogram of a summary", lambda g: with_hist(g)["models"]["m"]["1"].update(latency_histograms={
        "queue": {"le": [1.0], "counts": [1, 0], "sum": 0.5, "count": 1}}), "without percentiles from buckets")
    es_bad("percentiles decrease", lambda g: g["models"]["m"]["1"]["latency_stats"]["total_latency"].update(p75=0.01),
           "p75: 0.01 is below p50")
    es_bad("an unknown percentile source", lambda g: g["models"]["m"]["1"]["latency_stats"].update(
        percentile_source="guess"), "\"guess\" is not one of")
    es_bad("summary keys with source histogram", lambda g: g["models"]["m"]["1"]["latency_stats"].update(
        percentile_source="histogram"), "queue.p90: not one of p0 p1")
    es_bad("a negative count", lambda g: g["models"]["m"]["1"]["execution_summary"].update(completed=-1),
           "completed: -1 is below 0")
    es_bad("a count as a float", lambda g: g["models"]["m"]["1"]["tokens"].update(prompt=5.0),
           "prompt: expected an integer")
    es_bad("runtime sum differs", lambda g: g["execution_summary"].update(completed=11),
           "execution_summary.completed: 11, but the models sum to 10")
    es_bad("errors do not sum to failed", lambda g: g["models"]["m"]["1"]["error_summary"].update(generic=3),
           "error_summary: sums to 3, but execution_summary.failed is 2")
    es_bad("a mean in ms", lambda g: g["models"]["m"]["1"]["mean_seconds"].update(request=5),
           "mean_seconds.request: expected a float")
    es_bad("an unknown model key", lambda g: g["models"]["m"]["1"].update(latency_p50=0.1),
           "latency_p50: unknown key")
    es_bad("KV cache over 1", lambda g: g["models"]["m"]["1"].update(kv_cache_usage_ratio=1.5), "is over 1")
    es_bad("no source", lambda g: g["models"]["m"]["1"]["latency_stats"].pop("percentile_source"),
           "percentile_source: missing")
    es_bad("device memory over total", lambda g: g["server_devices"]["GPU-1"].update(memory_used_bytes=10 ** 12),
           "more than memory_total_bytes")
    # runtime_data
    bad("entry without pid", mutate(del_path(RT0 + ["pid"])), "runtime_data[0].pid: missing")
    bad("entry with neuron_runtime_tag", mutate(set_path(RT0 + ["neuron_runtime_tag"], "x")),
        "runtime_data[0].neuron_runtime_tag: unknown key")
    bad("pid not the address's", mutate(set_path(["runtime_data", 1, "pid"], 999998)),
        "runtime_data[1].pid: 999998 is not the pid")
    bad("pid zero", mutate(set_path(RT0 + ["pid"], 0)), "runtime_data[0].pid: 0 is below 1")
    bad("pid null without an error", mutate(set_path(RT0 + ["pid"], None)), "runtime_data[0].pid: null without")
    bad("runtime_index negative", mutate(set_path(RT0 + ["runtime_index"], -1)), "runtime_index: -1 is below 0")
    bad("entries out of order", mutate(set_path(RT0 + ["runtime_index"], 3)), "not in config order")
    bad("two entries for one pid", mutate(lambda r: r["runtime_data"].insert(1, copy.deepcopy(r["runtime_data"][0]))),
        "runtime_data[1]: a second entry")
    bad("address changes", mutate(set_path(["runtime_data", 2, "address"], "unix:/run/other.sock"), 1),
        "runtime_data[2].address: \"unix:/run/other.sock\", but runtime 2 had")
    good("address changes, --reloads", mutate(set_path(["runtime_data", 2, "address"], "unix:/run/other.sock"), 1),
         ["--reloads"])
    good("period shorter, --reloads", mutate(set_path(MI + ["period"], 0.5), 1), ["--reloads"])
    bad("config alias in a report", mutate(lambda r: r["runtime_data"][0]["report"].update(
        neuron_runtime_vcpu_usage=r["runtime_data"][0]["report"].pop("runtime_vcpu_usage"))),
        "a config alias; reports say \"runtime_vcpu_usage\"")
    bad("inference_stats in a report", mutate(lambda r: r["runtime_data"][2]["report"].update(
        inference_stats=r["runtime_data"][2]["report"].pop("execution_stats"))),
        "a config alias; reports say \"execution_stats\"")
    bad("system group in a report", mutate(set_path(RG + ["vcpu_usage"], {"period": 0.25, "timestamp": T0,
                                                                       "error": "x"})), "(a system group)")
    bad("entry error, group without", mutate(set_path(["runtime_data", 2, "report", "execution_stats", "error"], "")),
        "execution_stats.error: \"\", but")
    bad("runtime vcpu over 100", mutate(set_path(RG + ["runtime_vcpu_usage", "vcpu_usage", "user"], 100.5)),
        "vcpu_usage.user: 100.5 is outside")
    bad("runtime vcpu sum over 100", mutate(lambda r: r["runtime_data"][0]["report"]["runtime_vcpu_usage"]
                                            ["vcpu_usage"].update(user=60.0, system=40.5)), "user + system")
    bad("runtime vcpu missing system", mutate(del_path(RG + ["runtime_vcpu_usage", "vcpu_usage", "system"])),
        "vcpu_usage.system: missing")
    bad("device a string", mutate(set_path(RG + ["memory_used", "runtime_used_bytes", "device"], "0")),
        "runtime_used_bytes.device: expected an integer")
    bad("host negative", mutate(set_path(RG + ["memory_used", "runtime_used_bytes", "host"], -5)),
        "runtime_used_bytes.host: -5 is below")
    bad("neuron_device key", mutate(set_path(RG + ["memory_used", "runtime_used_bytes", "neuron_device"], 0)),
        "runtime_used_bytes.neuron_device: unknown key")
    bad("runtime period longer than since", mutate(set_path(RG + ["memory_used", "period"], 1.5), 1),
        "memory_used.period: 1.500000 s, but")
    # device_data (§6a)
    good("device entry whose kind cannot be read", mutate(set_path(["device_data"], [
        {"device_type": "nvidia", "error": "NVML not found: libnvidia-ml.so.1: cannot open shared object file",
         "report": {}}])))
    good("no devices yet", mutate(set_path(DR + ["device_power", "devices"], {})))
    good("another vendor's fields", mutate(lambda r: (
        r["device_data"][0].update(device_type="amdgpu"),
        r["device_data"][0]["report"]["device_info"]["devices"]["0"].update(vbios_version="113-D67"),
        [r["device_data"][0]["report"]["device_info"]["devices"]["0"].pop(k)
         for k in ("nvml_version", "cuda_driver_version", "mig_mode")],
        r["device_data"][0]["report"]["device_memory"]["devices"]["0"].pop("mig_devices"),
        r["device_data"][0]["report"]["device_utilization"]["devices"]["0"].update(
            video_percent=4.0, processes={"41": {"gfx": 12.5}}))))
    good("ncs2 group fields", mutate(lambda r: (
        r["device_data"][0].update(device_type="ncs2"),
        r["device_data"][0]["report"]["device_utilization"].update(num_devices=2, num_available_devices=1),
        r["device_data"][0]["report"]["device_utilization"]["devices"].__setitem__("0", dict(
            GPU0, available=True, pids=[41])),
        r["device_data"][0]["report"].pop("device_info"),
        r["device_data"][0]["report"].pop("device_memory"))))
    bad("a vendor field on another vendor", mutate(set_path(DEV0("device_utilization") + ["video_percent"], 4.0)),
        "devices.0.video_percent: unknown key")
    bad("retired pages that do not add up", mutate(set_path(DEV0("device_errors") + ["retired_pages", "total"], 1)),
        "retired_pages.total: 1 is not single_bit + double_bit")
    good("every field absent", mutate(lambda r: [
        g["devices"].__setitem__("0", dict(GPU0)) for g in r["device_data"][0]["report"].values()]))
    bad("unknown device type", mutate(set_path(DE + ["device_type"], "tpu")), "device_type: unknown device type")
    bad("device entry without report", mutate(del_path(DE + ["report"])), "device_data[0].report: missing")
    bad("system group in a device report", mutate(set_path(DR + ["vcpu_usage"], {
        "period": 0.25, "timestamp": T0, "error": "x"})), "vcpu_usage: unknown device group (a system group)")
    bad("group without devices", mutate(del_path(DR + ["device_clocks", "devices"])),
        "device_clocks.devices: missing (error")
    bad("devices next to the group's error", mutate(set_path(DR + ["device_clocks", "error"], "x")),
        "device_clocks.devices: present next to")
    bad("entry error, group without", mutate(set_path(DE + ["error"], "NVML not found")),
        "\"\", but the entry has an error")
    bad("device key not an index", mutate(lambda r: r["device_data"][0]["report"]["device_power"]["devices"]
                                          .update(gpu0=r["device_data"][0]["report"]["device_power"]["devices"]
                                                  .pop("0"))), "devices.gpu0: device key is not")
    bad("device index not its key", mutate(set_path(DEV0("device_power") + ["index"], 2)),
        "index: 2, but the device's key is \"0\"")
    bad("device without error", mutate(del_path(DEV0("device_power") + ["error"])), "devices.0.error: missing")
    # NVIDIA MIG instances: "<gpu>/<gi>/<ci>" entries with their identity in every group.
    mig = {"index": 0, "uuid": "MIG-1", "pci_bus_id": "00000000:18:00.0", "model": "NVIDIA H100 80GB HBM3 MIG 1g.10gb",
           "parent_uuid": GPU0["uuid"], "gpu_instance_id": 9, "compute_instance_id": 0, "mig_profile": "1g.10gb",
           "error": ""}

    def add_mig(r, **over):
        for gname, fields in (("device_info", {"memory_total_bytes": 10468982784}),
                              ("device_utilization", {"sm_active_percent": 80.5}),
                              ("device_memory", {"total_bytes": 10, "used_bytes": 4, "free_bytes": 6,
                                                 "processes": {"5202": 4}})):
            e = dict(mig, **fields)
            e.update(over.get(gname, {}))
            r["device_data"][0]["report"][gname]["devices"]["0/9/0"] = e
    good("MIG instance entries", mutate(lambda r: add_mig(r)))
    bad("MIG instance whose index is not its key's GPU", mutate(lambda r: add_mig(r, device_memory={"index": 1})),
        "devices.0/9/0.index: 1, but the MIG instance's key is \"0/9/0\"")
    bad("MIG instance whose gpu_instance_id is not its key's", mutate(
        lambda r: add_mig(r, device_info={"gpu_instance_id": 7})), "gpu_instance_id: 7, but the MIG instance's key")
    bad("MIG identity differs between groups", mutate(lambda r: add_mig(r, device_memory={"mig_profile": "2g.20gb"})),
        "identity")
    bad("MIG instance id not an integer", mutate(lambda r: add_mig(r, device_memory={"gpu_instance_id": "9"})),
        "gpu_instance_id")
    bad("data next to a device error", mutate(set_path(DR + ["device_power", "devices", "1", "power_watts"], 1.0)),
        "devices.1.power_watts: a data field next to the device's error")
    bad("identity differs between groups", mutate(set_path(DEV0("device_clocks") + ["uuid"], "GPU-other")),
        "another group of this entry gives")
    bad("empty uuid", mutate(set_path(DEV0("device_info") + ["uuid"], "")), "uuid: empty")
    bad("unknown device field", mutate(set_path(DEV0("device_thermal") + ["temperature"], 45)),
        "devices.0.temperature: unknown key")
    bad("unknown nvidia device_info field", mutate(set_path(DEV0("device_info") + ["vbios_version"], "x")),
        "devices.0.vbios_version: unknown key")
    bad("device percent over 100", mutate(set_path(DEV0("device_utilization") + ["core_percent"], 100.5)),
        "core_percent: 100.5 is outside")
    bad("device percent an integer", mutate(set_path(DEV0("device_utilization") + ["core_percent"], 37)),
        "core_percent: expected a float")
    bad("watts an integer", mutate(set_path(DEV0("device_power") + ["power_watts"], 250)),
        "power_watts: expected a float")
    bad("bytes negative", mutate(set_path(DEV0("device_memory") + ["free_bytes"], -1)), "free_bytes: -1 is below")
    bad("used over total", mutate(set_path(DEV0("device_memory") + ["used_bytes"], 1001)),
        "used_bytes: 1001 is more than total_bytes")
    bad("energy increase over its total", mutate(set_path(DEV0("device_power") + ["energy_joules"], 2000.0)),
        "energy_joules: 2000.0 is more than the running total")
    bad("replays over their total", mutate(set_path(DEV0("device_errors") + ["pcie_replays"], 6)),
        "pcie_replays: 6 is more than")
    # containers
    def attributed(pod_sum, ctr_pod="u1"):
        def fn(r):
            d = r
            for k in DEV0("device_memory"):
                d = d[k]
            c41 = {"runtime": "containerd", "id": "a" * 64, "pod_uid": "0a1b2c3d-4e5f-6789-abcd-ef0123456789",
                   "pod": "p", "namespace": "n", "name": "c", "qos": "burstable"}
            d["processes"] = {"41": 100, "42": 50}
            d["process_containers"] = {"41": c41, "42": {"runtime": "systemd", "unit": "x.service"}}
            d["pods"] = {c41["pod_uid"]: {"pod": "p", "namespace": "n", "qos": "burstable", "pids": [41],
                                           "memory_bytes": pod_sum}}
            d["containers"] = {"a" * 64: {"runtime": "containerd", "pod_uid": c41["pod_uid"], "pod": ctr_pod,
                                          "namespace": "n", "name": "c", "pids": [41], "memory_bytes": 100}}
        return fn
    good("device memory attributed to a pod and a container", mutate(attributed(100, "p")))
    bad("a pod's memory not its processes' sum", mutate(attributed(150, "p")),
        "memory_bytes: 150 is not the sum of its processes' 100")
    bad("a container naming another pod than its process", mutate(attributed(100, "q")),
        "containers.%s.pod: \"q\", but process 41 says \"p\"" % ("a" * 64))
    # format 2: the same attribution with the identities once, in the report's "identities"
    def attributed_v2(pod_sum, named_sum=False, pod_name="p", fv=2):
        def fn(r):
            d = r
            for k in DEV0("device_memory"):
                d = d[k]
            uid = "0a1b2c3d-4e5f-6789-abcd-ef0123456789"
            d["processes"] = {"41": 100, "42": 50}
            d["pods"] = {uid: dict({"pids": [41], "memory_bytes": pod_sum}, **({"pod": "p"} if named_sum else {}))}
            d["containers"] = {"a" * 64: {"pids": [41], "memory_bytes": 100}}
            r["monitor"]["format_version"] = fv
            r["identities"] = {
                "containers": {"a" * 64: {"runtime": "containerd", "pod_uid": uid, "pod": "p", "namespace": "n",
                                          "name": "c", "qos": "burstable", "pids": [41]}},
                "pods": {uid: {"pod": pod_name, "namespace": "n", "qos": "burstable"}},
                "processes": {"42": {"runtime": "systemd", "unit": "x.service"}}}
        return fn
    good("format 2: device memory attributed, identities once", mutate(attributed_v2(100)))
    bad("format 2: a pod's memory not its processes' sum", mutate(attributed_v2(150)),
        "memory_bytes: 150 is not the sum of its processes' 100")
    bad("format 2: a sum that repeats a name", mutate(attributed_v2(100, named_sum=True)), ".pod: unknown key")
    bad("format 2: a pod's names not its processes'", mutate(attributed_v2(100, pod_name="q")),
        "identities.pods.0a1b2c3d-4e5f-6789-abcd-ef0123456789.pod: \"q\", but process 41 says \"p\"")
    bad("format 2: identities in a report that says format 1", mutate(attributed_v2(100, fv=1)),
        "identities: in a report of format 1")
    bad("a runtime entry's container with a pod but no pod_uid",
        mutate(set_path(RT0 + ["container"], {"runtime": "docker", "id": "b" * 64, "pod": "x"}), 1),
        "container.pod: without a pod_uid")
    bad("a runtime entry's empty container object", mutate(set_path(RT0 + ["container"], {}), 1),
        "names no container, pod or unit")
    good("a Slurm job's process (cgroup v1: job, step, uid)",
         mutate(set_path(RT0 + ["container"], {"runtime": "slurm", "hpc_job": "4242", "hpc_step": "batch",
                                                "hpc_uid": "1000"}), 1))
    good("a container in a Slurm job keeps the job", mutate(set_path(RT0 + ["container"], {
        "runtime": "podman", "id": "b" * 64, "hpc_job": "sEKNKTV3WPV500", "hpc_step": "0+1"}), 1))
    bad("a Slurm job id that is not one", mutate(set_path(RT0 + ["container"], {"runtime": "slurm", "hpc_job": "4242_7"}), 1),
        "container.hpc_job: not a Slurm job")
    bad("a Slurm step without its job", mutate(set_path(RT0 + ["container"], {"runtime": "systemd", "unit": "a.service",
                                                                             "hpc_step": "0"}), 1),
        "container.hpc_step: without an hpc_job")
    bad("runtime slurm without a job", mutate(set_path(RT0 + ["container"], {"runtime": "slurm"}), 1),
        "container.runtime: \"slurm\" is a Slurm job's process")
    bad("process key not a pid", mutate(set_path(DEV0("device_memory") + ["processes"], {"x": 1})),
        "processes.x: bad key")
    bad("process bytes a float", mutate(set_path(DEV0("device_memory") + ["processes"], {"41": 1.5})),
        "processes.41: expected an integer")
    bad("ecc_errors without uncorrected", mutate(del_path(DEV0("device_errors") + ["ecc_errors", "uncorrected"])),
        "ecc_errors.uncorrected: missing")
    bad("remapped rows pending a number", mutate(set_path(DEV0("device_errors") + ["remapped_rows", "pending"], 0)),
        "remapped_rows.pending: expected a boolean")
    bad("throttle reasons a string", mutate(set_path(DEV0("device_thermal") + ["throttle_reasons"], "gpu_idle")),
        "throttle_reasons: expected an array")
    bad("temperatures empty", mutate(set_path(DEV0("device_thermal") + ["temperatures_celsius"], {})),
        "temperatures_celsius: empty")
    bad("clock a string", mutate(set_path(DEV0("device_clocks") + ["clocks_mhz", "sm"], "1980")),
        "clocks_mhz.sm: expected a number")
    bad("MIG device unknown key", mutate(set_path(DEV0("device_memory") + ["mig_devices", "0", "size"], 1)),
        "mig_devices.0.size: unknown key")
    bad("device period longer than since", mutate(set_path(DR + ["device_power", "period"], 1.5), 1),
        "device_power.period: 1.500000 s, but")
    # the self-timing's success agrees with the groups' errors
    bad("success true, the device group with an error", mutate(set_path(DR + ["device_power", "error"], "x")),
        "monitor.collectors.nvidia.device_power.success: True, but the group has an error")
    bad("success false, the device group without one",
        mutate(set_path(["monitor", "collectors", "nvidia", "device_power", "success"], False)),
        "monitor.collectors.nvidia.device_power.success: False, but the group has no error")
    # instance_info
    bad("instance_info without node_name", mutate(del_path(["instance_info", "node_name"])),
        "instance_info.node_name: missing")
    bad("instance_info with instance_data key", mutate(set_path(["instance_info", "instance_data"], "")),
        "instance_info.instance_data: unknown key")
    bad("instance_id null", mutate(set_path(["instance_info", "instance_id"], None)),
        "instance_info.instance_id: expected a string")
    return c


def config_cases():
    """--config cases: they need a file."""
    cfg = {"period": "1s",
           "runtimes": [{"address": "process:sleep", "metrics": [{"type": "neuron_runtime_vcpu_usage"},
                                                                 {"type": "memory_used"}]},
                        {"address": "pid:999999", "metrics": [{"type": "memory_used"}]},
                        {"address": "unix:/run/neuron.sock", "metrics": [{"type": "inference_stats"}]}],
           "system_metrics": [{"type": "vcpu_usage"}, {"type": "memory_info"}],
           "devices": [{"type": "nvidia"}]}
    fd, path = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(cfg, f)
    other = copy.deepcopy(cfg)
    other["runtimes"][2]["address"] = "unix:/x"
    del other["system_metrics"][1]
    del other["runtimes"][0]["metrics"][1]
    other["devices"] = [{"type": "auto", "metrics": [{"type": "device_info"}, {"type": "device_utilization"},
                                                     {"type": "device_memory"}, {"type": "device_thermal"},
                                                     {"type": "device_power"}, {"type": "device_errors"}]}]
    fd, path2 = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(other, f)
    return [path, path2], [
        ("--config, matching", raw(lambda b: b), ["--config", path], True, ""),
        ("--config, other address", raw(lambda b: b), ["--config", path2], False,
         "runtime_data[2].address: \"unix:/run/neuron.sock\", but runtimes[2] has"),
        ("--config, group not configured", raw(lambda b: b), ["--config", path2], False,
         "memory_used: not in the config's metrics"),
        ("--config, system group not configured", raw(lambda b: b), ["--config", path2], False,
         "system_data.memory_info: not in the config's system_metrics"),
        ("--config, device group not configured", raw(lambda b: b), ["--config", path2], False,
         "device_clocks: not in the config's metrics for nvidia devices"),
        ("--config, index past the end", mutate(set_path(["runtime_data", 2, "runtime_index"], 3)),
         ["--config", path], False, "3, but the config has 3 runtime(s)"),
    ]


def self_test(verbose):
    files, extra = config_cases()
    failed = 0
    try:
        all_cases = cases() + extra
        for n, (name, make, args, should_pass, want) in enumerate(all_cases, 1):
            opts = parse_args(args)
            s = check_bytes(make(), opts)
            if should_pass:
                ok = not s.errors
                why = "; ".join(s.errors[:3])
            else:
                ok = any(want in e for e in s.errors)
                why = ("not rejected" if not s.errors else
                       "rejected for another reason: " + "; ".join(s.errors[:3]))
            if not ok:
                failed += 1
                print("self-test: %s: %s" % (name, why))
            elif verbose:
                print("ok %d - %s" % (n, name))
    finally:
        for f in files:
            os.unlink(f)
    if verbose and not failed:
        print("self-test: %d cases passed" % len(all_cases))
    return 1 if failed else 0


# -- command line ----------------------------------------------------------

def parse_args(argv):
    ap = argparse.ArgumentParser(prog="check_report.py",
                                 description="Check accel-monitor report lines (docs/report-format.md).")
    ap.add_argument("files", nargs="*", metavar="FILE")
    ap.add_argument("--expect-groups", metavar="A,B")
    ap.add_argument("--some", action="store_true")
    ap.add_argument("--no-system-errors", action="store_true")
    ap.add_argument("--count", type=int)
    ap.add_argument("--config", metavar="FILE")
    ap.add_argument("--period-tolerance", type=float, default=0.05, metavar="S")
    ap.add_argument("--reloads", action="store_true")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    o = ap.parse_args(argv)
    if o.expect_groups is not None:
        o.expect_groups = {g for g in o.expect_groups.split(",") if g}
        unknown = o.expect_groups - set(SYSTEM_GROUPS)
        if unknown:
            ap.error("--expect-groups: unknown system group(s): %s" % ", ".join(sorted(unknown)))
    elif o.some:
        ap.error("--some needs --expect-groups")
    o.cfg = load_config(o.config) if o.config else None
    return o


def main(argv):
    o = parse_args(argv)
    if o.self_test:
        return self_test(o.verbose)
    streams = []
    if not o.files:
        streams.append(check_bytes(sys.stdin.buffer.read(), o))
    for f in o.files:
        if f == "-":
            streams.append(check_bytes(sys.stdin.buffer.read(), o, "<stdin>"))
            continue
        with open(f, "rb") as fh:
            streams.append(check_bytes(fh.read(), o, f))
    errors = [e for s in streams for e in s.errors]
    try:
        for e in errors[:MAX_ERRORS]:
            print(e)
        if len(errors) > MAX_ERRORS:
            print("... and %d more" % (len(errors) - MAX_ERRORS))
        sys.stdout.flush()
    except BrokenPipeError:
        sys.stdout = None  # the reader is gone; the exit status still tells
    if errors:
        return 1
    if o.verbose:
        print("%d report line(s) OK" % sum(s.nlines for s in streams))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
