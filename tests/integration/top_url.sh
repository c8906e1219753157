#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-top --url: accel-prom serving tests/fixtures/top/runtimes.jsonl on
# 127.0.0.1, read back by accel-top --once (the same devices, processes and
# values as from the stream, less what accel-prom does not serve); pods,
# models and MIG instances from pods-mig.jsonl's labels; the
# interactive view polling it under tmux; a 404, a closed port, a bad scheme
# and --url with -- COMMAND.
. "$(dirname "$0")/lib.sh"

TOP=$BIN/accel-top
TF=$FIX/top
need curl command -v curl
need tmux command -v tmux

PORT=$(free_port)
spawn PROM sh -c "exec $BIN/accel-prom --listen-address 127.0.0.1:$PORT <'$TF/runtimes.jsonl' 2>'$WORK/prom.err'"
wait_for $((10 * SLOW)) sh -c "curl -sf http://127.0.0.1:$PORT/metrics | grep -q accelerator_info" || true
URL=http://127.0.0.1:$PORT/metrics

rc=0
LC_ALL=C.UTF-8 "$TOP" --once --width 100 --url "$URL" >"$WORK/url.txt" 2>"$WORK/url.err" || rc=$?
is "$rc" 0 "--once --url: exits 0"
LC_ALL=C.UTF-8 "$TOP" --once --width 100 <"$TF/runtimes.jsonl" >"$WORK/stream.txt"
# The device panels are the stream's, but for the errors counted since start (0 at the first poll).
is "$(grep -A1 '^nvidia' "$WORK/url.txt" | sed 's/err [0-9]*//')" \
	"$(grep -A1 '^nvidia' "$WORK/stream.txt" | sed 's/err [0-9]*//')" "--url: the device panels match the stream's"
is "$(grep -c '^ *[0-9][0-9]* ' "$WORK/url.txt")" 42 "--url: 42 process rows"
is "$(awk '$1 == 4343 { print $2, $3, $4, $5 }' "$WORK/url.txt")" "python3 65% 1.0G 512M" \
	"--url: a runtime's tag, CPU, RSS and GPU memory"
grep -q 'p4d.24xlarge  i-0123456789abcdef0' "$WORK/url.txt" && r=0 || r=1
is "$r" 0 "--url: the instance from the labels"

# pods, endpoint models and MIG instances through accel-prom's labels
PORT2=$(free_port)
spawn PROM2 sh -c "exec $BIN/accel-prom --listen-address 127.0.0.1:$PORT2 <'$TF/pods-mig.jsonl' 2>'$WORK/prom2.err'"
wait_for $((10 * SLOW)) sh -c "curl -sf http://127.0.0.1:$PORT2/metrics | grep -q 'model=\"resnet50\"'" || true
rc=0
LC_ALL=C.UTF-8 "$TOP" --once --width 300 --url "http://127.0.0.1:$PORT2/metrics" >"$WORK/pods.txt" 2>"$WORK/pods.err" || rc=$?
is "$rc" 0 "--url pods-mig: exits 0"
is "$(grep -c '^  MIG 0/[0-9]*/0  [1-7]g' "$WORK/pods.txt")" 4 "--url: the MIG instances as lines under their GPU"
is "$(awk '$1 == 5101 { print $3 }' "$WORK/pods.txt")" "triton-0/triton" "--url: pod/container from the labels"
is "$(grep -Ec '^ +(resnet50:[12]|bert:1|mnist:1\.0|meta-llama/Llama-3\.1-8B) ' "$WORK/pods.txt")" 5 \
	"--url: the endpoint runtimes' model rows"

# the interactive view polls
T="tmux -L accel-top-url-$$ -f /dev/null"
trap '$T kill-server 2>/dev/null || true; cleanup' EXIT
$T new-session -d -x 100 -y 30 "LC_ALL=C.UTF-8 $TOP --url $URL --interval 500ms --stale 1500ms 2>$WORK/tty.err; echo \$? >$WORK/tty.status; sleep 600"
if wait_for $((5 * SLOW)) sh -c "$T capture-pane -p | grep -q 'nvidia 2  NVIDIA A100'"; then
	_result 0 "--url interactive: the devices appear"
else
	_result 1 "--url interactive: the devices appear"
	$T capture-pane -p | sed 's/^/#   /' >&2
fi
sleep 2.5
$T capture-pane -p | grep -q 'STALE' && r=1 || r=0
is "$r" 0 "--url interactive: polled every 500ms: not STALE after 2.5 s with --stale 1500ms"
$T send-keys q
wait_for $((5 * SLOW)) test -s "$WORK/tty.status" || true
is "$(cat "$WORK/tty.status" 2>/dev/null)" 0 "--url interactive: q exits 0"

rc=0
"$TOP" --once --url "http://127.0.0.1:$PORT/nothere" >/dev/null 2>"$WORK/404.err" || rc=$?
is "$rc" 1 "a 404: exit 1"
grep -q 'HTTP 404' "$WORK/404.err" && r=0 || r=1
is "$r" 0 "a 404: says so"
CLOSED=$(free_port)
rc=0
"$TOP" --once --url "http://127.0.0.1:$CLOSED/metrics" >/dev/null 2>"$WORK/closed.err" || rc=$?
is "$rc" 1 "a closed port: exit 1"
rc=0
"$TOP" --once --url "ftp://x/metrics" >/dev/null 2>&1 || rc=$?
is "$rc" 2 "ftp://: usage error"
rc=0
"$TOP" --once --url "$URL" -- cat /dev/null >/dev/null 2>&1 || rc=$?
is "$rc" 2 "--url with -- COMMAND: usage error"

done_testing
