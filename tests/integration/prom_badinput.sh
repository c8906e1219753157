#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-prom against bad input: truncated lines, random bytes, a 100 MB
# line, 100 000-deep nesting, NaN and Infinity, a string where a number
# belongs, a non-object, groups and runtimes in error. The process
# survives, names each bad line on stderr ("stdin:N: ..."), counts it in
# accel_prom_bad_lines_total, and serves the last good values: the final
# exposition equals the golden one of the clean stream.
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
done_testing
