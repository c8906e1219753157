#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-otlp value for value against accel-prom: the neuron-monitor
# captures (2.x and 2020), the inference servers' stream and a stream of
# accel-monitor over the fake NVML (tests/helpers/fake_nvml.c, several GPUs
# with MIG, processes and errors) are each exported by accel-otlp to the test
# receiver (tests/helpers/otlp/receiver.mjs, which decodes every request with
# OpenTelemetry's own generated types) and served by accel-prom; each OTLP
# data point turned back into accel-prom's family and labels by the rules
# docs/accel-otlp.md gives (its table included) must equal accel-prom's
# exposition of the same stream, and every series of the exposition must be
# there (tests/helpers/otlp_values.py); the servers' latency histograms (a fake
# Triton and vLLM scraped with "latency_histograms") as explicit-bucket
# histograms, bucket for bucket. Once in OTLP/JSON too, which the
# receiver checks against the OTLP/JSON rules. No request may break the
# protocol (the receiver's errors.log stays empty).
. "$(dirname "$0")/lib.sh"

OTLP=$BIN/accel-otlp
PEER=$HELP/otlp/receiver.mjs
export AWS_EC2_METADATA_DISABLED=true
need "$OTLP is built" test -x "$OTLP"
need "node (scripts/install-deps.sh test)" command -v node
need "the test receiver's packages (make: npm ci in tests/helpers/otlp)" test -d "$HELP/otlp/node_modules/@opentelemetry/otlp-transformer"
need "${CC:-cc}" command -v "${CC:-cc}"
T=$((30 * SLOW))

# The fake NVML stream: three reports of several GPUs (MIG, processes, unsupported fields).
mkdir -p "$WORK/nvml"
ok "the fake libnvidia-ml.so.1 builds" fake_nvml_build "$WORK/nvml/libnvidia-ml.so.1"
printf '{ "period": "100ms", "system_metrics": [], "devices": [ { "type": "nvidia", "slow_period": "period" } ] }\n' \
	>"$WORK/nvml.json"
rc=0
FAKE_NVML_SCRIPT=$FIX/nvml/multi.nvml ACCEL_NVML_LIBRARY=$WORK/nvml/libnvidia-ml.so.1 \
	"$BIN/accel-monitor" -c "$WORK/nvml.json" -n 3 >"$WORK/fake-nvml.jsonl" 2>"$WORK/nvml.err" || rc=$?
is "$rc" 0 "accel-monitor over the fake NVML: exit 0"
is "$(nlines "$WORK/fake-nvml.jsonl")" 3 "... three reports"

# The inference servers' latency histograms: a fake Triton and a fake vLLM scraped with "latency_histograms".
spawn SRV $PY "$HELP/fake_infer.py" --port-file "$WORK/tport" --log "$WORK/tscrapes"
spawn VSRV $PY "$HELP/fake_infer.py" --flavour vllm --port-file "$WORK/vport" --log "$WORK/vscrapes"
ok "the fake Triton listens" wait_for "$T" test -s "$WORK/tport"
ok "the fake vLLM listens" wait_for "$T" test -s "$WORK/vport"
cat >"$WORK/hist.json" <<EOF
{ "period": "1s", "system_metrics": [],
  "runtimes": [
    { "address": "http://127.0.0.1:$(cat "$WORK/tport")/metrics", "server": "triton", "latency_histograms": true,
      "metrics": [ { "type": "execution_stats" } ] },
    { "address": "http://127.0.0.1:$(cat "$WORK/vport")/metrics", "server": "vllm", "latency_histograms": true,
      "metrics": [ { "type": "execution_stats" } ] } ] }
EOF
rc=0
"$BIN/accel-monitor" -c "$WORK/hist.json" -n 4 >"$WORK/histograms.jsonl" 2>"$WORK/hist.err" || rc=$?
is "$rc" 0 "accel-monitor over the fake servers with latency_histograms: exit 0"
ok "... its reports carry latency histograms" grep -q '"latency_histograms"' "$WORK/histograms.jsonl"
stop_all

# values NAME STREAM [ACCEL-OTLP ARG...]: the stream through accel-otlp to a receiver of its own, and through
# accel-prom; the checker compares the two.
values() {
	vn=$1 stream=$2
	shift 2
	mkdir -p "$WORK/$vn"
	spawn RECV node "$PEER" --dir "$WORK/$vn" >/dev/null 2>"$WORK/$vn.recv.err"
	ok "$vn: the receiver is up" wait_for "$T" test -s "$WORK/$vn/port"
	rc=0
	"$OTLP" --endpoint "http://127.0.0.1:$(cat "$WORK/$vn/port")" --drain-timeout 20s "$@" \
		<"$stream" 2>"$WORK/$vn.err" || rc=$?
	is "$rc" 0 "$vn: accel-otlp reads the stream, sends it and exits 0"
	sed 's/^/#   /' "$WORK/$vn.err" | head -5 >&2
	ok "$vn: accel-prom serves the same stream" prom_listen PP "$WORK/$vn.prom.err" "$stream"
	ok "$vn: ... once it has read all of it" wait_for "$T" sh -c \
		'curl -s "http://127.0.0.1:$1/metrics" >"$2" && grep -q "^accel_prom_input_open 0" "$2"' \
		sh "$PP" "$WORK/$vn.prom"
	ok "$vn: every series of accel-prom's exposition, value for value" \
		sh -c '$1 "$2" "$3" "$4" "$5" >"$6" 2>&1' sh "$PY" "$HELP/otlp_values.py" "$TOP/docs/accel-otlp.md" \
		"$WORK/$vn.prom" "$WORK/$vn/requests.jsonl" "$WORK/$vn.check"
	sed 's/^/#   /' "$WORK/$vn.check" | tail -12 >&2
	ok "$vn: no request broke the protocol" test ! -s "$WORK/$vn/errors.log"
	stop_all
}

values neuron-2x "$FIX/streams/neuron-monitor-2x.jsonl"
values neuron-2020 "$FIX/streams/neuron-monitor-2020.jsonl"
values endpoints "$FIX/streams/endpoint-runtimes.jsonl"
values fake-nvml "$WORK/fake-nvml.jsonl"
ok "fake-nvml: the resource's host.name is the reports' instance_info.hostname" $PY - "$WORK/fake-nvml.jsonl" \
	"$WORK/fake-nvml/requests.jsonl" <<'EOF'
import json, sys
host = json.loads(open(sys.argv[1]).readline())["instance_info"]["hostname"]
names = {kv["value"]["stringValue"] for line in open(sys.argv[2]) for rm in json.loads(line)["resourceMetrics"]
         for kv in rm["resource"]["attributes"] if kv["key"] == "host.name"}
assert host and names == {host}, (host, names)
EOF
values fake-nvml-json "$WORK/fake-nvml.jsonl" --protocol http/json --compression none
values histograms "$WORK/histograms.jsonl"
ok "histograms: GenAI's request duration as an OTLP explicit-bucket histogram" \
	grep -q '"name":"gen_ai.server.request.duration".*"histogram":{"dataPoints":\[{.*"explicitBounds":\[' \
	"$WORK/histograms/requests.jsonl"
values histograms-json "$WORK/histograms.jsonl" --protocol http/json
values endpoints-small-batches "$FIX/streams/endpoint-runtimes.jsonl" --max-points-per-send 16
ok "small batches: more than one request" test "$(nlines "$WORK/endpoints-small-batches/requests.jsonl")" -gt 10
ok "JSON: the requests were JSON" grep -q '"contentType":"application/json"' "$WORK/fake-nvml-json/requests.log"
done_testing
