#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Who owns each device, end to end: a real gRPC server on a unix socket (tests/helpers/podres_server.py,
# Debian's python3-grpcio, our podres_api.proto) plays the kubelet's pod-resources API; accel-monitor reads three
# fake GPUs (tests/helpers/fake_nvml.c scripted by tests/fixtures/nvml/multi.nvml: GPU 1 idle, GPU 2 in MIG mode)
# and the sysfs fixture tree's Neuron and AMD devices, and writes the report's "allocations":
#   - NVIDIA's device plugin's ids: a GPU UUID, an index ("1", DEVICE_ID_STRATEGY=index), time-sliced replicas
#     ("GPU-...::1", "::3": one owner listing both), a MIG UUID and a MIG index ("2:1") to their MIG instances;
#     NVIDIA's DRA driver's "gpu-2" and "gpu-0-mig-..." (to the GPU); Neuron's neurondevice and neuroncore ids
#     (a core to its device, the cores listed); AMD's PCI address; an id of no device logged once (a resource of
#     no kind the monitor maps, rdma/hca, is not), an allocatable id (GetAllocatableResources) of no device too;
#   - pods coming and going between Lists (the answer is re-read at each call);
#   - the idle allocated GPU's pod in every sink: accel-prom's accelerator_allocation_info and its DCGM series
#     (--collectors; a DRA claim's dra_* labels), promtool check metrics, a real Prometheus joining utilization
#     with the owners; accel-csv's rows; accel-cloudwatch's AcceleratorAllocated datums (checked with botocore);
#     accel-remote-write's series (tests/helpers/rw_receiver.py);
#     accel-top's device line;
#   - HPC jobs from a mapping directory (--hpc-job-mapping-dir, dcgm-exporter's format) beside the pods: a GPU's
#     and a MIG device's jobs, a job added, a file removed, a bad line (the allocations' error; the last good jobs
#     kept), and accel-prom's DCGM series per job with hpc_job.
# Everything it needs is installed by `make test`: a missing one is a failure, never a skip.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
export AWS_EC2_METADATA_DISABLED=true
need "python3-grpcio and python3-grpc-tools (scripts/install-deps.sh)" $PY -c 'import grpc, grpc_tools'
need "a C compiler for the fake libnvidia-ml.so.1" command -v "${CC:-cc}"
need "promtool (Debian package prometheus)" command -v promtool
need "curl" command -v curl

cd "$WORK"
mkdir -p lib
ok "the fake libnvidia-ml.so.1 builds" fake_nvml_build "$WORK/lib/libnvidia-ml.so.1"
export FAKE_NVML_SCRIPT="$FIX/nvml/multi.nvml" ACCEL_NVML_LIBRARY="$WORK/lib/libnvidia-ml.so.1"
G0=GPU-1c3b9a7e-0000-4000-8000-000000000000
G2=GPU-3e5d1c90-0000-4000-8000-000000000000
cat >scenario.json <<EOF
{"pods": [
 {"name": "train-0", "namespace": "ml", "containers": [{"name": "main",
   "devices": [{"resource": "nvidia.com/gpu", "ids": ["$G0", "1"]}]}]},
 {"name": "nb", "namespace": "dev", "containers": [{"name": "jupyter",
   "devices": [{"resource": "nvidia.com/gpu", "ids": ["$G2::1", "$G2::3"]},
               {"resource": "aws.amazon.com/neuroncore", "ids": ["2", "3"]},
               {"resource": "rdma/hca", "ids": ["mlx5_0"]}]}]},
 {"name": "mig-a", "namespace": "ml", "containers": [{"name": "c",
   "devices": [{"resource": "nvidia.com/mig-1g.10gb", "ids": ["MIG-3e5d1c90-0000-4000-8000-000000000000-0"]}]}]},
 {"name": "mig-b", "namespace": "ml", "containers": [{"name": "c",
   "devices": [{"resource": "nvidia.com/mig-2g.20gb", "ids": ["2:1"]}]}]},
 {"name": "nd", "namespace": "ml", "containers": [{"name": "c",
   "devices": [{"resource": "aws.amazon.com/neurondevice", "ids": ["0"]}]}]},
 {"name": "amd", "namespace": "ml", "containers": [{"name": "c",
   "devices": [{"resource": "amd.com/gpu", "ids": ["0000:43:00.0"]}]}]},
 {"name": "dra", "namespace": "ml", "containers": [{"name": "c", "devices": [],
   "claims": [{"name": "gpus", "namespace": "ml", "devices": [
      {"driver": "gpu.nvidia.com", "pool": "node-1", "device": "gpu-2"},
      {"driver": "gpu.nvidia.com", "pool": "node-1", "device": "gpu-0-mig-1g10gb-19-0"},
      {"driver": "nic.example.com", "pool": "node-1", "device": "nic-0"}]}]}]},
 {"name": "ghost", "namespace": "ml", "containers": [{"name": "c",
   "devices": [{"resource": "nvidia.com/gpu", "ids": ["GPU-ffff"]}]}]}
], "allocatable": [{"resource": "nvidia.com/gpu", "ids": ["$G0", "1", "GPU-eeee"]},
                  {"resource": "rdma/hca", "ids": ["mlx5_0", "mlx5_1"]}]}
