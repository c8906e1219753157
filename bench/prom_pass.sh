#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-prom --passthrough's CPU per report for an endpoint serving 10 000
# and 100 000 families (bench/prom_pass_bench.c says how each figure is
# measured): the work must grow with the exposition, not with its square.
# Prints PASS or FAIL; a missed target still exits 0 (it is a report); 1
# only when nothing could be measured.
#
# Environment: BUILD [build/release], PASS_BENCH_ROUNDS [5].
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build/release}
${MAKE:-make} -s --no-print-directory BUILD="$BUILD" "$BUILD/bench/prom_pass_bench"
"$BUILD/bench/prom_pass_bench" -r "${PASS_BENCH_ROUNDS:-5}"
