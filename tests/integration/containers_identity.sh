#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Containers and pods, end to end on fixture trees (tests/fixtures/containers/, made by its
# make_fixtures.py): /proc entries whose cgroup files copy real nodes (cgroup v2 with the systemd driver and
# the three QoS classes; v1 with the cgroupfs driver) and the runtimes' state (containerd task bundles,
# CRI-O userdata, Docker config.v2.json). accel-monitor reads them through --path.procfs and --path.rootfs:
#   - every pid: runtime entry carries the identity and the names the state files give; a host process
#     none, a systemd service its unit, a deleted container (no state left) its ids;
#   - three processes in three pods on one GPU of the fake NVML (plus a host process and one that exited
#     between NVML's list and the lookup) give three pods whose memory sums to their processes', and
#     three accel-prom series accelerator_pod_memory_used_bytes that sum to the same; the same labels on
#     the per-process and runtime series, on each GPU's DCGM series (dcgm-exporter -k), pod_name etc. with
#     --use-old-namespace, in accel-csv's other_labels, and accel-cloudwatch's PodName etc.;
#   - amdgpu's per-process VRAM and engine time by pod and container, an NCS2 stick's holder's pod;
#   - the monitor's own identity from the downward API (NODE_NAME, POD_NAME, POD_NAMESPACE);
#   - Slurm jobs (v1 and v2 layouts, multiple slurmd, a batch and an extern step, a SLUID, a container in a
#     job): their identities, and hpc_job, hpc_step, hpc_uid on accel-prom's, accel-csv's and
#     accel-cloudwatch's per-process series.
# The fake kubelet's part is containers_kubelet.sh.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
CHECK="$PY $HELP/check_report.py"
CF=$FIX/containers
CC=${CC:-cc}
export AWS_EC2_METADATA_DISABLED=true
unset POD_NAME POD_NAMESPACE # the runs below are outside a pod unless they say otherwise

need "$CC" command -v "$CC"
need curl command -v curl

# runtimes CONFIG PID...: a config polling pid:PID for each, memory_used and runtime_vcpu_usage.
runtimes() {
	out=$1
	shift
	$PY - "$@" >"$out" <<'EOF'
import json, sys
print(json.dumps({"period": "1s", "system_metrics": [], "devices": [],
                  "runtimes": [{"address": "pid:" + p, "metrics": [{"type": "runtime_vcpu_usage"},
                                                                    {"type": "memory_used"}]} for p in sys.argv[1:]]}))
EOF
}

# ident FILE: "pid=container-json" per runtime entry of the first report, sorted keys.
ident() {
	$PY - "$1" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1], encoding="utf-8").readline())
for e in r["runtime_data"]:
    print("%s=%s" % (e["pid"], json.dumps(e.get("container"), sort_keys=True)))
EOF
}

ID_A=$(printf 'a1%.0s' $(seq 32))
ID_B=$(printf 'b2%.0s' $(seq 32))
ID_C=$(printf 'c4%.0s' $(seq 32))
ID_G=$(printf 'd5%.0s' $(seq 32))
ID_K=$(printf 'e6%.0s' $(seq 32))

# ---- cgroup v2, systemd driver -------------------------------------------------------------------------------
V2=$CF/v2-systemd
runtimes "$WORK/v2.json" 1001 1002 1003 1004 1005 1006 1007 1008
ok "v2: accel-monitor --once exits 0" sh -c '"$1" --once -c "$2" --path.procfs "$3/proc" --path.rootfs "$3/rootfs" \
	>"$4/v2.out" 2>"$4/v2.err"' sh "$MON" "$WORK/v2.json" "$V2" "$WORK"
