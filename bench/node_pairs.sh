#!/bin/sh
# SPDX-License-Identifier: MIT
#
# node_pairs: this tree's accel-monitor against another build's, on bench/node_bench.py's node, run side by side
# (one node_bench.py each, at the same time) in PAIRS pairs, the way bench/README.md ("The whole node") says
# comparisons on a shared VM are made, with its cautions built in:
#   - both sides run from fresh copies of their binaries in a temporary directory (a binary's file as the linker
#     left it, with its page-cache history, can cost three times a fresh copy of it);
#   - before each pair, when the script may (root), `sync` and `echo 1 > /proc/sys/vm/drop_caches` (a page cache
#     full of a day's fixture trees makes every figure three to four times larger);
#   - it refuses to start while another accel-monitor runs (an idle one left behind by an earlier run wakes
#     every second beside both sides);
#   - the side started first alternates from pair to pair;
#   - CONTROL pairs run this tree against a second copy of itself: the spread of their ratios is what the VM
#     alone does to a pair, the yardstick for the others.
# Each pair prints both sides' total CPU per second, container_usage and the producer's thread outside the
# collectors, and the ratio this / base; the end prints the medians and ranges. Exit 0 when measured (a missed
# target included), 1 when a side failed or a side's stream failed node_bench's checks (bench/sinks_same.sh,
# tests/helpers/check_report.py), 2 when it could not start.
#
# Usage: bench/node_pairs.sh BASE_BIN_DIR
#   BASE_BIN_DIR: the other build's bin/ (accel-monitor and the sinks; `git worktree add`, `make all`).
# Environment: PAIRS [6], CONTROL [2], BIN [bin], NODE_SECONDS [20], NODE_PODRES [0], TARGET [0.5], TMPDIR;
# the rest of node_bench.py's (NODE_GPUS, NODE_CONTAINERS, ...) passes through to both sides.
set -u

TOP=$(cd "$(dirname "$0")/.." && pwd)
BASE=${1:-}
PAIRS=${PAIRS:-6}
CONTROL=${CONTROL:-2}
BIN=${BIN:-$TOP/bin}
TARGET=${TARGET:-0.5}
export NODE_SECONDS="${NODE_SECONDS:-20}" NODE_PODRES="${NODE_PODRES:-0}"

if [ -z "$BASE" ] || [ ! -x "$BASE/accel-monitor" ]; then
	echo "usage: $0 BASE_BIN_DIR (a directory with the other build's accel-monitor and sinks)" >&2
	exit 2
fi
if [ ! -x "$BIN/accel-monitor" ]; then
	echo "node_pairs: no $BIN/accel-monitor: run make all first" >&2
	exit 2
fi
if others=$(pgrep -a -x accel-monitor); then
	echo "node_pairs: other accel-monitor processes are running; they would wake beside both sides:" >&2
	echo "$others" >&2
	exit 2
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/node-pairs.XXXXXX") || exit 2
trap 'rm -rf "$WORK"' EXIT
pa="" pb=""
# Stopped: each running node_bench.py stops its producer and fakes on SIGTERM.
trap 'kill $pa $pb 2>/dev/null; wait; exit 2' INT TERM
mkdir "$WORK/this" "$WORK/base" "$WORK/self"
cp "$BIN"/accel-* "$WORK/this/" && cp "$BASE"/accel-* "$WORK/base/" && cp "$BIN"/accel-* "$WORK/self/" || exit 2

if [ -w /proc/sys/vm/drop_caches ]; then
	drop=1
else
	drop=0
	echo "node_pairs: cannot drop the page cache (not root): the figures carry whatever it holds" >&2
fi

# figure FILE WHAT: a node_bench.py figure in ms/s: total, container_usage, outside (the producer's thread outside
# the collectors) or nvidia (the NVIDIA groups and the other threads: the fake NVML's cost model, the same work on
# both sides); "" when missing.
figure() {
	awk -v w="$2" '
		w == "total" && /total: accel-monitor.s CPU per second/ { print $6; exit }
		w == "container_usage" && $1 == "containers" && $2 == "container_usage" { print $3; exit }
		w == "outside" && /producer.s thread outside the collectors/ { print $6; exit }
		w == "nvidia" && ($1 == "nvidia" || /^  other threads/) && $NF ~ /%$/ { v += $(NF - 1); n++ }
		END { if (w == "nvidia" && n) printf "%.3f\n", v }' "$1"
}

