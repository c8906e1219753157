#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Rates across a failed scrape: a fake Triton (tests/helpers/fake_infer.py) answers its 3rd and 6th scrapes
# with HTTP 500 while its counters go on, so the next good scrape's group holds two periods' counts. Its
# "period" must say two periods (a reader dividing by it, as accel-top's REQ/s and the CSV and CloudWatch
# readers do, gets the server's rate, not twice it), and every group's counts are checked exactly.
. "$(dirname "$0")/lib.sh"

need "$BIN/accel-monitor is built" test -x "$BIN/accel-monitor"
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED

spawn SRV $PY "$HELP/fake_infer.py" --port-file "$WORK/port" --log "$WORK/scrapes" --fail 3,6
ok "the fake Triton listens" wait_for $((10 * SLOW)) test -s "$WORK/port"
cat >"$WORK/monitor.json" <<JSON
{ "period": "1s", "system_metrics": [], "devices": [],
  "runtimes": [ { "address": "http://127.0.0.1:$(cat "$WORK/port")/metrics", "server": "triton",
                  "metrics": [ { "type": "execution_stats" } ] } ] }
JSON
ok "accel-monitor writes 9 reports" sh -c '"$1" -c "$2/monitor.json" -n 9 >"$2/stream.jsonl" 2>"$2/monitor.err"' \
	sh "$BIN/accel-monitor" "$WORK"
is "$(nlines "$WORK/stream.jsonl")" 9 "9 reports"
ok "the two failed scrapes are the entry's error" q "$WORK/stream.jsonl" \
	'sum(1 for r in L for e in r["runtime_data"] if "HTTP 500" in e["error"]) == 2'
ok "every group's counts are the increments, and its period covers the scrapes they hold" \
	$PY "$HELP/fake_infer.py" --check "$WORK/stream.jsonl" --log "$WORK/scrapes" --period 1
ok "the stream is valid (check_report.py)" $PY "$HELP/check_report.py" "$WORK/stream.jsonl"
done_testing
