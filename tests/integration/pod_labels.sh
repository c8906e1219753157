#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Pods' UIDs and labels, end to end: the pod-resources server (tests/helpers/podres_server.py) gives two pods
# GPUs of the fake NVML (tests/fixtures/nvml/multi.nvml), and a fake kubelet (tests/helpers/fake_kubelet.py, HTTPS
# with a CA made here) serves their PodList with their UIDs and labels. accel-monitor --kubelet-url:
#   - writes each allocation owner's "pod_uid" (from the kubelet's pod list: the pod-resources API names pods by
#     namespace and name only);
#   - with --kubelet-pod-labels N, each pod's labels once, in identities.pods (at most N, key order, the rest
#     counted in labels_dropped); without it, none;
# and accel-prom --collectors serves the DCGM series of the GPUs with pod_uid beside pod under
# --kubernetes-enable-pod-uid only (dcgm-exporter's flag and label name), and the pods' labels (named as
# kube-state-metrics names them: label_app_kubernetes_io_name) on them and on accelerator_allocation_info under
# --kubernetes-enable-pod-labels only; promtool check metrics is clean.
# Everything it needs is installed by `make test`: a missing one is a failure, never a skip.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
export AWS_EC2_METADATA_DISABLED=true
need "python3-grpcio and python3-grpc-tools (scripts/install-deps.sh)" $PY -c 'import grpc, grpc_tools'
need "a C compiler for the fake libnvidia-ml.so.1" command -v "${CC:-cc}"
need "promtool (Debian package prometheus)" command -v promtool
need "curl" command -v curl
need openssl command -v openssl

cd "$WORK"
mkdir -p lib
ok "the fake libnvidia-ml.so.1 builds" fake_nvml_build "$WORK/lib/libnvidia-ml.so.1"
export FAKE_NVML_SCRIPT="$FIX/nvml/multi.nvml" ACCEL_NVML_LIBRARY="$WORK/lib/libnvidia-ml.so.1"
G0=GPU-1c3b9a7e-0000-4000-8000-000000000000
U_TRAIN=7a1e0b2c-3d4e-4f50-8a61-000000000001
U_NB=7a1e0b2c-3d4e-4f50-8a61-000000000002
U_PROC=7c1e3a52-8f0b-4d6e-9a21-3b5c7d9e1f20 # process 1001's pod in the containers fixture (containers_identity.sh)

# ---- the kubelet: certificates, token, the pods with their labels ---------------------------------------------------
ok "openssl made the CA and the kubelet's certificate" kubelet_tls
printf 'eyJhbGciOiJSUzI1NiJ9.test-service-account-token\n' >token
cat >pods.json <<EOF
{"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [
 {"metadata": {"name": "train-0", "namespace": "ml", "uid": "$U_TRAIN",
   "labels": {"app.kubernetes.io/name": "trainer", "team": "vision", "appVersion": "3", "zz-last": "dropped"}},
  "status": {"phase": "Running"}},
 {"metadata": {"name": "nb", "namespace": "dev", "uid": "$U_NB", "labels": {"app": "jupyter"}},
  "status": {"phase": "Running"}},
 {"metadata": {"name": "trainer-0", "namespace": "ml", "uid": "$U_PROC", "labels": {"app": "trainer", "tier": "gpu"}},
  "status": {"phase": "Running"}}
]}
EOF
spawn KPID $PY "$HELP/fake_kubelet.py" --cert server.pem --key server.key --token-file token --pods pods.json \
	--port-file kport --log klog
ok "the fake kubelet listens" wait_for 10 test -s kport
KURL=https://127.0.0.1:$(cat kport)

# ---- the pod-resources API -------------------------------------------------------------------------------------------
cat >scenario.json <<EOF
{"pods": [
 {"name": "train-0", "namespace": "ml", "containers": [{"name": "main",
   "devices": [{"resource": "nvidia.com/gpu", "ids": ["$G0", "1"]}]}]},
 {"name": "nb", "namespace": "dev", "containers": [{"name": "jupyter",
   "devices": [{"resource": "nvidia.com/gpu", "ids": ["2::1"]}]}]},
 {"name": "unknown", "namespace": "dev", "containers": [{"name": "c",
   "devices": [{"resource": "nvidia.com/gpu", "ids": ["2::2"]}]}]}
], "allocatable": []}
EOF
cat >mon.json <<'EOF'
{"period": "500ms", "system_metrics": [], "devices": [{"type": "nvidia", "slow_period": "period"}]}
EOF
SOCK=$WORK/kubelet.sock
spawn SPID $PY "$HELP/podres_server.py" --proto "$TOP/monitor/host/podres_api.proto" --dir "$WORK/py" \
	--socket "$SOCK" --scenario scenario.json --log calls
