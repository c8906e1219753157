#!/bin/sh
# SPDX-License-Identifier: MIT
# One descriptor budget for the whole producer (monitor/core/fdbudget.h), and an endpoint that costs one
# descriptor (its socket; libcurl's multi handle and its wakeup socketpair are paid once):
#  - 100 endpoints at ulimit -n 256 all answer, and the producer holds about 100 + what it started with;
#  - 250 endpoints at ulimit -n 256 take what the budget lends and the ones past it say so as their own error,
#    while the system groups (vcpu_usage, memory_info) keep reading /proc; the producer never holds more
#    descriptors than the limit less the core's reserve.
# Before the budget, the endpoints took every descriptor and the system groups failed with "Too many open
# files"; before the shared multi handle, each endpoint took 3 descriptors and 100 of them did not fit.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
# Nothing from the environment that would change what the producer does (instance metadata, the kubelet).
for v in $(env | sed -n 's/^\(\(AWS\|OTEL\|KUBERNETES\)_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED

spawn SRV $PY "$HELP/fake_many.py" "$WORK/http.port"
ok "the endpoint server listens" wait_for $((10 * SLOW)) test -s "$WORK/http.port"
# config COUNT FILE: COUNT endpoints of the server, and the system groups.
config() {
	$PY - "$(cat "$WORK/http.port")" "$1" "$2" <<'PY'
import json, sys
rts = [{"address": "http://127.0.0.1:%s/m%d" % (sys.argv[1], i), "server": "triton",
        "metrics": [{"type": "execution_stats"}]} for i in range(int(sys.argv[2]))]
json.dump({"period": "1s", "system_metrics": [{"type": "vcpu_usage"}, {"type": "memory_info"}], "runtimes": rts},
          open(sys.argv[3], "w"))
PY
}

N=5
# run NAME: the producer on $WORK/NAME.json at ulimit -n 256 for N reports into $WORK/NAME.out; MAX is the most
# descriptors it held while it ran (it starts with 3).
run() {
	(
		ulimit -n 256
		exec timeout -k 5 $((60 * SLOW)) "$MON" -c "$WORK/$1.json" -n $N >"$WORK/$1.out" 2>"$WORK/$1.err"
	) &
	M=$!
	MAX=0
	while kill -0 "$M" 2>/dev/null; do
		P=$(pgrep -P "$M" -x accel-monitor | head -n 1)
		n=$(ls "/proc/${P:-0}/fd" 2>/dev/null | wc -l)
		[ "$n" -gt "$MAX" ] && MAX=$n
		sleep 0.2
	done
	RC=0
	wait "$M" || RC=$?
	is "$RC" 0 "$1: -n $N at ulimit -n 256: exit status 0"
	is "$(nlines "$WORK/$1.out")" $N "$1: $N reports"
	diag "$1: at most $MAX descriptors open; answered: $(q "$WORK/$1.out" 'print(" ".join(str(sum(1 for e in l["runtime_data"] if not e["error"])) for l in L)) or 1')"
	ok "$1: vcpu_usage and memory_info: no error in any report" q "$WORK/$1.out" \
		'all(l["system_data"][g]["error"] == "" for l in L for g in ("vcpu_usage", "memory_info"))'
	ok "$1: no 'Too many open files' on stderr" sh -c "! grep -q 'Too many open files' '$WORK/$1.err'"
	ok "$1: stderr holds no sanitizer report" sh -c "! grep -q 'Sanitizer' '$WORK/$1.err'"
}

config 100 "$WORK/fit.json"
run fit
ok "fit: after the first report, all 100 endpoints answer in each" q "$WORK/fit.out" \
	'all(sum(1 for e in l["runtime_data"] if not e["error"]) == 100 for l in L[1:])'
ok "fit: one descriptor an endpoint (100 endpoints, at most $MAX descriptors < 130)" test "$MAX" -lt 130
ok "fit: the producer's descriptors were counted ($MAX > 100)" test "$MAX" -gt 100

config 250 "$WORK/over.json"
run over
ok "over: every endpoint entry: answered, or its error says the budget is spent" q "$WORK/over.out" \
	'all(e["error"] == "" or "no descriptor left for another connection: the 208 that a limit of 256 (ulimit -n) lends" in e["error"] for l in L for e in l["runtime_data"])'
ok "over: after the first report, at least 150 endpoints answer in each" q "$WORK/over.out" \
	'all(sum(1 for e in l["runtime_data"] if not e["error"]) >= 150 for l in L[1:])'
ok "over: and some are past the budget (250 endpoints need more than it lends)" q "$WORK/over.out" \
	'all(any(e["error"] for e in l["runtime_data"]) for l in L)'
ok "over: the producer's descriptors were counted ($MAX > 150)" test "$MAX" -gt 150
ok "over: the producer held at most the limit less a part of the core's reserve ($MAX < 240)" test "$MAX" -lt 240
done_testing
