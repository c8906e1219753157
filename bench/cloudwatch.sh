#!/bin/sh
# SPDX-License-Identifier: MIT
# accel-cloudwatch benchmark: datums encoded (and gzipped, and SigV4-signed
# by libcurl and POSTed to a loopback server) per second, and CPU per 1000
# datums. Builds what it needs with the release flags; run from anywhere.
#   bench/cloudwatch.sh [DATUMS]
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build/release}
objs=""
for f in sinks/cloudwatch_*.c; do objs="$objs $BUILD/${f%.c}.o"; done
make -s BUILD="$BUILD" $BUILD/libcommon.a $objs
mkdir -p "$BUILD/bench"
cc -std=c11 -O2 -g -D_GNU_SOURCE -DACCEL_VERSION='"bench"' -o "$BUILD/bench/cloudwatch_bench" bench/cloudwatch_bench.c \
	$objs "$BUILD/libcommon.a" $(pkg-config --cflags --libs jansson yaml-0.1 libcurl zlib) -lm -lpthread
echo "accel-cloudwatch: $(nproc) CPUs, $(curl --version | head -1 | cut -d' ' -f1-3)"
"$BUILD/bench/cloudwatch_bench" "${1:-200000}"
