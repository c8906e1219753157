#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Endpoint runtimes' cost, as a report: one collection cycle of
# 4 endpoint runtimes (scrape on the event loop, parse, collect, write the
# line) against the floor of 4 bare HTTP GETs of the same bodies with
# libcurl's easy interface over loopback, measured in the same run
# (bench/endpoint_bench.c); target: the cycle costs <= 2x the GETs. The
# server is tests/helpers/fake_endpoint.py serving a Triton-like
# exposition (EP_MODELS models, counters and histograms, as Triton 2.x
# names them), so its CPU is not in either figure.
# Exit 1 only when something could not be built or measured.
#
# Environment (defaults in brackets):
#   BUILD          where the archives are [build/release]; MAKE builds the benchmark [make]
#   EP_MODELS      models in the exposition [20]
#   BENCH_SECONDS  wall time of each measurement [2]
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build/release}
EP_MODELS=${EP_MODELS:-20}
BENCH_SECONDS=${BENCH_SECONDS:-2}
PY=/usr/bin/python3

WORK=$(mktemp -d "${TMPDIR:-/tmp}/accel-endpoint-bench.XXXXXX")
SRV=""
trap '[ -n "$SRV" ] && kill "$SRV" 2>/dev/null; rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM

${MAKE:-make} -s --no-print-directory BUILD="$BUILD" "$BUILD/bench/endpoint_bench"

# A Triton-like /metrics of EP_MODELS models (bench/triton_metrics.py).
$PY bench/triton_metrics.py "$EP_MODELS" >"$WORK/metrics.txt"

$PY tests/helpers/fake_endpoint.py --file "$WORK/metrics.txt" --port-file "$WORK/port" &
SRV=$!
i=0
while [ ! -s "$WORK/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
URL=http://127.0.0.1:$(cat "$WORK/port")/metrics

rc=0
for g in stats all; do
	echo "== endpoint runtimes: a cycle of 4 vs 4 bare GETs ($EP_MODELS models, groups: $g; bench/endpoint_bench.c)"
	if "$BUILD/bench/endpoint_bench" "$URL" -s "$BENCH_SECONDS" -g "$g" >"$WORK/$g.txt" 2>&1; then
		sed 's/^/  /' "$WORK/$g.txt"
	else
		sed 's/^/  /' "$WORK/$g.txt"
		echo "  ERROR: endpoint_bench failed"
		rc=1
	fi
	echo
done
exit $rc
