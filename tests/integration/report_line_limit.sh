#!/bin/sh
# SPDX-License-Identifier: MIT
#
# No report line a sink with default settings refuses (docs/report-format.md §1), whatever the endpoints serve
# with passthrough on: (a) one endpoint whose body holds 4.1 MB of control bytes (6 bytes each as JSON: a 24.6 MB
# string); (b) four endpoints with ordinary bodies just under the 4 MiB body cap (each fits, together they do
# not). Every line stays under the sinks' default (16 MiB), the expositions that do not fit are left out with
# the entry's exposition_error saying so, the others are kept, and accel-prom --passthrough reads every report.
. "$(dirname "$0")/lib.sh"

need "$BIN/accel-monitor and $BIN/accel-prom are built" test -x "$BIN/accel-monitor" -a -x "$BIN/accel-prom"
need "curl" command -v curl
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED
LC_ALL=C # awk's length() in bytes
export LC_ALL
LIMIT=16777216 # STREAM_DEFAULT_MAX_LINE (common/stream.h)
N=4

# The bodies: ctl (a good exposition, then 4.1 MB of control bytes in comment lines), and b1..b4 (4,190,000
# bytes of ordinary series whose label values hold escaped quotes: about 5 MB each as JSON).
$PY - "$WORK" <<'PY'
import sys
w = sys.argv[1]
with open(w + "/ctl.txt", "wb") as f:
    f.write(b"# TYPE demo_up gauge\ndemo_up 1\n")
    f.write((b"#" + bytes(range(1, 32)).replace(b"\n", b"\x01") * 132 + b"\n") * 1002)
for k in range(1, 5):
    out, i = [b"# TYPE demo_info gauge\n"], 0
    size = len(out[0])
    while True:
        line = b'demo_info{n="%d",path="%s"} 1\n' % (i, (b'dir\\"' * 100) + b"x" * 500)
        if size + len(line) > 4190000:
            break
        out.append(line)
        size += len(line)
        i += 1
    open("%s/b%d.txt" % (w, k), "wb").write(b"".join(out))
PY
ok "the control-byte body is 4.1 MB" test "$(wc -c <"$WORK/ctl.txt")" -gt 4100000
for b in ctl b1 b2 b3 b4; do
	spawn SRV $PY "$HELP/fake_endpoint.py" --file "$WORK/$b.txt" --port-file "$WORK/$b.port"
done
ok "the fake endpoints listen" wait_for $((10 * SLOW)) sh -c "cd '$WORK' && test -s ctl.port -a -s b1.port -a -s b2.port -a -s b3.port -a -s b4.port"

# run NAME BODY...: accel-monitor over endpoints serving those bodies, passthrough on, N reports into
# NAME.jsonl; then accel-prom --passthrough reads that stream (and serves on after its end).
run() {
	rn=$1
	shift
	rts=
	for b in "$@"; do
		rts="$rts${rts:+,} { \"address\": \"http://127.0.0.1:$(cat "$WORK/$b.port")/metrics\", \"server\": \"prometheus\",
		  \"passthrough\": true, \"metrics\": [ { \"type\": \"execution_stats\" } ] }"
	done
	printf '{ "period": "%ds", "system_metrics": [ { "type": "memory_info" } ], "devices": [], "runtimes": [ %s ] }\n' \
		"$SLOW" "$rts" >"$WORK/$rn.json"
	ok "$rn: accel-monitor writes $N reports" sh -c '"$1" -c "$2.json" -n "$3" >"$2.jsonl" 2>"$2.err"' sh \
		"$BIN/accel-monitor" "$WORK/$rn" "$N"
	is "$(nlines "$WORK/$rn.jsonl")" "$N" "$rn: $N lines"
	ok "$rn: every line shorter than the sinks' default ($LIMIT bytes)" \
		awk -v max="$LIMIT" 'length($0) + 1 > max { print NR ": " length($0) + 1 " bytes"; bad = 1 } END { exit bad }' \
		"$WORK/$rn.jsonl"
	P=$(free_port)
	"$BIN/accel-prom" --passthrough --listen-address "127.0.0.1:$P" <"$WORK/$rn.jsonl" 2>"$WORK/$rn.prom.err" &
	_pids="$_pids $!"
	ok "$rn: accel-prom reads all $N reports" wait_for $((20 * SLOW)) sh -c \
		"curl -sf http://127.0.0.1:$P/metrics | grep -qx 'accel_prom_reports_total $N'"
	ok "$rn: accel-prom skipped no line" sh -c \
		"curl -sf http://127.0.0.1:$P/metrics | grep -qx 'accel_prom_bad_lines_total{reason=\"too_long\"} 0'"
}
run ctl ctl
# Reports whose scrape came in (on a slow machine one may time out now and then): at least two.
ok "ctl: the exposition is left out of every report, and exposition_error says how long it was" q "$WORK/ctl.jsonl" \
	'(lambda good: len(good) >= 2 and all("exposition" not in e and int(e["exposition_error"].split()[2]) > 16777216
    for e in good))([r["runtime_data"][0] for r in L if r["runtime_data"][0]["error"] == ""])'
ok "ctl: the runtime still reports (no error on the entry or its group for the left-out exposition)" \
	q "$WORK/ctl.jsonl" 'all(e["error"] == "" and e["report"]["execution_stats"]["error"] == ""
    for e in (r["runtime_data"][0] for r in L) if "exposition_error" in e)'
ok "ctl: the stream is valid (check_report.py)" $PY "$HELP/check_report.py" "$WORK/ctl.jsonl"

run four b1 b2 b3 b4
# A report whose four scrapes all came in (on a slow machine one may time out now and then).
ok "four: three expositions kept, the fourth left out with its reason, in every report with four good scrapes" \
	q "$WORK/four.jsonl" '(lambda good: len(good) >= 1 and all([("exposition" in e, "exposition_error" in e)
    for e in r["runtime_data"]] == [(True, False)] * 3 + [(False, True)] for r in good))(
    [r for r in L if all(e["error"] == "" for e in r["runtime_data"])])'
ok "four: a kept exposition is the body as served" q "$WORK/four.jsonl" \
	'L[-1]["runtime_data"][0]["exposition"] == open(A[0], encoding="utf-8").read()' "$WORK/b1.txt"
ok "four: the stream is valid (check_report.py)" $PY "$HELP/check_report.py" "$WORK/four.jsonl"
done_testing