ok "v2: the report passes check_report.py" $CHECK "$WORK/v2.out"
ident "$WORK/v2.out" >"$WORK/v2.ident"
cat >"$WORK/v2.want" <<EOF
1001={"id": "$ID_A", "name": "pytorch", "namespace": "ml", "pod": "trainer-0", "pod_uid": "7c1e3a52-8f0b-4d6e-9a21-3b5c7d9e1f20", "qos": "burstable", "runtime": "containerd"}
1002={"id": "$ID_B", "name": "triton", "namespace": "serving", "pod": "infer-7d9f", "pod_uid": "2b4d6f80-1a3c-4e5f-8a7b-9c0d1e2f3a4b", "qos": "besteffort", "runtime": "cri-o"}
1003={"id": "$ID_C", "name": "jupyter", "namespace": "research", "pod": "notebook", "pod_uid": "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a", "qos": "guaranteed", "runtime": "docker"}
1004=null
1005={"runtime": "systemd", "unit": "nginx.service"}
1006={"namespace": "serving", "pod": "infer-7d9f", "pod_uid": "2b4d6f80-1a3c-4e5f-8a7b-9c0d1e2f3a4b", "qos": "besteffort", "runtime": "cri-o"}
1007={"id": "$ID_G", "pod_uid": "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9", "qos": "burstable", "runtime": "containerd"}
1008={"id": "$ID_K", "pod_uid": "0f1e2d3c-4b5a-4697-8877-665544332211", "qos": "burstable", "runtime": "containerd"}
EOF
ok "v2: containerd, CRI-O and Docker names from their state files; conmon in its pod; host none; a unit" \
	diff -u "$WORK/v2.want" "$WORK/v2.ident"

# ---- cgroup v1, cgroupfs driver -------------------------------------------------------------------------------
V1=$CF/v1-cgroupfs
runtimes "$WORK/v1.json" 2001 2002 2003 2004 2005
ok "v1: accel-monitor --once exits 0" sh -c '"$1" --once -c "$2" --path.procfs "$3/proc" --path.rootfs "$3/rootfs" \
	>"$4/v1.out" 2>"$4/v1.err"' sh "$MON" "$WORK/v1.json" "$V1" "$WORK"
ok "v1: the report passes check_report.py" $CHECK "$WORK/v1.out"
ident "$WORK/v1.out" >"$WORK/v1.ident"
V1_A=$(printf '3c%.0s' $(seq 32))
V1_B=$(printf '4d%.0s' $(seq 32))
V1_D=$(printf '5e%.0s' $(seq 32))
cat >"$WORK/v1.want" <<EOF
2001={"id": "$V1_A", "name": "worker", "namespace": "jobs", "pod": "batch-job-x7k2p", "pod_uid": "11111111-2222-4333-8444-555555555555", "qos": "burstable", "runtime": "containerd"}
2002={"id": "$V1_B", "name": "engine", "namespace": "serving", "pod": "llm-0", "pod_uid": "66666666-7777-4888-9999-aaaaaaaaaaaa", "qos": "guaranteed", "runtime": "cri-o"}
2003={"id": "$V1_D", "name": "web", "runtime": "docker"}
2004={"runtime": "systemd", "unit": "ssh.service"}
2005=null
EOF
ok "v1: the cgroupfs driver's bare ids found in containerd's and CRI-O's state, Docker's name, a unit, the host" \
	diff -u "$WORK/v1.want" "$WORK/v1.ident"

# --path.rootfs elsewhere: no state files, so the ids stand and nothing fails.
ok "v2 without the runtimes' state: exits 0" sh -c '"$1" --once -c "$2" --path.procfs "$3/proc" --path.rootfs "$4" \
	>"$4/nostate.out" 2>"$4/nostate.err"' sh "$MON" "$WORK/v2.json" "$V2" "$WORK"
ok "v2 without state: ids and QoS only, no names" q "$WORK/nostate.out" \
	'all("pod" not in e["container"] and e["container"]["id"] for e in L[0]["runtime_data"][:3])'

# ---- the monitor's own identity (downward API) -------------------------------------------------------------
ok "downward API: accel-monitor --once exits 0" sh -c 'env -u KUBE_NODE_NAME NODE_NAME=node-9 POD_NAME=mon-0 \
	POD_NAMESPACE=monitoring "$1" --once -c "$2" --path.procfs "$3/proc" >"$4/inst.out" 2>&1' sh "$MON" \
	"$WORK/v1.json" "$V1" "$WORK"
ok "downward API: the report passes check_report.py" $CHECK "$WORK/inst.out"
ok "instance_info: node_name from NODE_NAME, pod_name and pod_namespace from POD_NAME and POD_NAMESPACE" \
	q "$WORK/inst.out" '(lambda i: (i["node_name"], i["pod_name"], i["pod_namespace"]) == ("node-9", "mon-0", "monitoring"))(L[0]["instance_info"])'
