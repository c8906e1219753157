#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The alert rules (deploy/prometheus/accel-monitor.rules.yml, docs/deploy.md):
# promtool check rules is clean, promtool test rules passes the unit tests of
# each rule (accel-monitor.rules.test.yml) and fails on a rule file whose
# threshold was changed; the PrometheusRule of the Kubernetes manifests holds
# the same groups. End to end: a real Prometheus scrapes accel-prom fed the
# neuron-monitor 2.x fixture, evaluates the shipped rules (their `for:` set
# to 0s so the test does not wait minutes), the input ends, AccelPromInputEnded
# fires, and a real Alertmanager (Debian's prometheus-alertmanager) delivers
# it to a webhook receiver here (tests/helpers/webhook_receiver.py). The same
# Prometheus scrapes two more accel-prom targets, so the newer rules meet real
# series: the endpoint runtimes' fixture stream (bert 1's failure ratio, 1 in
# 11, fires RuntimeModelFailureRatioHigh; resnet50's and the queue times stay
# quiet) and accel-monitor on the fake NVML's three GPUs (GPU 0: XID 79 at
# start, a new series, fires AcceleratorXidError; its sw_power_cap reason,
# AcceleratorClocksPowerCapped). A fourth target is accel-monitor on the fake NVML's five GPUs of
# tests/fixtures/deploy/owners.nvml with a real kubelet pod-resources server
# (tests/helpers/podres_server.py) giving them to pods: its accelerator_allocation_info meets the
# device-ownership rules (the allocation's 30-minute look back, `offset 30m`, set to 2s as `for:` is
# to 0s): an idle GPU shared by two pods fires AcceleratorAllocatedIdle for both, a 3-GPU pod's
# slow GPU AcceleratorStraggler and its hw_slowdown GPU AcceleratorStragglerThrottled; a one-GPU
# pod's stays quiet; the namespace's recording rules count the devices.
. "$(dirname "$0")/lib.sh"

need "$BIN/accel-prom is built" test -x "$BIN/accel-prom"
need "promtool (Debian package prometheus)" command -v promtool
need "prometheus (Debian package prometheus)" command -v prometheus
need "prometheus-alertmanager (Debian package prometheus-alertmanager)" command -v prometheus-alertmanager
need "curl" command -v curl
need "python3-grpcio and python3-grpc-tools (scripts/install-deps.sh)" $PY -c 'import grpc, grpc_tools'
T=$((40 * SLOW))
R=$TOP/deploy/prometheus

ok "promtool check rules" promtool check rules "$R/accel-monitor.rules.yml"
ok "promtool test rules (every rule, firing and quiet)" sh -c "cd '$R' && promtool test rules accel-monitor.rules.test.yml"
# Every alert of the rule file has a test.
for a in $(sed -n 's/^ *- alert: //p' "$R/accel-monitor.rules.yml"); do
	ok "unit test for $a" grep -q "alertname: $a\$" "$R/accel-monitor.rules.test.yml"
done
# Every recording rule too (a promql_expr_test on its series).
for r in $(sed -n 's/^ *- record: //p' "$R/accel-monitor.rules.yml"); do
	ok "unit test for the recording rule $r" grep -q "expr: $r\(\$\|{\)" "$R/accel-monitor.rules.test.yml"
done
mkdir -p "$WORK/mut"
sed 's/sensor="gpu"} > 83/sensor="gpu"} > 95/' "$R/accel-monitor.rules.yml" >"$WORK/mut/accel-monitor.rules.yml"
cp "$R/accel-monitor.rules.test.yml" "$WORK/mut/"
ok "promtool test rules fails when a threshold changes" sh -c "cd '$WORK/mut' && ! promtool test rules accel-monitor.rules.test.yml"

# ---- end to end: accel-prom -> Prometheus -> Alertmanager -> webhook --------------------------
WP=$(free_port)
spawn HOOK $PY "$HELP/webhook_receiver.py" --port "$WP" --out "$WORK/hooks.jsonl" 2>"$WORK/hook.err"
AMP=$(free_port)
cat >"$WORK/alertmanager.yml" <<EOF2
route:
  receiver: hook
  group_by: [alertname, instance]
  group_wait: 0s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: hook
    webhook_configs:
      - url: http://127.0.0.1:$WP/alert
        send_resolved: true
