#!/bin/sh
# SPDX-License-Identifier: MIT
# Endpoints whose bodies (within the default 4 MiB body cap, no passthrough) name 3,900 models of 1,000 bytes
# each: one of control bytes (each 6 bytes once JSON-escaped: 23 MB of names), and five of letters (20 MB of names
# together). Every report is written (no sequence gap, nothing dropped), under the sinks' 16 MiB line limit,
# with every model kept apart under a name of at most 256 bytes without control bytes. Before names were bounded,
# each report was over 16 MiB and dropped: every sink lost the whole node.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED

$PY - "$WORK/control.txt" "$WORK/letters.txt" <<'EOF'
import sys
for path, fill in ((sys.argv[1], "\x01"), (sys.argv[2], "x")):
    with open(path, "w", encoding="latin-1") as f:
        f.write("# TYPE nv_inference_request_success counter\n")
        for i in range(3900):
            tail = "".join(chr((0x10 if fill == "\x01" else 0x61) + (i >> (4 * k) & 15)) for k in range(4))
            f.write('nv_inference_request_success{model="%s%s",version="1"} %d\n' % (fill * 996, tail, i % 7))
EOF
ok "the control-byte exposition is under the 4 MiB body cap" test "$(wc -c <"$WORK/control.txt")" -lt 4194304
ok "and so is the letters'" test "$(wc -c <"$WORK/letters.txt")" -lt 4194304
spawn SRVC $PY "$HELP/fake_endpoint.py" --file "$WORK/control.txt" --port-file "$WORK/c.port"
for i in 1 2 3 4 5; do
	spawn "SRV$i" $PY "$HELP/fake_endpoint.py" --file "$WORK/letters.txt" --port-file "$WORK/l$i.port"
done
ok "the fake endpoints listen" wait_for $((10 * SLOW)) sh -c "test -s '$WORK/c.port' && test -s '$WORK/l5.port' &&
	test -s '$WORK/l1.port' && test -s '$WORK/l2.port' && test -s '$WORK/l3.port' && test -s '$WORK/l4.port'"

run() { # config, reports: the monitor's stdout in $WORK/out, stderr in $WORK/err
	RC=0
	timeout -k 5 $((60 * SLOW)) "$MON" -c "$1" -n "$2" >"$WORK/out" 2>"$WORK/err" || RC=$?
	is "$RC" 0 "$(basename "$1"): exit status 0"
	is "$(nlines "$WORK/out")" "$2" "$2 reports written"
	ok "no report dropped" sh -c "! grep -q 'dropped' '$WORK/err'"
	ok "seq 0 to $(($2 - 1)), no gap" q "$WORK/out" '[l["monitor"]["seq"] for l in L] == list(range(len(L)))'
	ok "every line within 16 MiB" sh -c "LC_ALL=C awk 'length(\$0) + 1 > 16777216 {bad = 1} END {exit bad}' '$WORK/out'"
	ok "the stream passes check_report.py" $PY "$HELP/check_report.py" --config "$1" --count "$2" "$WORK/out"
}
# every report after the first: each runtime's 3900 models, names of 256 bytes, no control byte, no error
MODELS='len(L) >= 3 and all(len(m) == 3900 and all(len(k.encode()) == 256 and k[239] == "~" and min(k) >= " " for k in m)
	     and e["report"]["execution_stats"]["error"] == ""
	     for l in L[1:] for e in l["runtime_data"] for m in [e["report"]["execution_stats"]["models"]])'

cat >"$WORK/one.json" <<EOF
{ "period": "2s", "runtimes": [ { "address": "http://127.0.0.1:$(cat "$WORK/c.port")/metrics", "server": "triton",
  "metrics": [ { "type": "execution_stats" } ] } ] }
EOF
run "$WORK/one.json" 3
ok "one endpoint of control-byte names: 3900 models, each name 256 bytes, '?' for control bytes" q "$WORK/out" "$MODELS"
ok "and '?' where the control bytes were" q "$WORK/out" \
	'len(L) >= 3 and all(k.startswith("?" * 239) for k in L[-1]["runtime_data"][0]["report"]["execution_stats"]["models"])'

{
	printf '{ "period": "2s", "runtimes": [\n'
	for i in 1 2 3 4 5; do
		[ "$i" = 1 ] || printf ',\n'
		printf '{ "address": "http://127.0.0.1:%s/metrics", "server": "triton", "metrics": [ { "type": "execution_stats" } ] }' \
			"$(cat "$WORK/l$i.port")"
	done
	printf '\n] }\n'
} >"$WORK/five.json"
run "$WORK/five.json" 3
ok "five endpoints of 1000-letter names: each 3900 models, each name 256 bytes" q "$WORK/out" "$MODELS"
ok "stderr holds no sanitizer report" sh -c "! grep -q 'Sanitizer' '$WORK/err'"
done_testing