ok "instance_info: no pod_name or pod_namespace outside a pod" q "$WORK/v1.out" \
	'"pod_name" not in L[0]["instance_info"] and "pod_namespace" not in L[0]["instance_info"]'
port=$(free_port)
env -u KUBE_NODE_NAME NODE_NAME=node-9 "$BIN/accel-prom" --listen-address "127.0.0.1:$port" </dev/null 2>/dev/null &
_pids="$_pids $!"
pid=$!
wait_for 10 curl -sf "http://127.0.0.1:$port/v1/collect"
ok "accel-prom's /v1/collect under NODE_NAME when KUBE_NODE_NAME is not set" sh -c \
	'curl -s "$1" | grep -q "^{\"node-9\":"' sh "http://127.0.0.1:$port/v1/collect"
kill "$pid"

# ---- three pods on one GPU (fake NVML) ----------------------------------------------------------------------
mkdir -p "$WORK/nv"
ok "the fake libnvidia-ml.so.1 builds" fake_nvml_build "$WORK/nv/libnvidia-ml.so.1"
cat >"$WORK/three.nvml" <<'EOF'
driver 580.95.05
gpu
name NVIDIA A100-SXM4-40GB
uuid GPU-3a9d1c2e-0000-4000-8000-000000000001
pci 00000000:07:00.0
memory 42949672960 12884901888 30064771072 0
proc 1001 4294967296
proc 1002 2147483648
proc 1003 1073741824
proc 1004 3221225472
proc 1099 2147483648
EOF
cat >"$WORK/nv.json" <<'EOF'
{"period": "1s", "system_metrics": [], "devices": [{"type": "nvidia", "metrics": [{"type": "device_memory"},
 {"type": "device_info"}, {"type": "device_errors"}]}],
 "runtimes": [{"address": "pid:1001", "metrics": [{"type": "memory_used"}]}]}
EOF
ok "fake NVML: accel-monitor --once exits 0" sh -c 'FAKE_NVML_SCRIPT=$1 ACCEL_NVML_LIBRARY=$2 "$3" --once -c "$4" \
	--path.procfs "$5/proc" --path.rootfs "$5/rootfs" >"$6/nv.out" 2>"$6/nv.err"' sh "$WORK/three.nvml" \
	"$WORK/nv/libnvidia-ml.so.1" "$MON" "$WORK/nv.json" "$V2" "$WORK"
ok "fake NVML: the report passes check_report.py" $CHECK "$WORK/nv.out"
DEV='L[0]["device_data"][0]["report"]["device_memory"]["devices"]["0"]'
ok "format 3: the device names its processes, no sums" q "$WORK/nv.out" "len($DEV['processes']) == 5 and 'pods' not in $DEV"
# The report as a sink reads it: the sums derived (tests/helpers/report_v2.py, as common/derive.c does).
$PY "$HELP/report_v2.py" <"$WORK/nv.out" >"$WORK/nv.read"
ok "the sums as read: they pass check_report.py (pod and container sums)" $CHECK "$WORK/nv.read"
ok "three pods on the GPU, by UID, with their names (in the report's identities)" q "$WORK/nv.read" \
	"sorted(L[0]['identities']['pods'][u]['pod'] for u in $DEV['pods']) == ['infer-7d9f', 'notebook', 'trainer-0']"
ok "the pods' memory is their processes' (the host process and the exited one in no pod)" q "$WORK/nv.read" \
	"sum(p['memory_bytes'] for p in $DEV['pods'].values()) == 4294967296 + 2147483648 + 1073741824"
ok "three containers, each with its one process" q "$WORK/nv.read" \
	"sorted(L[0]['identities']['containers'][k]['name'] + ':' + str(c['pids']) for k, c in $DEV['containers'].items()) == ['jupyter:[1003]', 'pytorch:[1001]', 'triton:[1002]']"
ok "the host process and the exited one have no identity" q "$WORK/nv.out" \
	"(sorted(p for c in L[0]['identities']['containers'].values() for p in c['pids']) == [1001, 1002, 1003] and
	  not L[0]['identities']['processes'])"

