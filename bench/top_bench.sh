#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-top's costs. First bench/top_bench.c: the frame's layout with 8 GPUs
# x 7 MIG devices and 500 processes (<= 5 ms per frame). Then
# accel-top in a real terminal (tmux, 300x80), the whole process measured
# from /proc/PID/schedstat (nanoseconds on the CPU; accel-top is one thread):
#
#   idle   CPU per second while no report arrives, over IDLE_SECONDS
#          (<= 1 ms per second over 10 s; the view still redraws
#          the report's age once a second);
#   busy   CPU per report while REPORTS reports of 8 GPUs x 7 MIG devices and
#          500 processes (bench/top_bench.c --emit) arrive 10 a second:
#          parsing, the model, the layout and curses' drawing together.
#
# Prints each figure with PASS or FAIL against its target; exits 0 when it
# measured (a missed target is a report), 1 when it could not.
# Environment: BUILD [build/release], BIN [bin], IDLE_SECONDS [10], REPORTS [50].
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build/release}
BIN=${BIN:-bin}
IDLE=${IDLE_SECONDS:-10}
REPORTS=${REPORTS:-50}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/accel-top-bench.XXXXXX")
T="tmux -L accel-top-bench-$$ -f /dev/null"
trap '$T kill-server 2>/dev/null || true; rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM

command -v tmux >/dev/null || { echo "top_bench: tmux is missing (scripts/install-deps.sh test)" >&2; exit 1; }
${MAKE:-make} -s --no-print-directory BUILD="$BUILD" "$BUILD/bench/top_bench" "$BIN/accel-top"
"$BUILD/bench/top_bench"
"$BUILD/bench/top_bench" --emit $((REPORTS + 1)) >"$WORK/reports.jsonl"
echo "one report: $(head -1 "$WORK/reports.jsonl" | wc -c | tr -d ' ') bytes"
head -1 "$WORK/reports.jsonl" >"$WORK/first.jsonl"
tail -n +2 "$WORK/reports.jsonl" >"$WORK/rest.jsonl"
mkfifo "$WORK/fifo"
$T new-session -d -x 300 -y 80 "sh -c 'echo \$\$ >$WORK/pid; LC_ALL=C.UTF-8 exec $BIN/accel-top --stale 1h <$WORK/fifo 2>$WORK/err'; sleep 600"
exec 3>"$WORK/fifo"
cat "$WORK/first.jsonl" >&3
i=0
until $T capture-pane -p | grep -q 'Devices: 8'; do
	i=$((i + 1))
	[ $i -gt 100 ] && { echo "top_bench: the view did not come up" >&2; $T capture-pane -p >&2; exit 1; }
	sleep 0.1
done
PID=$(cat "$WORK/pid")
oncpu() { cut -d' ' -f1 "/proc/$PID/schedstat"; }

sleep 1
a=$(oncpu)
sleep "$IDLE"
b=$(oncpu)
awk -v a="$a" -v b="$b" -v s="$IDLE" 'BEGIN {
	r = (b - a) / 1e6 / s
	printf "idle: %.3f ms CPU per second over %d s  %s (target <= 1 ms/s)\n", r, s, r <= 1 ? "PASS" : "FAIL" }'

a=$(oncpu)
n=0
while IFS= read -r line; do
	printf '%s\n' "$line" >&3
	n=$((n + 1))
	sleep 0.1
done <"$WORK/rest.jsonl"
sleep 0.5
b=$(oncpu)
awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN {
	r = (b - a) / 1e6 / n
	printf "busy: %.3f ms CPU per report (%d reports of 8 GPUs x 7 MIG, 500 processes: parse, model, layout, draw)\n", r, n }'
exec 3>&-