EOF
cat >mon.json <<'EOF'
{"period": "500ms", "system_metrics": [],
 "devices": [{"type": "nvidia", "slow_period": "period"}, {"type": "neuron"}, {"type": "amdgpu"}]}
EOF
SOCK=$WORK/kubelet.sock
spawn SPID $PY "$HELP/podres_server.py" --proto "$TOP/monitor/host/podres_api.proto" --dir "$WORK/py" \
	--socket "$SOCK" --scenario scenario.json --log calls
ok "the pod-resources server serves" wait_for $((30 * SLOW)) test -e "$SOCK.ready"
MONARGS="-c mon.json --path.sysfs $FIX/sysfs/host --pod-resources-socket $SOCK --kubelet-refresh 1s"

# ---- the report's allocations -------------------------------------------------------------------------------
# shellcheck disable=SC2086 # MONARGS is words
six_reports owners "$PY -c 'import json,sys; r=json.loads(open(\"owners.out\").read().splitlines()[-1]); sys.exit(\"allocations\" not in r or not r[\"allocations\"][\"devices\"])'" \
	"$MON" $MONARGS
tail -n 1 owners.out >last.json
ok "every device plugin's and DRA driver's id maps to its device, each owner once with its ids" $PY - last.json <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
got = r["allocations"]
G0, G2 = "GPU-1c3b9a7e-0000-4000-8000-000000000000", "GPU-3e5d1c90-0000-4000-8000-000000000000"
def pl(ns, pod, res, ids, **kw):
    o = {"namespace": ns, "pod": pod, "container": "main" if pod == "train-0" else "jupyter" if pod == "nb" else "c",
         "resource": res, "device_ids": ids}
    o.update(kw)
    return o
def dra(dev):
    return {"namespace": "ml", "pod": "dra", "container": "c", "dra_claim_name": "gpus", "dra_claim_namespace": "ml",
            "dra_driver_name": "gpu.nvidia.com", "dra_pool_name": "node-1", "dra_device_name": dev}
want = {"error": "", "devices": {
    "nvidia": {
        "0": [pl("ml", "train-0", "nvidia.com/gpu", [G0]), dra("gpu-0-mig-1g10gb-19-0")],
        "1": [pl("ml", "train-0", "nvidia.com/gpu", ["1"])],
        "2": [pl("dev", "nb", "nvidia.com/gpu", [G2 + "::1", G2 + "::3"]), dra("gpu-2")],
        "2/1/0": [pl("ml", "mig-a", "nvidia.com/mig-1g.10gb", ["MIG-3e5d1c90-0000-4000-8000-000000000000-0"])],
        "2/2/0": [pl("ml", "mig-b", "nvidia.com/mig-2g.20gb", ["2:1"])]},
    "neuron": {
        "0": [pl("ml", "nd", "aws.amazon.com/neurondevice", ["0"])],
        "1": [pl("dev", "nb", "aws.amazon.com/neuroncore", ["2", "3"], neuroncores=[2, 3])]},
    "amdgpu": {"1": [pl("ml", "amd", "amd.com/gpu", ["0000:43:00.0"])]}}}