# A MIG instance's processes (the fake's mig_file layout): named by the instance, identified like a GPU's.
printf '3g.40gb 2 0 42412802048 38797312\n1g.10gb 9 0 10468982784 13631488\n' >"$WORK/mig.layout"
cat >"$WORK/mig.nvml" <<EOF
gpu
name NVIDIA H100 80GB HBM3
uuid GPU-5e0a7c2d-91b4-4f3a-8d6e-0c1f2a3b4c5d
memory 85520809984 1048576 85175828480 343932928
mig_file $WORK/mig.layout
mig_proc 2 0 1002 2147483648
mig_proc 9 0 1003 1073741824
mig_proc 9 0 1099 1073741824
EOF
echo '{"period": "300ms", "system_metrics": [], "devices": [{"type": "nvidia", "slow_period": "period"}]}' \
	>"$WORK/mig.json"
ok "MIG: accel-monitor -n 3 exits 0" sh -c 'FAKE_NVML_SCRIPT=$1 ACCEL_NVML_LIBRARY=$2 "$3" -n 3 -c "$4" \
	--path.procfs "$5/proc" --path.rootfs "$5/rootfs" >"$6/mig.out" 2>"$6/mig.err"' sh "$WORK/mig.nvml" \
	"$WORK/nv/libnvidia-ml.so.1" "$MON" "$WORK/mig.json" "$V2" "$WORK"
ok "MIG: the report passes check_report.py" $CHECK "$WORK/mig.out"
ok "MIG: the instances' contained processes have their containers' identities, the exited one none" q \
	"$WORK/mig.out" "(sorted(c['name'] + ':' + str(c['pids']) for c in L[-1]['identities']['containers'].values()) ==
	 ['jupyter:[1003]', 'triton:[1002]'] and not L[-1]['identities']['processes'])"
$PY "$HELP/report_v2.py" <"$WORK/mig.out" >"$WORK/mig.read"
ok "MIG: each instance's pod sum, as read" q "$WORK/mig.read" \
	"({k: sorted(s['pids'] for s in m.get('pods', {}).values()) for k, m in
	  L[-1]['device_data'][0]['report']['device_memory']['devices'].items()} ==
	 {'0': [[1002], [1003]], '0/2/0': [[1002]], '0/9/0': [[1003]]})"

# accel-prom: three pod series summing to the pods' per-process total; the same labels elsewhere.
scrape() { # NAME [accel-prom options]: serve nv.out, write the exposition to NAME.prom
	name=$1
	shift
	port=$(free_port)
	"$BIN/accel-prom" --listen-address "127.0.0.1:$port" "$@" <"$WORK/nv.out" 2>"$WORK/$name.err" &
	_pids="$_pids $!"
	pid=$!
	wait_for 10 sh -c 'curl -s "$1" | grep -qx "accel_prom_input_open 0"' sh "http://127.0.0.1:$port/metrics"
	curl -s "http://127.0.0.1:$port/metrics" >"$WORK/$name.prom"
	kill "$pid"
}
scrape prom
ok "accel-prom: three pod series whose memory sums to the pods' processes" $PY - "$WORK/prom.prom" <<'EOF'
import re, sys
pods, procs = {}, 0.0
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r'(\w+)\{(.*)\} (\S+)$', line.strip())
    if not m:
        continue
    labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
    if m.group(1) == "accelerator_pod_memory_used_bytes":
        pods[(labels["namespace"], labels["pod"])] = float(m.group(3))
    if m.group(1) == "accelerator_process_memory_used_bytes" and "pod" in labels:
        procs += float(m.group(3))
want = {("ml", "trainer-0"), ("serving", "infer-7d9f"), ("research", "notebook")}
assert set(pods) == want, pods
assert sum(pods.values()) == procs == 4294967296 + 2147483648 + 1073741824, (pods, procs)
EOF
ok "accel-prom: per-container, per-process and runtime series carry pod, namespace and container" sh -c '
	grep -q "^accelerator_container_memory_used_bytes{.*container=\"pytorch\".*namespace=\"ml\".*pod=\"trainer-0\"" "$1" &&
	grep -q "^accelerator_process_memory_used_bytes{.*container=\"triton\".*pid=\"1002\".*pod=\"infer-7d9f\"" "$1" &&
	grep -q "^runtime_memory_used_bytes{.*container=\"pytorch\".*pid=\"1001\".*pod=\"trainer-0\"" "$1" &&
	grep -q "^accelerator_process_memory_used_bytes{.*pid=\"1004\"" "$1" &&
	! grep -q "^accelerator_process_memory_used_bytes{.*pod=.*pid=\"1004\"" "$1"' sh "$WORK/prom.prom"
