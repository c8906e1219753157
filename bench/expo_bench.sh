#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The exposition parser's cost: common/expo_parse.c over a 1 MB
# inference-server exposition of many histogram series, against a floor that
# reads the same bytes and finds the line ends with memchr (target: parse CPU
# <= 3x the floor's), with the MB/s of each, and monitor/endpoint/infer.c's
# infer_update() on the same text for information. bench/expo_bench.c says
# how each figure is measured. Prints PASS or FAIL; a missed target still
# exits 0 (it is a report); 1 only when nothing could be measured.
#
# Environment: BUILD [build/release], EXPO_BENCH_MB [1], EXPO_BENCH_ROUNDS [7].
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build/release}
${MAKE:-make} -s --no-print-directory BUILD="$BUILD" "$BUILD/bench/expo_bench"
"$BUILD/bench/expo_bench" -m "${EXPO_BENCH_MB:-1}" -r "${EXPO_BENCH_ROUNDS:-7}"
