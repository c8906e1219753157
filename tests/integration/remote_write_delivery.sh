#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-remote-write's delivery against tests/helpers/rw_receiver.py, a
# receiver that decodes every request (snappy, prompb) and answers as the
# test tells it, while reports arrive ten a second: the receiver down for
# 6 s (the retries' backoff reaches --max-backoff 2s), then answering 500s,
# a 429 with Retry-After: 2, a 400. Nothing that could be delivered is
# lost and nothing arrives twice: for one series, the samples taken plus
# those in the refused request are one per report; the 400's batch is
# dropped, logged with its size and counted; the Retry-After is honoured;
# the protocol's headers and sorted labels are there; metadata (type,
# help, unit) arrives at the start and again every --metadata-interval
# (2 s). Last, a memory queue too small: drops logged once with a count,
# and counted.
. "$(dirname "$0")/lib.sh"

need "$BIN/accel-remote-write is built" test -x "$BIN/accel-remote-write"
need "python3-snappy (Debian package)" $PY -c 'import snappy'
T=$((30 * SLOW))
# The outage: long enough for the backoff to reach --max-backoff 2s (30 ms doubled: about 4 s).
DOWN=6
R=$WORK/recv
mkdir -p "$R"
RP=$(free_port)

start_receiver() {
	$PY "$HELP/rw_receiver.py" --port "$RP" --dir "$R" >"$WORK/recv.out" 2>>"$WORK/recv.err" 3>&- &
	RECV=$!
	_pids="$_pids $RECV"
	wait_for "$T" grep -q ready "$WORK/recv.out"
}
nreq() { grep -c " $1 " "$R/requests.log" 2>/dev/null || true; }

ok "receiver up" start_receiver

# The input: the neuron-monitor 2.x fixture's first report, ten a second, until $WORK/stop, each
# stamped with the time it is written, so that each sample's timestamp is known to the test
# (remote_write_replay.sh covers unstamped reports read in a burst).
L=$(sed -n 1p "$FIX/streams/neuron-monitor-2x.jsonl")
mkfifo "$WORK/in"
exec 3<>"$WORK/in"
"$BIN/accel-remote-write" --url "http://127.0.0.1:$RP/api/v1/write" --batch-send-deadline 200ms \
	--max-backoff 2s --metadata-interval 2s --drain-timeout 20s -vv <"$WORK/in" 2>"$WORK/rw.err" 3>&- &
RW=$!
_pids="$_pids $RW"
(
	i=0
	while [ ! -e "$WORK/stop" ]; do
		printf '{"timestamp":"%s",%s\n' "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" "${L#\{}"
		i=$((i + 1))
		echo "$i" >"$WORK/fed"
		sleep 0.1
	done
) >&3 &
_pids="$_pids $!"
FEED=$!

ok "samples arrive" wait_for "$T" test -s "$R/accepted.jsonl"

# ---- the receiver down for $DOWN s ----------------------------------------------------------
kill "$RECV"
wait "$RECV" 2>/dev/null || true
before=$(nlines "$R/accepted.jsonl")
fed0=$(cat "$WORK/fed")
sleep "$DOWN"
ok "the sink retried while the receiver was down" grep -q "retrying in" "$WORK/rw.err"
start_receiver
# A report holds over 80 samples: the backlog is at least 40 a report fed during the outage.
backlog=$((($(cat "$WORK/fed") - fed0) * 40))
ok "after the outage the backlog arrives (over $backlog samples)" wait_for "$T" sh -c \
	"[ \$(wc -l <'$R/accepted.jsonl') -gt $((before + backlog)) ]"

# ---- 500s: a request answered 500 three times -------------------------------------------------
echo 500 >"$R/mode"
ok "500s answered" wait_for "$T" sh -c "[ \$(grep -c ' 500 ' '$R/requests.log') -ge 3 ]"
echo ok >"$R/mode"