scrape old --use-old-namespace
ok "accel-prom --use-old-namespace: pod_name, pod_namespace, container_name" sh -c '
	grep -q "^accelerator_pod_memory_used_bytes{.*pod_name=\"notebook\",pod_namespace=\"research\"" "$1" &&
	grep -q "^accelerator_container_memory_used_bytes{.*container_name=\"jupyter\"" "$1" &&
	! grep -q "[{,]pod=" "$1"' sh "$WORK/old.prom"

# accel-prom --collectors: dcgm-exporter -k's labels on the GPU's DCGM series, one per container sharing it.
scrape dcgm --collectors "$FIX/dcgm/default-counters.csv"
ok "DCGM_FI_DEV_FB_USED: one series per container using the GPU, each with pod, namespace, container" \
	$PY - "$WORK/dcgm.prom" <<'EOF'
import re, sys
got = set()
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("DCGM_FI_DEV_FB_USED{"):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', line))
        got.add((labels.get("namespace"), labels.get("pod"), labels.get("container"), line.split()[-1]))
want = {("ml", "trainer-0", "pytorch", "12288"), ("serving", "infer-7d9f", "triton", "12288"),
        ("research", "notebook", "jupyter", "12288")}
assert got == want, got
EOF
# dcgm-exporter 4.x: the Xid series of a shared GPU, per container, with the driver label and err_code/err_msg.
ok "DCGM_FI_DEV_XID_ERRORS: 0, \"No Error\", DCGM_FI_DRIVER_VERSION, and the pod labels, per container" \
	$PY - "$WORK/dcgm.prom" <<'EOF'
import re, sys
got = set()
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("DCGM_FI_DEV_XID_ERRORS{"):
        l = dict(re.findall(r'(\w+)="([^"]*)"', line))
        got.add((l.get("DCGM_FI_DRIVER_VERSION"), l.get("err_code"), l.get("err_msg"), l.get("pod"), line.split()[-1]))
want = {("580.95.05", "0", "No Error", p, "0") for p in ("trainer-0", "infer-7d9f", "notebook")}
assert got == want, got
EOF
scrape dcgmold --collectors "$FIX/dcgm/default-counters.csv" --use-old-namespace
ok "DCGM series with --use-old-namespace: pod_name, pod_namespace, container_name" sh -c '
	grep -q "^DCGM_FI_DEV_FB_USED{.*container_name=\"triton\".*pod_name=\"infer-7d9f\",pod_namespace=\"serving\"" "$1" &&
	! grep -q "^DCGM_FI_DEV_FB_USED{.*[{,]pod=" "$1"' sh "$WORK/dcgmold.prom"

# accel-csv: the labels in other_labels (no new fixed column).
ok "accel-csv exits 0" sh -c '"$1" <"$2" >"$3"' sh "$BIN/accel-csv" "$WORK/nv.out" "$WORK/nv.csv"
ok "accel-csv: pod, namespace and container in other_labels of the pod and process rows" $PY - "$WORK/nv.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8", newline="")))
assert "pod" not in rows[0], "a new fixed column"
pod = [r for r in rows if r["metric"] == "accelerator_pod_memory_used_bytes"]
assert len(pod) == 3 and all("pod=" in r["other_labels"] and "namespace=" in r["other_labels"] for r in pod), pod
proc = [r for r in rows if r["metric"] == "accelerator_process_memory_used_bytes" and r["pid"] == "1001"]
assert proc and "container=pytorch" in proc[0]["other_labels"], proc
EOF

cat "$WORK/nv.out" "$WORK/v2.out" >"$WORK/both.out"
ok "accel-csv on runtime and device reports exits 0" sh -c '"$1" <"$2" >"$3"' sh "$BIN/accel-csv" "$WORK/both.out" \
	"$WORK/both.csv"
ok "csv_check.py: every row and label is what the mapping gives" $PY "$HELP/csv_check.py" --input "$WORK/both.out" \
	"$WORK/both.csv"

