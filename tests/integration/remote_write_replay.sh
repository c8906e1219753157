#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A capture without timestamps replayed at once (three neuron-monitor 2.x
# reports, 5 requests completed each, written into the pipe in one go, as
# `cat capture.jsonl |` does): each report is stamped when it is read, and
# the three are read within a millisecond or two. Every report's samples
# reach the receiver (tests/helpers/rw_receiver.py), each at a later
# timestamp than the one before: the counter goes 5, 10, 15 and its last
# value is 15, and nothing is skipped as "not newer than the last sample".
# Then, with --queue-dir, the same; then 30 reports (read within a few
# milliseconds, so some would share one): 30 values, the last one 150.
# Last, a --queue-dir whose head is a FIFO: a configuration error at
# once, saying so, not a start blocked forever.
. "$(dirname "$0")/lib.sh"

need "$BIN/accel-remote-write is built" test -x "$BIN/accel-remote-write"
need "python3-snappy (Debian package)" $PY -c 'import snappy'
T=$((30 * SLOW))
R=$WORK/recv
mkdir -p "$R"
RP=$(free_port)
$PY "$HELP/rw_receiver.py" --port "$RP" --dir "$R" >"$WORK/recv.out" 2>"$WORK/recv.err" &
_pids="$_pids $!"
ok "receiver up" wait_for "$T" grep -q ready "$WORK/recv.out"

# The fixture's first report with 5 requests completed: the counter execution_status_total{status_type="completed"}.
sed -n 1p "$FIX/streams/neuron-monitor-2x.jsonl" | sed 's/"completed":118,/"completed":5,/' >"$WORK/one"
ok "the report counts 5 completed" grep -q '"completed":5,' "$WORK/one"
for i in $(seq 30); do cat "$WORK/one"; done >"$WORK/capture30.jsonl"
head -3 "$WORK/capture30.jsonl" >"$WORK/capture3.jsonl"

# Print "values timestamps-strictly-increasing" of the counter in accepted.jsonl from line $2 on.
series() {
	$PY - "$R/accepted.jsonl" "$1" <<'PYEOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]).readlines()[int(sys.argv[2]):]]
pts = [(x["t"], x["v"]) for x in rows if "__name__=execution_status_total," in x["s"]
       and "runtime_tag=my_app_1" in x["s"] and "status_type=completed," in x["s"]]
ts = [t for t, _ in pts]
print(",".join("%g" % v for _, v in pts), int(all(a < b for a, b in zip(ts, ts[1:]))))
PYEOF
}

for run in "3 memory" "3 queue" "30 memory"; do
	# shellcheck disable=SC2086
	set -- $run
	n=$1
	q=
	what="$n reports in memory"
	if [ "$2" = queue ]; then
		q="--queue-dir $WORK/queue"
		what="$n reports with --queue-dir"
	fi
	want=$(seq -s, 5 5 $((5 * n)))
	n0=0
	[ ! -f "$R/accepted.jsonl" ] || n0=$(nlines "$R/accepted.jsonl")
	rc=0
	# shellcheck disable=SC2086
	"$BIN/accel-remote-write" --url "http://127.0.0.1:$RP/api/v1/write" --no-metadata --drain-timeout 10s -vv \
		$q <"$WORK/capture$n.jsonl" 2>"$WORK/rw.err" || rc=$?
	is "$rc" 0 "$what: exit status 0"
	series "$n0" >"$WORK/series"
	read -r values increasing <"$WORK/series"
	is "$values" "$want" "$what: the counter's $n values arrive, the last one $((5 * n))"
	is "$increasing" 1 "$what: ... at strictly increasing timestamps"
	ok "$what: no sample skipped as not newer" sh -c "! grep -Eq '[1-9][0-9]* samples not newer' '$WORK/rw.err'"
	grep -E 'not newer' "$WORK/rw.err" | tail -1 | sed 's/^/#   /' >&2 || true
done
ok "no protocol error at the receiver" test ! -s "$R/errors.log"

mkdir "$WORK/fifoq"
mkfifo "$WORK/fifoq/head"
rc=0
timeout 20 "$BIN/accel-remote-write" --url "http://127.0.0.1:$RP/api/v1/write" --queue-dir "$WORK/fifoq" \
	</dev/null 2>"$WORK/fifo.err" || rc=$?
is "$rc" 3 "--queue-dir with a FIFO named head: exit 3 (configuration), not a hang"
ok "... saying what head is" grep -q "head is a FIFO, not a regular file" "$WORK/fifo.err"
done_testing
