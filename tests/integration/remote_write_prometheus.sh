#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-remote-write into a real Prometheus (Debian's prometheus,
# --web.enable-remote-write-receiver) on loopback, next to accel-prom fed
# the same lines: every series accel-prom serves is in Prometheus with the
# same family, labels and value (tests/helpers/rw_compare.py), for the
# neuron-monitor 2.x fixture (counters summed over reports, a runtime in
# error leaving: its series get a staleness marker and are gone from
# Prometheus too) and for accel-monitor's own reports from the fixture
# sysfs tree. The external labels are there (instance from KUBE_NODE_NAME,
# job, --label), the self-metrics arrive, series that go stale while the
# input is quiet get staleness markers, and Prometheus logs no out-of-order
# or duplicate sample.
#
# Prometheus 2.42's receiver does not store the metadata remote write
# carries (prometheus/prometheus#13163): the metadata requests are checked
# by remote_write_delivery.sh's receiver instead.
. "$(dirname "$0")/lib.sh"

need "$BIN/accel-remote-write is built" test -x "$BIN/accel-remote-write"
need "$BIN/accel-prom is built" test -x "$BIN/accel-prom"
need "$BIN/accel-monitor is built" test -x "$BIN/accel-monitor"
need "prometheus (Debian package prometheus)" command -v prometheus
need "curl" command -v curl
T=$((30 * SLOW))
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED

# ---- Prometheus, receiving only -----------------------------------------------------
PP=$(free_port)
PURL=http://127.0.0.1:$PP
printf 'global:\n  evaluation_interval: 1s\n' >"$WORK/prometheus.yml"
spawn PROM prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
	--web.listen-address="127.0.0.1:$PP" --web.enable-remote-write-receiver --log.level=warn \
	2>"$WORK/prometheus.log"
ok "Prometheus is ready" wait_for "$T" curl -sf -o /dev/null "$PURL/-/ready"

# q EXPR: the values of an instant query, sorted, space-separated ("" for no data).
q() {
	curl -s --max-time 10 --data-urlencode "query=$1" "$PURL/api/v1/query" | $PY -c '
import json, sys
d = json.load(sys.stdin)
r = d["data"]["result"]
print(" ".join(sorted(x["value"][1] for x in r)))' 2>/dev/null
}
q_is() { [ "$(q "$1")" = "$2" ]; }