# ---- amdgpu (DRM fdinfo: memory and engine time) and the NCS2 holders ----------------------------------------
# tests/fixtures/proc-devices' processes, two of them put in pods: python3 (amdgpu) in pod A's container,
# benchmark_app (holding an NCS2 stick) in pod B's.
cp -R "$FIX/proc-devices" "$WORK/pd"
cp "$V2/proc/1001/cgroup" "$WORK/pd/2000/cgroup"
cp "$V2/proc/1002/cgroup" "$WORK/pd/3000/cgroup"
echo '{"period": "1s", "devices": [{"type": "amdgpu"}, {"type": "ncs2"}]}' >"$WORK/amd.json"
ok "amdgpu and ncs2: accel-monitor --once exits 0" sh -c '"$1" --once -c "$2" --path.sysfs "$3" --path.procfs "$4" \
	--path.rootfs "$5" >"$6/amd.out" 2>"$6/amd.err"' sh "$MON" "$WORK/amd.json" "$FIX/sysfs/host" "$WORK/pd" \
	"$V2/rootfs" "$WORK"
ok "amdgpu and ncs2: the report passes check_report.py" $CHECK "$WORK/amd.out"
$PY "$HELP/report_v2.py" <"$WORK/amd.out" >"$WORK/amd.read" # as a sink reads it: the sums derived
AMD='[e for e in L[0]["device_data"] if e["device_type"] == "amdgpu"][0]["report"]'
ok "amdgpu: the pod's memory is its process's VRAM, its engines its process's" q "$WORK/amd.read" \
	"(lambda m, u: m['pods']['7c1e3a52-8f0b-4d6e-9a21-3b5c7d9e1f20']['memory_bytes'] == m['processes']['2000'] and
	 set(u['pods']['7c1e3a52-8f0b-4d6e-9a21-3b5c7d9e1f20']['engines']) == set(u['processes']['2000']) and
	 'pods' not in $AMD['device_memory']['devices']['0'])($AMD['device_memory']['devices']['1'],
	 $AMD['device_utilization']['devices']['1'])"
ok "ncs2: the stick's holder carries its pod" q "$WORK/amd.read" \
	"([e for e in L[0]['device_data'] if e['device_type'] == 'ncs2'][0]['report']['device_utilization']['devices']['2']['pids'] == [3000] and
	  [c['pod'] for c in L[0]['identities']['containers'].values() if 3000 in c['pids']] == ['infer-7d9f'])"
port=$(free_port)
"$BIN/accel-prom" --listen-address "127.0.0.1:$port" <"$WORK/amd.out" 2>"$WORK/amdprom.err" &
_pids="$_pids $!"
pid=$!
wait_for 10 sh -c 'curl -s "$1" | grep -qx "accel_prom_input_open 0"' sh "http://127.0.0.1:$port/metrics"
curl -s "http://127.0.0.1:$port/metrics" >"$WORK/amd.prom"
kill "$pid"
ok "accel-prom: accelerator_pod_utilization_ratio and accelerator_container_utilization_ratio by engine" sh -c '
	grep -q "^accelerator_pod_utilization_ratio{.*engine=\"compute\".*namespace=\"ml\".*pod=\"trainer-0\"" "$1" &&
	grep -q "^accelerator_container_utilization_ratio{.*container=\"pytorch\".*engine=\"compute\"" "$1" &&
	grep -q "^accelerator_process_utilization_ratio{.*container=\"pytorch\".*engine=\"compute\".*pid=\"2000\"" "$1"' \
	sh "$WORK/amd.prom"

# accel-cloudwatch: Container Insights' dimension names.
ok "accel-cloudwatch --dry-run exits 0" sh -c '"$1" --dry-run --region us-east-1 --namespace T <"$2" >"$3" 2>&1' sh \
	"$BIN/accel-cloudwatch" "$WORK/nv.out" "$WORK/nv.cw"
ok "accel-cloudwatch: PodName, Namespace, ContainerName dimensions on the pod, container and process metrics" \
	cw_dims "$WORK/nv.cw" <<'EOF'