# ---- a 429 with Retry-After: 2 ----------------------------------------------------------------
echo "429:2" >"$R/mode"
ok "a 429 answered" wait_for "$T" sh -c "grep -q ' 429 ' '$R/requests.log'"
echo ok >"$R/mode"
ok "the next request comes after the Retry-After" wait_for "$T" sh -c "awk '\$2 == 429 { t = \$1; next } t && \$2 == 204 { print \$1 - t; exit }' '$R/requests.log' | grep -q ."
gap=$(awk '$2 == 429 { t = $1; next } t && $2 == 204 { print $1 - t; exit }' "$R/requests.log")
ok "Retry-After: 2 honoured (the next request $gap s later; the backoff alone would be 30 ms)" \
	awk -v g="$gap" 'BEGIN { exit !(g >= 1.95) }'

# ---- a 400 ---------------------------------------------------------------------------------------
echo 400once >"$R/mode"
ok "a 400 answered" wait_for "$T" sh -c "grep -q ' 400 ' '$R/requests.log'"
ok "delivery goes on after the 400" wait_for "$T" awk '$2 == 400 { t = 1; next } t && $2 == 204 { f = 1 } END { exit !f }' \
	"$R/requests.log"

# ---- the end of input: the sink sends what it holds and exits ----------------------------------------
touch "$WORK/stop"
wait "$FEED" 2>/dev/null || true
exec 3>&-
ok "accel-remote-write exits by itself after the end of input" wait_for "$T" sh -c "! kill -0 $RW 2>/dev/null"
kill -0 "$RW" 2>/dev/null && kill -9 "$RW"
kill -0 "$RW" 2>/dev/null && kill -9 "$RW"
rc=0
wait "$RW" || rc=$?
is "$rc" 0 "exit status 0"
N=$(cat "$WORK/fed")

# ---- what arrived ------------------------------------------------------------------------------------
$PY - "$R" "$N" >"$WORK/count" 2>&1 <<'EOF'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
def load(name):
    try:
        return [json.loads(l) for l in open(d + "/" + name)]
    except FileNotFoundError:
        return []
acc, rej = load("accepted.jsonl"), load("rejected.jsonl")
key = [s for s in {x["s"] for x in acc} if "__name__=execution_status_total," in s and "runtime_tag=my_app_1" in s
       and "status_type=completed," in s][0]
ta = [x["t"] for x in acc if x["s"] == key]
tr = [x["t"] for x in rej if x["s"] == key]
last = max((x for x in acc if x["s"] == key), key=lambda x: x["t"])
print(len(acc), len(rej), len(ta), len(set(ta)), len(tr), len(set(ta) | set(tr)), int(last["v"]))
EOF
read -r nacc nrej nta nuta ntr nall lastv <"$WORK/count" || sed 's/^/#   /' "$WORK/count" >&2
diag "fed $N reports; receiver took $nacc samples, refused $nrej; series: $nta taken, $ntr refused"
is "$nall" "$N" "one series: a sample for every report, taken or in the refused request"
[ "$nall" = "$N" ] || grep 'samples sent' "$WORK/rw.err" | tail -1 | sed 's/^/#   /' >&2
is "$nuta" "$nta" "... none taken twice"
ok "... the refused request held some ($ntr)" test "${ntr:-0}" -gt 0
is "$lastv" $((118 * N)) "... its last value is the sum of every report's count (118 x $N)"
sent=$(sed -n 's/.*samples sent \([0-9]*\) .*/\1/p' "$WORK/rw.err" | tail -1)
failed=$(sed -n 's/.*failed \([0-9]*\),.*/\1/p' "$WORK/rw.err" | tail -1)
dropped=$(sed -n 's/.*dropped \([0-9]*\);.*/\1/p' "$WORK/rw.err" | tail -1)
is "$sent" "$nacc" "the sink's samples sent equal the samples the receiver took"
is "$failed" "$nrej" "the 400's samples counted as failed"
is "$dropped" 0 "nothing dropped from the queue"
ok "the 400 is logged with the batch's size" grep -q "refused a request of $nrej samples" "$WORK/rw.err"
ok "500s were retried" test "$(nreq 500)" -ge 3
ok "no protocol error at the receiver (headers, sorted labels, order)" test ! -s "$R/errors.log"
head -5 "$R/errors.log" 2>/dev/null | cut -c1-300 | sed 's/^/#   /' >&2 || true

