#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-remote-write's --queue-dir against a real Prometheus (Debian's
# prometheus, --web.enable-remote-write-receiver): reports with known
# timestamps (an accel-monitor report of the fixture tree, restamped one
# every 100 ms) go through while Prometheus is up; Prometheus stops; more
# reports are queued on disk; the sink is killed with SIGKILL; a new sink
# on the same --queue-dir starts while Prometheus is still down, then
# Prometheus comes back: every report's sample arrives exactly once per
# series and timestamp (count_over_time and the timestamps themselves), and
# Prometheus logs no out-of-order or duplicate sample. Then a crash in the
# middle of a write: the newest segment cut short; the next start says so,
# drops the cut record and replays the rest.
. "$(dirname "$0")/lib.sh"

need "$BIN/accel-remote-write is built" test -x "$BIN/accel-remote-write"
need "$BIN/accel-monitor is built" test -x "$BIN/accel-monitor"
need "prometheus (Debian package prometheus)" command -v prometheus
need "curl" command -v curl
T=$((30 * SLOW))
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED
Q=$WORK/queue

PP=$(free_port)
PURL=http://127.0.0.1:$PP
printf 'global:\n  evaluation_interval: 1s\n' >"$WORK/prometheus.yml"
start_prom() {
	prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
		--web.listen-address="127.0.0.1:$PP" --web.enable-remote-write-receiver --log.level=warn \
		2>>"$WORK/prometheus.log" 3>&- 4>&- &
	PROM=$!
	_pids="$_pids $PROM"
	wait_for "$T" curl -sf -o /dev/null "$PURL/-/ready"
}
stop_prom() {
	kill "$PROM"
	wait "$PROM" 2>/dev/null || true
}

# q EXPR: the values of an instant query, sorted, space-separated.
q() {
	curl -s --max-time 10 --data-urlencode "query=$1" "$PURL/api/v1/query" | $PY -c '
import json, sys
print(" ".join(sorted(x["value"][1] for x in json.load(sys.stdin)["data"]["result"])))' 2>/dev/null
}
q_is() { [ "$(q "$1")" = "$2" ]; }

# One report of the fixture tree; gen FROM TO prints it restamped for reports FROM..TO.
printf '{ "period": "1s", "devices": [ { "type": "amdgpu" }, { "type": "neuron" } ] }\n' >"$WORK/mon.json"
"$BIN/accel-monitor" -c "$WORK/mon.json" --path.sysfs "$FIX/sysfs/host" --path.procfs "$FIX/proc-devices" \
	--once >"$WORK/one.json" 2>"$WORK/mon.err" || true
BASE=$(($(date +%s) * 1000 - 120000))
gen() { $PY "$HELP/restamp.py" "$WORK/one.json" "$BASE" "$1" "$2"; }
S='accelerator_memory_used_bytes{job="rwq",device_type="amdgpu",device="1"}'
# start_sink N [OPTION]...: accel-remote-write number N on the queue, reading the FIFO in.N (kept open on fd 3).
start_sink() {
	n=$1
	shift
	mkfifo "$WORK/in.$n"
	exec 3<>"$WORK/in.$n"
	"$BIN/accel-remote-write" --url "$PURL/api/v1/write" --label job=rwq --queue-dir "$Q" \
		--batch-send-deadline 100ms --max-samples-per-send 100 --max-backoff 1s -vv "$@" \
		<"$WORK/in.$n" 2>"$WORK/rw.$n.err" 3>&- &
	RW=$!
	_pids="$_pids $RW"
}
# fifo_empty: the sink has taken every byte written to fd 3.
fifo_empty() {
	$PY -c 'import array, fcntl, termios; b = array.array("i", [0]); fcntl.ioctl(3, termios.FIONREAD, b); exit(b[0] != 0)'
}
feed() { gen "$1" "$2" >&3; }

ok "Prometheus is ready" start_prom
start_sink 1
feed 1 10
ok "reports 1-10 arrive while Prometheus is up" wait_for "$T" q_is "count_over_time($S[10m])" 10
stop_prom
feed 11 40
ok "reports 11-40 queued on disk (the queue holds them)" wait_for "$T" grep -q 'retrying in' "$WORK/rw.1.err"
sleep 1
kill -9 "$RW"
wait "$RW" 2>/dev/null || true
exec 3>&-
ok "segments on disk after SIGKILL" sh -c "ls '$Q'/*.seg >/dev/null"

