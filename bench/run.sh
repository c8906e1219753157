#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make bench: the cost of accel-monitor's system groups, as a report.
# Builds bench/bench_cycle against the archives of the normal build, runs it
# on the live /proc and on the 96-CPU fixture (the CPU cost of one cycle
# next to the floor, target <= 2x), then runs bin/accel-monitor at a 100 ms
# period for a few seconds and reads its VmRSS and VmHWM (target <= 4 MB).
# Every figure is printed with PASS or FAIL; a missed target still exits 0.
# Exit 1 only when something could not be measured.
#
# Environment (defaults in brackets):
#   BUILD          where libmonitor.a and libcommon.a are [build/release]
#   BIN            where accel-monitor is [bin]
#   MAKE           make, which builds the benchmark program [make]
#   BENCH_SECONDS  wall time of each bench_cycle run [2]
#   RSS_SECONDS    how long accel-monitor runs before its RSS is read [3]
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build/release}
BIN=${BIN:-bin}
BENCH_SECONDS=${BENCH_SECONDS:-2}
RSS_SECONDS=${RSS_SECONDS:-3}
RSS_TARGET_KB=4096
FIXTURE=tests/fixtures/proc/96cpu/b

WORK=$(mktemp -d "${TMPDIR:-/tmp}/accel-bench.XXXXXX")
pid=""
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
errors=0

for f in "$BUILD/libmonitor.a" "$BUILD/libcommon.a" "$BIN/accel-monitor"; do
	if [ ! -e "$f" ]; then
		echo "bench: $f is missing; run make first (or set BUILD and BIN)" >&2
		exit 1
	fi
done

# bench_cycle, built by the Makefile with the project's flags and archives.
BENCH=$BUILD/bench/bench_cycle
${MAKE:-make} -s --no-print-directory BUILD="$BUILD" "$BUILD/bench/bench_cycle"

# Run bench_cycle with its arguments, keep its output as $WORK/$1.txt.
run_cycle() {
	name=$1
	shift
	if TMPDIR=$WORK "$BENCH" -s "$BENCH_SECONDS" "$@" >"$WORK/$name.txt" 2>&1; then
		sed 's/^/  /' "$WORK/$name.txt"
	else
		sed 's/^/  /' "$WORK/$name.txt"
		echo "  ERROR: bench_cycle failed"
		errors=$((errors + 1))
	fi
}

echo "== 1/3 one collection cycle vs. the floor, live /proc"
run_cycle live
echo
echo "== 2/3 one collection cycle vs. the floor, 96 CPUs ($FIXTURE)"
run_cycle fixture --procfs "$FIXTURE"
echo

echo "== 3/3 RSS of a running accel-monitor (vcpu_usage + memory_info every 100 ms, ${RSS_SECONDS} s)"
cat >"$WORK/bench.json" <<'EOF'
{
  "period": "100ms",
  "system_metrics": [
    { "type": "vcpu_usage", "period": "100ms" },
    { "type": "memory_info", "period": "100ms" }
  ]
}
EOF
"$BIN/accel-monitor" -c "$WORK/bench.json" >/dev/null 2>"$WORK/monitor.err" &
pid=$!
sleep "$RSS_SECONDS"
rss_line=""
if kill -0 "$pid" 2>/dev/null && cp "/proc/$pid/status" "$WORK/status" 2>/dev/null &&
	cp "/proc/$pid/stat" "$WORK/stat" 2>/dev/null; then
	cp "/proc/$pid/smaps" "$WORK/smaps" 2>/dev/null || : >"$WORK/smaps"
	# On-CPU time of every thread in ns (schedstat), finer than stat's ticks; empty without schedstats.
	cpu_ns=$(cat /proc/"$pid"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { if (NR) printf "%.0f", s }')
	kill -TERM "$pid"
	if wait "$pid"; then rc=0; else rc=$?; fi
	pid=""
	kb() { awk -v k="$1:" '$1 == k { print $2 }' "$WORK/status"; }
	rss=$(kb VmRSS)
	hwm=$(kb VmHWM)
	verdict() { if [ "$1" -le "$RSS_TARGET_KB" ]; then echo PASS; else echo FAIL; fi; }
	if [ -n "$cpu_ns" ]; then
		cpu_ms=$(awk -v n="$cpu_ns" 'BEGIN { printf "%.1f", n / 1e6 }')
	else
		# utime and stime are fields 14 and 15; drop "pid (comm) " first, comm may hold spaces.
		cpu_ms=$(sed 's/^.*) //' "$WORK/stat" |
			awk -v hz="$(getconf CLK_TCK)" '{ print ($12 + $13) * 1000 / hz }')
	fi
	rss_row() { printf '  %-34s %8s kB   target <= %s kB   %s\n' "$1" "$2" "$RSS_TARGET_KB" "$(verdict "$2")"; }
	rss_row "VmRSS (resident now)" "$rss"
	rss_row "VmHWM (peak resident)" "$hwm"
	printf '  %-34s %8s kB anon, %s kB file-backed (shared libraries), %s kB shmem\n' "of which" \
		"$(kb RssAnon)" "$(kb RssFile)" "$(kb RssShmem)"
	# Where the resident pages are: the five largest mappings, by file.
	top=$(awk '/^[0-9a-f]+-[0-9a-f]+ / { n = NF >= 6 ? $6 : "[anon]"; sub(".*/", "", n) }
		$1 == "Rss:" { rss[n] += $2 }
		END { for (n in rss) if (rss[n]) print rss[n], n }' "$WORK/smaps" | sort -rn | head -5 |
		awk '{ printf "%s%s %s kB", sep, $2, $1; sep = ", " }')
	[ -n "$top" ] && printf '  %-34s %s\n' "largest" "$top"
	printf '  %-34s %8s threads; %s ms on CPU in %s s, start-up included\n' "process" \
		"$(kb Threads)" "$cpu_ms" "$RSS_SECONDS"
	if [ "$rc" -ne 0 ]; then
		echo "  ERROR: accel-monitor exited $rc on SIGTERM"
		sed 's/^/  | /' "$WORK/monitor.err" | head -20
		errors=$((errors + 1))
	fi
	rss_line=$(printf '%-36s %8s kB  <= %s kB  %s' "VmRSS of accel-monitor" "$rss" "$RSS_TARGET_KB" \
		"$(verdict "$rss")")
else
	echo "  ERROR: accel-monitor was not running after ${RSS_SECONDS} s"
	sed 's/^/  | /' "$WORK/monitor.err" | head -20
	pid=""
	errors=$((errors + 1))
fi
echo

# One line per target.
ratio_line() {
	awk -v what="$2" '$1 == "ratio" { printf "%-36s %8s     <= %-7s %s\n", what, $3, $7, $8 }' \
		"$WORK/$1.txt" 2>/dev/null
}
echo "== summary"
ratio_line live "cycle/floor, live /proc" | sed 's/^/  /'
ratio_line fixture "cycle/floor, 96-CPU fixture" | sed 's/^/  /'
[ -n "$rss_line" ] && echo "  $rss_line"
if [ "$errors" -ne 0 ]; then
	echo "bench: $errors measurement(s) failed" >&2
	exit 1
fi
exit 0
