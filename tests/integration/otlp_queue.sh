#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-otlp's durability. In memory: the receiver goes down while reports
# keep coming and comes back on the same port; nothing is lost (every
# report's point arrives once). With --queue-dir: reports go through while
# the receiver is up; it stops; more reports are queued on disk; the
# exporter is killed with SIGKILL; a new one on the same --queue-dir starts
# while the receiver is still down, then it comes back: every report's point
# arrives (counted: 50 distinct timestamps, in order per request), and
# accel_otlp_queue_requests said the queue held requests meanwhile. A full
# queue drops its oldest requests with one message. A second
# exporter on a directory in use is refused; a queue directory that cannot
# be written says so.
. "$(dirname "$0")/lib.sh"
. "$HELP/otlp/test_lib.sh"
otlp_need
Q=$WORK/queue

# start_exporter N [OPTION]...: accel-otlp number N reading the FIFO in.N (kept open on fd 3).
start_exporter() {
	n=$1
	shift
	mkfifo "$WORK/in.$n"
	exec 3<>"$WORK/in.$n"
	"$BIN/accel-otlp" --endpoint "http://127.0.0.1:$PORT" --batch-send-deadline 100ms --max-points-per-send 300 \
		--min-backoff 50ms --max-backoff 300ms -v2 "$@" <"$WORK/in.$n" 2>"$WORK/ox.$n.err" 3>&- &
	OX=$!
	_pids="$_pids $OX"
}
feed() { otlp_gen "$1" "$2" >&3; }
# recv_up NAME: the receiver on $PORT again (a fresh directory each time).
recv_up() { otlp_recv "$1" --port "$PORT"; }
# taken: the power series' distinct timestamps over every receiver's directory
taken() { for d in "$WORK"/up*/; do pts "$d" stamps $S_POWER; done | sort -u | wc -l | tr -d ' '; }
taken_ge() { [ "$(taken)" -ge "$1" ]; }
# recv_has N: the current receiver took N points of the power series
recv_has() { [ "$(pts "$RDIR" stamps $S_POWER | wc -l)" -eq "$1" ]; }
dups() { for d in "$WORK"/up*/; do pts "$d" stamps $S_POWER; done | sort | uniq -d | wc -l | tr -d ' '; }

# ---- in memory: down, then up -----------------------------------------------------------------------
PORT=$(free_port)
recv_up up1
start_exporter 1
feed 1 10
ok "in memory: reports 1-10 arrive" wait_for "$T" recv_has 10
otlp_stop
feed 11 30
ok "the receiver down: the exporter retries" wait_for "$T" grep -q 'retrying in' "$WORK/ox.1.err"
sleep 1
recv_up up2
ok "the receiver back on its port: the queued requests arrive" wait_for "$T" recv_has 20
exec 3>&-
wait "$OX" || true
is "$(taken)" 30 "every report 1-30 arrived"
is "$(dups)" 0 "... once"
ok "accel_otlp_queue_requests said requests were waiting while the receiver was down" \
	test "$(pts "$WORK/up2" max accel_otlp_queue_requests)" -ge 1
otlp_stop
rm -rf "$WORK"/up1 "$WORK"/up2

# ---- --queue-dir, SIGKILL, restart --------------------------------------------------------------------
PORT=$(free_port)
recv_up up3
start_exporter 2 --queue-dir "$Q"
feed 1 10
ok "with --queue-dir: reports 1-10 arrive" wait_for "$T" recv_has 10
otlp_stop
feed 11 40
ok "the receiver down: reports 11-40 queued on disk" wait_for "$T" grep -q 'retrying in' "$WORK/ox.2.err"
sleep 1
kill -9 "$OX"
wait "$OX" 2>/dev/null || true
exec 3>&-
ok "segments on disk after SIGKILL" sh -c "ls '$Q'/*.seg >/dev/null"

start_exporter 3 --queue-dir "$Q"
ok "the restarted exporter finds the queued requests" wait_for "$T" grep -q 'to send again' "$WORK/ox.3.err"
rc=0
"$BIN/accel-otlp" --endpoint "http://127.0.0.1:$PORT" --queue-dir "$Q" </dev/null 2>"$WORK/second.err" 3>&- || rc=$?
feed 41 50
sleep 1
recv_up up4
ok "the receiver back: every report 1-50 arrives" wait_for "$T" taken_ge 50
exec 3>&-
wait "$OX" || true
is "$(taken)" 50 "50 reports, 50 points of the series: nothing lost"
is "$(dups)" 0 "... none twice (nothing was in flight at the SIGKILL)"
ok "no request refused" sh -c "! grep -q 'refused a request' '$WORK'/ox.*.err"
ok "the receiver found nothing wrong" no_proto_errors "$RDIR"
is "$rc" 3 "a second exporter on the queue directory in use: exit 3"
ok "... saying it is in use" grep -q "queue-dir $Q: in use by another process" "$WORK/second.err"

# ---- a full queue ---------------------------------------------------------------------------------------
DEAD=$(free_port)
otlp_gen 1 5 | "$BIN/accel-otlp" --endpoint "http://127.0.0.1:$DEAD" --queue-max-bytes 4096 --max-points-per-send 16 \
	--drain-timeout 1s 2>"$WORK/full.err" || true
ok "a full queue drops the oldest requests and says so, with the points' count" \
	grep -q 'otlp: the queue is full (--queue-max-bytes 4096): dropped the oldest [0-9]* points ([0-9]* dropped since the start)' "$WORK/full.err"
is "$(grep -c 'the queue is full' "$WORK/full.err")" 1 "... once, not at each request"

# ---- a queue directory that cannot be written --------------------------------------------------------
touch "$WORK/file"
rc=0
"$BIN/accel-otlp" --queue-dir "$WORK/file/q" </dev/null 2>"$WORK/bad.err" || rc=$?
is "$rc" 3 "--queue-dir under a regular file: exit 3"
ok "... saying why" grep -q "queue-dir $WORK/file/q: cannot create it" "$WORK/bad.err"
otlp_stop
done_testing
