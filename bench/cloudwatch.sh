#!/bin/sh
# SPDX-License-Identifier: MIT
# accel-cloudwatch benchmark: datums encoded (and gzipped, and SigV4-signed
# by libcurl and POSTed to a loopback server) per second, and CPU per 1000
# datums. The Makefile builds the program with the project's flags; run from anywhere.
#   bench/cloudwatch.sh [DATUMS]
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build/release}
${MAKE:-make} -s --no-print-directory BUILD="$BUILD" "$BUILD/bench/cloudwatch_bench"
echo "accel-cloudwatch: $(nproc) CPUs, $(curl --version | head -1 | cut -d' ' -f1-3)"
"$BUILD/bench/cloudwatch_bench" "${1:-200000}"
