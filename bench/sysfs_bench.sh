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
#   CC, PKG_CONFIG compiler and pkg-config [cc, pkg-config]
#   SYSFS, PROCFS  the trees read [tests/fixtures/sysfs/host, tests/fixtures/proc-devices]
#   BENCH_SECONDS  CPU time of each kind's measurement [2]
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build/release}
CC=${CC:-cc}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
SYSFS=${SYSFS:-tests/fixtures/sysfs/host}
PROCFS=${PROCFS:-tests/fixtures/proc-devices}
BENCH_SECONDS=${BENCH_SECONDS:-2}
WARN="-Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2"
WARN="$WARN -Wno-format-truncation -Werror"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/accel-sysfs-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM

for f in "$BUILD/libmonitor.a" "$BUILD/libcommon.a"; do
	if [ ! -e "$f" ]; then
		echo "sysfs_bench: $f is missing; run make first (or set BUILD)" >&2
		exit 1
	fi
done

mkdir -p "$BUILD/bench"
BENCH=$BUILD/bench/sysfs_bench
PC_CFLAGS=$($PKG_CONFIG --cflags jansson yaml-0.1)
PC_LIBS=$($PKG_CONFIG --libs jansson yaml-0.1)
# shellcheck disable=SC2086 # CC, WARN and pkg-config's output are word lists
$CC -std=c11 -O2 -g $WARN -D_GNU_SOURCE $PC_CFLAGS -o "$BENCH" bench/sysfs_bench.c \
	"$BUILD/libmonitor.a" "$BUILD/libcommon.a" $PC_LIBS -lm -ldl

echo "== sysfs device collectors: amdgpu, neuron, ncs2, hwmon on $SYSFS (bench/sysfs_bench.c)"
if "$BENCH" --sysfs "$SYSFS" --procfs "$PROCFS" -s "$BENCH_SECONDS" >"$WORK/out.txt" 2>&1; then
	sed 's/^/  /' "$WORK/out.txt"
else
	sed 's/^/  /' "$WORK/out.txt"
	echo "  ERROR: sysfs_bench failed"
	exit 1
fi
