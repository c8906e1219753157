#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-csv throughput: rows per second and MB/s of CSV written, next to the
# floor, bare jansson parsing of the same stream (bench/csv_bench.c says how
# each is measured). Target: accel-csv reaches at least 0.7x the floor's
# throughput (floor CPU time / accel-csv CPU time >= 0.7) in the default
# long format. Every case prints its figures with PASS or FAIL; a missed
# target still exits 0 (it is a report). Exit 1 only when something could
# not be measured.
#
# Environment (defaults in brackets):
#   BUILD           where libcommon.a is [build/release]
#   BIN             where accel-csv is [bin]
#   MAKE            make, which builds the benchmark program [make]
#   CSV_BENCH_MB    size of each generated input stream, MB [20]
#   CSV_BENCH_ROUNDS rounds of each figure (median) [3]
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build/release}
BIN=${BIN:-bin}
MB=${CSV_BENCH_MB:-20}
ROUNDS=${CSV_BENCH_ROUNDS:-3}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/accel-csv-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM

for f in "$BUILD/libcommon.a" "$BIN/accel-csv"; do
	if [ ! -e "$f" ]; then
		echo "csv_bench: $f is missing; run make first (or set BUILD and BIN)" >&2
		exit 1
	fi
done

# The helper, built like bench_cycle: same flags, the normal build's libcommon.a.
HELPER=$BUILD/bench/csv_bench
${MAKE:-make} -s --no-print-directory BUILD="$BUILD" "$BUILD/bench/csv_bench"

# stream NAME FIXTURE: repeat FIXTURE to about $MB MB in $WORK/NAME.jsonl.
stream() {
	size=$(wc -c <"$2")
	n=$((MB * 1000000 / size + 1))
	i=0
	while [ $i -lt $n ]; do
		cat "$2"
		i=$((i + 1))
	done >"$WORK/$1.jsonl"
}
stream nm2x tests/fixtures/streams/neuron-monitor-2x.jsonl
stream nm2020 tests/fixtures/streams/neuron-monitor-2020.jsonl
stream accel tests/fixtures/csv/accel-monitor.jsonl

errors=0
fails=0
# run TITLE STREAM ARGS...
run() {
	title=$1
	input=$2
	shift 2
	echo "== $title"
	if "$HELPER" -r "$ROUNDS" -o "$WORK" "$WORK/$input.jsonl" "$BIN/accel-csv" --host bench "$@" >"$WORK/out" 2>&1; then
		sed 's/^/  /' "$WORK/out"
		grep -q FAIL "$WORK/out" && fails=$((fails + 1))
	else
		sed 's/^/  /' "$WORK/out"
		echo "  ERROR: could not measure"
		errors=$((errors + 1))
	fi
	echo
}

run "neuron-monitor 2.x, long (default)" nm2x
run "neuron-monitor 2020, long" nm2020
run "accel-monitor (runtimes, devices, system), long" accel
run "neuron-monitor 2.x, wide (for reference)" nm2x --format wide

echo "csv_bench: $fails case(s) below the 0.7 target (the wide case is for reference only)"
[ $errors -eq 0 ]
