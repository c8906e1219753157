#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-prom over time, fed line by line through a FIFO with a short
# --staleness: /health goes 503 -> 200 -> 503 (stale) -> 200 -> 503 (end of
# input); stale series leave /metrics and counters come back where they
# were; a report with no runtimes keeps every counter; after the end of
# input the series go stale one window later while accel-prom serves on.
. "$(dirname "$0")/lib.sh"

if [ ! -x "$BIN/accel-prom" ] || ! command -v curl >/dev/null 2>&1; then
	echo "ok 1 # skip needs $BIN/accel-prom and curl"
	echo "1..1"
	exit 0
fi
T=$((20 * SLOW))
W=$((4 + SLOW)) # the staleness window, seconds (room for a loaded machine between two steps)
S=$FIX/streams/neuron-monitor-2x.jsonl
line() { sed -n "${1}p" "$S"; }

mkfifo "$WORK/in"
exec 3<>"$WORK/in" # held open: accel-prom sees no end of input until we close it
PORT=$(free_port)
URL=http://127.0.0.1:$PORT
"$BIN/accel-prom" --listen-address "127.0.0.1:$PORT" --staleness "${W}s" <"$WORK/in" 2>"$WORK/err" 3>&- &
PID=$!
_pids="$_pids $PID"

health() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$URL/health" || true; }
health_is() { [ "$(health)" = "$1" ]; }
scrape() { curl -s --max-time 5 "$URL/metrics"; }
# has PATTERN: the current exposition has a line matching PATTERN (grep -x).
has() { scrape | grep -qx "$1"; }
COMPLETED='execution_status_total{.*runtime_tag="my_app_1",status_type="completed".*}'
MEMUSED='system_memory_used_bytes{.*}'

ok "listening" wait_for "$T" sh -c "curl -s -o /dev/null '$URL/'"
is "$(health)" 503 "before the first report: /health 503"
ok "before the first report: the reason" sh -c "curl -s '$URL/health' | grep -qx 'no report received yet'"
is "$(scrape | grep -c '^[a-z]' | tr -d ' ')" "$(scrape | grep -c '^accel_prom_' | tr -d ' ')" \
	"before the first report: only accel_prom_* series"

line 1 >&3
ok "a report: /health 200" wait_for "$T" health_is 200
ok "a report: the counter holds the first period's count" has "$COMPLETED 118"
ok "staleness window in force" has "accel_prom_staleness_seconds $W"

ok "no report for longer than the window: /health 503" wait_for "$T" health_is 503
ok "stale: the reason names the window" sh -c "curl -s '$URL/health' | grep -q 'older than the staleness window'"
ok "stale: every series has left /metrics" wait_for "$T" has 'accel_prom_series 0'
ok "stale: no runtime series" sh -c "! curl -s '$URL/metrics' | grep -q my_app_1"

line 2 >&3
ok "reports again: /health 200" wait_for "$T" health_is 200
ok "the counter is back where it was, plus this period (118 + 121)" wait_for "$T" has "$COMPLETED 239"

# A report with no runtimes at all (the Python exporter clears every series here).
line 3 | $PY -c '
import json, sys
r = json.loads(sys.stdin.read())
r["neuron_runtime_data"] = []
r["system_data"]["memory_info"]["memory_used_bytes"] = 12345
print(json.dumps(r, separators=(",", ":")))' >&3
ok "a report with no runtimes arrives" wait_for "$T" has "$MEMUSED 12345"
scrape >"$WORK/m"
ok "no runtimes: the runtime counter keeps its value" grep -qx "$COMPLETED 239" "$WORK/m"
ok "no runtimes: the system counter keeps its value" \
	grep -qx 'hardware_ecc_events_total{.*event_type="mem_ecc_corrected".*neuron_device_index="0".*} 1' "$WORK/m"

line 4 >&3
ok "the runtime again: the counter goes on (239 + 125)" wait_for "$T" has "$COMPLETED 364"

exec 3>&- # end of input
ok "end of input: /health 503" wait_for "$T" sh -c "curl -s '$URL/health' | grep -q '^input ended'"
is "$(health)" 503 "end of input: the status"
ok "end of input: accel_prom_input_open 0" wait_for "$T" has 'accel_prom_input_open 0'
ok "end of input: the last values are served until they go stale" has "$COMPLETED 364"
ok "end of input: one window later the series are gone" wait_for "$T" has 'accel_prom_series 0'
ok "end of input: accel-prom still serves" kill -0 "$PID"
ok "stderr names the end of input" grep -q 'stdin: end of input after 4 lines' "$WORK/err"
kill -INT "$PID"
wait "$PID" && rc=0 || rc=$?
is "$rc" 0 "SIGINT: exit 0"
done_testing
