#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The long fuzzing run (make fuzz): build fuzz_prom_line into build/fuzz,
# seed the corpus with every fixture stream line, and fuzz for SECONDS
# (default 600). The corpus grows in build/fuzz/corpus across runs; a crash
# leaves its input as build/fuzz/crash-*.
#
# Usage: tests/fuzz/run.sh [SECONDS] [libFuzzer options...]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-600}
[ $# -gt 0 ] && shift
dir=$top/build/fuzz
"$top/tests/fuzz/build.sh" "$dir"
"$top/tests/fuzz/seed.sh" "$dir/corpus"
exec "$dir/fuzz_prom_line" -max_total_time="$secs" -max_len=65536 -timeout=10 \
	-dict="$top/tests/fuzz/prom_line.dict" -artifact_prefix="$dir/" "$@" "$dir/corpus"
