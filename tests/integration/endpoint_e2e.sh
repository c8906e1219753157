#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Endpoint runtimes end to end: a fake Triton and a fake vLLM (tests/helpers/fake_infer.py, counters
# advancing by known increments at every scrape) -> accel-monitor (two endpoint runtimes with execution_stats every
# second, passthrough on) -> accel-prom --passthrough -> a real Prometheus scraping every second. Checked:
#   - every execution_stats group of the stream, exactly against the script's increments (counts, means,
#     the first-response histogram's percentiles), and the stream by check_report.py;
#   - the Triton recipe's queries (compute infer time and queue time per request, success ratio) and
#     their equivalents over our families (docs/accel-prom.md lists them) give the numbers the increments
#     give, per model and version, and the same as the recipe's over the republished nv_* families;
#   - the time-to-first-token percentiles in Prometheus equal the script's BucketQuantile;
#   - vLLM: tokens and TTFT over ours and over its republished vllm:* families agree with the increments.
. "$(dirname "$0")/lib.sh"

need "$BIN/accel-monitor and $BIN/accel-prom are built" test -x "$BIN/accel-monitor" -a -x "$BIN/accel-prom"
need "prometheus (Debian package prometheus)" command -v prometheus
need "curl" command -v curl
T=$((40 * SLOW))
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED

# ---- the fake server -------------------------------------------------------------------
spawn SRV $PY "$HELP/fake_infer.py" --port-file "$WORK/port" --log "$WORK/scrapes"
spawn VSRV $PY "$HELP/fake_infer.py" --flavour vllm --port-file "$WORK/vport" --log "$WORK/vscrapes"
ok "the fake Triton listens" wait_for $((10 * SLOW)) test -s "$WORK/port"
ok "the fake vLLM listens" wait_for $((10 * SLOW)) test -s "$WORK/vport"
PORT=$(cat "$WORK/port")
VPORT=$(cat "$WORK/vport")
cat >"$WORK/monitor.json" <<EOF
{
  "period": "1s",
  "runtimes": [
    { "address": "http://127.0.0.1:$PORT/metrics", "server": "triton", "passthrough": true,
      "metrics": [ { "type": "execution_stats" } ] },
    { "address": "http://127.0.0.1:$VPORT/metrics", "server": "vllm", "passthrough": true,
      "metrics": [ { "type": "execution_stats" } ] }
  ]
}
EOF

# ---- accel-monitor | tee | accel-prom --passthrough --------------------------------------
AP=$(free_port)
N=${ENDPOINT_E2E_REPORTS:-24}
mkfifo "$WORK/in"
# accel-prom serves on after the end of its input: its own pid, for the cleanup
"$BIN/accel-prom" --passthrough --listen-address "127.0.0.1:$AP" <"$WORK/in" 2>"$WORK/accel-prom.err" &
_pids="$_pids $!"
("$BIN/accel-monitor" -c "$WORK/monitor.json" -n "$N" 2>"$WORK/monitor.err" | tee "$WORK/stream.jsonl" >"$WORK/in") &
_pids="$_pids $!"

# ---- Prometheus ---------------------------------------------------------------------------
prometheus_start "127.0.0.1:$AP"

# qv EXPR: the result of an instant query as "model/version=value ..." sorted (values as Prometheus prints them).
qv() {
	curl -s --max-time 10 --data-urlencode "query=$1" "$PURL/api/v1/query" | $PY -c '
import json, sys
d = json.load(sys.stdin)
assert d["status"] == "success", d
print(" ".join(sorted("%s/%s=%s" % (x["metric"].get("model", ""), x["metric"].get("version", ""), x["value"][1])
                      for x in d["data"]["result"])))' 2>/dev/null
}
ok "Prometheus is ready" wait_for "$T" curl -sf -o /dev/null "$PURL/-/ready"
ok "the target is up" wait_for "$T" sh -c "curl -s '$PURL/api/v1/query?query=up' | grep -q '\"1\"\\]'"
# Enough counted periods in Prometheus for rate() over [1m]: resnet50/1 completed at least 60 (6 periods).
enough() { [ "$(qv 'sum by (model, version) (execution_status_total{model="resnet50",version="1",status_type="completed"}) >= 60')" != "" ]; }
ok "per-model counters reach Prometheus" wait_for "$T" enough