EOF2
ok "amtool check-config" amtool check-config "$WORK/alertmanager.yml"
spawn AM prometheus-alertmanager --config.file="$WORK/alertmanager.yml" --storage.path="$WORK/am" \
	--web.listen-address="127.0.0.1:$AMP" --cluster.listen-address= --log.level=warn 2>"$WORK/am.log"

mkfifo "$WORK/in"
exec 3<>"$WORK/in"
AP=$(free_port)
"$BIN/accel-prom" --listen-address "127.0.0.1:$AP" <"$WORK/in" 2>"$WORK/accel-prom.err" 3>&- &
_pids="$_pids $!"
sed -n 1p "$FIX/streams/neuron-monitor-2x.jsonl" >&3
# The endpoint runtimes' stream (per-model series) and accel-monitor on the fake NVML.
EP=$FIX/streams/endpoint-runtimes.jsonl
mkfifo "$WORK/ep.in" "$WORK/nv.in"
exec 4<>"$WORK/ep.in"
AP2=$(free_port)
AP3=$(free_port)
"$BIN/accel-prom" --listen-address "127.0.0.1:$AP2" --staleness 10m <"$WORK/ep.in" 2>"$WORK/accel-prom2.err" 3>&- 4>&- &
_pids="$_pids $!"
"$BIN/accel-prom" --listen-address "127.0.0.1:$AP3" <"$WORK/nv.in" 2>"$WORK/accel-prom3.err" 3>&- 4>&- &
_pids="$_pids $!"
ok "the fake libnvidia-ml.so.1 builds" fake_nvml_build "$WORK/libnvidia-ml.so.1"
printf '{"period": "1s", "system_metrics": [], "devices": [{"type": "nvidia"}]}\n' >"$WORK/nv.json"
FAKE_NVML_SCRIPT=$FIX/nvml/multi.nvml ACCEL_NVML_LIBRARY=$WORK/libnvidia-ml.so.1 \
	"$BIN/accel-monitor" -c "$WORK/nv.json" >"$WORK/nv.in" 2>"$WORK/nv.err" 3>&- 4>&- &
_pids="$_pids $!"
# Device ownership: owners.nvml's GPUs given to pods by the kubelet's pod-resources answer (GPU 3 by
# time-slicing replicas, UUID::N, to two pods).
G=GPU-0a0e0000-0000-4000-8000-00000000000
cat >"$WORK/podres.json" <<EOF2
{"pods": [
  {"name": "train-0", "namespace": "ml", "containers": [{"name": "trainer",
     "devices": [{"resource": "nvidia.com/gpu", "ids": ["${G}0", "${G}1", "${G}2"]}]}]},
  {"name": "idle-0", "namespace": "ml", "containers": [{"name": "main",
     "devices": [{"resource": "nvidia.com/gpu", "ids": ["${G}3::0"]}]}]},
  {"name": "idle-1", "namespace": "ml", "containers": [{"name": "main",
     "devices": [{"resource": "nvidia.com/gpu", "ids": ["${G}3::1"]}]}]},
  {"name": "single-0", "namespace": "ml", "containers": [{"name": "main",
     "devices": [{"resource": "nvidia.com/gpu", "ids": ["${G}4"]}]}]}],
 "allocatable": [{"resource": "nvidia.com/gpu", "ids": ["${G}0", "${G}1", "${G}2", "${G}3::0", "${G}3::1", "${G}4"]}]}
EOF2
spawn SPID $PY "$HELP/podres_server.py" --proto "$TOP/monitor/host/podres_api.proto" --dir "$WORK/py" \
	--socket "$WORK/kubelet.sock" --scenario "$WORK/podres.json" 3>&- 4>&-
