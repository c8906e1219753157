#!/bin/sh
# SPDX-License-Identifier: MIT
# accel-cloudwatch delivers everything it accepted: against the botocore
# receiver told to throttle, fail with 5xx, reset, hang, be flaky at random,
# or be down and come back; a datum CloudWatch refuses is found (by the
# member CloudWatch names, or by halving) and dropped alone; a full queue
# drops the oldest and says how many; SIGTERM flushes the queue.
#
# Durations are scaled down so the whole script runs in seconds: flush
# intervals of 100-200 ms, backoff from 20-50 ms to 400 ms at most, and an
# outage of 2 s stands for "CloudWatch down for ten minutes" (with the
# default 1 s..60 s backoff that outage is ten minutes; the queue, the order
# and the retries are the same).
. "$(dirname "$0")/lib.sh"

CW=$BIN/accel-cloudwatch
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_DEFAULT_REGION
export AWS_EC2_METADATA_DISABLED=true AWS_SHARED_CREDENTIALS_FILE=$WORK/none
export AWS_ACCESS_KEY_ID=AKIDDELIVERY0000000 AWS_SECRET_ACCESS_KEY=deliverySecret00000000000000000000000000
export AWS_REGION=us-west-2
CRED="--cred $AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY"
FAST="--flush-interval 100ms --backoff-min 20ms --backoff-max 400ms --timeout 2s --drain-timeout 20s"

start_rx() { # NAME ARGS...
	name=$1
	shift
	rm -f "$WORK/$name.port"
	spawn RX_PID "$PY" "$HELP/cw_receiver.py" --port-file "$WORK/$name.port" --record "$WORK/$name.rec" \
		--log "$WORK/$name.log" $CRED "$@"
	wait_for 20 test -s "$WORK/$name.port" || echo "# receiver $name did not start" >&2
	RX_PORT=$(cat "$WORK/$name.port")
}