# ---- the recipe's queries and ours -----------------------------------------------------------
# close A B [ABS]: every model/version of A has B's value within 1e-9 relative (or ABS absolute), and they
# name the same ones.
close() {
	$PY - "$1" "$2" "${3:-0}" <<'EOF'
import sys
def parse(s):
    return {k: float(v) for k, v in (x.split("=") for x in s.split())}
a, b, tol = parse(sys.argv[1]), parse(sys.argv[2]), float(sys.argv[3])
assert a and set(a) == set(b), (a, b)
for k in a:
    assert abs(a[k] - b[k]) <= max(1e-9 * max(abs(a[k]), abs(b[k])), tol), (k, a[k], b[k])
EOF
}
# want EXPR_PY: model/version=value for each model version, value = EXPR_PY over fake_infer's INC, MEAN_US.
want() {
	$PY - "$HELP" "$1" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
from fake_infer import INC, MEAN_US
print(" ".join(sorted("%s/%s=%r" % (m, v, eval(sys.argv[2], {"inc": INC[(m, v)], "mean": MEAN_US[(m, v)]}))
                      for (m, v) in INC)))
EOF
}
W='[1m]'
TR="pid=\"$SRV\","   # our families of the Triton runtime (the vLLM one is another process)
# compute infer time per request (Triton's recipe: µs; ours: seconds)
RECIPE_INFER="sum by (model, version) (rate(nv_inference_compute_infer_duration_us$W)) / sum by (model, version) (rate(nv_inference_request_success$W))"
OURS_INFER="sum by (model, version) (rate(inference_compute_infer_duration_seconds_total{$TR}$W)) / sum by (model, version) (rate(execution_status_total{${TR}status_type=\"completed\"}$W))"
ok "compute infer time per request: ours equals the increments' (seconds)" close "$(qv "$OURS_INFER")" \
	"$(want 'mean["compute_infer"] / 1e6')"
ok "compute infer time per request: the recipe's over the republished families (µs) equals ours x 1e6" \
	close "$(qv "($RECIPE_INFER) / 1e6")" "$(qv "$OURS_INFER")"
# queue time per request
RECIPE_QUEUE="sum by (model, version) (rate(nv_inference_queue_duration_us$W)) / sum by (model, version) (rate(nv_inference_request_success$W))"
OURS_QUEUE="sum by (model, version) (rate(inference_queue_duration_seconds_total{$TR}$W)) / sum by (model, version) (rate(execution_status_total{${TR}status_type=\"completed\"}$W))"
ok "queue time per request: ours equals the increments'" close "$(qv "$OURS_QUEUE")" "$(want 'mean["queue"] / 1e6')"
ok "queue time per request: the recipe's equals ours x 1e6" close "$(qv "($RECIPE_QUEUE) / 1e6")" "$(qv "$OURS_QUEUE")"
# success ratio
RECIPE_OK="sum by (model, version) (rate(nv_inference_request_success$W)) / (sum by (model, version) (rate(nv_inference_request_success$W)) + (sum by (model, version) (rate(nv_inference_request_failure$W)) or sum by (model, version) (rate(nv_inference_request_success$W)) * 0))"
OURS_OK="sum by (model, version) (rate(execution_status_total{${TR}status_type=\"completed\"}$W)) / sum by (model, version) (rate(execution_status_total{${TR}status_type=~\"completed|failed\"}$W))"
ok "success ratio: ours equals the increments'" close "$(qv "$OURS_OK")" \
	"$(want 'inc["success"] / (inc["success"] + sum(inc["failure"].values()))')"
