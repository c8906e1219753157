#!/bin/sh
# SPDX-License-Identifier: MIT
# accel-otlp benchmark (bench/otlp_bench.c).
#  1. encode: data points/s, CPU per 1000 points of what the sink does per request (add + group + lay out +
#     protobuf-c pack) against the bare protobuf-c pack of the same requests, in the same run; OTLP/JSON beside;
#  2. per report: the fixture streams (neuron-monitor 2.x and 2020, the inference servers), each report through
#     the encoder (accel-prom's store, then one request) against the bare pack of the same requests, the
#     store's own share (what accel-prom pays too) measured apart.
#   bench/otlp.sh           (make bench runs it)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build/release}
${MAKE:-make} -s --no-print-directory "$BUILD/bench/otlp_bench"

echo "== encode ($(nproc) CPUs)"
"$BUILD/bench/otlp_bench" 1000000 500 5
echo "== per report"
for f in tests/fixtures/streams/neuron-monitor-2x.jsonl tests/fixtures/streams/neuron-monitor-2020.jsonl \
	tests/fixtures/streams/endpoint-runtimes.jsonl; do
	"$BUILD/bench/otlp_bench" --reports "$f" 5
done