# run_case NAME JOB FILE: accel-prom and accel-remote-write read FILE's lines, 0.3 s apart (each
# report its own millisecond), then both must agree.
run_case() {
	case_=$1 job=$2 file=$3
	mkfifo "$WORK/$case_.p" "$WORK/$case_.r"
	exec 4<>"$WORK/$case_.p" 5<>"$WORK/$case_.r"
	ap=$(free_port)
	"$BIN/accel-prom" --listen-address "127.0.0.1:$ap" <"$WORK/$case_.p" 2>"$WORK/$case_.prom.err" 4>&- 5>&- &
	_pids="$_pids $!"
	KUBE_NODE_NAME="node-$case_" "$BIN/accel-remote-write" --url "$PURL/api/v1/write" --label "job=$job" \
		--label "cluster=test" --batch-send-deadline 100ms -vv \
		<"$WORK/$case_.r" 2>"$WORK/$case_.rw.err" 4>&- 5>&- &
	_pids="$_pids $!"
	while IFS= read -r l; do
		printf '%s\n' "$l" >&4
		printf '%s\n' "$l" >&5
		sleep 0.3
	done <"$file"
	ok "$case_: every series accel-prom serves is in Prometheus, same labels and value" \
		wait_for "$T" $PY "$HELP/rw_compare.py" "http://127.0.0.1:$ap/metrics" "$PURL" "$job" --ignore cluster
	$PY "$HELP/rw_compare.py" "http://127.0.0.1:$ap/metrics" "$PURL" "$job" --ignore cluster >"$WORK/$case_.n" 2>"$WORK/$case_.diff" ||
		sed 's/^/#   /' "$WORK/$case_.diff" | head -20 >&2
	n=$(cat "$WORK/$case_.n")
	ok "$case_: many series compared ($n)" test "${n:-0}" -ge 20
	is "$(q "count({job=\"$job\"}) - count({job=\"$job\",instance=\"node-$case_\",cluster=\"test\"})")" \
		"0" "$case_: instance from KUBE_NODE_NAME, --label cluster on every series"
	ok "$case_: self-metrics pushed (accel_remote_write_samples_sent_total > 0)" \
		wait_for "$T" sh -c "[ \"\$(curl -s --data-urlencode 'query=accel_remote_write_samples_sent_total{job=\"$job\"} > 0' '$PURL/api/v1/query' | grep -c '\"value\"')\" = 1 ]"
	exec 4>&- 5>&-
}

# ---- neuron-monitor 2.x: four reports ---------------------------------------------
run_case neuron rw-neuron "$FIX/streams/neuron-monitor-2x.jsonl"
COMPLETED='execution_status_total{job="rw-neuron",runtime_tag="my_app_1",status_type="completed"}'
is "$(q "$COMPLETED")" 461 "neuron: the counter is cumulative from the sink's start: 118 + 121 + 97 + 125"
is "$(q "max_over_time($COMPLETED[10m]) - min_over_time($COMPLETED[10m])")" 343 \
	"neuron: each report's value arrived (with its own timestamp)"
is "$(q 'count(execution_status_total{job="rw-neuron",runtime_tag="5151"})')" "" \
	"neuron: the runtime in error has left Prometheus too (staleness marker)"
is "$(q 'count(last_over_time(execution_status_total{job="rw-neuron",runtime_tag="5151",status_type="completed"}[10m]))')" 1 \
	"neuron: ... after it had been pushed"

# ---- accel-monitor: three reports of the fixture tree's devices --------------------
printf '{ "period": "1s", "devices": [ { "type": "amdgpu" }, { "type": "neuron" }, { "type": "hwmon" } ] }\n' \
	>"$WORK/mon.json"
for i in 1 2 3; do
	"$BIN/accel-monitor" -c "$WORK/mon.json" --path.sysfs "$FIX/sysfs/host" --path.procfs "$FIX/proc-devices" \
		--once >>"$WORK/mon.jsonl" 2>>"$WORK/mon.err" || true
done
is "$(nlines "$WORK/mon.jsonl")" 3 "accel-monitor wrote three reports"
run_case monitor rw-monitor "$WORK/mon.jsonl"
want=$($PY -c '
import json, sys
t = 0
for e in json.loads(open(sys.argv[1]).readlines()[-1])["device_data"]:
    for d in e["report"]["device_memory"]["devices"].values():
        t += d.get("used_bytes", 0)
print(t)' "$WORK/mon.jsonl")
got=$(q 'sum(accelerator_memory_used_bytes{job="rw-monitor"})')
ok "monitor: sum(accelerator_memory_used_bytes) $got equals the report's devices' total $want" \
	$PY -c 'import sys; sys.exit(0 if float(sys.argv[1]) == float(sys.argv[2]) and float(sys.argv[2]) > 0 else 1)' \
	"${got:-0}" "$want"

# ---- a quiet input: with --staleness 2s the series leave after 2 s, with staleness markers -----------
mkfifo "$WORK/quiet"
exec 6<>"$WORK/quiet"
KUBE_NODE_NAME=node-quiet "$BIN/accel-remote-write" --url "$PURL/api/v1/write" --label job=rw-quiet --staleness 2s \
	--batch-send-deadline 100ms <"$WORK/quiet" 2>"$WORK/quiet.rw.err" 6>&- &
_pids="$_pids $!"
sed -n 1p "$FIX/streams/neuron-monitor-2x.jsonl" >&6
# Over a range: on a loaded machine the first query may come after the 2 s that make the series stale.
ok "quiet: the series arrive" wait_for "$T" \
	q_is 'count(count_over_time(execution_status_total{job="rw-quiet",runtime_tag="my_app_1",status_type="completed"}[5m]))' 1
ok "quiet: no report for 2 s: they leave Prometheus too, long before its 5-minute lookback" \
	wait_for "$T" q_is 'count(execution_status_total{job="rw-quiet"})' ""
is "$(q 'count(accel_remote_write_samples_sent_total{job="rw-quiet"})')" 1 "quiet: the self-metrics stay (never stale)"
exec 6>&-

ok "Prometheus logged no out-of-order or duplicate sample" sh -c "! grep -Eqi 'out of order|duplicate sample|out of bounds' '$WORK/prometheus.log'"
ok "accel-remote-write had no request refused" sh -c "! grep -q 'refused a request' '$WORK'/*.rw.err"
done_testing
