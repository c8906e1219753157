#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Energy per process, pod, model and request, exactly (docs/energy.md): the fake NVML
# (tests/helpers/fake_nvml.c) with a scripted energy counter (12 J per read, read every cycle) at 0 W idle,
# two processes in two pods of the containers fixture (1001: trainer-0, 1002: infer-7d9f) whose per-process
# SM samples are 30 and 10, and the fake Triton (tests/helpers/fake_infer.py) whose three model versions
# spend 40, 40 and 75 ms of compute_infer per scrape, reporting on the same GPU (nv_gpu_*). Every figure is
# hand-computed: per period 12 J, 9 J for 1001 and its pod, 3 J for 1002 and its pod; a server's
# execution_stats over k scrapes has 12k J, its models 12k x 40/155, 40/155 and 75/155, each per completed
# request that divided by its completions; accel-prom's counters are the sums of the stream's values. Equal
# means equal to the report's precision (reals are written to 9 decimals).
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
V2=$FIX/containers/v2-systemd
CC=${CC:-cc}
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED
need "$BIN/accel-monitor and $BIN/accel-prom are built" test -x "$MON" -a -x "$BIN/accel-prom"
need "$CC" command -v "$CC"
need "curl" command -v curl

mkdir -p "$WORK/nv"
ok "the fake libnvidia-ml.so.1 builds" fake_nvml_build "$WORK/nv/libnvidia-ml.so.1"
GPU=$($PY -c "import sys; sys.path.insert(0, '$HELP'); import fake_infer; print(fake_infer.GPU)")
cat >"$WORK/gpu.nvml" <<EOF
gpu
name NVIDIA H100 80GB HBM3
uuid $GPU
energy 1000000 12000
power 0
proc 1001 4294967296
proc 1002 2147483648
proc_util 1001 30
proc_util 1002 10
EOF
spawn SRV $PY "$HELP/fake_infer.py" --port-file "$WORK/port" --log "$WORK/scrapes"
ok "the fake Triton listens" wait_for $((10 * SLOW)) test -s "$WORK/port"
PORT=$(cat "$WORK/port")
cat >"$WORK/monitor.json" <<EOF
{ "period": "1s", "system_metrics": [],
  "devices": [ { "type": "nvidia", "slow_period": "period", "metrics": [ { "type": "device_power" } ] } ],
  "runtimes": [ { "address": "http://127.0.0.1:$PORT/metrics", "server": "triton",
                  "metrics": [ { "type": "execution_stats" } ] } ] }
EOF
N=${ENERGY_EXACT_REPORTS:-7}
ok "accel-monitor writes $N reports" sh -c 'FAKE_NVML_SCRIPT=$1 ACCEL_NVML_LIBRARY=$2 "$3" -c "$4" -n "$5" \
	--path.procfs "$6/proc" --path.rootfs "$6/rootfs" >"$7/stream.jsonl" 2>"$7/monitor.err"' sh \
	"$WORK/gpu.nvml" "$WORK/nv/libnvidia-ml.so.1" "$MON" "$WORK/monitor.json" "$N" "$V2" "$WORK"
ok "the stream passes check_report.py" $PY "$HELP/check_report.py" "$WORK/stream.jsonl"

