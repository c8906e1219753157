#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The pipeline `make run` starts: accel-monitor | accel-prom. The real
# producer (instance metadata from tests/helpers/fake_imds.py, a process
# runtime on a sleep started here) feeds accel-prom; /metrics carries the
# host's memory as /proc/meminfo says, the instance labels and the runtime;
# /health is 200; when the producer dies, /health turns 503 and accel-prom
# keeps serving. Also checks that `make -n run` runs this pipeline. Every
# check passes or fails: a missing program is a failure, never a skip.
. "$(dirname "$0")/lib.sh"

need "$BIN/accel-monitor is built" test -x "$BIN/accel-monitor"
need "$BIN/accel-prom is built" test -x "$BIN/accel-prom"
need "curl" command -v curl
T=$((20 * SLOW))

spawn IMDS $PY "$HELP/fake_imds.py" --port-file "$WORK/imds.port"
wait_for "$T" test -s "$WORK/imds.port" || echo "# fake IMDS did not start" >&2
sleep 1000 &
SLEEPER=$!
_pids="$_pids $SLEEPER"
cat >"$WORK/cfg.json" <<EOF
{ "period": "1s",
  "runtimes": [ { "address": "pid:$SLEEPER", "metrics": [ { "type": "runtime_vcpu_usage" }, { "type": "memory_used" } ] } ],
  "system_metrics": [ { "type": "vcpu_usage" }, { "type": "memory_info" } ] }
EOF

PORT=$(free_port)
URL=http://127.0.0.1:$PORT
# The pipeline in a subshell of its own: $! is the subshell, the producer's pid goes to a file.
(
	AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:$(cat "$WORK/imds.port") \
		"$BIN/accel-monitor" -c "$WORK/cfg.json" 2>"$WORK/monitor.err" &
	echo $! >"$WORK/monitor.pid"
	wait
) | "$BIN/accel-prom" --listen-address "127.0.0.1:$PORT" 2>"$WORK/prom.err" &
PROM=$!
_pids="$_pids $PROM"
wait_for "$T" test -s "$WORK/monitor.pid" || echo "# the producer did not start" >&2
MON=$(cat "$WORK/monitor.pid")
_pids="$MON $_pids"

health_is() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$URL/health")" = "$1" ]; }
ok "the pipeline is healthy" wait_for "$T" health_is 200
has() { curl -s --max-time 5 "$URL/metrics" | grep -q "$1"; }
ok "the runtime's memory is exported" wait_for "$T" has "^runtime_memory_used_bytes{.*memory_location=\"host\",pid=\"$SLEEPER\".*runtime_tag=\"sleep\".*} [1-9]"
curl -s --max-time 5 -o "$WORK/m" "$URL/metrics"
total=$(awk '/^MemTotal:/ { printf "%.0f", $2 * 1024 }' /proc/meminfo)
ok "system_memory_total_bytes is the host's MemTotal ($total)" grep -q "^system_memory_total_bytes{.*} $total\$" "$WORK/m"
ok "instance labels from the metadata service" grep -q '^instance_info{.*instance_id="i-0123456789abcdef0".*} 1$' "$WORK/m"
ok "system_vcpu_count is the number of CPUs" grep -q "^system_vcpu_count{.*} $(getconf _NPROCESSORS_ONLN)\$" "$WORK/m"

kill "$MON"
ok "the producer gone: /health 503" wait_for "$T" health_is 503
ok "the producer gone: the reason" sh -c "curl -s '$URL/health' | grep -q '^input ended'"
ok "the producer gone: accel-prom still serves /metrics" has '^system_memory_total_bytes{'
ok "no warning from accel-prom but the end of input" sh -c "! grep -v 'end of input' '$WORK/prom.err' | grep -q -e warning -e error"

ok "make run is accel-monitor | accel-prom" sh -c "make -s -n -C '$TOP' run 2>&1 | grep -q 'accel-monitor.*|.*accel-prom'"
done_testing
