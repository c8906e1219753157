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
# The GPU gauges in Triton's units: utilization a ratio of 1, memory in bytes (an H200's 141 GiB), power in W.
for fam, value in (("nv_gpu_utilization", lambda g: "%.2f" % (0.35 + 0.05 * g)),
                   ("nv_gpu_memory_used_bytes", lambda g: "%d" % (40000000000 + 1000000000 * g)),
                   ("nv_gpu_memory_total_bytes", lambda g: "150754820096"),
                   ("nv_gpu_power_usage", lambda g: "%.3f" % (300.5 + 10 * g))):
    out.append("# HELP %s GPU.\n# TYPE %s gauge" % (fam, fam))
    for g in range(8):
        out.append('%s{gpu_uuid="GPU-0000000%d-1111-2222-3333-444444444444"} %s' % (fam, g, value(g)))
print("\n".join(out))
