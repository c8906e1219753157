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

# A Triton-like /metrics: per model and version, the request counters, the cumulative durations and a
# request-duration histogram; the GPU gauges.
$PY - "$EP_MODELS" >"$WORK/metrics.txt" <<'EOF'
import sys
n = int(sys.argv[1])
out = []
for fam, typ in (("nv_inference_request_success", "counter"), ("nv_inference_request_failure", "counter"),
                 ("nv_inference_count", "counter"), ("nv_inference_exec_count", "counter"),
                 ("nv_inference_request_duration_us", "counter"), ("nv_inference_queue_duration_us", "counter"),
                 ("nv_inference_compute_input_duration_us", "counter"),
                 ("nv_inference_compute_infer_duration_us", "counter"),
                 ("nv_inference_compute_output_duration_us", "counter"), ("nv_inference_pending_request_count", "gauge")):
    out.append("# HELP %s %s.\n# TYPE %s %s" % (fam, fam.replace("_", " "), fam, typ))
    for m in range(n):
        out.append('%s{model="model_%d",version="1"} %d' % (fam, m, 1000 + 37 * m))
out.append("# HELP nv_inference_first_response_histogram_ms Duration.\n# TYPE nv_inference_first_response_histogram_ms histogram")
for m in range(n):
    c = 0
    for le in ("1", "2", "5", "10", "20", "50", "100", "200", "500", "1000", "+Inf"):
        c += 10 + m
        out.append('nv_inference_first_response_histogram_ms_bucket{model="model_%d",version="1",le="%s"} %d' % (m, le, c))
    out.append('nv_inference_first_response_histogram_ms_sum{model="model_%d",version="1"} %d' % (m, 50 * c))
    out.append('nv_inference_first_response_histogram_ms_count{model="model_%d",version="1"} %d' % (m, c))
for fam in ("nv_gpu_utilization", "nv_gpu_memory_used_bytes", "nv_gpu_memory_total_bytes", "nv_gpu_power_usage"):
    out.append("# HELP %s GPU.\n# TYPE %s gauge" % (fam, fam))
    for g in range(8):
        out.append('%s{gpu_uuid="GPU-0000000%d-1111-2222-3333-444444444444"} %d' % (fam, g, 12345 + g))
print("\n".join(out))
EOF

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
