#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-prom --passthrough within --max-series-bytes: an endpoint's 6.4 MB
# exposition (42 000 families) against a 64K cap is refused whole (counted
# in accel_prom_series_refused_total, logged with the runtime, /health
# fails), the node's own series are served, accel_prom_series_bytes stays
# within the cap, and the peak RSS stays under 2 x the cap + 20 MiB + 3 x
# the input line (the line, and jansson's parse of it): before the servers'
# families counted, they took 86 MB. With the default cap the same
# exposition is served whole next to the node's series.
. "$(dirname "$0")/lib.sh"

need "$BIN/accel-prom is built" test -x "$BIN/accel-prom"
need "curl" command -v curl
T=$((30 * SLOW))

$PY - "$WORK/in.jsonl" <<'EOF'
import json, sys
fams = "".join('# HELP srv_model_%d_requests Requests of model %d.\n# TYPE srv_model_%d_requests gauge\n'
               'srv_model_%d_requests{model="m%d",version="1"} %d\n' % (i, i, i, i, i, i) for i in range(42000))
rep = {"monitor": {"version": "0"},
       "runtime_data": [{"runtime_index": 0, "address": "http://127.0.0.1:8002/metrics", "pid": 42,
                         "runtime_tag": "srv", "error": "", "exposition": fams, "report": {}}],
       "device_data": [],
       "system_data": {"memory_info": {"period": 1, "error": "", "memory_total_bytes": 1000,
                                       "memory_used_bytes": 500, "swap_total_bytes": 0, "swap_used_bytes": 0}}}
open(sys.argv[1], "w").write(json.dumps(rep) + "\n")
EOF
LINE_KB=$(($(wc -c <"$WORK/in.jsonl") / 1024))

# start CAP: accel-prom --passthrough --max-series-bytes CAP reading the report; sets URL and PID, waits for the report.
start() {
	PORT=$(free_port)
	URL=http://127.0.0.1:$PORT
	"$BIN/accel-prom" --passthrough --max-series-bytes "$1" --listen-address "127.0.0.1:$PORT" \
		<"$WORK/in.jsonl" 2>"$WORK/err-$1" &
	PID=$!
	_pids="$_pids $PID"
	wait_for "$T" sh -c "curl -s '$URL/metrics' | grep -qx 'accel_prom_reports_total 1'" ||
		diag "accel-prom --max-series-bytes $1 did not take the report"
	curl -s --max-time 10 -o "$WORK/m-$1" "$URL/metrics"
}

start 64K
ok "64K: the node's own series are served" grep -qx 'system_memory_used_bytes{[^}]*} 500' "$WORK/m-64K"
is "$(grep -c '^srv_model_' "$WORK/m-64K")" 0 "64K: none of the server's families"
ok "64K: accel_prom_series_bytes within the cap" \
	awk '$1 == "accel_prom_series_bytes" && $2 <= 65536 { f = 1 } END { exit !f }' "$WORK/m-64K"
ok "64K: its 42000 samples counted as refused" grep -qx 'accel_prom_series_refused_total 42000' "$WORK/m-64K"
ok "64K: logged with the runtime" grep -q \
	'stdin:1: --passthrough: runtime "srv" (http://127.0.0.1:8002/metrics): its 42000 samples refused: .*--max-series-bytes' \
	"$WORK/err-64K"
is "$(curl -s -o /dev/null -w '%{http_code}' "$URL/health")" 503 "64K: /health says the store is full"
if [ "${ACCEL_SANITIZED:-0}" != 1 ]; then
	hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$PID/status")
	bound=$((2 * 64 + 20 * 1024 + 3 * LINE_KB))
	ok "64K: peak RSS ${hwm} kB under 2 x 64K + 20 MiB + 3 x the ${LINE_KB} kB line (${bound} kB)" \
		test "$hwm" -lt "$bound"
fi

start 128M
is "$(grep -c '^srv_model_' "$WORK/m-128M")" 42000 "the default cap: the server's 42000 families served"
ok "the default cap: the node's own series too" grep -qx 'system_memory_used_bytes{[^}]*} 500' "$WORK/m-128M"
ok "the default cap: the families counted in accel_prom_series_bytes (over 10 MB)" \
	awk '$1 == "accel_prom_series_bytes" && $2 > 10000000 && $2 <= 134217728 { f = 1 } END { exit !f }' "$WORK/m-128M"
done_testing
