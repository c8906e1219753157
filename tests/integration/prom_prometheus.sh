#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A real Prometheus server (Debian's prometheus) on loopback scrapes
# accel-prom every second while the neuron-monitor 2.x fixture goes through
# it line by line. Through Prometheus's HTTP API: the target is up with no
# scrape error (Prometheus asks for OpenMetrics first), every series
# accel-prom exposes is stored, values are the input's, the counter rises by
# the sum of the per-period counts and survives a report with no runtimes,
# and every PromQL query of the AWS neuron-monitor Grafana dashboard
# returns data (the queries are listed in this file).
. "$(dirname "$0")/lib.sh"

# Built by make or installed by `make test`: a missing one is a failure, never a skip.
need "$BIN/accel-prom is built" test -x "$BIN/accel-prom"
need "prometheus (Debian package prometheus)" command -v prometheus
need "curl" command -v curl
T=$((30 * SLOW))
S=$FIX/streams/neuron-monitor-2x.jsonl
line() { sed -n "${1}p" "$S"; }

# ---- accel-prom, fed through a FIFO --------------------------------------------
mkfifo "$WORK/in"
exec 3<>"$WORK/in"
AP=$(free_port)
"$BIN/accel-prom" --listen-address "127.0.0.1:$AP" <"$WORK/in" 2>"$WORK/accel-prom.err" 3>&- &
_pids="$_pids $!"
line 1 >&3

# ---- Prometheus -------------------------------------------------------------------
prometheus_start "127.0.0.1:$AP"

# q EXPR: the values of an instant query, sorted, space-separated ("" for no data).
q() {
	curl -s --max-time 10 --data-urlencode "query=$1" "$PURL/api/v1/query" | $PY -c '
import json, sys
d = json.load(sys.stdin)
assert d["status"] == "success", d
r = d["data"]["result"]
if d["data"]["resultType"] == "scalar":
    r = [{"value": r}]
print(" ".join(sorted(x["value"][1] for x in r)))' 2>/dev/null
}
q_is() { [ "$(q "$1")" = "$2" ]; }
COMPLETED='execution_status_total{runtime_tag="my_app_1",status_type="completed"}'

ok "Prometheus is ready" wait_for "$T" curl -sf -o /dev/null "$PURL/-/ready"
ok "the target is up" wait_for "$T" q_is 'up{job="accel"}' 1
ok "line 1 went through: completed 118" wait_for "$T" q_is "$COMPLETED" 118
line 2 >&3
ok "line 2: 118 + 121" wait_for "$T" q_is "$COMPLETED" 239
ok "line 2: the runtime in error has left (its series are stale)" wait_for "$T" q_is 'count(execution_status_total{runtime_tag="5151"})' ""
line 3 >&3
ok "line 3: + 97" wait_for "$T" q_is "$COMPLETED" 336
line 4 >&3
ok "line 4: + 125 = 461" wait_for "$T" q_is "$COMPLETED" 461
# Let a few more scrapes of the same state land, for rate() and the dashboard.
sleep 3

want_mem=$(line 4 | $PY -c 'import json,sys; print(json.load(sys.stdin)["system_data"]["memory_info"]["memory_total_bytes"])')
is "$(q system_memory_total_bytes)" "$want_mem" "system_memory_total_bytes equals the input"
is "$(q 'system_vcpu_usage_ratio{usage_type="user"}')" 0.5539999999999999 \
	"system_vcpu_usage_ratio user: (55.3 + 0.1) / 100.0, the double neuron-monitor-prometheus.py computes"
is "$(q "max_over_time($COMPLETED[10m]) - min_over_time($COMPLETED[10m])")" 343 \
	"the counter rose by the sum of the later periods (121 + 97 + 125)"
is "$(q 'hardware_ecc_events_total{neuron_device_index="1",event_type="mem_ecc_corrected"}')" 2 "ECC counter summed"
is "$(q 'count(instance_info{instance_id="i-0a1b2c3d4e5f60718"})')" 1 "instance_info stored (an OpenMetrics info family)"
is "$(curl -s "$PURL/api/v1/targets" | $PY -c '
import json, sys
t = json.load(sys.stdin)["data"]["activeTargets"][0]
print(t["health"], repr(t["lastError"]))')" "up ''" "no scrape error"
# Every series accel-prom exposes is in Prometheus.
n_exposed=$(curl -s "http://127.0.0.1:$AP/metrics" | grep -c '^[a-z]')
is "$(q 'count({job="accel",__name__!~"up|scrape_.*"})')" "$n_exposed" "every exposed series is stored ($n_exposed)"

# ---- the dashboard ------------------------------------------------------------------
# Every PromQL query of the Grafana dashboard AWS ships for neuron-monitor-prometheus.py
# (aws-neuron/aws-neuron-sdk src/examples/neuron-monitor/neuron-monitor-grafana.json @ 81ce03a: each
# panel target's "expr", whitespace collapsed, sorted, duplicates removed), kept here so that the
# test always runs.
while IFS= read -r expr; do
	ok "dashboard: $expr returns data" test -n "$(q "$expr")"
done <<'EOF'
avg by (memory_location) (sum by (instance_id, memory_location) (neuron_runtime_memory_used_bytes))
avg by (neuroncore) (neuroncore_utilization_ratio)
avg by (percentile) (execution_latency_seconds)
avg by (usage_type) (neuron_runtime_vcpu_usage_ratio)
avg by (usage_type) (system_vcpu_usage_ratio)
avg(neuroncore_utilization_ratio)
avg(sum by (instance_id) (system_vcpu_usage_ratio))
avg(system_memory_used_bytes / system_memory_total_bytes)
avg(system_memory_used_bytes)
count(instance_info)
count(neuroncore_utilization_ratio > 0)
instance_info
sum (system_vcpu_count)
sum(rate(execution_status_total{status_type!="completed"}[1m]))
sum(rate(execution_status_total{status_type="completed"}[1m]))
EOF

# ---- a report with no runtimes ------------------------------------------------------
line 4 | $PY -c '
import json, sys
r = json.loads(sys.stdin.read())
r["neuron_runtime_data"] = []
r["system_data"]["memory_info"]["memory_used_bytes"] = 12345
print(json.dumps(r, separators=(",", ":")))' >&3
ok "a report with no runtimes went through" wait_for "$T" q_is system_memory_used_bytes 12345
is "$(q "$COMPLETED")" 461 "no runtimes: the counter keeps its value in Prometheus"
is "$(q 'hardware_ecc_events_total{neuron_device_index="1",event_type="mem_ecc_corrected"}')" 2 \
	"no runtimes: the system counter keeps its value"
ok "accel-prom logged no warning" sh -c "! grep -q warning '$WORK/accel-prom.err'"
done_testing
