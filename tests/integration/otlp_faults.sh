#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-otlp against a server that misbehaves, one fault per case, injected
# by the test peer's script (tests/helpers/otlp/receiver.mjs --script): a 429
# with Retry-After in seconds and as an HTTP date (honoured: the retry waits
# about that long), 502/503/504 (retried with backoff), a reset in the
# middle of a request (retried), a server slower than --timeout (retried),
# 400 with a google.rpc.Status message, 400 with plain text and 500 (not
# retried, the data dropped and counted, each message logged once), and a
# partial success (the rejected points counted in the log and in the next
# export's accel_otlp_points_rejected, its message logged once).
. "$(dirname "$0")/lib.sh"
. "$HELP/otlp/test_lib.sh"
otlp_need

# run_case NAME SCRIPT [FLAG...]: one report through a receiver answering as SCRIPT says; accel-otlp's log in
# $WORK/NAME.log, its exit status in RC, how long it ran in DUR (ms); the receiver stopped afterwards (its files stay in $WORK/NAME).
run_case() {
	_cn=$1
	_s=$2
	shift 2
	otlp_recv "$_cn" --script "$_s"
	RC=0
	_t0=$(date +%s%N)
	timeout $((60 * SLOW)) "$BIN/accel-otlp" -v2 --endpoint "http://127.0.0.1:$RP" --drain-timeout 30s \
		--min-backoff 50ms --max-backoff 200ms "$@" <"$WORK/one.json" 2>"$WORK/$_cn.log" || RC=$?
	DUR=$((($(date +%s%N) - _t0) / 1000000))
	otlp_stop
}
# gap NAME: milliseconds between the receiver's first and second request.
gap() { pts "$WORK/$1" log "sorted(r, key=lambda x: x['seq'])[1]['start'] - sorted(r, key=lambda x: x['seq'])[0]['start']"; }
ONE=$(
	otlp_recv one >/dev/null
	"$BIN/accel-otlp" --endpoint "http://127.0.0.1:$RP" <"$WORK/one.json" 2>/dev/null
	pts "$RDIR" data
	otlp_stop
)

# ---- retried ----------------------------------------------------------------------------------------
run_case r429 "429:2"
is "$RC" 0 "429 Retry-After: 2: exit 0"
is "$(pts "$WORK/r429" log "[x['status'] for x in r]")" "[429, 200]" "429, then the retry taken"
g=$(gap r429)
ok "the retry waited the Retry-After: 2 s (${g} ms)" test "$g" -ge 1900 -a "$g" -le $((3500 * SLOW))
ok "the log says the server's answer and the wait" grep -q 'HTTP 429.*retrying in 2000 ms (attempt 1' "$WORK/r429.log"
is "$(pts "$WORK/r429" data)" "$ONE" "every point delivered once"

run_case r429date "429date:3"
is "$(pts "$WORK/r429date" log "[x['status'] for x in r]")" "[429, 200]" "429 with an HTTP-date Retry-After, then taken"
g=$(gap r429date)
ok "the retry waited until the date: 2-3 s at a second's resolution (${g} ms)" \
	test "$g" -ge 1900 -a "$g" -le $((4500 * SLOW))

run_case r5xx "503,502,504,503"
is "$RC" 0 "503, 502, 504, 503: exit 0"
is "$(pts "$WORK/r5xx" log "[x['status'] for x in r]")" "[503, 502, 504, 503, 200]" "each retried until taken"
ok "retried with the backoff, not at once (--min-backoff 50ms: 4 waits of 25 ms at least)" \
	test "$(pts "$WORK/r5xx" log "r[4]['t'] - r[0]['t']")" -ge 100
is "$(pts "$WORK/r5xx" data)" "$ONE" "every point delivered once"
ok "the retries are counted" grep -q 'retried 4 requests' "$WORK/r5xx.log"