# ---- metadata -------------------------------------------------------------------------------------------
ok "metadata: execution_status_total a COUNTER with its help" grep -q \
	'"type": 1, "name": "execution_status_total", "help": "[^"]' "$R/metadata.jsonl"
ok "metadata: system_memory_total_bytes a GAUGE in bytes" grep -q \
	'"type": 2, "name": "system_memory_total_bytes", "help": "[^"]*", "unit": "bytes"' "$R/metadata.jsonl"
ok "metadata: the self-metrics too" grep -q '"name": "accel_remote_write_samples_sent_total"' "$R/metadata.jsonl"
nmeta=$(awk '$2 == 204 && $4 > 0' "$R/requests.log" | wc -l)
ok "metadata sent at the start and again every 2 s ($nmeta requests)" test "$nmeta" -ge 4
ok "self-metrics pushed: samples sent, queue bytes, last success" sh -c \
	"grep -q 'accel_remote_write_samples_sent_total' '$R/accepted.jsonl' && grep -q 'accel_remote_write_queue_bytes' '$R/accepted.jsonl' && grep -q 'accel_remote_write_last_success_timestamp_seconds' '$R/accepted.jsonl'"

# ---- --max-bytes and --max-samples-per-send bound each request ------------------------------------------
n0=$(nlines "$R/requests.log")
for mode in "--max-bytes 4096" "--max-samples-per-send 40"; do
	for i in 1 2 3 4 5; do
		printf '%s\n' "$L"
		sleep 0.05
	done | "$BIN/accel-remote-write" --url "http://127.0.0.1:$RP/api/v1/write" $mode --no-metadata \
		--batch-send-deadline 1s --drain-timeout 5s 2>>"$WORK/bounds.err" || true
	n1=$(nlines "$R/requests.log")
	tail -n $((n1 - n0)) "$R/requests.log" >"$WORK/bounds.log"
	n0=$n1
	case $mode in
	--max-bytes*) ok "--max-bytes 4096: $(nlines "$WORK/bounds.log") requests, each under 4096 bytes uncompressed" \
		awk 'NR > 0 && $2 == 204 && $5 > 4096 { exit 1 } END { exit NR < 5 }' "$WORK/bounds.log" ;;
	*) ok "--max-samples-per-send 40: $(nlines "$WORK/bounds.log") requests, each of at most 40 samples" \
		awk '$2 == 204 && $3 > 40 { exit 1 } END { exit NR < 5 }' "$WORK/bounds.log" ;;
	esac
done

# ---- the memory queue full: the oldest dropped, logged (rate-limited) with a count ----------------------
i=0
rc=0
while [ $i -lt 60 ]; do
	printf '%s\n' "$L"
	sleep 0.02
	i=$((i + 1))
done | "$BIN/accel-remote-write" --url "http://127.0.0.1:$(free_port)/api/v1/write" --queue-max-bytes 4096 \
	--batch-send-deadline 10ms --drain-timeout 500ms -vv 2>"$WORK/full.err" || rc=$?
is "$rc" 0 "queue full, nothing listening: exit status 0"
ok "the drops are logged with a count" grep -q "the queue is full (--queue-max-bytes 4096): dropped the oldest" \
	"$WORK/full.err"
ok "... once, not at each push" test "$(grep -c 'the queue is full' "$WORK/full.err")" -eq 1
ok "... and counted" grep -Eq "dropped [1-9][0-9]*;" "$WORK/full.err"
done_testing