pods = sorted(d["PodName"] for m, d in dims.items() if names[m] == "AcceleratorPodMemoryUsed")
assert pods == ["infer-7d9f", "notebook", "trainer-0"], pods
ctr = [d for m, d in dims.items() if names[m] == "AcceleratorContainerMemoryUsed"]
assert sorted(d["ContainerName"] for d in ctr) == ["jupyter", "pytorch", "triton"], ctr
assert all("ContainerName" not in d for m, d in dims.items() if names[m] == "AcceleratorPodMemoryUsed")
proc = [d for m, d in dims.items() if names[m] == "AcceleratorProcessMemoryUsed" and d.get("Pid") == "1003"]
assert proc and proc[0]["Namespace"] == "research", proc
EOF

# ---- Slurm jobs (tests/fixtures/containers/slurm: cgroup v1 and v2, multiple slurmd, a SLUID) ---------------
SL=$CF/slurm
S_CTR=$(printf 'f7%.0s' $(seq 32))
runtimes "$WORK/slurm.json" 4001 4002 4003 4004 4005 4006 4007 4008 4009 4010
ok "slurm: accel-monitor --once exits 0" sh -c '"$1" --once -c "$2" --path.procfs "$3/proc" --path.rootfs "$3/rootfs" \
	>"$4/slurm.out" 2>"$4/slurm.err"' sh "$MON" "$WORK/slurm.json" "$SL" "$WORK"
ok "slurm: the report passes check_report.py" $CHECK "$WORK/slurm.out"
ident "$WORK/slurm.out" >"$WORK/slurm.ident"
cat >"$WORK/slurm.want" <<EOF
4001={"hpc_job": "4242", "hpc_step": "0", "hpc_uid": "1000", "runtime": "slurm"}
4002={"hpc_job": "4243", "hpc_step": "batch", "hpc_uid": "1001", "runtime": "slurm"}
4003={"hpc_job": "4250", "hpc_step": "0", "runtime": "slurm"}
4004={"hpc_job": "4250", "hpc_step": "0", "runtime": "slurm"}
4005={"hpc_job": "4250", "hpc_step": "extern", "runtime": "slurm"}
4006={"hpc_job": "4251", "hpc_step": "batch", "runtime": "slurm"}
4007={"hpc_job": "sEKNKTV3WPV500", "hpc_step": "0", "runtime": "slurm"}
4008={"runtime": "systemd", "unit": "slurmd.service"}
4009={"hpc_job": "4250", "hpc_step": "1", "id": "$S_CTR", "runtime": "podman"}
4010=null
EOF
ok "slurm: v1 (every controller; slurm_<node>), v2 (task, slurmstepd, extern, <node>_slurmstepd.scope, SLUID), slurmd's unit, a container in a job, the stepds' waiting area" \
	diff -u "$WORK/slurm.want" "$WORK/slurm.ident"

cat >"$WORK/slurm.nvml" <<'EOF'
driver 580.95.05
gpu
name NVIDIA H100 80GB HBM3
uuid GPU-5e0a7c2d-91b4-4f3a-8d6e-0c1f2a3b4c5e
pci 00000000:18:00.0
memory 85520809984 12884901888 72635908096 0
proc 4001 4294967296
proc 4003 2147483648
proc 4007 1073741824
proc 4009 536870912
proc 4008 268435456
EOF
ok "slurm, fake NVML: accel-monitor --once exits 0" sh -c 'FAKE_NVML_SCRIPT=$1 ACCEL_NVML_LIBRARY=$2 "$3" --once -c "$4" \
	--path.procfs "$5/proc" --path.rootfs "$5/rootfs" >"$6/snv.out" 2>"$6/snv.err"' sh "$WORK/slurm.nvml" \
	"$WORK/nv/libnvidia-ml.so.1" "$MON" "$WORK/nv.json" "$SL" "$WORK"
ok "slurm, fake NVML: the report passes check_report.py" $CHECK "$WORK/snv.out"
ok "slurm: the jobs' processes in identities.processes, the container in a job in identities.containers" q \
	"$WORK/snv.out" "(sorted(L[0]['identities']['processes']) == ['4001', '4003', '4007', '4008'] and
	 L[0]['identities']['processes']['4001']['hpc_job'] == '4242' and
	 L[0]['identities']['containers']['$S_CTR'] == {'runtime': 'podman', 'hpc_job': '4250', 'hpc_step': '1', 'pids': [4009]})"