run_case reset "reset"
is "$(pts "$WORK/reset" log "[x['status'] for x in r]")" "[0, 200]" "a connection reset mid-request, then taken"
ok "the log says the connection was lost and it retries" grep -Eq 'otlp: .*(connection|reset|closed|recv).*retrying in' "$WORK/reset.log"
is "$(pts "$WORK/reset" times $S_POWER)" "1 distinct, 0 duplicates" "the point delivered once"

run_case slow "slow:3000" --timeout 1s
is "$RC" 0 "a server slower than --timeout 1s: exit 0"
ok "the log says the request timed out, and it retries" grep -q 'timeout after 1 s.*retrying in' "$WORK/slow.log"
is "$(pts "$WORK/slow" log "[x['seq'] for x in r if x['status'] == 200]")" "[2]" "sent again after the timeout, taken"
ok "... without waiting for the slow answer (done in ${DUR} ms, under the 3 s it takes)" \
	test "$DUR" -lt $((2900 * SLOW))

# ---- not retried -------------------------------------------------------------------------------------
run_case r400 "400:metric name invalid: a.b,400:metric name invalid: a.b" --max-points-per-send 100
is "$RC" 0 "400 twice: exit 0"
is "$(pts "$WORK/r400" log "[x['status'] for x in r]")" "[400, 400, 200]" "each 400 not retried; the next request goes"
is "$(grep -c 'metric name invalid: a.b' "$WORK/r400.log")" 1 "the Status message is logged once"
ok "... with the status and the verdict" grep -q 'HTTP 400: metric name invalid: a.b; dropped, not retried' "$WORK/r400.log"
ok "the dropped points are counted (two requests of 100)" grep -q 'failed 200 (2 requests)' "$WORK/r400.log"

run_case text400 "400text:bad $(printf '\033')[31mred"
is "$(pts "$WORK/text400" log "[x['status'] for x in r]")" "[400]" "400 with a text body: not retried"
ok "the body is logged as text, escaped" grep -q 'HTTP 400: bad \\u001b\[31mred' "$WORK/text400.log"

run_case r500 "500:internal"
is "$(pts "$WORK/r500" log "[x['status'] for x in r]")" "[500]" "500 is not retried (the OTLP rule: only 429, 502, 503, 504)"
ok "the 500's message is logged" grep -q 'HTTP 500: internal; dropped' "$WORK/r500.log"

# ---- partial success -----------------------------------------------------------------------------------
otlp_recv partial --script "partial:5:2 points had no name,partial:7:2 points had no name"
mkfifo "$WORK/in"
exec 3<>"$WORK/in"
"$BIN/accel-otlp" -v2 --endpoint "http://127.0.0.1:$RP" --batch-send-deadline 100ms --drain-timeout 20s \
	<"$WORK/in" 2>"$WORK/partial.log" 3>&- &
PID=$!
_pids="$_pids $PID"
otlp_gen 1 1 >&3
ok "the first report's request answered with a partial success" wait_for "$T" has_lines "$WORK/partial/requests.log" 1
otlp_gen 2 2 >&3
ok "the second one too" wait_for "$T" has_lines "$WORK/partial/requests.log" 2
otlp_gen 3 3 >&3
ok "the third one taken" wait_for "$T" has_lines "$WORK/partial/requests.log" 3
exec 3>&-
wait "$PID" || true
is "$(grep -c '2 points had no name' "$WORK/partial.log")" 1 "the partial success message is logged once"
ok "... saying how many were rejected" grep -q 'rejected 5 of them: "2 points had no name"' "$WORK/partial.log"
ok "the rejected points are counted" grep -q 'rejected 12,' "$WORK/partial.log"
is "$(pts "$WORK/partial" last accel_otlp_points_rejected)" 12 "the last export's accel_otlp_points_rejected says 12"
ok "the receiver found nothing wrong in any request" no_proto_errors "$WORK/partial"
otlp_stop
done_testing