ok "the pod-resources server serves" wait_for "$T" test -e "$WORK/kubelet.sock.ready"
mkfifo "$WORK/ow.in"
AP4=$(free_port)
"$BIN/accel-prom" --listen-address "127.0.0.1:$AP4" <"$WORK/ow.in" 2>"$WORK/accel-prom4.err" 3>&- 4>&- &
_pids="$_pids $!"
FAKE_NVML_SCRIPT=$FIX/deploy/owners.nvml ACCEL_NVML_LIBRARY=$WORK/libnvidia-ml.so.1 \
	"$BIN/accel-monitor" -c "$WORK/nv.json" --pod-resources-socket "$WORK/kubelet.sock" \
	>"$WORK/ow.in" 2>"$WORK/ow.err" 3>&- 4>&- &
_pids="$_pids $!"

sed 's/^\( *\)for: .*/\1for: 0s/; s/accelerator_allocation_info offset 30m/accelerator_allocation_info offset 2s/' \
	"$R/accel-monitor.rules.yml" >"$WORK/rules.yml"
ok "the test's rule copy looks back 2s for allocations" grep -q 'accelerator_allocation_info offset 2s' "$WORK/rules.yml"
PROM_EXTRA="rule_files: ['$WORK/rules.yml']
alerting:
  alertmanagers:
    - static_configs:
        - targets: ['127.0.0.1:$AMP']"
prometheus_start "127.0.0.1:$AP" "127.0.0.1:$AP2" "127.0.0.1:$AP3" "127.0.0.1:$AP4"
ok "Prometheus is ready" wait_for "$T" curl -sf -o /dev/null "$PURL/-/ready"
ok "Alertmanager is ready" wait_for "$T" curl -sf -o /dev/null "http://127.0.0.1:$AMP/-/ready"
inputs_open() { curl -s --data-urlencode 'query=accel_prom_input_open' "$PURL/api/v1/query" | grep -q '"value":\[[0-9.]*,"1"\]'; }
ok "Prometheus scraped accel-prom: accel_prom_input_open is 1" wait_for "$T" inputs_open
ok "Prometheus loaded every shipped rule" sh -c "[ \$(curl -s '$PURL/api/v1/rules' | $PY -c 'import json,sys; print(sum(len(g[\"rules\"]) for g in json.load(sys.stdin)[\"data\"][\"groups\"]))') = $(grep -c '^ *- \(alert\|record\):' "$R/accel-monitor.rules.yml") ]"
ok "no alert fires while the input is open" sh -c "! grep -q AccelPromInputEnded '$WORK/hooks.jsonl' 2>/dev/null"
# The endpoint runtimes' reports, a line a second, so that rates have two points and more.
n=$(wc -l <"$EP")
i=1
while [ "$i" -le "$n" ]; do
	sed -n "${i}p" "$EP" >&4
	sleep 1
	i=$((i + 1))