# The stream, every report: the hand-computed joules; the totals for accel-prom's counters in totals.json.
ok "every joule in the stream is the hand-computed one" $PY - "$WORK/stream.jsonl" "$WORK/totals.json" "$HELP" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[3])
from report_v2 import derive
STEP = 12.0                                       # J per period: the counter's step, read every cycle
PROC = {"1001": 9.0, "1002": 3.0}                 # SM samples 30 : 10, idle 0 W
POD = {("ml", "trainer-0"): 9.0, ("serving", "infer-7d9f"): 3.0}
COMPUTE = {("resnet50", "1"): 10 * 4000, ("resnet50", "2"): 4 * 10000, ("bert", "1"): 2 * 37500}  # µs a scrape
DONE = {("resnet50", "1"): 10, ("resnet50", "2"): 4, ("bert", "1"): 2}
EPS = 1e-9  # the report writes reals to 9 decimals: equal to the hand-computed value to that precision
tot = {"proc": {}, "pod": {}, "model": {}, "server": 0.0, "idle": 0.0}
splits = models = 0
for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    r = json.loads(line)
    dev = r["device_data"][0]["report"]["device_power"]["devices"]["0"]
    if "processes" in dev:
        splits += 1
        assert dev["energy_joules"] == STEP, (n, dev["energy_joules"])
        assert dev["idle_energy_joules"] == 0.0 and dev["active_energy_joules"] == STEP, (n, dev)
        assert dev["energy_attribution"] == "utilization", (n, dev["energy_attribution"])
        assert dev["processes"] == PROC, (n, dev["processes"])
        assert "pods" not in dev, (n, "format 3: the reader derives the sums")
        names = r["identities"]["pods"]  # the pods' names once, in the report's identities
        derive(r)  # the per-pod sums as a sink derives them (report_v2.py, as common/derive.c)
        pods = {(names[u]["namespace"], names[u]["pod"]): p["energy_joules"] for u, p in dev["pods"].items()}
        assert pods == POD, (n, pods)
        for k, v in PROC.items():
            tot["proc"][k] = tot["proc"].get(k, 0) + v
        for k, v in POD.items():
            tot["pod"]["/".join(k)] = tot["pod"].get("/".join(k), 0) + v
        tot["idle"] += dev["idle_energy_joules"]
    es = r["runtime_data"][0]["report"]["execution_stats"]
    if "energy_joules" not in es:
        continue
    k = es["models"]["resnet50"]["1"]["execution_summary"]["completed"] // 10
    e = STEP * k
    assert es["energy_joules"] == e, (n, es["energy_joules"], e)
    assert es["energy_source"] == "devices" and es["energy_attribution"] == "compute_time", (n, es)
    tot["server"] += e
    for (m, v), us in COMPUTE.items():
        o = es["models"][m][v]
        want = e * us / sum(COMPUTE.values())
        assert abs(o["energy_joules"] - want) <= EPS, (n, m, v, o["energy_joules"], want)
        per = want / (DONE[(m, v)] * k)
        assert abs(o["energy_per_request_joules"] - per) <= EPS, (n, m, v, o, per)
        key = m + "/" + v
        tot["model"][key] = tot["model"].get(key, 0) + o["energy_joules"]
        models += 1
assert splits >= 4 and models >= 6, (splits, models)
json.dump(tot, open(sys.argv[2], "w"))
EOF

# accel-prom: its counters are the stream's sums.
port=$(free_port)
"$BIN/accel-prom" --listen-address "127.0.0.1:$port" <"$WORK/stream.jsonl" 2>"$WORK/prom.err" &
_pids="$_pids $!"
ppid=$!
wait_for $((10 * SLOW)) sh -c 'curl -s "$1" | grep -qx "accel_prom_input_open 0"' sh "http://127.0.0.1:$port/metrics"
curl -s "http://127.0.0.1:$port/metrics" >"$WORK/energy.prom"
kill "$ppid"
ok "accel-prom: every energy counter is the stream's sum" $PY - "$WORK/energy.prom" "$WORK/totals.json" <<'EOF'
import json, re, sys
tot = json.load(open(sys.argv[2]))
got = {"proc": {}, "pod": {}, "model": {}, "server": None}
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r'(\w+)\{(.*)\} (\S+)$', line.strip())
    if not m:
        continue
    lab, v = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2))), float(m.group(3))
    if m.group(1) == "accelerator_process_energy_joules_total":
        got["proc"][lab["pid"]] = v
    elif m.group(1) == "accelerator_pod_energy_joules_total":
        got["pod"][lab["namespace"] + "/" + lab["pod"]] = v
    elif m.group(1) == "inference_energy_joules_total":
        got["model"][lab["model"] + "/" + lab["version"]] = v
    elif m.group(1) == "inference_server_energy_joules_total":
        got["server"] = v
for k in ("proc", "pod", "model"):
    assert set(got[k]) == set(tot[k]), (k, got[k], tot[k])
    for x in tot[k]:
        assert abs(got[k][x] - tot[k][x]) <= 1e-8, (k, x, got[k][x], tot[k][x])
assert got["server"] is not None and abs(got["server"] - tot["server"]) <= 1e-8, got
EOF
if command -v promtool >/dev/null 2>&1; then
	ok "promtool check metrics: the energy families are clean" sh -c 'promtool check metrics <"$1"' sh \
		"$WORK/energy.prom"
fi
done_testing