cp "$WORK/snv.out" "$WORK/nv.out" # scrape serves nv.out
scrape slurm
ok "accel-prom: hpc_job, hpc_step and hpc_uid on the jobs' per-process series; none on slurmd's" sh -c '
	grep -q "^accelerator_process_memory_used_bytes{.*hpc_job=\"4242\",hpc_step=\"0\",hpc_uid=\"1000\".*pid=\"4001\",.*} 4294967296$" "$1" &&
	grep -q "^accelerator_process_memory_used_bytes{.*hpc_job=\"4250\",hpc_step=\"0\",.*pid=\"4003\",.*} 2147483648$" "$1" &&
	grep -q "^accelerator_process_memory_used_bytes{.*hpc_job=\"sEKNKTV3WPV500\".*pid=\"4007\"" "$1" &&
	grep -q "^accelerator_process_memory_used_bytes{.*container=\"$2\",.*hpc_job=\"4250\",hpc_step=\"1\",.*pid=\"4009\"" "$1" &&
	grep -q "^accelerator_process_memory_used_bytes{.*pid=\"4008\"" "$1" &&
	! grep -q "^accelerator_process_memory_used_bytes{.*hpc_.*pid=\"4008\"" "$1" &&
	! grep -q "hpc_uid=.*pid=\"4003\"" "$1"' sh "$WORK/slurm.prom" "$S_CTR"
scrape slurmdcgm --collectors "$FIX/dcgm/default-counters.csv"
ok "accel-prom --collectors: a DCGM series of the GPU per HPC job of its processes, with hpc_job" sh -c '
	for job in 4242 4250 sEKNKTV3WPV500; do
		grep -q "^DCGM_FI_DEV_FB_USED{.*hpc_job=\"$job\"" "$1" || exit 1
	done
	grep -q "^DCGM_FI_DEV_FB_USED{.*container=\"$2\",.*hpc_job=\"4250\"" "$1" &&
	test "$(grep -c "^DCGM_FI_DEV_FB_USED{.*hpc_job=\"4250\"" "$1")" = 2 &&
	test "$(grep -c "^DCGM_FI_DEV_FB_USED{" "$1")" = 4' sh "$WORK/slurmdcgm.prom" "$S_CTR"
scrape slurmold --use-old-namespace
ok "accel-prom --use-old-namespace: hpc_job keeps its name (dcgm-exporter's)" \
	grep -q "^accelerator_process_memory_used_bytes{.*hpc_job=\"4242\".*pid=\"4001\"" "$WORK/slurmold.prom"
ok "slurm: accel-csv exits 0" sh -c '"$1" <"$2" >"$3"' sh "$BIN/accel-csv" "$WORK/snv.out" "$WORK/slurm.csv"
ok "accel-csv: hpc_job, hpc_step, hpc_uid in the process rows' other_labels" $PY - "$WORK/slurm.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8", newline="")))
proc = {r["pid"]: r["other_labels"] for r in rows if r["metric"] == "accelerator_process_memory_used_bytes"}
assert all(x in proc["4001"] for x in ("hpc_job=4242", "hpc_step=0", "hpc_uid=1000")), proc
assert "hpc_job=4250" in proc["4003"] and "hpc_uid" not in proc["4003"] and "hpc_" not in proc["4008"], proc
EOF
ok "slurm: csv_check.py: every row and label is what the mapping gives" $PY "$HELP/csv_check.py" --input \
	"$WORK/snv.out" "$WORK/slurm.csv"
ok "slurm: accel-cloudwatch --dry-run exits 0" sh -c '"$1" --dry-run --region us-east-1 --namespace T <"$2" >"$3" 2>&1' \
	sh "$BIN/accel-cloudwatch" "$WORK/snv.out" "$WORK/slurm.cw"
ok "accel-cloudwatch: HpcJob, HpcStep, HpcUid dimensions on the jobs' process metrics" cw_dims "$WORK/slurm.cw" <<'EOF'
proc = {d.get("Pid"): d for m, d in dims.items() if names[m] == "AcceleratorProcessMemoryUsed"}
assert (proc["4001"]["HpcJob"], proc["4001"]["HpcStep"], proc["4001"]["HpcUid"]) == ("4242", "0", "1000"), proc
assert proc["4007"]["HpcJob"] == "sEKNKTV3WPV500" and "HpcUid" not in proc["4003"], proc
assert not any(k.startswith("Hpc") for k in proc["4008"]), proc
EOF

done_testing