if got != want:
    print("# got ", json.dumps(got, sort_keys=True))
    print("# want", json.dumps(want, sort_keys=True))
    sys.exit(1)
EOF
is "$(grep -c 'GPU-ffff' owners.err)" 1 "an id of no device is logged once in six reports"
ok "... naming the resource, the id and the pod" \
	grep -q "pod-resources: resource nvidia.com/gpu GPU-ffff (pod ml/ghost, container c) names no nvidia device" owners.err
is "$(grep -c 'mlx5_\|nic-0' owners.err)" 0 "ids of resources and drivers of no kind the monitor maps are not logged"
is "$(grep -c 'can allocate' owners.err)" 1 "an allocatable id of no device is logged once"
ok "... naming the resource and the id" grep -q \
	"pod-resources: the kubelet can allocate resource nvidia.com/gpu GPU-eeee, which names no nvidia device" owners.err

# ---- pods come and go ---------------------------------------------------------------------------------------------
cp scenario.json first.json
$PY - scenario.json <<'EOF'
import json, sys
sc = json.load(open(sys.argv[1]))
sc["pods"] = [p for p in sc["pods"] if p["name"] != "train-0"]
sc["pods"].append({"name": "train-1", "namespace": "ml", "containers": [{"name": "main",
                   "devices": [{"resource": "nvidia.com/gpu", "ids": ["1"]}]}]})
json.dump(sc, open(sys.argv[1] + ".new", "w"))
EOF
# shellcheck disable=SC2086
"$MON" $MONARGS >come.out 2>come.err &
MPID=$!
_pids="$_pids $MPID"
owner_of() { tail -n 1 come.out | $PY -c 'import json, sys; r = json.load(sys.stdin); d = r.get("allocations", {}).get("devices", {}).get("nvidia", {}).get(sys.argv[1], []); print(",".join(o["pod"] for o in d))' "$1" 2>/dev/null; }
owner_is() { [ "$(owner_of "$1")" = "$2" ]; }
moved() { owner_is 1 train-1 && owner_is 0 dra; }
ok "come: GPU 1 is train-0's" wait_for $((20 * SLOW)) owner_is 1 train-0
mv scenario.json.new scenario.json
ok "come and go: after the next List GPU 1 is train-1's, and GPU 0 has only the DRA claim's MIG device" \
	wait_for $((20 * SLOW)) moved
kill -TERM "$MPID"
wait "$MPID" || true
ok "come and go: the reports pass check_report.py" $PY "$HELP/check_report.py" come.out
cp first.json scenario.json

# ---- the sinks: the idle GPU 1's pod everywhere -------------------------------------------------------------------
ok "accel-prom starts on the stream" prom_listen PORT prom.err owners.out --staleness 600 \
	--collectors "$FIX/dcgm/default-counters.csv"
served() { curl -s "http://127.0.0.1:$PORT/metrics" >metrics.txt && grep -q "^accelerator_allocation_info" metrics.txt; }
ok "accel-prom serves the stream" wait_for $((10 * SLOW)) served
ok "accel-prom: the idle GPU 1's accelerator_allocation_info names train-0" \
	grep -q '^accelerator_allocation_info{.*container="main",device="1",device_type="nvidia",.*namespace="ml",.*pod="train-0",.*resource="nvidia.com/gpu",.*uuid="GPU-2d4c0b8f-0000-4000-8000-000000000000"} 1$' metrics.txt
ok "accel-prom: a MIG instance's carries its instance labels" \
	grep -q '^accelerator_allocation_info{.*device="2/2/0",.*gpu_instance="2",.*pod="mig-b",' metrics.txt