ok "the pod-resources server serves" wait_for $((30 * SLOW)) test -e "$SOCK.ready"
MONARGS="-c mon.json --pod-resources-socket $SOCK --kubelet-refresh 1s --kubelet-url $KURL
	--kubelet-token-file token --kubelet-ca-file ca.pem"
# UNTIL (six_reports): the last report of NAME.out names train-0's UID (the kubelet's answer is in).
uid_known() { echo "tail -n 1 $1.out | grep -q '\"pod_uid\":\"$U_TRAIN\"'"; }

# ---- the report: owners' UIDs, the pods' labels once --------------------------------------------------------------
# shellcheck disable=SC2086 # MONARGS is words
six_reports labels "$(uid_known labels)" "$MON" $MONARGS --kubelet-pod-labels 3
ok "labels: every owner the kubelet knows has its pod's UID, each pod's labels once in identities.pods" \
	$PY - labels.out "$U_TRAIN" "$U_NB" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
train, nb = sys.argv[2], sys.argv[3]
nv = r["allocations"]["devices"]["nvidia"]
uids = {(o["namespace"], o["pod"]): o.get("pod_uid") for l in nv.values() for o in l}
assert uids == {("ml", "train-0"): train, ("dev", "nb"): nb, ("dev", "unknown"): None}, uids
pods = r["identities"]["pods"]
want = {train: {"pod": "train-0", "namespace": "ml", "labels_dropped": 1,
                "labels": {"app.kubernetes.io/name": "trainer", "appVersion": "3", "team": "vision"}},
        nb: {"pod": "nb", "namespace": "dev", "labels": {"app": "jupyter"}}}
assert pods == want, json.dumps(pods)
assert "labels" not in json.dumps(r["allocations"]), "labels are written once, in identities.pods"
EOF
# shellcheck disable=SC2086
six_reports nolabels "$(uid_known nolabels)" "$MON" $MONARGS
ok "no --kubelet-pod-labels: the owners' UIDs, and no labels anywhere" $PY - nolabels.out "$U_TRAIN" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert r["allocations"]["devices"]["nvidia"]["0"][0]["pod_uid"] == sys.argv[2]
assert "labels" not in json.dumps(r), "no labels unless asked for"
assert "pods" not in r.get("identities", {}) or not r["identities"]["pods"], r.get("identities")
EOF
ok "the kubelet was asked with the token" grep -q "GET /pods 200" klog

# ---- accel-prom: pod_uid with --kubernetes-enable-pod-uid only ------------------------------------------------------
# prom NAME [flags]: accel-prom --collectors on labels.out, its /metrics in NAME.txt once it has read every report.
prom() {
	n_=$1
	shift
	prom_listen p_ "$n_.err" labels.out --staleness 600 --collectors "$FIX/dcgm/default-counters.csv" "$@" || return 1
	# Every report read: the six of labels.out. On a failure, what accel-prom said.
	wait_for $((10 * SLOW)) sh -c 'curl -s "http://127.0.0.1:$1/metrics" >"$2.txt" &&
		grep -q "^accel_prom_reports_total $3\$" "$2.txt"' sh "$p_" "$n_" "$(nlines labels.out)" ||
		{ diag "accel-prom $*: $(cat "$n_.err")"; return 1; }
}
ok "accel-prom --kubernetes-enable-pod-uid serves the stream" prom uid --kubernetes-enable-pod-uid
ok "pod-uid: GPU 0's DCGM series carry train-0's pod_uid beside pod" \
	grep -q "^DCGM_FI_DEV_GPU_TEMP{.*gpu=\"0\",.*namespace=\"ml\",.*pod=\"train-0\",pod_uid=\"$U_TRAIN\"} " uid.txt
ok "pod-uid: GPU 2's, nb's pod_uid" grep -q "^DCGM_FI_DEV_GPU_TEMP{.*gpu=\"2\",.*pod=\"nb\",pod_uid=\"$U_NB\"} " uid.txt
ok "pod-uid: a pod the kubelet does not know has no pod_uid" sh -c \
	'grep "^DCGM_FI_DEV_.*pod=\"unknown\"" "$1" | grep -q . && ! grep "pod=\"unknown\"" "$1" | grep -q pod_uid=' \
	sh uid.txt
ok "pod-uid: promtool check metrics is clean" sh -c 'promtool check metrics <"$1" >"$1.lint" 2>&1 ||
	! grep -v "counter metrics should have \"_total\" suffix\|DCGM_" "$1.lint" | grep -q .' sh uid.txt
ok "accel-prom without the flags serves the stream" prom plain
ok "no flag: the same series, no pod_uid, no pod labels" sh -c 'grep -q "^DCGM_FI_DEV_GPU_TEMP{.*pod=\"train-0\"" "$1" &&
	! grep -q "pod_uid=\|label_" "$1"' sh plain.txt

