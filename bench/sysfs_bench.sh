#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The sysfs device collectors' cost, as a report: per-cycle CPU time of
# coll_amdgpu.c, coll_neuron.c, coll_ncs2.c and coll_hwmon.c (every device
# group) on the fixture trees, next to the bare cost of the same file system
# operations (bench/sysfs_bench.c records them from one cycle and replays
# them). Target: cycle <= 2 x floor. A missed target still exits 0; exit 1
# only when something could not be built or measured.
#
# Environment (defaults in brackets):
#   BUILD          where libmonitor.a and libcommon.a are [build/release]
#   MAKE           make, which builds the benchmark program [make]
#   SYSFS, PROCFS  the trees read [tests/fixtures/sysfs/host, tests/fixtures/proc-devices]
#   BENCH_SECONDS  CPU time of each kind's measurement [2]
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build/release}
SYSFS=${SYSFS:-tests/fixtures/sysfs/host}
PROCFS=${PROCFS:-tests/fixtures/proc-devices}
BENCH_SECONDS=${BENCH_SECONDS:-2}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/accel-sysfs-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM

for f in "$BUILD/libmonitor.a" "$BUILD/libcommon.a"; do
	if [ ! -e "$f" ]; then
		echo "sysfs_bench: $f is missing; run make first (or set BUILD)" >&2
		exit 1
	fi
done

BENCH=$BUILD/bench/sysfs_bench
${MAKE:-make} -s --no-print-directory BUILD="$BUILD" "$BUILD/bench/sysfs_bench"

echo "== sysfs device collectors: amdgpu, neuron, ncs2, hwmon on $SYSFS (bench/sysfs_bench.c)"
if "$BENCH" --sysfs "$SYSFS" --procfs "$PROCFS" -s "$BENCH_SECONDS" >"$WORK/out.txt" 2>&1; then
	sed 's/^/  /' "$WORK/out.txt"
else
	sed 's/^/  /' "$WORK/out.txt"
	echo "  ERROR: sysfs_bench failed"
	exit 1
fi
