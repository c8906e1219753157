#!/bin/sh
# SPDX-License-Identifier: MIT
# An endpoint that serves 60,000 models in a 3.5 MB exposition (under the default 4 MiB body cap), scraped every
# second: the producer's other groups keep their periods (within 5 %), each report holds the first 4096 model
# versions and the group's error says how many samples were left out, and every report line stays far below the
# sinks' 16 MiB line limit. Before lookups were hashed and bounded, one report came every 17-20 s.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED

$PY - "$WORK/metrics.txt" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write("# TYPE nv_inference_request_success counter\n")
    for i in range(60000):
        f.write('nv_inference_request_success{model="model_%05d",version="1"} %d\n' % (i, i % 7))
EOF
ok "the exposition is under the 4 MiB body cap" test "$(wc -c <"$WORK/metrics.txt")" -lt 4194304
spawn SRV $PY "$HELP/fake_endpoint.py" --file "$WORK/metrics.txt" --port-file "$WORK/http.port" --log "$WORK/http.log"
ok "the fake endpoint listens" wait_for $((10 * SLOW)) test -s "$WORK/http.port"
H=http://127.0.0.1:$(cat "$WORK/http.port")

cat >"$WORK/c.json" <<EOF
{
  "period": "1s",
  "system_metrics": [ { "type": "vcpu_usage" }, { "type": "memory_info" } ],
  "runtimes": [ { "address": "$H/metrics", "server": "triton", "metrics": [ { "type": "execution_stats" } ] } ]
}
EOF
N=8
RC=0
# rt (lib.sh): what is measured is the producer's schedule, not the load of the tests alongside.
rt timeout -k 5 $((30 * SLOW)) "$MON" -c "$WORK/c.json" -n $N >"$WORK/out" 2>"$WORK/err" || RC=$?
is "$RC" 0 "-n $N: exit status 0"
is "$(nlines "$WORK/out")" $N "$N reports in $N s (one every second, not one every 17-20 s)"
diag "periods: $(q "$WORK/out" 'print(" ".join("%.3f/%.3f" % (l["system_data"]["vcpu_usage"]["period"], l["system_data"]["memory_info"]["period"]) for l in L)) or 1' 2>&1 | head -1)"
ok "the stream passes check_report.py" $PY "$HELP/check_report.py" --config "$WORK/c.json" --count $N "$WORK/out"
ok "vcpu_usage and memory_info: every period but the first within 5 % of 1 s" q "$WORK/out" \
	'all(abs(l["system_data"][g]["period"] - 1) <= 0.05 for l in L[1:] for g in ("vcpu_usage", "memory_info"))'
ok "each report after the first: 4096 model versions, the first ones" q "$WORK/out" \
	'all(len(m) == 4096 and "model_04095" in m and "model_04096" not in m for m in
	     (l["runtime_data"][0]["report"]["execution_stats"]["models"] for l in L[1:]))'
ok "and the group's error says what was left out" q "$WORK/out" \
	'all(l["runtime_data"][0]["report"]["execution_stats"]["error"] ==
	     "more than 4096 model versions: 55904 samples left out" for l in L[1:])'
ok "every report line under 1 MiB" sh -c "LC_ALL=C awk 'length(\$0) > 1048576 {bad = 1} END {exit bad}' '$WORK/out'"
ok "stderr holds no sanitizer report" sh -c "! grep -q 'Sanitizer' '$WORK/err'"
done_testing