stop_rx() { # PID
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

gen() { # NAME ARGS...: a stream and the datums it should deliver
	name=$1
	shift
	"$PY" "$HELP/cw_gen.py" --expected "$WORK/$name.exp" "$@" >"$WORK/$name.jsonl"
}

# ---- every kind of failure in a row, then success -------------------------------
gen f --count 300 --age-s 30
start_rx f --faults 'throttle*2,500,503,reset,hang,expired' --hang-s 4
rc=0
"$CW" --namespace T --endpoint-url "http://127.0.0.1:$RX_PORT" $FAST --timeout 2500ms -v2 \
	<"$WORK/f.jsonl" 2>"$WORK/f.err" || rc=$?
is "$rc" 0 "throttle x2, 500, 503, reset, hang, ExpiredToken: exit 0"
ok "every datum delivered once, with its timestamp and value" "$PY" "$HELP/cw_compare.py" "$WORK/f.exp" "$WORK/f.rec"
ok "the throttling was retried" grep -q "Throttling: Rate exceeded; retrying in" "$WORK/f.err"
ok "the hang was timed out" grep -q "Operation timed out\|timed out" "$WORK/f.err"
ok "backoff grows" "$PY" -c '
import re, sys
w = [int(x) for x in re.findall(r"retrying in (\d+) ms", open(sys.argv[1]).read())]
assert len(w) >= 6 and max(w) > 2 * min(w) and max(w) <= 400, w' "$WORK/f.err"
stop_rx "$RX_PID"

# ---- flaky at random, while the stream flows --------------------------------------
start_rx k --flaky 0.4 --seed 7 --hang-s 3
rc=0
"$PY" "$HELP/cw_gen.py" --count 120 --rate 60 --runtimes 3 --expected "$WORK/k.exp" |
	"$CW" --namespace T --endpoint-url "http://127.0.0.1:$RX_PORT" $FAST --timeout 2s 2>"$WORK/k.err" || rc=$?
is "$rc" 0 "40% of requests fail at random: exit 0"
ok "nothing lost" "$PY" "$HELP/cw_compare.py" "$WORK/k.exp" "$WORK/k.rec"
ok "and there were failures" grep -q '"status": 0\|"status": 5\|"status": 400' "$WORK/k.log"
stop_rx "$RX_PID"

# ---- down for a while, then back ---------------------------------------------------
PORT=$(free_port)
rc=0
spawn SINK sh -c "'$PY' '$HELP/cw_gen.py' --count 150 --rate 50 --expected '$WORK/d.exp' |
	'$CW' --namespace T --endpoint-url http://127.0.0.1:$PORT $FAST --backoff-min 50ms 2>'$WORK/d.err'"
sleep 2
ok "while it is down the sink retries" grep -q "Couldn't connect\|Connection refused\|Failed to connect" "$WORK/d.err"
spawn RX_PID "$PY" "$HELP/cw_receiver.py" --port "$PORT" --record "$WORK/d.rec" --log "$WORK/d.log" $CRED
wait "$SINK" || rc=$?
is "$rc" 0 "endpoint down 2 s, then up: exit 0"
ok "every datum arrives, with its original timestamp" "$PY" "$HELP/cw_compare.py" "$WORK/d.exp" "$WORK/d.rec"
ok "in order: timestamps never go back within a series" "$PY" -c '
import json, sys
last = {}
for r in map(json.loads, open(sys.argv[1])):
    k = (r["name"], str(r["dims"]))
    assert r["ts"] >= last.get(k, ""), (k, r["ts"], last[k])
    last[k] = r["ts"]' "$WORK/d.rec"
stop_rx "$RX_PID"

# ---- a datum CloudWatch refuses --------------------------------------------------------
gen p --count 300 --age-s 30
start_rx p --poison 1000123
rc=0
"$CW" --namespace T --endpoint-url "http://127.0.0.1:$RX_PORT" $FAST -v2 <"$WORK/p.jsonl" 2>"$WORK/p.err" || rc=$?
is "$rc" 0 "a 400 naming MetricData.member.N: exit 0"
grep -v '"value": 1000123.0' "$WORK/p.exp" >"$WORK/p.exp2"
ok "only that datum is missing" "$PY" "$HELP/cw_compare.py" "$WORK/p.exp2" "$WORK/p.rec"
# The count it logs is what the receiver got: the rejected datum is not "delivered".
is "$(sed -n 's/.* \([0-9]*\) datums delivered .*/\1/p' "$WORK/p.err")" "$(nlines "$WORK/p.rec")" \
	"the delivered count equals the receiver's ($(nlines "$WORK/p.rec"))"
ok "and the rejected one is counted as such" grep -q "dropped: 1 rejected by CloudWatch" "$WORK/p.err"
ok "logged with CloudWatch's Code, Message and the datum" grep -q \
	"rejected datum SystemMemoryUsed{InstanceId=i-0fedcba9876543210,InstanceType=inf2.xlarge} 1000123.0 at .*: InvalidParameterValue: The value 1000123.0 for parameter MetricData.member.[0-9]*.Value is invalid." \
	"$WORK/p.err"
is "$(grep -c '"status": 400' "$WORK/p.log")" 1 "found in one extra request"
stop_rx "$RX_PID"

start_rx a --poison-anon 1000123 --poison-anon 1000200
rc=0
"$CW" --namespace T --endpoint-url "http://127.0.0.1:$RX_PORT" $FAST -v2 <"$WORK/p.jsonl" 2>"$WORK/a.err" || rc=$?
is "$rc" 0 "a 400 that names no member: exit 0"
grep -v '"value": 1000123.0\|"value": 1000200.0' "$WORK/p.exp" >"$WORK/a.exp"
ok "found by halving: only the two bad datums are missing" "$PY" "$HELP/cw_compare.py" "$WORK/a.exp" "$WORK/a.rec"
ok "it said it was halving" grep -q "sending them in halves" "$WORK/a.err"
is "$(grep -c 'rejected datum' "$WORK/a.err")" 2 "two drops logged"
ok "halving costs a few dozen requests, not hundreds" "$PY" -c '
import sys; n = sum(1 for _ in open(sys.argv[1])); assert n <= 2 * 2 * 11 + 4, n' "$WORK/a.log"
stop_rx "$RX_PID"

# ---- a full queue drops the oldest and says so -------------------------------------------
PORT=$(free_port)
gen q --count 100 --age-s 30
rc=0
spawn SINK sh -c "'$CW' --namespace T --endpoint-url http://127.0.0.1:$PORT $FAST --buffer-datums 100 \
	<'$WORK/q.jsonl' 2>'$WORK/q.err'"
sleep 1
spawn RX_PID "$PY" "$HELP/cw_receiver.py" --port "$PORT" --record "$WORK/q.rec" --log "$WORK/q.log" $CRED
wait "$SINK" || rc=$?
is "$rc" 0 "queue of 100 for 400 datums: exit 0"
ok "the loss is stated" grep -q "queue full (--buffer-datums 100): dropping the oldest datums" "$WORK/q.err"
ok "delivered + dropped = 400, the newest kept" "$PY" -c '
import json, re, sys
got = [json.loads(l) for l in open(sys.argv[1])]
dropped = int(re.search(r"(\d+) datums were dropped because the queue was full", open(sys.argv[2]).read()).group(1))
assert len(got) + dropped == 400 and dropped >= 200, (len(got), dropped)
assert any(r["value"] == 1000099.0 for r in got)' "$WORK/q.rec" "$WORK/q.err"
stop_rx "$RX_PID"

# ---- SIGTERM: flush what is queued, then exit ------------------------------------------------
start_rx t
gen t --count 50 --age-s 10
mkfifo "$WORK/in"
spawn SINK sh -c "exec '$CW' --namespace T --endpoint-url http://127.0.0.1:$RX_PORT --flush-interval 1h \
	<'$WORK/in' 2>'$WORK/t.err'"
exec 3>"$WORK/in"
cat "$WORK/t.jsonl" >&3
sleep 0.5
is "$(wc -l <"$WORK/t.rec" | tr -d ' ')" 0 "nothing sent before the (1 h) flush interval"
kill -TERM "$SINK"
rc=0
wait "$SINK" || rc=$?
exec 3>&-
[ "$rc" = 0 ] || sed "s/^/# /" "$WORK/t.err" | head -30 >&2
is "$rc" 0 "SIGTERM with input still open: exit 0"
ok "everything queued was delivered" "$PY" "$HELP/cw_compare.py" "$WORK/t.exp" "$WORK/t.rec"
stop_rx "$RX_PID"

# SIGTERM while a request is in flight (the receiver hangs): the log counts the datums in flight, not
# "0 queued"; they are delivered; a second SIGTERM is named as the reason for what is left undelivered,
# not the drain timeout.
for second in no yes; do
	start_rx h$second --faults hang --hang-s 3
	rm -f "$WORK/in"
	mkfifo "$WORK/in"
	spawn SINK sh -c "exec '$CW' --namespace T --endpoint-url http://127.0.0.1:$RX_PORT $FAST --timeout 10s -v2 \
		<'$WORK/in' 2>'$WORK/h$second.err'"
	exec 3>"$WORK/in"
	cat "$WORK/t.jsonl" >&3
	wait_for 10 grep -q "PutMetricData to" "$WORK/h$second.err"
	sleep 0.6 # a flush interval (100 ms) and more: the 200 datums are in the hanging request
	kill -TERM "$SINK"
	[ $second = yes ] && sleep 0.3 && kill -TERM "$SINK"
	rc=0
	wait "$SINK" || rc=$?
	exec 3>&-
	if [ $second = no ]; then
		is "$rc" 0 "SIGTERM with 200 datums in flight: exit 0"
		ok "the log counts them as in flight" grep -q "Terminated: delivering the 200 datums not yet delivered (0 queued, 200 being sent" "$WORK/hno.err"
		ok "they arrive" "$PY" "$HELP/cw_compare.py" "$WORK/t.exp" "$WORK/hno.rec"
		ok "and the log says 200 delivered" grep -q " 200 datums delivered " "$WORK/hno.err"
	else
		is "$rc" 1 "a second SIGTERM with 200 datums in flight: exit 1"
		ok "the undelivered are blamed on the second signal" grep -q "exiting with 200 datums undelivered: a second SIGTERM" "$WORK/hyes.err"
		ok "not on the drain timeout" sh -c "! grep -q 'drain-timeout' '$WORK/hyes.err'"
		ok "and the log says 0 delivered" grep -q " 0 datums delivered " "$WORK/hyes.err"
	fi
	stop_rx "$RX_PID"
done

PORT=$(free_port)
rc=0
"$CW" --namespace T --endpoint-url "http://127.0.0.1:$PORT" $FAST --drain-timeout 300ms \
	<"$WORK/t.jsonl" 2>"$WORK/u.err" || rc=$?
is "$rc" 1 "endpoint down past the drain deadline: exit 1"
ok "says how many datums were left" grep -q "exiting with 200 datums undelivered" "$WORK/u.err"
ok "and why: the drain timeout" grep -q "exiting with 200 datums undelivered: --drain-timeout 300 ms passed" "$WORK/u.err"

done_testing
