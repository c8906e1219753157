#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-prom against bad input: truncated lines, random bytes, a 100 MB
# line, 100 000-deep nesting, NaN and Infinity, a string where a number
# belongs, a non-object, groups and runtimes in error. The process
# survives, names each bad line on stderr ("stdin:N: ..."), counts it in
# accel_prom_bad_lines_total, and serves the last good values: the final
# exposition equals the golden one of the clean stream. Then label churn
# with 2 KiB labels against --max-series-bytes: refused, logged, /health
# fails, peak RSS bounded.
. "$(dirname "$0")/lib.sh"

if [ ! -x "$BIN/accel-prom" ] || ! command -v curl >/dev/null 2>&1; then
	echo "ok 1 # skip needs $BIN/accel-prom and curl"
	echo "1..1"
	exit 0
fi
T=$((20 * SLOW))
S=$FIX/streams/neuron-monitor-2x.jsonl
line() { sed -n "${1}p" "$S"; }
no_self() { grep -v -e '^accel_prom_' -e '^# [A-Z]* accel_prom_' "$1" || true; }

# The stream, numbered as accel-prom counts lines.
gen() {
	line 1                                                   # 1 good
	line 2 | head -c 3000; echo                              # 2 truncated
	head -c 4096 /dev/urandom | tr -d '\n'; echo             # 3 random bytes
	head -c 100000000 /dev/zero | tr '\0' a; echo            # 4 a 100 MB line
	$PY -c 'print("[" * 100000 + "]" * 100000)'              # 5 100 000-deep nesting
	echo '{"system_data":{"memory_info":{"memory_used_bytes":NaN}}}'   # 6 NaN
	echo '{"system_data":{"memory_info":{"memory_used_bytes":Infinity}}}' # 7 Infinity
	line 2 | sed 's/"memory_total_bytes":[0-9]*/"memory_total_bytes":"lots"/' # 8 a string for a number (and a runtime error)
	echo '[1,2,3]'                                           # 9 not an object
	line 3                                                   # 10 good, with a group error
	echo                                                     # 11 blank: not a report
	line 4                                                   # 12 good
	line 4 | head -c 2000                                    # 13 truncated, last, no newline
}

PORT=$(free_port)
URL=http://127.0.0.1:$PORT
gen | "$BIN/accel-prom" --listen-address "127.0.0.1:$PORT" 2>"$WORK/err" &
PID=$!
_pids="$_pids $PID"
done_reading() { curl -s --max-time 5 "$URL/metrics" | grep -qx 'accel_prom_input_open 0'; }
ok "accel-prom reads the whole stream" wait_for "$T" done_reading
ok "the process survives" kill -0 "$PID"
curl -s --max-time "$T" -o "$WORK/m" "$URL/metrics"

for want in \
	'stdin:2: column [0-9]*: ' \
	'stdin:3: ' \
	'stdin:4: line longer than 16777216 bytes; skipped' \
	'stdin:5: column [0-9]*: .*depth' \
	'stdin:6: column [0-9]*: ' \
	'stdin:7: column [0-9]*: ' \
	'stdin:8: system_data.memory_info.memory_total_bytes: expected a number, got a string; skipped' \
	'stdin:9: a report must be a JSON object' \
	'stdin:13: column [0-9]*: '; do
	ok "stderr: $want" grep -q "$want" "$WORK/err"
done
ok "no message for the blank line or the good ones" sh -c "! grep -q -e 'stdin:1[0-2]:' -e 'stdin:1:' '$WORK/err'"
ok "json: 6 bad lines" grep -qx 'accel_prom_bad_lines_total{reason="json"} 6' "$WORK/m"
ok "too_long: 1" grep -qx 'accel_prom_bad_lines_total{reason="too_long"} 1' "$WORK/m"
ok "not_object: 1" grep -qx 'accel_prom_bad_lines_total{reason="not_object"} 1' "$WORK/m"
ok "bad values: 1" grep -qx 'accel_prom_bad_values_total 1' "$WORK/m"
ok "reports: 4" grep -qx 'accel_prom_reports_total 4' "$WORK/m"
ok "input bytes counted (over 100 MB)" awk '$1 == "accel_prom_input_bytes_total" && $2 > 100000000 { f = 1 } END { exit !f }' "$WORK/m"
ok "group errors counted" grep -qx 'accel_prom_group_errors_total{group="neuron_runtime_vcpu_usage"} 1' "$WORK/m"
no_self "$WORK/m" >"$WORK/got"
no_self "$FIX/prom/neuron-monitor-2x.prom" >"$WORK/want"
ok "the last good values: the clean stream's golden exposition" cmp "$WORK/want" "$WORK/got"
if [ "${ACCEL_SANITIZED:-0}" != 1 ]; then
	hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$PID/status")
	ok "peak RSS under 64 MiB after a 100 MB line (${hwm} kB)" test "$hwm" -lt 65536