ok "accel-prom: one series per NeuronCore of a core resource" sh -c \
	'[ "$(grep -c "^accelerator_allocation_info{.*device_type=\"neuron\",.*neuroncore=\"[23]\",.*pod=\"nb\"" "$1")" -eq 2 ]' \
	sh metrics.txt
ok "accel-prom: the idle GPU's DCGM series carry its pod (dcgm-exporter's labels)" \
	grep -q '^DCGM_FI_DEV_GPU_TEMP{.*container="main",.*gpu="1",.*namespace="ml",.*pod="train-0"} ' metrics.txt
ok "accel-prom: a time-sliced GPU's DCGM series once per owner, a DRA claim's with its dra_* labels" sh -c '
	[ "$(grep -c "^DCGM_FI_DEV_GPU_TEMP{.*gpu=\"2\"" "$1")" -eq 2 ] &&
	grep -q "^DCGM_FI_DEV_GPU_TEMP{.*dra_claim_name=\"gpus\",dra_claim_namespace=\"ml\",dra_device_name=\"gpu-2\",dra_driver_name=\"gpu.nvidia.com\",dra_pool_name=\"node-1\",gpu=\"2\"" "$1" &&
	grep -q "^DCGM_FI_DEV_GPU_TEMP{.*gpu=\"2\",.*namespace=\"dev\",.*pod=\"nb\"" "$1"' sh metrics.txt
grep -v '^DCGM_' metrics.txt | grep -v '^# [A-Z]* DCGM_' >own.txt
ok "promtool check metrics: accel-prom's own families are clean" sh -c 'promtool check metrics <"$1" >"$1.lint" 2>&1' \
	sh own.txt

prometheus_start "127.0.0.1:$PORT"
join() { prom_values 'accelerator_allocation_info{pod="train-0"} * on(instance, device_type, device) group_left() accelerator_utilization_ratio{engine="core"}'; }
joined() { [ "$(join)" = "0.05 0.37" ]; }
ok "a real Prometheus joins utilization with its owners (GPU 0 37 %, the idle GPU 1 5 %)" wait_for $((60 * SLOW)) joined
diag "join: $(join)"

ok "accel-csv reads the stream" sh -c '"$1" <"$2" >"$3" 2>"$3.err"' sh "$BIN/accel-csv" owners.out owners.csv
ok "accel-csv: the idle GPU 1's allocation row names train-0" \
	grep -q ',allocations,nvidia:1,accelerator_allocation_info,1,.*"pod=train-0,namespace=ml,container=main,resource=nvidia.com/gpu"$' owners.csv

ok "accel-cloudwatch --dry-run exits 0" sh -c '"$1" --dry-run --region us-east-1 --namespace T <"$2" >"$3" 2>&1' sh \
	"$BIN/accel-cloudwatch" owners.out owners.cw
ok "accel-cloudwatch: botocore accepts every request body" $PY "$HELP/cw_receiver.py" --check-bodies owners.cw
ok "accel-cloudwatch: AcceleratorAllocated 1 for the idle GPU 1 with PodName train-0" cw_dims owners.cw <<'EOF'
hits = [d for m, d in dims.items() if names[m] == "AcceleratorAllocated" and d.get("Device") == "1" and
        d.get("DeviceType") == "nvidia"]
assert hits and all(d.get("PodName") == "train-0" and d.get("Namespace") == "ml" and d.get("ContainerName") == "main"
                    and d.get("Resource") == "nvidia.com%2Fgpu" for d in hits), hits
EOF

RP=$(free_port)
mkdir rw
$PY "$HELP/rw_receiver.py" --port "$RP" --dir "$WORK/rw" >rw.log 2>rw.err &
_pids="$_pids $!"
ok "the remote write receiver serves" wait_for $((10 * SLOW)) grep -q ready rw.log
ok "accel-remote-write pushes the stream" sh -c '"$1" --url "http://127.0.0.1:$2/api/v1/write" <"$3" >rw.out 2>&1' sh \
	"$BIN/accel-remote-write" "$RP" owners.out
ok "accel-remote-write: the idle GPU 1's accelerator_allocation_info names train-0" $PY - rw/accepted.jsonl <<'EOF'
import json, sys
S = [json.loads(x)["s"] for x in open(sys.argv[1])]  # "{name=value,...}", sorted by name, values as they are
hits = [s for s in S if "__name__=accelerator_allocation_info," in s and ",device=1," in s and ",device_type=nvidia," in s]
assert hits and all(",pod=train-0," in s and ",namespace=ml," in s for s in hits), (hits, S[:3])
EOF
ok "accel-top: the idle GPU 1's line names its pod" sh -c \
	'"$1" --once --width 120 <"$2" 2>/dev/null | grep -q "^nvidia 1  Tesla T4  \[ml/train-0\]"' sh "$BIN/accel-top" owners.out

# ---- HPC jobs: the mapping directory (dcgm-exporter's --hpc-job-mapping-dir) beside the kubelet's answer ---------
mkdir jobs
echo 4242 >jobs/1
printf '7\n8\n' >jobs/2.1
# shellcheck disable=SC2086
"$MON" $MONARGS --hpc-job-mapping-dir "$WORK/jobs" >jobs.out 2>jobs.err &
MPID=$!
_pids="$_pids $MPID"
owners_of() { tail -n 1 jobs.out | $PY -c 'import json, sys; r = json.load(sys.stdin); d = r.get("allocations", {}).get("devices", {}).get("nvidia", {}).get(sys.argv[1], []); print(",".join(o.get("pod") or "job " + o["hpc_job"] for o in d)); print(r.get("allocations", {}).get("error", ""), file=sys.stderr)' "$1" 2>>jobs.errors; }
owners_are() { [ "$(owners_of "$1")" = "$2" ]; }
ok "jobs: GPU 1 is train-0's and job 4242's, the MIG instance 2/1/0 mig-a's and jobs 7 and 8's" \
	wait_for $((20 * SLOW)) owners_are 1 "train-0,job 4242"
is "$(owners_of 2/1/0)" "mig-a,job 7,job 8" "jobs: a MIG device's jobs are its N.M file's"
is "$(owners_of 2)" "nb,dra" "jobs: the GPU of that MIG device has none of them"
echo 4343 >>jobs/1
ok "jobs: a job appended to a GPU's file is there in the next reports" wait_for $((20 * SLOW)) owners_are 1 "train-0,job 4242,job 4343"
rm jobs/2.1
ok "jobs: a file removed takes its jobs away" wait_for $((20 * SLOW)) owners_are 2/1/0 mig-a
printf 'ok\n\001bad\n' >jobs/1
bad() { tail -n 1 jobs.out | grep -q '"error":"[^"]*jobs/1:2:1'; }
ok "jobs: a bad line is the allocations' error, naming DIR/FILE:LINE:COLUMN" wait_for $((20 * SLOW)) bad
is "$(owners_of 1)" "train-0,job 4242,job 4343" "jobs: ... and the GPU keeps its last good jobs"
kill -TERM "$MPID"
wait "$MPID" || true
ok "jobs: the reports pass check_report.py" $PY "$HELP/check_report.py" jobs.out
ok "jobs: accel-prom starts on the stream" prom_listen PORT jprom.err jobs.out --staleness 600 \
	--collectors "$FIX/dcgm/default-counters.csv"
jserved() { curl -s "http://127.0.0.1:$PORT/metrics" >jmetrics.txt && grep -q '^DCGM_FI_DEV_GPU_TEMP{.*hpc_job="4343"' jmetrics.txt; }
ok "accel-prom: the GPU's DCGM series once per job of the mapping, with hpc_job (dcgm-exporter's)" wait_for $((10 * SLOW)) jserved
ok "accel-prom: ... and once for its pod" grep -q '^DCGM_FI_DEV_GPU_TEMP{.*gpu="1",.*pod="train-0"} ' jmetrics.txt
ok "accel-prom: accelerator_allocation_info of each job" \
	grep -q '^accelerator_allocation_info{.*device="1",device_type="nvidia",hpc_job="4242",' jmetrics.txt
done_testing