# run_pair N KIND A_DIR B_DIR: one pair, A is "this tree"; prints its line, appends "ratio" to $WORK/KIND.
run_pair() {
	n=$1 kind=$2 a=$3 b=$4 oa="$WORK/$2_$1_a.txt" ob="$WORK/$2_$1_b.txt"
	if [ "$drop" = 1 ]; then
		sync
		echo 1 > /proc/sys/vm/drop_caches
	fi
	if [ $((n % 2)) = 1 ]; then
		BIN=$a "$TOP/bench/node_bench.py" > "$oa" 2>&1 & pa=$!
		BIN=$b "$TOP/bench/node_bench.py" > "$ob" 2>&1 & pb=$!
	else
		BIN=$b "$TOP/bench/node_bench.py" > "$ob" 2>&1 & pb=$!
		BIN=$a "$TOP/bench/node_bench.py" > "$oa" 2>&1 & pa=$!
	fi
	wait $pa
	ra=$?
	wait $pb
	rb=$?
	ta=$(figure "$oa" total) tb=$(figure "$ob" total)
	if [ $ra != 0 ] || [ $rb != 0 ] || [ -z "$ta" ] || [ -z "$tb" ]; then
		echo "node_pairs: $kind pair $n failed (exit $ra and $rb); its output:" >&2
		tail -5 "$oa" "$ob" >&2
		return 1
	fi
	for o in "$oa" "$ob"; do
		if ! grep -q 'sinks_same.sh): PASS' "$o" || ! grep -q 'check_report.py): PASS' "$o"; then
			echo "node_pairs: $kind pair $n: a stream failed sinks_same.sh or check_report.py ($o):" >&2
			grep -E 'sinks_same|check_report' "$o" >&2
			rc=1
		fi
	done
	ca=$(figure "$oa" container_usage) cb=$(figure "$ob" container_usage)
	xa=$(figure "$oa" outside) xb=$(figure "$ob" outside)
	na=$(figure "$oa" nvidia) nb=$(figure "$ob" nvidia)
	r=$(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.3f", a / b }')
	echo "$r" >> "$WORK/$kind"
	awk -v a="$ta" -v b="$tb" -v x="$na" -v y="$nb" 'BEGIN { printf "%.3f\n", (a - x) / (b - y) }' >> "$WORK/$kind-nv"
	printf '  %-7s %2d  %6.2f / %6.2f  %s   %6.2f / %6.2f   %5.2f / %5.2f   %5.2f / %5.2f\n' \
		"$kind" "$n" "$ta" "$tb" "$r" "$ca" "$cb" "$xa" "$xb" "$na" "$nb"
}

# summary KIND LABEL: the median and range of KIND's ratios.
summary() {
	sort -n "$WORK/$1" | awk -v k="$2" -v t="$TARGET" '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%s", k ": median ratio " sprintf("%.3f", m) " (" v[1] " to " v[NR] ", " NR " pairs)"
		if (k == "pairs") printf "   target <= %s   %s", t, m <= t ? "PASS" : "FAIL"
		printf "\n" }'
}

echo "== node_pairs: $BIN against $BASE, NODE_SECONDS=$NODE_SECONDS NODE_PODRES=$NODE_PODRES, drop_caches: $drop"
echo "  ms/s, this / other: total, ratio, container_usage, outside the collectors, NVIDIA groups + other threads"
: > "$WORK/pair"
: > "$WORK/control"
: > "$WORK/pair-nv"
: > "$WORK/control-nv"
rc=0
i=1
while [ $i -le "$PAIRS" ]; do
	run_pair $i pair "$WORK/this" "$WORK/base" || rc=1
	i=$((i + 1))
done
i=1
while [ $i -le "$CONTROL" ]; do
	run_pair $i control "$WORK/this" "$WORK/self" || rc=1
	i=$((i + 1))
done
if [ -s "$WORK/pair" ]; then
	summary pair pairs
	summary pair-nv "pairs without the NVIDIA part"
fi
if [ -s "$WORK/control" ]; then
	summary control control
	summary control-nv "control without the NVIDIA part"
fi
exit $rc