done
# alert NAME LABELS: Prometheus has NAME firing with these labels (a Python dict's items).
alert() { curl -s "$PURL/api/v1/alerts" | $PY -c '
import json, sys
want = eval(sys.argv[2])
sys.exit(not any(a["labels"].get("alertname") == sys.argv[1] and a["state"] == "firing"
                 and all(a["labels"].get(k) == v for k, v in want.items())
                 for a in json.load(sys.stdin)["data"]["alerts"]))' "$1" "$2"; }
# quiet NAME LABELS: Prometheus answers, and has no such alert firing.
quiet() { curl -sf -o /dev/null "$PURL/api/v1/alerts" && ! alert "$@"; }
ok "real series: RuntimeModelFailureRatioHigh fires for bert 1 (1 failed in 11)" \
	wait_for "$T" alert RuntimeModelFailureRatioHigh '{"model": "bert", "version": "1", "runtime_tag": "tritonserver"}'
ok "real series: RuntimeModelFailureRatioHigh quiet for resnet50 (2 in 102, 0 in 20)" \
	quiet RuntimeModelFailureRatioHigh '{"model": "resnet50"}'
ok "real series: RuntimeQueueTimeHigh quiet (queue means 0.5 ms to 125 ms)" quiet RuntimeQueueTimeHigh '{}'
ok "real series: AcceleratorXidError fires for GPU 0's XID 79 (a new series)" \
	wait_for "$T" alert AcceleratorXidError '{"device": "0", "xid": "79", "device_type": "nvidia"}'
ok "real series: AcceleratorClocksPowerCapped fires for GPU 0 (sw_power_cap)" \
	wait_for "$T" alert AcceleratorClocksPowerCapped '{"device": "0", "reason": "sw_power_cap"}'
ok "real series: AcceleratorClocksThermalSlowdown quiet" quiet AcceleratorClocksThermalSlowdown '{}'
# Device ownership, on accelerator_allocation_info from accel-monitor's pod-resources client.
ok "real series: AcceleratorAllocatedIdle fires for GPU 3 in ml/idle-0 (time-slicing)" \
	wait_for "$T" alert AcceleratorAllocatedIdle '{"namespace": "ml", "pod": "idle-0", "container": "main", "device": "3", "uuid": "'"${G}3"'"}'
ok "real series: ... and for the same GPU in ml/idle-1" \
	alert AcceleratorAllocatedIdle '{"namespace": "ml", "pod": "idle-1", "container": "main", "device": "3"}'
ok "real series: AcceleratorAllocatedIdle quiet for ml/train-0 (90, 90, 20 %)" quiet AcceleratorAllocatedIdle '{"pod": "train-0"}'
ok "real series: AcceleratorAllocatedIdle quiet for ml/single-0 (10 %)" quiet AcceleratorAllocatedIdle '{"pod": "single-0"}'
ok "real series: AcceleratorStraggler fires for ml/train-0's GPU 2 (20 % against a 67 % mean)" \
	wait_for "$T" alert AcceleratorStraggler '{"namespace": "ml", "pod": "train-0", "device": "2", "instance": "127.0.0.1:'"$AP4"'"}'
ok "real series: AcceleratorStraggler quiet for ml/single-0 (one GPU)" quiet AcceleratorStraggler '{"pod": "single-0"}'
ok "real series: AcceleratorStragglerThrottled fires for ml/train-0's GPU 1 (hw_slowdown)" \
	wait_for "$T" alert AcceleratorStragglerThrottled '{"namespace": "ml", "pod": "train-0", "device": "1"}'
ok "real series: AcceleratorStragglerThrottled quiet for train-0's GPU 0 (sw_power_cap)" \
	quiet AcceleratorStragglerThrottled '{"pod": "train-0", "device": "0"}'
ok "real series: AcceleratorStragglerThrottled quiet for ml/single-0 (hw_slowdown, no peers)" \
	quiet AcceleratorStragglerThrottled '{"pod": "single-0"}'
is "$(prom_values 'namespace:accelerator_allocated:count{namespace="ml"}')" 5 \
	"real series: namespace:accelerator_allocated:count counts ml's five GPUs (GPU 3 once)"
is "$(prom_values 'namespace:accelerator_allocated_idle:count{namespace="ml"}')" 1 \
	"real series: namespace:accelerator_allocated_idle:count: ml's one idle GPU"
exec 3>&-
firing() { grep '"alertname":"AccelPromInputEnded"' "$WORK/hooks.jsonl" 2>/dev/null | grep -q '"status":"firing"'; }
ok "the input ended: AccelPromInputEnded delivered to the webhook by Alertmanager" wait_for "$T" firing
if [ -s "$WORK/hooks.jsonl" ]; then
	is "$(grep AccelPromInputEnded "$WORK/hooks.jsonl" | head -1 | $PY -c '
import json, sys
d = json.loads(sys.stdin.read())
a = d["alerts"][0]
print(d["receiver"], a["labels"]["severity"], a["labels"]["instance"], a["annotations"]["summary"])')" \
		"hook critical 127.0.0.1:$AP accel-prom on 127.0.0.1:$AP: its input ended (accel-monitor is not running)" \
		"the notification: receiver, severity, the accel-prom target, the summary"
else
	_result 1 "the notification: receiver, severity, the accel-prom target, the summary"
	tail -5 "$WORK/am.log" "$WORK/prometheus.log" "$WORK/hook.err" >&2
fi
done_testing