start_sink 2
ok "the restarted sink finds the queued requests" wait_for "$T" grep -q 'to send again' "$WORK/rw.2.err"
feed 41 50
sleep 1
ok "Prometheus is back" start_prom
ok "every report 1-50 arrives" wait_for "$T" q_is "count_over_time($S[10m])" 50
is "$(curl -s --data-urlencode "query=$S[10m]" "$PURL/api/v1/query" | $PY -c '
import json, sys
v = json.load(sys.stdin)["data"]["result"][0]["values"]
ts = [round(float(t) * 1000) for t, _ in v]
base = int(sys.argv[1])
print("ok" if ts == [base + i * 100 for i in range(1, 51)] else "timestamps %r" % ts)' "$BASE")" ok \
	"one sample per report, at each report's own timestamp, in order"
ok "Prometheus logged no out-of-order or duplicate sample" \
	sh -c "! grep -Eqi 'out of order|duplicate|out of bounds' '$WORK/prometheus.log'"
ok "no request refused" sh -c "! grep -q 'refused a request' '$WORK'/rw.*.err"
# ---- a crash in the middle of a write ------------------------------------------------------------
stop_prom
feed 51 80
sleep 2
kill -9 "$RW"
wait "$RW" 2>/dev/null || true
exec 3>&-
last=$(ls "$Q"/*.seg | tail -1)
size=$(wc -c <"$last")
truncate -s $((size - 5)) "$last"
start_sink 3
ok "the cut record is detected and reported" wait_for "$T" grep -q 'cut short at offset' "$WORK/rw.3.err"
ok "Prometheus is back" start_prom
feed 81 90
ok "reports arrive after the cut" wait_for "$T" sh -c "[ \"\$(curl -s --data-urlencode 'query=timestamp($S)' '$PURL/api/v1/query' | $PY -c 'import json,sys; print(int(float(json.load(sys.stdin)[\"data\"][\"result\"][0][\"value\"][1]) * 1000))')\" = $((BASE + 9000)) ]"
n=$(q "count_over_time($S[10m])")
ok "everything before the cut record was replayed (a record is at most 100 samples: $n of 90 reports)" \
	sh -c "[ ${n:-0} -ge 88 ] && [ ${n:-0} -le 90 ]"
ok "still no out-of-order or duplicate sample" \
	sh -c "! grep -Eqi 'out of order|duplicate|out of bounds' '$WORK/prometheus.log'"
# ---- samples read but not yet due for a request (a long --batch-send-deadline) -----------------------
# Every sample is on disk once its report is read: SIGKILL long before the deadline loses none.
stop_prom
Q=$WORK/queue2
J='job="rwq2",__name__!~"accel_remote_write_.*"'
S2='accelerator_memory_used_bytes{job="rwq2",device_type="amdgpu",device="1"}'
start_sink 4 --label job=rwq2 --batch-send-deadline 60s --max-samples-per-send 100000
feed 1 30
ok "the sink read reports 1-30" wait_for "$T" fifo_empty
sleep $((2 * SLOW))
kill -9 "$RW"
wait "$RW" 2>/dev/null || true
exec 3>&-
ok "Prometheus is back" start_prom
start_sink 5 --label job=rwq2 --batch-send-deadline 60s --max-samples-per-send 100000
ok "every report 1-30 read before the SIGKILL arrives" wait_for "$T" q_is "count_over_time($S2[10m])" 30
is "$(curl -s --data-urlencode "query=$S2[10m]" "$PURL/api/v1/query" | $PY -c '
import json, sys
v = json.load(sys.stdin)["data"]["result"][0]["values"]
ts = [round(float(t) * 1000) for t, _ in v]
base = int(sys.argv[1])
print("ok" if ts == [base + i * 100 for i in range(1, 31)] else "timestamps %r" % ts)' "$BASE")" ok \
	"one sample per report, at each report's own timestamp, in order"
is "$(curl -s --data-urlencode "query={$J}[10m]" "$PURL/api/v1/query" | $PY -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
bad = [(x["metric"], len(x["values"])) for x in r if len({v[0] for v in x["values"]}) != 30 or len(x["values"]) != 30]
print("ok" if len(r) > 10 and not bad else "%d series, not 30 distinct timestamps each: %r" % (len(r), bad[:3]))')" ok \
	"every series of every report, 30 samples each at distinct timestamps"
ok "still no out-of-order or duplicate sample" \
	sh -c "! grep -Eqi 'out of order|duplicate|out of bounds' '$WORK/prometheus.log'"
done_testing
