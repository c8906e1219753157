#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The long fuzzing run (make fuzz): build/fuzz/fuzz_TARGET (made by make, as
# for the suite's short runs), its corpus seeded with every fixture stream
# line, fuzzing for SECONDS (default 600). The corpus grows in
# build/fuzz/corpus-TARGET across runs; a crash leaves its input as
# build/fuzz/crash-*. TARGET: prom_line (default), csv, cloudwatch, expo, podres, jobmap, otlp
# (see tests/fuzz/build.sh).
#
# Usage: tests/fuzz/run.sh [TARGET] [SECONDS] [libFuzzer options...]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
target=prom_line
case ${1:-} in
prom_line | csv | cloudwatch | expo | podres | jobmap | otlp) target=$1; shift ;;
esac
secs=${1:-600}
[ $# -gt 0 ] && shift
dir=$top/build/fuzz
make -C "$top" --no-print-directory "build/fuzz/fuzz_$target"
"$top/tests/fuzz/seed.sh" "$dir/corpus-$target" "$target"
exec "$dir/fuzz_$target" -max_total_time="$secs" -max_len=65536 -timeout=10 -print_final_stats=1 \
	-dict="$top/tests/fuzz/$([ -f "$top/tests/fuzz/$target.dict" ] && echo "$target" || echo prom_line).dict" -artifact_prefix="$dir/" "$@" "$dir/corpus-$target"
