#!/bin/sh
# SPDX-License-Identifier: MIT
# One descriptor budget for the whole producer (monitor/core/fdbudget.h): 100 endpoints at ulimit -n 256 take
# what the budget lends (HTTP_CONN_FDS each) and the ones past it say so as their own error, while the system
# groups (vcpu_usage, memory_info) keep reading /proc; the producer never holds more descriptors than the limit
# less the core's reserve. Before the budget, the endpoints took every descriptor and the system groups failed
# with "Too many open files".
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
# Nothing from the environment that would change what the producer does (instance metadata, the kubelet).
for v in $(env | sed -n 's/^\(\(AWS\|OTEL\|KUBERNETES\)_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED

spawn SRV $PY "$HELP/fake_many.py" "$WORK/http.port"
ok "the endpoint server listens" wait_for $((10 * SLOW)) test -s "$WORK/http.port"
$PY - "$(cat "$WORK/http.port")" "$WORK/c.json" <<'PY'
import json, sys
rts = [{"address": "http://127.0.0.1:%s/m%d" % (sys.argv[1], i), "server": "triton",
        "metrics": [{"type": "execution_stats"}]} for i in range(100)]
json.dump({"period": "1s", "system_metrics": [{"type": "vcpu_usage"}, {"type": "memory_info"}], "runtimes": rts},
          open(sys.argv[2], "w"))
PY

N=5
(
	ulimit -n 256
	exec timeout -k 5 $((60 * SLOW)) "$MON" -c "$WORK/c.json" -n $N >"$WORK/out" 2>"$WORK/err"
) &
M=$!
# The most descriptors the producer holds while it runs (it starts with 3).
MAX=0
while kill -0 "$M" 2>/dev/null; do
	P=$(pgrep -P "$M" -x accel-monitor | head -n 1)
	n=$(ls "/proc/${P:-0}/fd" 2>/dev/null | wc -l)
	[ "$n" -gt "$MAX" ] && MAX=$n
	sleep 0.2
done
RC=0
wait "$M" || RC=$?
is "$RC" 0 "-n $N at ulimit -n 256: exit status 0"
is "$(nlines "$WORK/out")" $N "$N reports"
diag "at most $MAX descriptors open; answered: $(q "$WORK/out" 'print(" ".join(str(sum(1 for e in l["runtime_data"] if not e["error"])) for l in L)) or 1')"
ok "vcpu_usage and memory_info: no error in any report" q "$WORK/out" \
	'all(l["system_data"][g]["error"] == "" for l in L for g in ("vcpu_usage", "memory_info"))'
ok "every endpoint entry: answered, or its error says the budget is spent" q "$WORK/out" \
	'all(e["error"] == "" or "no descriptor left for another connection: the 208 that a limit of 256 (ulimit -n) lends" in e["error"] for l in L for e in l["runtime_data"])'
ok "after the first report, at least 60 endpoints answer in each" q "$WORK/out" \
	'all(sum(1 for e in l["runtime_data"] if not e["error"]) >= 60 for l in L[1:])'
ok "and some are past the budget (100 endpoints need more than it lends)" q "$WORK/out" \
	'all(any(e["error"] for e in l["runtime_data"]) for l in L)'
ok "the producer's descriptors were counted ($MAX)" test "$MAX" -gt 100
ok "the producer held at most the limit less a part of the core's reserve ($MAX < 240)" test "$MAX" -lt 240
ok "no 'Too many open files' on stderr" sh -c "! grep -q 'Too many open files' '$WORK/err'"
ok "stderr holds no sanitizer report" sh -c "! grep -q 'Sanitizer' '$WORK/err'"
done_testing
