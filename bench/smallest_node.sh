#!/bin/sh
# SPDX-License-Identifier: MIT
#
# smallest_node: the smallest node (vcpu_usage and memory_info once a second) against collectd, the way
# bench/README.md ("Once a second, against collectd") measures it: ROUNDS rounds of four programs run at the same
# time, so that the VM's drift hits them all:
#   - the design floor (bench/smallest_floor.c: two kept /proc files, one pread each and a 1,400-byte write a
#     second, woken by ppoll);
#   - this tree's accel-monitor, on a config of the two groups at "period": "1s";
#   - BASE_BIN_DIR's accel-monitor on the same config (optional: another build, for this / base);
#   - collectd (Debian's collectd-core): Interval 1, LoadPlugin cpu, memory and csv, its files in a temporary
#     directory.
# Each program runs from a fresh copy of its binary (a binary's file as the linker left it can cost more), for
# SECONDS after WARMUP seconds of start-up; its CPU is the sum of /proc/PID/task/*/schedstat's first field (every
# thread, on the CPU, ns) over that window. Before each round, when the script may (root), `sync` and
# `echo 1 > /proc/sys/vm/drop_caches`. Each round prints µs of CPU a second and the ratios; the end prints the
# medians. Exit 0 when measured (a missed target included), 1 when a program died, 2 when it could not start.
#
# Usage: bench/smallest_node.sh [BASE_BIN_DIR]
# Environment: ROUNDS [6], SECONDS_EACH [30], WARMUP [3], TARGET [0.15], BIN [bin], BUILD [build/release]
set -u

TOP=$(cd "$(dirname "$0")/.." && pwd)
BASE=${1:-}
ROUNDS=${ROUNDS:-6}
SECS=${SECONDS_EACH:-30}
WARMUP=${WARMUP:-3}
TARGET=${TARGET:-0.15}
BIN=${BIN:-$TOP/bin}
BUILD=${BUILD:-$TOP/build/release}
COLLECTD=${COLLECTD:-/usr/sbin/collectd}

for f in "$BIN/accel-monitor" "$BUILD/bench/smallest_floor" "$COLLECTD"; do
	if [ ! -x "$f" ]; then
		echo "smallest_node: no $f (make bench builds the first two and installs collectd-core)" >&2
		exit 2
	fi
done
if [ -n "$BASE" ] && [ ! -x "$BASE/accel-monitor" ]; then
	echo "smallest_node: no $BASE/accel-monitor" >&2
	exit 2
fi
others=$(pgrep -a -x accel-monitor; pgrep -a -x collectd)
if [ -n "$others" ]; then
	echo "smallest_node: other accel-monitor or collectd processes are running; they would wake beside these:" >&2
	echo "$others" >&2
	exit 2
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/smallest-node.XXXXXX") || exit 2
pids=""
trap 'kill $pids 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
trap 'exit 2' INT TERM
mkdir "$WORK/this" "$WORK/base" "$WORK/csv"
cp "$BIN/accel-monitor" "$WORK/this/" && cp "$BUILD/bench/smallest_floor" "$WORK/" || exit 2
[ -z "$BASE" ] || cp "$BASE/accel-monitor" "$WORK/base/" || exit 2
cat > "$WORK/monitor.json" <<'EOF'
{ "period": "1s", "system_metrics": [ { "type": "vcpu_usage" }, { "type": "memory_info" } ] }
EOF
cat > "$WORK/collectd.conf" <<EOF
Interval 1
FQDNLookup false
Hostname "bench"
BaseDir "$WORK"
PIDFile "$WORK/collectd.pid"
LoadPlugin cpu
LoadPlugin memory
LoadPlugin csv
<Plugin csv>
  DataDir "$WORK/csv"
</Plugin>
EOF

if [ -w /proc/sys/vm/drop_caches ]; then drop=1; else
	drop=0
	echo "smallest_node: cannot drop the page cache (not root): the figures carry whatever it holds" >&2
fi

