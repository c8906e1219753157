#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The Grafana dashboards (deploy/grafana/, docs/deploy.md): the committed JSON
# is what deploy/grafana/dashboards.py writes; each passes
# tests/helpers/dashboard_check.py lint (a datasource variable, every panel
# and target on ${datasource}, every selector on $instance, no instance
# written in; shown to fail on a broken copy); and every panel query returns
# data from a real Prometheus that scrapes four accel-prom targets:
#   devices: accel-monitor on the fixture sysfs tree (amdgpu, Neuron, NCS,
#            hwmon; amdgpu's process in a pod: its engine time by pod and
#            container) and the fake NVML library with tests/fixtures/deploy/
#            nvidia.nvml (four NVIDIA GPUs: XID, clock event reasons, NVLink,
#            GPM, MIG with GPM per instance), host groups;
#   runtimes: the neuron-monitor 2.x fixture stream, a line a second;
#   models: the endpoint runtimes' fixture stream (Triton and vLLM, models
#           and versions; tests/fixtures/streams/endpoint-runtimes.jsonl, with
#           the energy fields added: 2 J per completed request),
#           a line a second;
#   containers: accel-monitor with container_usage on the fixture cgroup
#           tree (tests/fixtures/cgroup/v2-systemd, its rootfs) and the fake
#           NVML with tests/fixtures/deploy/containers.nvml (processes of
#           three pods, /proc from tests/fixtures/containers/v2-systemd; two
#           GPUs, idle and busy), and a kubelet pod-resources server
#           (tests/helpers/podres_server.py) that gives both GPUs to one pod:
#           the allocations row, whose figures are checked too (the pod's
#           utilization spread, its two GPUs, the idle one).
# The query variables' label_values() return values too.
. "$(dirname "$0")/lib.sh"

need "$BIN/accel-prom is built" test -x "$BIN/accel-prom"
need "$BIN/accel-monitor is built" test -x "$BIN/accel-monitor"
need "prometheus (Debian package prometheus)" command -v prometheus
need "python3-grpcio and python3-grpc-tools (scripts/install-deps.sh)" $PY -c 'import grpc, grpc_tools'
need "curl" command -v curl
EP0=$FIX/streams/endpoint-runtimes.jsonl
need "$EP0 (the endpoint runtimes' fixture stream)" test -s "$EP0"
CC=${CC:-cc}
need "$CC" command -v "$CC"
T=$((40 * SLOW))
G=$TOP/deploy/grafana
export AWS_EC2_METADATA_DISABLED=true

