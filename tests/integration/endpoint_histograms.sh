#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Latency histograms end to end ("latency_histograms": true): a fake Triton and a fake vLLM
# (tests/helpers/fake_infer.py, histograms advancing by known increments at every scrape) -> accel-monitor ->
# accel-prom -> a real Prometheus scraping every second, and -> accel-remote-write -> a second Prometheus (its
# remote write receiver). Checked:
#   - every execution_stats of the stream carries each histogram's period buckets exactly (bounds in seconds,
#     per-bucket counts, sum, count; the runtime's merged one), and the stream passes check_report.py;
#   - accel-prom's text and OpenMetrics expositions pass promtool check metrics, and show the histogram
#     families (# TYPE ... histogram, _bucket{le} cumulative to +Inf, _sum, _count);
#   - in Prometheus, histogram_quantile over our buckets equals the stream's percentile of the same
#     distribution, for each of p25, p50, p75, p99 (the report's percentiles are BucketQuantile over the
#     same buckets; the increments are the same every scrape, so any window's quantile is the period's);
#   - _count and _sum over a window equal the increments';
#   - accel-remote-write pushed every _bucket/_sum/_count series accel-prom serves, same labels and values
#     (rw_compare.py), and histogram_quantile there gives the same (the metadata's type histogram:
#     test_remote_write);
#   - accel-csv writes each histogram as the rows of its _bucket{le}, _sum and _count series (long and wide),
#     as csv_check.py's own mapping gives them.
. "$(dirname "$0")/lib.sh"

need "$BIN/accel-monitor and $BIN/accel-prom are built" test -x "$BIN/accel-monitor" -a -x "$BIN/accel-prom"
need "prometheus (Debian package prometheus)" command -v prometheus
need "promtool (Debian package prometheus)" command -v promtool
need "$BIN/accel-remote-write is built" test -x "$BIN/accel-remote-write"
need "curl" command -v curl
T=$((40 * SLOW))
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED

spawn SRV $PY "$HELP/fake_infer.py" --port-file "$WORK/port" --log "$WORK/scrapes"
spawn VSRV $PY "$HELP/fake_infer.py" --flavour vllm --port-file "$WORK/vport" --log "$WORK/vscrapes"
ok "the fake Triton listens" wait_for $((10 * SLOW)) test -s "$WORK/port"
ok "the fake vLLM listens" wait_for $((10 * SLOW)) test -s "$WORK/vport"
cat >"$WORK/monitor.json" <<EOF
{
  "period": "1s",
  "runtimes": [
    { "address": "http://127.0.0.1:$(cat "$WORK/port")/metrics", "server": "triton", "latency_histograms": true,
      "metrics": [ { "type": "execution_stats" } ] },
    { "address": "http://127.0.0.1:$(cat "$WORK/vport")/metrics", "server": "vllm", "latency_histograms": true,
      "metrics": [ { "type": "execution_stats" } ] }
  ]
}
EOF
ok "--check-config shows latency_histograms" sh -c "'$BIN/accel-monitor' -c '$WORK/monitor.json' --check-config | grep -q '\"latency_histograms\": true'"

# the remote write receiver: a Prometheus of its own
RP=$(free_port)
RURL=http://127.0.0.1:$RP
printf 'global:\n  evaluation_interval: 1s\n' >"$WORK/receiver.yml"
spawn RPROM prometheus --config.file="$WORK/receiver.yml" --storage.tsdb.path="$WORK/rtsdb" \
	--web.listen-address="127.0.0.1:$RP" --web.enable-remote-write-receiver --log.level=warn \
	2>"$WORK/receiver.log"
ok "the receiving Prometheus is ready" wait_for "$T" curl -sf -o /dev/null "$RURL/-/ready"

AP=$(free_port)
N=${ENDPOINT_HISTOGRAMS_REPORTS:-20}
mkfifo "$WORK/in" "$WORK/rwin"
"$BIN/accel-prom" --listen-address "127.0.0.1:$AP" <"$WORK/in" 2>"$WORK/accel-prom.err" &
_pids="$_pids $!"
"$BIN/accel-remote-write" --url "$RURL/api/v1/write" --label job=rw --batch-send-deadline 100ms \
	<"$WORK/rwin" 2>"$WORK/rw.err" &
_pids="$_pids $!"
("$BIN/accel-monitor" -c "$WORK/monitor.json" -n "$N" 2>"$WORK/monitor.err" |
	tee "$WORK/stream.jsonl" "$WORK/rwin" >"$WORK/in") &
_pids="$_pids $!"
prometheus_start "127.0.0.1:$AP"