ok "success ratio: the recipe's equals ours" close "$(qv "$RECIPE_OK")" "$(qv "$OURS_OK")"
# request time, the mean gauges, batch size
ok "request time per request: ours equals the increments'" close \
	"$(qv "sum by (model, version) (rate(inference_request_duration_seconds_total{$TR}$W)) / sum by (model, version) (rate(execution_status_total{${TR}status_type=\"completed\"}$W))")" \
	"$(want 'mean["request"] / 1e6')"
ok "inference_compute_infer_mean_seconds equals the increments'" close \
	"$(qv "max by (model, version) (inference_compute_infer_mean_seconds{$TR})")" "$(want 'mean["compute_infer"] / 1e6')"
ok "inference_batch_size equals inferences / executions" close "$(qv "max by (model, version) (inference_batch_size{$TR})")" \
	"$(want 'inc["count"] / inc["exec"]')"
# time to first token: the histogram's percentiles, as the script's BucketQuantile gives them
TTFT=$($PY - "$HELP" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import fake_infer as f
print(" ".join("%s=%r" % (n, f.wire(f.bucket_quantile(q, f.HIST_BOUNDS, f.HIST_INC) / 1e3)) for n, q in f.PCTS))
EOF
)
for pq in $TTFT; do
	p=${pq%%=*}
	ok "time to first token $p: the script's BucketQuantile, in seconds (as the stream writes it: 9 decimals)" \
		close "$(qv "inference_time_to_first_token_seconds{${TR}percentile=\"$p\"}")" "resnet50/1=${pq#*=}"
done
ok "time to first token p50: histogram_quantile over the republished buckets gives the same (ms / 1e3; the stream's ns)" \
	close "$(qv "histogram_quantile(0.5, sum by (model, version, le) (rate(nv_inference_first_response_histogram_ms_bucket$W))) / 1e3")" \
	"$(qv "max by (model, version) (inference_time_to_first_token_seconds{${TR}percentile=\"p50\"})")" 5e-10
# vLLM: generated tokens per prompt token, ours and over its own families; its TTFT p50 both ways
VM='meta-llama/Llama-3.1-8B/'
VW=$($PY -c "import sys; sys.path.insert(0, '$HELP'); import fake_infer as f; print(repr(f.VLLM_TOKENS['generation'] / f.VLLM_TOKENS['prompt']))")
ok "vLLM: generation / prompt tokens over ours equals the increments'" close \
	"$(qv "sum by (model, version) (rate(inference_tokens_total{kind=\"generation\"}$W)) / sum by (model, version) (rate(inference_tokens_total{kind=\"prompt\"}$W))")" "$VM=$VW"
ok "vLLM: the same over its republished families" close \
	"$(qv "sum by (model_name) (rate({__name__=\"vllm:generation_tokens_total\"}$W)) / sum by (model_name) (rate({__name__=\"vllm:prompt_tokens_total\"}$W))" | sed 's|^/=|'"$VM"'=|')" "$VM=$VW"
VT=$($PY -c "import sys; sys.path.insert(0, '$HELP'); import fake_infer as f; b, c = f.VLLM_HIST['vllm:time_to_first_token_seconds'][1:3]; print(repr(f.wire(f.bucket_quantile(0.5, b, c))))")
ok "vLLM: TTFT p50 (ours) is the script's BucketQuantile" close \
	"$(qv 'inference_time_to_first_token_seconds{model="meta-llama/Llama-3.1-8B",percentile="p50"}')" "$VM=$VT"
ok "vLLM: histogram_quantile over its republished buckets gives the same" close \
	"$(qv "histogram_quantile(0.5, sum by (le) (rate({__name__=\"vllm:time_to_first_token_seconds_bucket\"}$W)))" | sed 's|^/=|'"$VM"'=|')" "$VM=$VT"
is "$(curl -s "$PURL/api/v1/targets" | $PY -c '
import json, sys
t = json.load(sys.stdin)["data"]["activeTargets"][0]
print(t["health"], repr(t["lastError"]))')" "up ''" "no scrape error"

# ---- the stream, exactly ------------------------------------------------------------------------
ok "accel-monitor ends after $N reports" wait_for "$T" sh -c "[ \$(wc -l <'$WORK/stream.jsonl') -ge $N ]"
ok "the stream passes check_report.py" $PY "$HELP/check_report.py" --config "$WORK/monitor.json" "$WORK/stream.jsonl"
ok "every execution_stats equals the increments exactly (counts, means, percentiles)" \
	$PY "$HELP/fake_infer.py" --check "$WORK/stream.jsonl" --log "$WORK/scrapes"
ok "every vLLM execution_stats too (tokens, TTFT and latency percentiles, means, gauges)" \
	$PY "$HELP/fake_infer.py" --flavour vllm --check "$WORK/stream.jsonl" --log "$WORK/vscrapes"
ok "accel-prom logged no warning" sh -c "! grep -v 'end of input' '$WORK/accel-prom.err'"

done_testing