ok "dashboards.py runs" $PY "$G/dashboards.py" "$WORK"
for f in "$G"/*.json; do
	n=$(basename "$f")
	ok "$n is what dashboards.py writes" cmp "$f" "$WORK/$n"
	ok "$n: lint" $PY "$HELP/dashboard_check.py" lint "$f"
done
$PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["panels"][0]["targets"][0]["expr"] = "accelerator_info{instance=\"10.0.0.1:8000\"}"
d["panels"][1]["datasource"] = {"type": "prometheus", "uid": "P1809F7CD0C75ACF3"}
json.dump(d, open(sys.argv[2], "w"))' "$G/accel-monitor-devices.json" "$WORK/broken.json"
ok "lint fails on a written-in instance and a fixed data source" sh -c \
	"$PY '$HELP/dashboard_check.py' lint '$WORK/broken.json' 2>&1 | grep -q 'written in' &&
	 $PY '$HELP/dashboard_check.py' lint '$WORK/broken.json' 2>&1 | grep -q 'panel datasource'"

# ---- target 1: accel-monitor on the fixtures ---------------------------------------------------
ok "the fake libnvidia-ml.so.1 builds" fake_nvml_build "$WORK/libnvidia-ml.so.1"
cat >"$WORK/mon.json" <<EOF2
{ "period": "1s", "devices": [ { "type": "auto" } ],
  "system_metrics": [ { "type": "vcpu_usage" }, { "type": "memory_info" } ] }
EOF2
# The devices' processes (tests/fixtures/proc-devices), two of them in pods as containers_identity.sh
# puts them: python3 (amdgpu: VRAM and engine time) and benchmark_app (an NCS2 stick's holder).
cp -R "$FIX/proc-devices" "$WORK/pd"
cp "$FIX/containers/v2-systemd/proc/1001/cgroup" "$WORK/pd/2000/cgroup"
cp "$FIX/containers/v2-systemd/proc/1002/cgroup" "$WORK/pd/3000/cgroup"
mkfifo "$WORK/dev.in" "$WORK/rt.in" "$WORK/ep.in" "$WORK/ct.in"
A1=$(free_port)
A2=$(free_port)
A3=$(free_port)
A4=$(free_port)
"$BIN/accel-prom" --listen-address "127.0.0.1:$A1" <"$WORK/dev.in" 2>"$WORK/prom1.err" &
_pids="$_pids $!"
FAKE_NVML_SCRIPT=$FIX/deploy/nvidia.nvml ACCEL_NVML_LIBRARY=$WORK/libnvidia-ml.so.1 \
	"$BIN/accel-monitor" -c "$WORK/mon.json" --path.sysfs "$FIX/sysfs/host" --path.procfs "$WORK/pd" \
	--path.rootfs "$FIX/containers/v2-systemd/rootfs" \
	>"$WORK/dev.in" 2>"$WORK/mon.err" &
_pids="$_pids $!"

# ---- target 2: the neuron-monitor stream ---------------------------------------------------------
exec 3<>"$WORK/rt.in"
"$BIN/accel-prom" --listen-address "127.0.0.1:$A2" --staleness 10m <"$WORK/rt.in" 2>"$WORK/prom2.err" 3>&- &
_pids="$_pids $!"

# ---- target 3: the endpoint runtimes' stream (per-model series) ---------------------------------
# With the energy accel-monitor adds where device collectors give a server's energy (docs/energy.md):
# here 2 J per completed request of every model, the split by requests.
EP=$WORK/endpoint-energy.jsonl
$PY - "$EP0" "$EP" <<'EOF2'
import json, sys
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in open(sys.argv[1], encoding="utf-8"):
        r = json.loads(line)
        for e in r.get("runtime_data", []):
            es = e.get("report", {}).get("execution_stats", {})
            total = 0.0
            for versions in es.get("models", {}).values():
                for m in versions.values():
                    done = m.get("execution_summary", {}).get("completed", 0)
                    if done > 0:
                        m.update(energy_joules=2.0 * done, energy_per_request_joules=2.0)
                        total += 2.0 * done
            if total:
                es.update(energy_joules=total, energy_source="devices", energy_attribution="requests")
        out.write(json.dumps(r, separators=(",", ":")) + "\n")
EOF2
exec 4<>"$WORK/ep.in"
"$BIN/accel-prom" --listen-address "127.0.0.1:$A3" --staleness 10m <"$WORK/ep.in" 2>"$WORK/prom3.err" 3>&- 4>&- &
_pids="$_pids $!"

# ---- target 4: containers and pods ---------------------------------------------------------------
cat >"$WORK/ct.json" <<EOF2
{ "period": "1s", "devices": [ { "type": "nvidia" } ], "system_metrics": [ { "type": "container_usage" } ] }
EOF2
# The kubelet's pod-resources answer: both fake GPUs to serving/infer-7d9's triton (the fixture's pod).
cat >"$WORK/podres.json" <<'EOF2'
{"pods": [{"name": "infer-7d9", "namespace": "serving", "containers": [{"name": "triton",
   "devices": [{"resource": "nvidia.com/gpu",
                "ids": ["GPU-3a9d1c2e-0000-4000-8000-000000000001", "GPU-3a9d1c2e-0000-4000-8000-000000000002"]}]}]}],
 "allocatable": [{"resource": "nvidia.com/gpu",
                  "ids": ["GPU-3a9d1c2e-0000-4000-8000-000000000001", "GPU-3a9d1c2e-0000-4000-8000-000000000002"]}]}
EOF2
spawn SPID $PY "$HELP/podres_server.py" --proto "$TOP/monitor/host/podres_api.proto" --dir "$WORK/py" \
	--socket "$WORK/kubelet.sock" --scenario "$WORK/podres.json" 3>&- 4>&-
ok "the pod-resources server serves" wait_for "$T" test -e "$WORK/kubelet.sock.ready"
"$BIN/accel-prom" --listen-address "127.0.0.1:$A4" <"$WORK/ct.in" 2>"$WORK/prom4.err" 3>&- 4>&- &
_pids="$_pids $!"
FAKE_NVML_SCRIPT=$FIX/deploy/containers.nvml ACCEL_NVML_LIBRARY=$WORK/libnvidia-ml.so.1 \
	"$BIN/accel-monitor" -c "$WORK/ct.json" --path.cgroupfs "$FIX/cgroup/v2-systemd" --path.rootfs "$FIX/cgroup/rootfs" \
	--path.procfs "$FIX/containers/v2-systemd/proc" --pod-resources-socket "$WORK/kubelet.sock" \
	>"$WORK/ct.in" 2>"$WORK/ct.err" 3>&- 4>&- &
_pids="$_pids $!"

prometheus_start "127.0.0.1:$A1" "127.0.0.1:$A2" "127.0.0.1:$A3" "127.0.0.1:$A4"
ok "Prometheus is ready" wait_for "$T" curl -sf -o /dev/null "$PURL/-/ready"

# q EXPR: the number of series an instant query returns ("0" for none or an error).
q() {
	curl -s --max-time 10 --data-urlencode "query=$1" "$PURL/api/v1/query" | $PY -c '
import json, sys
d = json.load(sys.stdin)
if d.get("status") != "success":
    sys.stderr.write(str(d) + "\n"); print(0)
else:
    r = d["data"]["result"]
    print(1 if d["data"]["resultType"] == "scalar" else len(r))'
}
up4() { [ "$(q 'up{job="accel"} == 1')" = 4 ]; }
ok "the four targets are up" wait_for "$T" up4
# The runtime streams, a line a second, so that rates have two points and more.
EPN=$(wc -l <"$EP")
for i in 1 2 3 4 5 6; do
	[ "$i" -gt 4 ] || sed -n "${i}p" "$FIX/streams/neuron-monitor-2x.jsonl" >&3
	[ "$i" -gt "$EPN" ] || sed -n "${i}p" "$EP" >&4
	sleep 1
done
rates() {
	[ "$(q 'rate(execution_status_total{model=""}[1m])')" -gt 0 ] &&
		[ "$(q 'rate(execution_status_total{model!=""}[1m])')" -gt 0 ] &&
		[ "$(q 'rate(accelerator_ecc_errors_total[1m])')" -gt 0 ] &&
		[ "$(q 'rate(container_cpu_usage_seconds_total[1m])')" -gt 0 ]
}
ok "counters have two points in Prometheus" wait_for "$T" rates

# ask NAME QUERIES VARIABLES: every panel query (one a line: title, tab, expression) and every query
# variable's label_values (name, label, selector) asked of Prometheus by one Python, a result a line:
# "ok" or "not ok", tab, the test's name, and after a failure a tab and what was asked.
ask() {
	$PY - "$PURL" "$@" <<'EOF'
import json, sys, urllib.parse, urllib.request
purl, n, queries, variables = sys.argv[1:5]
def get(path, params):
    try:
        with urllib.request.urlopen(purl + path + "?" + urllib.parse.urlencode(params), timeout=10) as r:
            return json.load(r)
    except (OSError, ValueError) as e:
        return {"status": "error", "error": str(e)}
def result(good, name, asked):
    print("\t".join(["ok" if good else "not ok", name] + ([] if good else [asked])), flush=True)
for line in open(queries, encoding="utf-8"):
    title, expr = line.rstrip("\n").split("\t", 1)
    d = get("/api/v1/query", {"query": expr})
    if d.get("status") != "success":
        c, asked = 0, "%s: %s" % (expr, d)
    else:
        c, asked = 1 if d["data"]["resultType"] == "scalar" else len(d["data"]["result"]), expr
    result(c > 0, "%s: %s: returns data (%d series)" % (n, title, c), asked)
for line in open(variables, encoding="utf-8"):
    name, label, sel = line.rstrip("\n").split("\t", 2)
    d = get("/api/v1/label/%s/values" % label, {"match[]": sel})
    vals = len(d.get("data") or [])
    result(vals > 0, "%s: variable $%s: label_values returns values (%d)" % (n, name, vals), sel)
EOF
}
for f in "$G"/*.json; do
	n=$(basename "$f" .json)
	$PY "$HELP/dashboard_check.py" queries "$f" >"$WORK/$n.queries"
	ok "$n: queries listed" test -s "$WORK/$n.queries"
	$PY "$HELP/dashboard_check.py" variables "$f" >"$WORK/$n.vars"
	ask "$n" "$WORK/$n.queries" "$WORK/$n.vars" >"$WORK/$n.results" || diag "$n: the queries could not all be asked"
	while IFS="$(printf '\t')" read -r st what asked; do
		[ "$st" = ok ] && _result 0 "$what" || { _result 1 "$what"; diag "$asked"; }
	done <"$WORK/$n.results"
done
# The allocations row's figures (serving/infer-7d9 holds containers.nvml's GPU 0, idle, and GPU 1, 80 %).
# panel TITLE: the panel's queries of the containers dashboard, one a line.
panel() { grep "^$1	" "$WORK/accel-monitor-containers.queries" | cut -f2; }
is "$(panel 'Device utilization spread by pod (min, mean, max)' | while read -r e; do prom_values "$e"; done | tr '\n' ' ')" \
	"0 0.4 0.8 " "containers: the pod's utilization spread across its GPUs: min 0, mean 0.4, max 0.8"
is "$(prom_values "$(panel 'Allocated devices by pod')")" 2 "containers: the pod holds two GPUs"
is "$(curl -s --data-urlencode "query=$(panel 'Allocated but idle devices (30 min under 5 %)')" "$PURL/api/v1/query" |
	$PY -c 'import json, sys; print(" ".join(sorted("%s/%s %s %s %s" % (m["namespace"], m["pod"], m["container"], m["device"], m["uuid"])
	for m in (x["metric"] for x in json.load(sys.stdin)["data"]["result"]))))')" \
	"serving/infer-7d9 triton 0 GPU-3a9d1c2e-0000-4000-8000-000000000001" "containers: the idle GPU the pod holds, and only it"
done_testing
