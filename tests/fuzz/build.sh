#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Build the libFuzzer target fuzz_prom_line (clang, -fsanitize=fuzzer,
# address,undefined) into OUTDIR. Used by tests/integration/prom_fuzz.sh
# (a short run in the test suite) and tests/fuzz/run.sh (make fuzz).
#
# Usage: tests/fuzz/build.sh OUTDIR     (CLANG=clang-16 to pick a compiler)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: $0 OUTDIR}
cc=${CLANG:-clang}
mkdir -p "$out"
# Only the modules the path uses (common/samples.c, stream.c and their helpers).
# shellcheck disable=SC2046
$cc -std=c11 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
	-D_GNU_SOURCE -DACCEL_VERSION='"fuzz"' -Wall -Wextra \
	-o "$out/fuzz_prom_line" \
	"$top/tests/fuzz/fuzz_prom_line.c" "$top/sinks/prom_store.c" "$top/sinks/prom_expo.c" \
	"$top/sinks/prom_dcgm.c" \
	"$top/common/samples.c" "$top/common/stream.c" "$top/common/util.c" "$top/common/log.c" \
	"$top/common/timeutil.c" "$top/common/schema.c" \
	$(pkg-config --cflags --libs jansson zlib) -lm -lpthread