# qv EXPR: an instant query's values as "model=value ..." sorted.
qv() {
	curl -s --max-time 10 --data-urlencode "query=$1" "$PURL/api/v1/query" | $PY -c '
import json, sys
d = json.load(sys.stdin)
assert d["status"] == "success", d
print(" ".join(sorted("%s=%s" % (x["metric"].get("model", ""), x["value"][1]) for x in d["data"]["result"])))' 2>/dev/null
}
ok "Prometheus is ready" wait_for "$T" curl -sf -o /dev/null "$PURL/-/ready"
VM=meta-llama/Llama-3.1-8B
enough() { [ "$(qv "accel_model_time_to_first_token_seconds_count{model=\"$VM\"} >= 48")" != "" ]; }
ok "the histograms reach Prometheus (6 periods)" wait_for "$T" enough

# ---- the expositions --------------------------------------------------------------------------
curl -s -o "$WORK/m.prom" "http://127.0.0.1:$AP/metrics"
curl -s -H 'Accept: application/openmetrics-text; version=1.0.0' -o "$WORK/m.om" "http://127.0.0.1:$AP/metrics"
ok "text: promtool check metrics finds nothing" sh -c "promtool check metrics <'$WORK/m.prom'"
ok "text: a histogram family" grep -q '^# TYPE accel_model_time_to_first_token_seconds histogram$' "$WORK/m.prom"
ok "text: its +Inf bucket, sum and count" sh -c "grep -q '^accel_model_request_duration_seconds_bucket{.*model=\"$VM\".*le=\"+Inf\"} ' '$WORK/m.prom' && grep -q '^accel_model_request_duration_seconds_sum{' '$WORK/m.prom' && grep -q '^accel_model_request_duration_seconds_count{' '$WORK/m.prom'"
ok "OpenMetrics: the histogram family with its unit" sh -c "grep -q '^# TYPE accel_model_time_to_first_token_seconds histogram$' '$WORK/m.om' && grep -q '^# UNIT accel_model_time_to_first_token_seconds seconds$' '$WORK/m.om'"
ok "OpenMetrics: the same samples as the text" sh -c "grep -v '^#' '$WORK/m.om' | grep '^accel_model_' | sort >'$WORK/om.s'; grep '^accel_model_' '$WORK/m.prom' | sort >'$WORK/prom.s'; cmp '$WORK/om.s' '$WORK/prom.s'"
# promtool parses text 0.0.4: the OpenMetrics histogram families without their # UNIT lines (Prometheus itself
# scrapes the OpenMetrics body: "no scrape error" below)
ok "OpenMetrics: promtool check metrics on the histogram families" sh -c "grep -e '^# HELP accel_model_' -e '^# TYPE accel_model_' -e '^accel_model_' '$WORK/m.om' | promtool check metrics"

# ---- Prometheus: histogram_quantile over our buckets is the stream's percentile ------------------------
# close A B: every model of A has B's value within 5e-10 absolute (the stream's 9 decimals), the same models.
close() {
	$PY - "$1" "$2" <<'EOF'
import sys
def parse(s):
    return {k: float(v) for k, v in (x.rsplit("=", 1) for x in s.split())}
a, b = parse(sys.argv[1]), parse(sys.argv[2])
assert a and set(a) == set(b), (a, b)
for k in a:
    assert abs(a[k] - b[k]) <= 5e-10, (k, a[k], b[k])
EOF
}
# the last report's percentile P of distribution D for each model with one, as "model=value"
pct() {
	$PY - "$WORK/stream.jsonl" "$1" "$2" <<'EOF'
import json, sys
last = {}
for line in open(sys.argv[1]):
    for e in json.loads(line).get("runtime_data", []):
        for m, vs in e.get("report", {}).get("execution_stats", {}).get("models", {}).items():
            for v, o in vs.items():
                x = o.get("latency_stats", {}).get(sys.argv[2], {}).get(sys.argv[3])
                if x is not None:
                    last[m] = x
print(" ".join(sorted("%s=%r" % kv for kv in last.items())))
EOF
}
W='[1m]'
for pair in "accel_model_time_to_first_token_seconds time_to_first_token" "accel_model_request_duration_seconds total_latency"; do
	fam=${pair% *} dist=${pair#* }
	for pq in p25:0.25 p50:0.5 p75:0.75 p99:0.99; do
		p=${pq%%:*} q=${pq#*:}
		ok "$fam: histogram_quantile($q) in Prometheus is the stream's $dist.$p" close \
			"$(qv "histogram_quantile($q, sum by (model, le) (rate(${fam}_bucket$W)))")" "$(pct "$dist" "$p")"
	done
done
# the mean over a window from _sum / _count is the increments' (vLLM TTFT: 2.125 s over 8 per scrape)
VMEAN=$($PY -c "import sys; sys.path.insert(0, '$HELP'); import fake_infer as f; b = f.VLLM_HIST['vllm:time_to_first_token_seconds']; print(repr(b[3] / b[2][-1]))")
ok "vLLM TTFT: rate(_sum) / rate(_count) is the increments' mean" close \
	"$(qv "rate(accel_model_time_to_first_token_seconds_sum{model=\"$VM\"}$W) / rate(accel_model_time_to_first_token_seconds_count{model=\"$VM\"}$W)")" \
	"$VM=$VMEAN"
is "$(curl -s "$PURL/api/v1/targets" | $PY -c '
import json, sys
t = json.load(sys.stdin)["data"]["activeTargets"][0]
print(t["health"], repr(t["lastError"]))')" "up ''" "no scrape error (Prometheus asks for OpenMetrics 1.0.0 first)"

# ---- accel-remote-write: what accel-prom serves, as Prometheus would scrape it ----------------------------------
ok "accel-monitor ends after $N reports" wait_for "$T" sh -c "[ \$(wc -l <'$WORK/stream.jsonl') -ge $N ]"
ok "remote write: every series accel-prom serves (histograms' _bucket, _sum, _count too) is in the receiver" \
	wait_for "$T" $PY "$HELP/rw_compare.py" "http://127.0.0.1:$AP/metrics" "$RURL" rw
$PY "$HELP/rw_compare.py" "http://127.0.0.1:$AP/metrics" "$RURL" rw >/dev/null 2>"$WORK/rw.diff" ||
	sed 's/^/#   /' "$WORK/rw.diff" | head -20 >&2
PURL_SCRAPE=$PURL
PURL=$RURL
ok "remote write: the receiver has the histogram buckets" test "$(qv "count(accel_model_time_to_first_token_seconds_bucket{job=\"rw\"})")" = "=8"
ok "remote write: histogram_quantile(0.5) there is the stream's TTFT p50" close \
	"$(qv "histogram_quantile(0.5, sum by (model, le) (accel_model_time_to_first_token_seconds_bucket{job=\"rw\"}))")" \
	"$(pct time_to_first_token p50)"
PURL=$PURL_SCRAPE

# ---- the stream, exactly ------------------------------------------------------------------------
ok "the stream passes check_report.py" $PY "$HELP/check_report.py" --config "$WORK/monitor.json" "$WORK/stream.jsonl"
ok "every Triton execution_stats has its TTFT histogram's buckets exactly" \
	$PY "$HELP/fake_infer.py" --check "$WORK/stream.jsonl" --log "$WORK/scrapes" --histograms
ok "every vLLM execution_stats has its two histograms' buckets and the merged one exactly" \
	$PY "$HELP/fake_infer.py" --flavour vllm --check "$WORK/stream.jsonl" --log "$WORK/vscrapes" --histograms
# ---- accel-csv: Prometheus' series of each histogram as rows (long) and columns (wide), as csv_check.py maps them
ok "accel-csv long: name_bucket{le}, name_sum, name_count rows, each the mapping's (csv_check.py)" sh -c \
	"'$BIN/accel-csv' <'$WORK/stream.jsonl' >'$WORK/long.csv' 2>'$WORK/csv.err' && grep -q '^[^,]*,[^,]*,execution_stats,[^,]*,accel_model_time_to_first_token_seconds_bucket,' '$WORK/long.csv' && $PY '$HELP/csv_check.py' --input '$WORK/stream.jsonl' '$WORK/long.csv'"
# (wide: a report with new columns goes on in wide.1.csv, wide.2.csv, ...)
mkdir "$WORK/w"
ok "accel-csv wide: the same as columns (csv_check.py)" sh -c \
	"'$BIN/accel-csv' --format wide -o '$WORK/w/wide.csv' <'$WORK/stream.jsonl' 2>>'$WORK/csv.err' && $PY '$HELP/csv_check.py' --format wide --input '$WORK/stream.jsonl' '$WORK/w/wide.csv' \$(ls '$WORK/w' | grep -v '^wide.csv$' | sort -t. -k2 -n | sed 's|^|$WORK/w/|')"
ok "accel-prom logged no warning" sh -c "! grep -v 'end of input' '$WORK/accel-prom.err'"
ok "accel-remote-write logged no warning" sh -c "! grep -v -e 'end of input' -e 'input ended' '$WORK/rw.err'"

done_testing
