#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A fake Triton Inference Server (or vLLM) metrics endpoint for the end-to-end
test of endpoint runtimes (tests/integration/endpoint_e2e.sh), and the checker
of what accel-monitor reports from it.

Serve:  fake_infer.py --port-file F [--log L] [--flavour triton|vllm]
  An HTTP server on 127.0.0.1 (a free port, written to F) whose /metrics is
  a Triton exposition (the families of Triton's documented metric list:
  nv_inference_request_success/failure{model,version,reason},
  nv_inference_count, nv_inference_exec_count, the cumulative
  nv_inference_{request,queue,compute_input,compute_infer,compute_output}_duration_us,
  nv_inference_pending_request_count, the first-response histogram
  nv_inference_first_response_histogram_ms, nv_gpu_utilization,
  nv_gpu_memory_{used,total}_bytes, nv_gpu_power_{usage,limit},
  nv_energy_consumption). Every GET of /metrics is one more step: the n-th
  scrape (from 1) serves every counter at n times its increment (INC below),
  so the values of any window of scrapes are known. Each scrape appends n to
  the log. --flavour vllm serves vLLM's families instead (one model, no
  version: vllm:request_success_total by finished_reason, the prompt and
  generation token counters, the TTFT and end-to-end latency histograms,
  requests running and waiting, KV-cache usage; VLLM_* below). --fail N,M
  answers the N-th and M-th GET with HTTP 500: the server's counters went on
  (the step counts, and is logged), so the next good scrape holds two steps.