# ---- accel-prom: the pods' labels with --kubernetes-enable-pod-labels only, named as kube-state-metrics does -------
ok "accel-prom --kubernetes-enable-pod-labels serves the stream" prom lab --kubernetes-enable-pod-labels
TL='label_app_kubernetes_io_name="trainer",label_app_version="3",label_team="vision"'
ok "pod-labels: GPU 0's DCGM series carry train-0's labels (label_ + sanitized snake case)" \
	grep -q "^DCGM_FI_DEV_GPU_TEMP{.*gpu=\"0\",$TL,.*pod=\"train-0\"} " lab.txt
ok "pod-labels: GPU 1's accelerator_allocation_info too (its owner's pod_uid names the pod's labels)" \
	grep -q "^accelerator_allocation_info{.*device=\"1\",.*$TL,.*pod=\"train-0\".*} 1$" lab.txt
ok "pod-labels: nb's its own" grep -q '^DCGM_FI_DEV_GPU_TEMP{.*gpu="2",label_app="jupyter",.*pod="nb"} ' lab.txt
ok "pod-labels: a pod the kubelet does not know has none" sh -c \
	'grep "pod=\"unknown\"" "$1" | grep -q . && ! grep "pod=\"unknown\"" "$1" | grep -q label_' sh lab.txt
ok "pod-labels: no pod_uid without its own flag" sh -c '! grep -q pod_uid= "$1"' sh lab.txt
grep -v '^DCGM_' lab.txt | grep -v '^# [A-Z]* DCGM_' >lab-own.txt
ok "pod-labels: promtool check metrics: accel-prom's own families (allocation_info with labels) are clean" \
	sh -c 'promtool check metrics <"$1" >"$1.lint" 2>&1' sh lab-own.txt
# ---- a process's pod: its labels in its identities.pods entry, on its GPU's DCGM series -------------------------
# The containers fixture's /proc (tests/fixtures/containers/v2-systemd): 1001 is in pod trainer-0 ($U_PROC), which
# the kubelet lists with labels; 1002 in infer-7d9f, which it does not list. No pod-resources socket.
V2=$FIX/containers/v2-systemd
cat >proc.nvml <<'EOF'
driver 580.95.05
gpu
name NVIDIA A100-SXM4-40GB
uuid GPU-3a9d1c2e-0000-4000-8000-000000000001
pci 00000000:07:00.0
memory 42949672960 12884901888 30064771072 0
proc 1001 4294967296
proc 1002 2147483648
EOF
has_proc_labels="tail -n 1 proc.out | grep -q '\"labels\":{\"app\":\"trainer\",\"tier\":\"gpu\"}'"
six_reports proc "$has_proc_labels" env FAKE_NVML_SCRIPT=proc.nvml "$MON" -c mon.json --pod-resources-socket "" \
	--path.procfs "$V2/proc" --path.rootfs "$V2/rootfs" --kubelet-url "$KURL" --kubelet-token-file token \
	--kubelet-ca-file ca.pem --kubelet-refresh 1s --kubelet-pod-labels 8
ok "proc: the pod of a GPU's process has its labels in its identities.pods entry; a pod the kubelet lacks none" \
	$PY - proc.out "$U_PROC" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
pods = r["identities"]["pods"]
assert pods[sys.argv[2]]["labels"] == {"app": "trainer", "tier": "gpu"}, pods
assert [p.get("labels") for u, p in pods.items() if u != sys.argv[2]] == [None], pods
assert "allocations" not in r
EOF
ok "proc: accel-prom starts on the stream" prom_listen p_ procprom.err proc.out --staleness 600 \
	--collectors "$FIX/dcgm/default-counters.csv" --kubernetes-enable-pod-labels --kubernetes-enable-pod-uid
ok "proc: accel-prom serves the stream" wait_for $((10 * SLOW)) sh -c \
	'curl -s "http://127.0.0.1:$1/metrics" >proc.txt && grep -q "^accel_prom_reports_total $2\$" proc.txt' \
	sh "$p_" "$(nlines proc.out)"
ok "proc: the GPU's DCGM series of trainer-0 carry its labels and pod_uid (from the process's identity)" grep -q \
	"^DCGM_FI_DEV_GPU_TEMP{.*label_app=\"trainer\",label_tier=\"gpu\",.*pod=\"trainer-0\",pod_uid=\"$U_PROC\"} " proc.txt
ok "proc: infer-7d9f's, its pod_uid and no labels" sh -c 'grep "^DCGM_FI_DEV_GPU_TEMP{.*pod=\"infer-7d9f\",pod_uid=" "$1" |
	grep -q . && ! grep "pod=\"infer-7d9f\"" "$1" | grep -q label_' sh proc.txt
done_testing
