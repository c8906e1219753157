#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A Triton-like /metrics exposition of N models on stdout, for the benchmarks that scrape one
(bench/endpoint_bench.sh, bench/node_bench.py) through tests/helpers/fake_endpoint.py: per model and
version the request counters, the cumulative durations and a first-response histogram, as Triton 2.x
names them; the GPU gauges of 8 GPUs. About 40 KB at 20 models.

    triton_metrics.py N
"""
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