Check:  fake_infer.py --check STREAM --log L [--flavour triton|vllm]
  Every execution_stats of the stream's endpoint runtime of that flavour is checked exactly
  against the increments: a group covers k >= 1 scrapes (k from the
  completed requests of resnet50/1), and every count is k times its
  increment, every mean and percentile what this script computes the way
  docs/report-format.md §6.5 says (Prometheus' BucketQuantile for the
  histogram), bit for bit; the scrapes add up to no more than the log's.
  With --histograms, every histogram's latency_histograms must be there,
  exactly (bounds, per-bucket counts, sum, count); without, none.
  With --period P (seconds, the group's configured period), a group's
  "period" must be k periods, within half a period: a rate (count / period)
  is then the server's.

Also importable: the test computes the Prometheus equivalents' expected
values from INC and MEAN_US.
"""
import argparse
import http.server
import json
import math
import socketserver
import sys
import threading

GPU = "GPU-0b6b0a5e-2d1c-4a3c-9f3e-1c2d3e4f5a6b"
# Per model version, per scrape: successes, failures by Triton reason, inferences, executions.
INC = {
    ("resnet50", "1"): {"success": 10, "failure": {"REJECTED": 1, "BACKEND": 0}, "count": 40, "exec": 10},
    ("resnet50", "2"): {"success": 4, "failure": {}, "count": 4, "exec": 4},
    ("bert", "1"): {"success": 2, "failure": {"CANCELED": 1}, "count": 6, "exec": 2},
}
# Mean microseconds per successful request of each cumulative duration (Triton adds them for successes only).
MEAN_US = {
    ("resnet50", "1"): {"request": 5000, "queue": 500, "compute_input": 250, "compute_infer": 4000,
                        "compute_output": 250},
    ("resnet50", "2"): {"request": 12500, "queue": 1250, "compute_input": 500, "compute_infer": 10000,
                        "compute_output": 750},
    ("bert", "1"): {"request": 50000, "queue": 10000, "compute_input": 2500, "compute_infer": 37500,
                    "compute_output": 0},
}
# resnet50/1's first-response histogram (ms): per scrape 6 observations of 0.5, 3 of 3, 1 of 8.
HIST_MODEL = ("resnet50", "1")
HIST_BOUNDS = [1.0, 5.0, 10.0, float("inf")]
HIST_INC = [6, 9, 10, 10]  # cumulative per bound
HIST_SUM_INC = 6 * 0.5 + 3 * 3 + 1 * 8
ENERGY_INC = 100.5  # joules per scrape
# vLLM: one model, no version; per scrape successes by finished_reason, tokens, two histograms (seconds).
VLLM_MODEL = "meta-llama/Llama-3.1-8B"
VLLM_SUCCESS = {"stop": 6, "length": 2}
VLLM_TOKENS = {"prompt": 1000, "generation": 4096}
VLLM_HIST = {  # family: (report key, bounds, cumulative increments, sum increment)
    "vllm:time_to_first_token_seconds": ("time_to_first_token", [0.25, 0.5, 1.0, float("inf")], [2, 6, 8, 8],
                                         2 * 0.125 + 4 * 0.375 + 2 * 0.75),
    "vllm:e2e_request_latency_seconds": ("request", [1.0, 2.0, 4.0, float("inf")], [2, 6, 8, 8],
                                         2 * 0.5 + 4 * 1.5 + 2 * 3.0),
}
VLLM_RUNNING = 4


def vllm_waiting(n):
    return n % 5


def vllm_kv(n):
    return 0.25 + (n % 4) * 0.125
PCTS = [("p0", 0.0), ("p1", 0.01), ("p25", 0.25), ("p50", 0.5), ("p75", 0.75), ("p99", 0.99), ("p100", 1.0)]


def pending(n):
    return n % 7


def exposition(n):
    """The n-th scrape's body (n >= 1)."""
    out = []

    def fam(name, typ, help_, rows):
        out.append("# HELP %s %s" % (name, help_))
        out.append("# TYPE %s %s" % (name, typ))
        for labels, v in rows:
            out.append("%s{%s} %s" % (name, ",".join('%s="%s"' % kv for kv in labels), v))

    def per_model(f):
        return [((("model", m), ("version", v)), f(m, v)) for (m, v) in INC]

    fam("nv_inference_request_success", "counter", "Number of successful inference requests, all batch sizes",
        per_model(lambda m, v: n * INC[(m, v)]["success"]))
    fam("nv_inference_request_failure", "counter", "Number of failed inference requests, all batch sizes",
        [((("model", m), ("reason", r), ("version", v)), n * c) for (m, v) in INC
         for r, c in INC[(m, v)]["failure"].items()])
    fam("nv_inference_count", "counter", "Number of inferences performed (does not include cached requests)",
        per_model(lambda m, v: n * INC[(m, v)]["count"]))
    fam("nv_inference_exec_count", "counter", "Number of model executions performed (does not include cached "
        "requests)", per_model(lambda m, v: n * INC[(m, v)]["exec"]))
    for key, name in (("request", "request"), ("queue", "queue"), ("compute_input", "compute_input"),
                      ("compute_infer", "compute_infer"), ("compute_output", "compute_output")):
        fam("nv_inference_%s_duration_us" % name, "counter", "Cumulative %s duration in microseconds" % name,
            per_model(lambda m, v, key=key: n * INC[(m, v)]["success"] * MEAN_US[(m, v)][key]))
    fam("nv_inference_pending_request_count", "gauge", "Instantaneous number of pending requests awaiting "
        "execution per-model.", per_model(lambda m, v: pending(n)))
    m, v = HIST_MODEL
    out.append("# HELP nv_inference_first_response_histogram_ms Duration from request to first response in "
               "milliseconds")
    out.append("# TYPE nv_inference_first_response_histogram_ms histogram")
    for le, c in zip(HIST_BOUNDS, HIST_INC):
        out.append('nv_inference_first_response_histogram_ms_bucket{model="%s",version="%s",le="%s"} %d'
                   % (m, v, "+Inf" if le == float("inf") else repr(le), n * c))
    out.append('nv_inference_first_response_histogram_ms_sum{model="%s",version="%s"} %r' % (m, v, n * HIST_SUM_INC))
    out.append('nv_inference_first_response_histogram_ms_count{model="%s",version="%s"} %d' % (m, v, n * HIST_INC[-1]))
    gpu = ((("gpu_uuid", GPU),),)
    fam("nv_gpu_utilization", "gauge", "GPU utilization rate [0.0 - 1.0)", [(gpu[0], 0.5)])
    fam("nv_gpu_memory_total_bytes", "gauge", "GPU total memory, in bytes", [(gpu[0], 24000000000)])
    fam("nv_gpu_memory_used_bytes", "gauge", "GPU used memory, in bytes", [(gpu[0], 2000000000)])
    fam("nv_gpu_power_usage", "gauge", "GPU power usage in watts", [(gpu[0], 150.5)])
    fam("nv_gpu_power_limit", "gauge", "GPU power management limit in watts", [(gpu[0], 300)])
    fam("nv_energy_consumption", "counter", "GPU energy consumption in joules since the Triton Server started",
        [(gpu[0], repr(n * ENERGY_INC))])
    return "\n".join(out) + "\n"


def vllm_exposition(n):
    """The n-th scrape's body of the vLLM flavour (n >= 1)."""
    lab = 'engine="0",model_name="%s"' % VLLM_MODEL
    out = ["# HELP vllm:num_requests_running Number of requests in model execution batches.",
           "# TYPE vllm:num_requests_running gauge", "vllm:num_requests_running{%s} %d" % (lab, VLLM_RUNNING),
           "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.",
           "# TYPE vllm:num_requests_waiting gauge", "vllm:num_requests_waiting{%s} %d" % (lab, vllm_waiting(n)),
           "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.",
           "# TYPE vllm:kv_cache_usage_perc gauge", "vllm:kv_cache_usage_perc{%s} %r" % (lab, vllm_kv(n)),
           "# HELP vllm:request_success_total Count of successfully processed requests.",
           "# TYPE vllm:request_success_total counter"]
    out += ['vllm:request_success_total{engine="0",finished_reason="%s",model_name="%s"} %d' % (r, VLLM_MODEL, n * c)
            for r, c in VLLM_SUCCESS.items()]
    for kind, c in VLLM_TOKENS.items():
        name = "vllm:%s_tokens_total" % kind
        out += ["# HELP %s Number of %s tokens processed." % (name, kind), "# TYPE %s counter" % name,
                "%s{%s} %d" % (name, lab, n * c)]
    for fam, (_, bounds, inc, sum_inc) in VLLM_HIST.items():
        out += ["# HELP %s Histogram of %s." % (fam, fam), "# TYPE %s histogram" % fam]
        out += ['%s_bucket{%s,le="%s"} %d' % (fam, lab, "+Inf" if le == float("inf") else repr(le), n * c)
                for le, c in zip(bounds, inc)]
        out += ["%s_sum{%s} %r" % (fam, lab, n * sum_inc), "%s_count{%s} %d" % (fam, lab, n * inc[-1])]
    return "\n".join(out) + "\n"


# ---- serving ---------------------------------------------------------------------------------------------

class Handler(http.server.BaseHTTPRequestHandler):
    scrapes = 0
    lock = threading.Lock()
    log_path = None
    fail = ()
    body = staticmethod(exposition)

    def do_GET(self):
        if self.path != "/metrics":
            self.send_error(404)
            return
        with Handler.lock:
            Handler.scrapes += 1
            n = Handler.scrapes
            if Handler.log_path:
                with open(Handler.log_path, "a") as f:
                    f.write("%d\n" % n)
        if n in Handler.fail:
            self.send_error(500, "failing scrape %d on purpose" % n)
            return
        body = Handler.body(n).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


# ---- checking ----------------------------------------------------------------------------------------------

def bucket_quantile(q, bounds, counts):
    """Prometheus' BucketQuantile for classic buckets (counts cumulative, monotonic here), None for NaN."""
    obs = counts[-1]
    if obs == 0:
        return None
    rank = q * obs
    k = next(i for i in range(len(counts) - 1) if counts[i] >= rank) if any(
        counts[i] >= rank for i in range(len(counts) - 1)) else len(counts) - 1
    if k == len(counts) - 1:
        return bounds[-2]
    if k == 0 and bounds[0] <= 0:
        return bounds[0]
    start, end, count = 0.0, bounds[k], float(counts[k])
    if k > 0:
        start = bounds[k - 1]
        count -= counts[k - 1]
        rank -= counts[k - 1]
    return start + (end - start) * (rank / count)


def wire(v):
    """v as the report stream carries it (common/jsonw.c): below 1e6, rounded to 9 decimals
    (llround(v * 1e9), half away from zero); else unchanged. Applied to every number of a dict or list."""
    if isinstance(v, dict):
        return {k: wire(x) for k, x in v.items()}
    if isinstance(v, list):
        return [wire(x) for x in v]
    if not isinstance(v, float) or abs(v) >= 1e6:
        return v
    x = abs(v * 1e9)
    n = math.floor(x)
    n += 1 if x - n >= 0.5 else 0
    return float("%s%d.%09d" % ("-" if v < 0 else "", n // 10**9, n % 10**9))


def expected_hist(bounds, inc, sum_inc, k, div):
    """A latency_histograms entry (docs/report-format.md §6.5) of a group covering k scrapes: the finite bounds
    in seconds, each bucket's own increment (not cumulative, +Inf last), the sum in seconds, the count."""
    cum = [k * c for c in inc]
    return {"le": [b / div for b in bounds[:-1]], "counts": [c - p for c, p in zip(cum, [0] + cum[:-1])],
            "sum": (k * sum_inc) / div, "count": cum[-1]}


def expected_model(key, k, hist=False):
    """The execution_stats.models.<m>.<v> of a group that covers k scrapes (hist: with latency_histograms)."""
    inc, mean = INC[key], MEAN_US[key]
    succ = k * inc["success"]
    fails = {r.lower(): k * c for r, c in inc["failure"].items()}
    o = {"execution_summary": {"completed": succ}}
    if inc["failure"]:
        o["execution_summary"]["failed"] = sum(fails.values())
        o["error_summary"] = fails
    o["mean_seconds"] = {p: (succ * us) / 1e6 / succ for p, us in mean.items()}
    o["requests_pending"] = None  # a gauge of the latest scrape: checked apart
    o["batch_size"] = (k * inc["count"]) / (k * inc["exec"])
    if key == HIST_MODEL:
        counts = [k * c for c in HIST_INC]
        o["latency_stats"] = {"time_to_first_token": {}, "percentile_source": "histogram"}
        for name, q in PCTS:
            v = bucket_quantile(q, HIST_BOUNDS, counts)
            if v is not None:
                o["latency_stats"]["time_to_first_token"][name] = v / 1e3
        o["mean_seconds"]["time_to_first_token"] = (k * HIST_SUM_INC) / 1e3 / (k * HIST_INC[-1])
        if hist:
            o["latency_histograms"] = {"time_to_first_token": expected_hist(HIST_BOUNDS, HIST_INC, HIST_SUM_INC, k,
                                                                            1e3)}
    return o


def vllm_expected(k, hist=False):
    """The execution_stats.models.<VLLM_MODEL>."" of a vLLM group that covers k scrapes (gauges apart; hist: with
    latency_histograms)."""
    succ = k * sum(VLLM_SUCCESS.values())
    o = {"execution_summary": {"completed": succ}, "latency_stats": {"percentile_source": "histogram"},
         "mean_seconds": {}, "tokens": {t: k * c for t, c in VLLM_TOKENS.items()}}
    for fam, (key, bounds, inc, sum_inc) in VLLM_HIST.items():
        counts = [k * c for c in inc]
        o["latency_stats"]["total_latency" if key == "request" else key] = {
            name: bucket_quantile(q, bounds, counts) / 1 for name, q in PCTS
            if bucket_quantile(q, bounds, counts) is not None}
        o["mean_seconds"][key] = (k * sum_inc) / 1 / (k * inc[-1])
        if hist:
            o.setdefault("latency_histograms", {})["total_latency" if key == "request" else key] = \
                expected_hist(bounds, inc, sum_inc, k, 1)
    return o


def check_vllm(stream, log, hist=False):
    """Every vLLM execution_stats of the stream against the increments; the error lines."""
    errors, total_k, groups = [], 0, 0
    for lineno, line in enumerate(open(stream), 1):
        for e in json.loads(line).get("runtime_data", []):
            g = e.get("report", {}).get("execution_stats")
            if e.get("server") != "vllm" or not isinstance(g, dict) or g.get("error"):
                continue
            where = "line %d: execution_stats" % lineno
            have = dict(g.get("models", {}).get(VLLM_MODEL, {}).get("", {}))
            run, wait, kv = (have.pop("requests_in_flight", None), have.pop("requests_pending", None),
                             have.pop("kv_cache_usage_ratio", None))
            if run != VLLM_RUNNING or wait not in range(5) or kv not in [vllm_kv(i) for i in range(4)]:
                errors.append("%s: gauges %r %r %r" % (where, run, wait, kv))
            if not have:
                continue  # the first group: gauges only
            c = have.get("execution_summary", {}).get("completed", 0)
            k = c // sum(VLLM_SUCCESS.values())
            if k < 1 or k * sum(VLLM_SUCCESS.values()) != c:
                errors.append("%s: completed %r is no whole number of scrapes" % (where, c))
                continue
            total_k += k
            groups += 1
            want = wire(vllm_expected(k, hist))
            if have != want:
                errors.append("%s: %s (k=%d):\n  got  %s\n  want %s" % (where, VLLM_MODEL, k,
                              json.dumps(have, sort_keys=True), json.dumps(want, sort_keys=True)))
            rwant = {"completed": want["execution_summary"]["completed"]}
            rlat = {"total_latency": want["latency_stats"]["total_latency"], "percentile_source": "histogram"}
            if g.get("execution_summary") != rwant or g.get("latency_stats") != rlat:
                errors.append("%s: runtime level %r %r" % (where, g.get("execution_summary"), g.get("latency_stats")))
            rhist = {"total_latency": want["latency_histograms"]["total_latency"]} if hist else None
            if g.get("latency_histograms") != rhist:
                errors.append("%s: runtime level latency_histograms %r, want %r" % (where, g.get("latency_histograms"),
                                                                                     rhist))
    scrapes = len(open(log).read().split())
    if not groups:
        errors.append("no vLLM execution_stats with counts in %s" % stream)
    if total_k > scrapes:
        errors.append("the groups cover %d scrapes, the server answered %d" % (total_k, scrapes))
    print("# vllm: %d groups, %d scrapes in them, %d answered" % (groups, total_k, scrapes))
    return errors


def check_period(where, g, k, period, errors):
    """A group covering k scrapes must say k periods (within half a period), or rates come out k times off."""
    if period and not abs(g.get("period", 0) - k * period) < period / 2:
        errors.append("%s: period %r covers %d scrapes of %r s each" % (where, g.get("period"), k, period))


def check(stream, log, period=None, hist=False):
    errors = []
    scrapes = len(open(log).read().split())
    total_k = 0
    groups = 0
    for lineno, line in enumerate(open(stream), 1):
        rep = json.loads(line)
        for e in rep.get("runtime_data", []):
            g = e.get("report", {}).get("execution_stats")
            if e.get("server") != "triton" or not isinstance(g, dict) or g.get("error"):
                continue
            where = "line %d: execution_stats" % lineno
            models = g.get("models", {})
            got = models.get("resnet50", {}).get("1", {})
            if "execution_summary" not in got:
                # the first group (no baseline yet): gauges only
                for m, v in INC:
                    mg = models.get(m, {}).get(v)
                    if mg is None or set(mg) - {"requests_pending"}:
                        errors.append("%s: first group of %s/%s: %r" % (where, m, v, mg))
                continue
            c = got["execution_summary"]["completed"]
            k = c // INC[HIST_MODEL]["success"]
            if k < 1 or k * INC[HIST_MODEL]["success"] != c:
                errors.append("%s: resnet50/1 completed %r is no whole number of scrapes" % (where, c))
                continue
            total_k += k
            groups += 1
            check_period(where, g, k, period, errors)
            for key in INC:
                m, v = key
                want = wire(expected_model(key, k, hist))
                have = dict(models.get(m, {}).get(v, {}))
                pend = have.pop("requests_pending", None)
                want.pop("requests_pending")
                if not isinstance(pend, int) or not 0 <= pend < 7:
                    errors.append("%s: %s/%s requests_pending %r" % (where, m, v, pend))
                # zero increments of a failure reason: a key with 0
                if have != want:
                    errors.append("%s: %s/%s (k=%d):\n  got  %s\n  want %s" % (where, m, v, k, json.dumps(have,
                                  sort_keys=True), json.dumps(want, sort_keys=True)))
            rsum = {"completed": sum(k * INC[x]["success"] for x in INC),
                    "failed": sum(k * c for x in INC for c in INC[x]["failure"].values())}
            # the runtime level: the sums, and no other figure (no histogram of request time here)
            if set(g) - {"period", "timestamp", "error", "execution_summary", "error_summary", "models",
                         "server_devices"}:
                errors.append("%s: runtime-level keys %r" % (where, sorted(g)))
            if g.get("execution_summary") != rsum:
                errors.append("%s: runtime level %r, want %r" % (where, g.get("execution_summary"), rsum))
            dev = g.get("server_devices", {}).get(GPU, {})
            want_dev = {"utilization_ratio": 0.5, "memory_used_bytes": 2000000000, "memory_total_bytes": 24000000000,
                        "power_watts": 150.5, "power_limit_watts": 300.0, "energy_joules": k * ENERGY_INC}
            want_dev = wire(want_dev)
            have_dev = {x: dev.get(x) for x in want_dev}
            if have_dev != want_dev or not isinstance(dev.get("energy_total_joules"), float):
                errors.append("%s: server_devices %r, want %r" % (where, dev, want_dev))
    if not groups:
        errors.append("no execution_stats with counts in %s" % stream)
    if total_k > scrapes:
        errors.append("the groups cover %d scrapes, the server answered %d" % (total_k, scrapes))
    for e in errors:
        print(e)
    print("# %d groups, %d scrapes in them, %d answered" % (groups, total_k, scrapes))
    return 1 if errors else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port-file")
    p.add_argument("--log")
    p.add_argument("--check", metavar="STREAM")
    p.add_argument("--flavour", choices=("triton", "vllm"), default="triton")
    p.add_argument("--print", type=int, metavar="N", help="print the N-th scrape's body and exit")
    p.add_argument("--fail", default="", metavar="N,M", help="answer these GETs (from 1) with HTTP 500")
    p.add_argument("--period", type=float, help="--check: the group's configured period, seconds")
    p.add_argument("--histograms", action="store_true",
                   help="--check: the endpoint has \"latency_histograms\": true (each histogram's buckets, exactly)")
    a = p.parse_args()
    if a.print:
        sys.stdout.write((vllm_exposition if a.flavour == "vllm" else exposition)(a.print))
        return 0
    if a.check and a.flavour == "vllm":
        errors = check_vllm(a.check, a.log, a.histograms)
        for e in errors:
            print(e)
        return 1 if errors else 0
    if a.check:
        return check(a.check, a.log, a.period, a.histograms)
    Handler.log_path = a.log
    Handler.fail = {int(x) for x in a.fail.split(",") if x}
    if a.flavour == "vllm":
        Handler.body = staticmethod(vllm_exposition)
    srv = Server(("127.0.0.1", 0), Handler)
    with open(a.port_file + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    import os
    os.rename(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