fi
is "$(curl -s -o /dev/null -w '%{http_code}' "$URL/health")" 503 "/health 503 after the end"

# A smaller cap: a normal report is now too long.
PORT=$(free_port)
URL=http://127.0.0.1:$PORT
line 1 | "$BIN/accel-prom" --listen-address "127.0.0.1:$PORT" --max-line-bytes 1000 2>"$WORK/err2" &
P2=$!
_pids="$_pids $P2"
ok "--max-line-bytes 1000: the report is skipped" wait_for "$T" sh -c \
	"curl -s '$URL/metrics' | grep -qx 'accel_prom_bad_lines_total{reason=\"too_long\"} 1'"
ok "--max-line-bytes: the message names the cap" grep -q 'stdin:1: line longer than 1000 bytes' "$WORK/err2"

# Label churn with 2 KiB labels: 1500 reports, each a new runtime whose tag is
# 2 KiB with 20 neuroncores, 30 000 live series (about 200 MB uncapped). --max-series-bytes 4M
# is reached after about 25 reports and refuses the rest; peak RSS stays under the cap's double
# (store plus the previous exposition while the next is rendered) plus 40 MiB of program and
# libraries. The cap is small so that it is reached early: every report re-renders the store, and
# a store of tens of MB rendered per report takes minutes under ASan for the same checks.
churn() {
	$PY - <<'PYEOF'
import json, sys
cores = ",".join('"%d":{"neuroncore_utilization":1}' % c for c in range(20))
for i in range(1500):
    tag = "t%05d" % i + "x" * 2048
    sys.stdout.write('{"neuron_runtime_data":[{"pid":%d,"neuron_runtime_tag":"%s","error":"","report":{'
                     '"neuroncore_counters":{"period":1,"error":"","neuroncores_in_use":{%s}}}}],'
                     '"instance_info":{}}\n' % (i, tag, cores))
PYEOF
}
CAP_MIB=4
PORT=$(free_port)
URL=http://127.0.0.1:$PORT
churn >"$WORK/churn.jsonl"
# The input stays open (a FIFO this shell holds) so that /health reports the refusal, not the end.
mkfifo "$WORK/in3"
"$BIN/accel-prom" --listen-address "127.0.0.1:$PORT" --staleness 10m --max-series-bytes ${CAP_MIB}M <"$WORK/in3" \
	2>"$WORK/err3" &
P3=$!
_pids="$_pids $P3"
exec 7>"$WORK/in3"
t0=$(date +%s)
cat "$WORK/churn.jsonl" >&7
churn_read() { curl -s --max-time 5 "$URL/metrics" | grep -qx 'accel_prom_reports_total 1500'; }
ok "label churn: accel-prom reads 1500 reports" wait_for $((60 * SLOW)) churn_read
curl -s --max-time "$T" -o "$WORK/m3" "$URL/metrics"
curl -s --max-time "$T" -o "$WORK/h3" -w '%{http_code}' "$URL/health" >"$WORK/h3code" || true
bytes=$(awk '$1 == "accel_prom_series_bytes" { print $2 }' "$WORK/m3")
ok "label churn: accel_prom_series_bytes within $CAP_MIB MiB ($bytes)" test "${bytes:-99999999999}" -le $((CAP_MIB * 1048576))
ok "label churn: samples refused and counted" awk '$1 == "accel_prom_series_refused_total" && $2 > 0 { f = 1 } END { exit !f }' "$WORK/m3"
# log_limited: at most one message per 10 s (common/log.h), so the bound follows how long the reading took (a
# sanitized build on a loaded machine takes tens of seconds), while thousands of samples were refused.
limit=$(( ($(date +%s) - t0) / 10 + 2 ))
ok "label churn: the refusal is logged, rate-limited (at most $limit messages)" \
	test "$(grep -c 'refused: the store holds' "$WORK/err3")" -le "$limit"
ok "label churn: the log names --max-series-bytes" grep -q 'max-series-bytes' "$WORK/err3"
is "$(cat "$WORK/h3code")" 503 "label churn: /health 503 while samples are refused"
ok "label churn: /health says why" grep -q 'refused' "$WORK/h3"
if [ "${ACCEL_SANITIZED:-0}" != 1 ]; then
	hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$P3/status")
	ok "label churn: peak RSS under 2 x $CAP_MIB MiB + 40 MiB (${hwm} kB)" test "$hwm" -lt $((2 * CAP_MIB * 1024 + 40960))
fi
done_testing
