#!/bin/sh
# SPDX-License-Identifier: MIT
# The producer's self-timing covers what the loop does for an endpoint: ten endpoints that each answer with a
# gzip bomb (64 MiB of one comment line in 64 KiB, cut at the 4 MiB body cap) make the producer busy decoding in
# libcurl's callbacks on the loop, outside collect(). That CPU time is on the endpoint collector's entry in
# monitor.collectors (its cpu_seconds): most of what the producer spent, not the few milliseconds of collect().
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
# Nothing from the environment that would change what the producer does (instance metadata, the kubelet).
for v in $(env | sed -n 's/^\(\(AWS\|OTEL\|KUBERNETES\)_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED

spawn SRV $PY "$HELP/fake_many.py" --gzip-bomb "$WORK/http.port"
ok "the gzip-bomb endpoint listens" wait_for $((10 * SLOW)) test -s "$WORK/http.port"
PORT=$(cat "$WORK/http.port")

$PY - "$PORT" "$WORK/c.json" <<'EOF'
import json, sys
rts = [{"address": "http://127.0.0.1:%s/m%d" % (sys.argv[1], i), "server": "triton",
        "metrics": [{"type": "execution_stats"}]} for i in range(10)]
json.dump({"period": "1s", "runtimes": rts}, open(sys.argv[2], "w"))
EOF

# The producer's own CPU time (user + system, all its threads) from its parent's rusage.
N=6
$PY - "$MON" "$WORK/c.json" "$N" "$WORK/out" "$WORK/cpu" <<'EOF' 2>"$WORK/err"
import resource, subprocess, sys
with open(sys.argv[4], "w") as out:
    rc = subprocess.call([sys.argv[1], "-c", sys.argv[2], "-n", sys.argv[3]], stdout=out, timeout=120)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[5], "w").write("%d %.6f\n" % (rc, ru.ru_utime + ru.ru_stime))
EOF
read -r RC CPU <"$WORK/cpu"
is "$RC" 0 "-n $N: exit status 0"
is "$(nlines "$WORK/out")" $N "$N reports"
SUM=$(q "$WORK/out" 'print("%.6f" % sum(l["monitor"]["collectors"].get("endpoint", {}).get("execution_stats", {}).get("cpu_seconds", 0) for l in L)) or 1')
diag "the producer spent $CPU s of CPU; the endpoint collector's cpu_seconds add up to $SUM s"
ok "the bombs were cut at the body cap" q "$WORK/out" \
	'any("body over 4194304 bytes" in e["error"] for l in L for e in l["runtime_data"])'
ok "each report after the first: the endpoint's cpu_seconds holds its decoding (over 5 ms)" q "$WORK/out" \
	'all(l["monitor"]["collectors"]["endpoint"]["execution_stats"]["cpu_seconds"] > 0.005 for l in L[1:])'
ok "the endpoint's cpu_seconds are at least 40 % of the producer's CPU time ($SUM of $CPU s)" \
	$PY -c 'import sys; sys.exit(not float(sys.argv[1]) >= 0.4 * float(sys.argv[2]))' "$SUM" "$CPU"
ok "and no more than all of it" $PY -c 'import sys; sys.exit(not float(sys.argv[1]) <= float(sys.argv[2]))' "$SUM" "$CPU"
ok "stderr holds no sanitizer report" sh -c "! grep -q 'Sanitizer' '$WORK/err'"
done_testing