# cpu_ns PID: the process's CPU time so far (every thread), ns; empty when it is gone.
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { if (NR) printf "%.0f\n", s }'
}

# median of the numbers on stdin, one a line
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
		else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

names="floor this"
[ -z "$BASE" ] || names="$names base"
names="$names collectd"
echo "== smallest_node: $ROUNDS rounds of ${SECS} s, µs of CPU a second (every thread); drop_caches: $drop"
printf '  %-6s' round
for n in $names; do printf ' %9s' "$n"; done
printf ' %11s' "this/cd"
[ -z "$BASE" ] || printf ' %11s %11s' "base/cd" "this/base"
echo
r=1
status=0
while [ "$r" -le "$ROUNDS" ]; do
	if [ "$drop" = 1 ]; then sync; echo 1 > /proc/sys/vm/drop_caches; fi
	pids=""
	for n in $names; do
		case $n in
		floor) "$WORK/smallest_floor" > /dev/null & ;;
		this) "$WORK/this/accel-monitor" -c "$WORK/monitor.json" > /dev/null 2> "$WORK/this.err" & ;;
		base) "$WORK/base/accel-monitor" -c "$WORK/monitor.json" > /dev/null 2> "$WORK/base.err" & ;;
		collectd) "$COLLECTD" -f -C "$WORK/collectd.conf" > "$WORK/collectd.log" 2>&1 & ;;
		esac
		pids="$pids $!"
	done
	sleep "$WARMUP"
	set -- $pids
	t0=""
	for p in "$@"; do t0="$t0 $(cpu_ns "$p")"; done
	sleep "$SECS"
	t1=""
	for p in "$@"; do t1="$t1 $(cpu_ns "$p")"; done
	kill $pids 2>/dev/null
	wait 2>/dev/null
	pids=""
	line=$(echo "$t0 | $t1" | awk -v s="$SECS" '{
		n = 0; for (i = 1; $i != "|"; i++) a[++n] = $i; k = 0
		for (i++; i <= NF; i++) b[++k] = $i
		if (k != n) { print "dead"; exit }
		for (i = 1; i <= n; i++) printf "%s%.0f", (i > 1 ? " " : ""), (b[i] - a[i]) / 1000 / s; print "" }')
	if [ "$line" = dead ] || [ "$(echo "$line" | wc -w)" -ne "$(echo "$names" | wc -w)" ]; then
		echo "smallest_node: round $r: a program died (see $WORK/*.err, collectd.log)" >&2
		cat "$WORK"/*.err "$WORK/collectd.log" >&2
		status=1
		break
	fi
	echo "$line" | awk -v base="${BASE:+1}" -v r="$r" '{
		printf "  %-6s", r; for (i = 1; i <= NF; i++) printf " %9s", $i
		cd = $NF; printf " %11.3f", $2 / cd
		if (base) printf " %11.3f %11.3f", $3 / cd, $2 / $3
		print "" }'
	echo "$line" >> "$WORK/rounds"
	r=$((r + 1))
done
[ -s "$WORK/rounds" ] || exit "${status:-1}"
last=$(echo "$names" | wc -w)
this_cd=$(awk -v l="$last" '{ print $2 / $l }' "$WORK/rounds" | median)
printf 'this / collectd: median %s over %s rounds   target <= %s   %s\n' "$this_cd" "$(wc -l < "$WORK/rounds")" \
	"$TARGET" "$(awk -v m="$this_cd" -v t="$TARGET" 'BEGIN { print (m <= t ? "PASS" : "FAIL") }')"
if [ -n "$BASE" ]; then
	printf 'base / collectd: median %s; this / base: median %s\n' \
		"$(awk -v l="$last" '{ print $3 / $l }' "$WORK/rounds" | median)" \
		"$(awk '{ print $2 / $3 }' "$WORK/rounds" | median)"
fi
printf 'floor / collectd: median %s (what the smallest node cannot go below)\n' \
	"$(awk -v l="$last" '{ print $1 / $l }' "$WORK/rounds" | median)"
exit "$status"
