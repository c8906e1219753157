#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-prom --passthrough: two Triton endpoint runtimes whose
# entries carry their exposition (docs/report-format.md §6.1). Their families
# are served unchanged next to accel-prom's own, each sample labelled with
# its runtime; exactly the families and values of the expositions are there
# (a histogram and a summary whole), HELP and TYPE once per family; a family
# named like one of accel-prom's is dropped with one warning; a bad
# exposition is logged with the runtime and the line and the last good one
# stays; promtool finds only the servers' names' lints; in the OpenMetrics
# form the samples keep their names. Without --passthrough none of it is served.
. "$(dirname "$0")/lib.sh"

if [ ! -x "$BIN/accel-prom" ] || ! command -v curl >/dev/null 2>&1; then
	echo "ok 1 # skip needs $BIN/accel-prom and curl"
	echo "1..1"
	exit 0
fi
T=$((10 * SLOW))

# The stream: two reports; the expositions and the samples each must give are written by the same script.
$PY - "$WORK/in.jsonl" "$WORK/want.txt" <<'EOF'
import json, sys

def expo(success, extra=""):
    return (
        "# HELP nv_inference_request_success Number of successful inference requests, all batch sizes\n"
        "# TYPE nv_inference_request_success counter\n"
        'nv_inference_request_success{model="resnet50",version="1"} %d\n'
        'nv_inference_request_success{model="bert",version="1"} %d\n'
        "# HELP nv_inference_request_duration_us Cumulative inference request duration in microseconds\n"
        "# TYPE nv_inference_request_duration_us counter\n"
        'nv_inference_request_duration_us{model="resnet50",version="1"} %d\n'
        "# HELP nv_gpu_utilization GPU utilization rate [0.0 - 1.0)\n"
        "# TYPE nv_gpu_utilization gauge\n"
        'nv_gpu_utilization{gpu_uuid="GPU-0b6b0a5e"} 0.5\n'
        "# HELP nv_inference_first_response_histogram_ms Duration from request to first response in milliseconds\n"
        "# TYPE nv_inference_first_response_histogram_ms histogram\n"
        'nv_inference_first_response_histogram_ms_bucket{model="resnet50",version="1",le="10"} 3\n'
        'nv_inference_first_response_histogram_ms_bucket{model="resnet50",version="1",le="+Inf"} 5\n'
        'nv_inference_first_response_histogram_ms_sum{model="resnet50",version="1"} 42.5\n'
        'nv_inference_first_response_histogram_ms_count{model="resnet50",version="1"} 5\n'
        "# HELP nv_inference_queue_summary_us Summary of queue durations, with \\\\ and \\n escapes\n"
        "# TYPE nv_inference_queue_summary_us summary\n"
        'nv_inference_queue_summary_us{model="resnet50",version="1",quantile="0.5"} 100\n'
        'nv_inference_queue_summary_us_sum{model="resnet50",version="1"} 1000\n'
        'nv_inference_queue_summary_us_count{model="resnet50",version="1"} 10\n'
        "# TYPE execution_status_total counter\n"
        'execution_status_total{status_type="completed"} 7\n'
        "# TYPE nv_cpu_utilization gauge\n"
        'nv_cpu_utilization{runtime_tag="own"} 0.25\n'
        % (success, success // 10, success * 1000)) + extra

def entry(idx, port, pid, text):
    return {"runtime_index": idx, "address": "http://127.0.0.1:%d/metrics" % port, "pid": pid,
            "runtime_tag": "tritonserver", "error": "", "server": "triton", "exposition": text,
            "report": {"execution_stats": {"period": 1.0, "error": "",
                                           "models": {"resnet50": {"1": {"execution_summary": {"completed": 5}}}}}}}

def report(seq, a, b):
    return {"timestamp": "2026-11-27T05:00:0%d.000Z" % seq, "monitor": {"version": "0.1.0", "seq": seq},
            "runtime_data": [entry(0, 8002, 3100, a), entry(1, 8012, 3101, b)],
            "device_data": [], "system_data": {}}

with open(sys.argv[1], "w") as f:
    f.write(json.dumps(report(1, expo(100), expo(40))) + "\n")
    # A's values move; B's exposition has a bad fifth line: B keeps report 1's
    bad = expo(60).split("\n")
    bad[4] = "nv_inference_request_duration_us{model=resnet50} 1"
    f.write(json.dumps(report(2, expo(250), "\n".join(bad))) + "\n")

want = []
for pid, s in ((3100, 250), (3101, 40)):
    rt = 'runtime_tag="tritonserver",pid="%d"' % pid
    want += [
        'nv_inference_request_success{model="resnet50",version="1",%s} %d' % (rt, s),
        'nv_inference_request_success{model="bert",version="1",%s} %d' % (rt, s // 10),
        'nv_inference_request_duration_us{model="resnet50",version="1",%s} %d' % (rt, s * 1000),
        'nv_gpu_utilization{gpu_uuid="GPU-0b6b0a5e",%s} 0.5' % rt,
        'nv_inference_first_response_histogram_ms_bucket{model="resnet50",version="1",le="10",%s} 3' % rt,
        'nv_inference_first_response_histogram_ms_bucket{model="resnet50",version="1",le="+Inf",%s} 5' % rt,
        'nv_inference_first_response_histogram_ms_sum{model="resnet50",version="1",%s} 42.5' % rt,
        'nv_inference_first_response_histogram_ms_count{model="resnet50",version="1",%s} 5' % rt,
        'nv_inference_queue_summary_us{model="resnet50",version="1",quantile="0.5",%s} 100' % rt,
        'nv_inference_queue_summary_us_sum{model="resnet50",version="1",%s} 1000' % rt,
        'nv_inference_queue_summary_us_count{model="resnet50",version="1",%s} 10' % rt,
        'nv_cpu_utilization{exported_runtime_tag="own",%s} 0.25' % rt,
    ]
open(sys.argv[2], "w").write("\n".join(sorted(want)) + "\n")
EOF

# start NAME [options]: accel-prom reading the stream on a free port; sets URL and PID.
start() {
	name=$1
	shift
	PORT=$(free_port)
	"$BIN/accel-prom" --listen-address "127.0.0.1:$PORT" "$@" <"$WORK/in.jsonl" 2>"$WORK/$name.err" &
	PID=$!
	_pids="$_pids $PID"
	URL=http://127.0.0.1:$PORT
}
get() { curl -s --max-time "$T" "$@"; }
input_done() { get "$URL/metrics" | grep -qx 'accel_prom_input_open 0'; }

start pass --passthrough
wait_for "$T" input_done || diag "accel-prom did not finish its input"
get -o "$WORK/pass.prom" "$URL/metrics"
get -H 'Accept: application/openmetrics-text; version=1.0.0' -o "$WORK/pass.om" "$URL/metrics"
kill "$PID"
wait "$PID" 2>/dev/null || true

grep -e '^nv_' "$WORK/pass.prom" | sort >"$WORK/got.txt"
ok "exactly the servers' samples, each labelled with its runtime, B's from its last good exposition" \
	diff -u "$WORK/want.txt" "$WORK/got.txt"
for fam in nv_inference_request_success:counter nv_inference_request_duration_us:counter nv_gpu_utilization:gauge \
	nv_inference_first_response_histogram_ms:histogram nv_inference_queue_summary_us:summary nv_cpu_utilization:gauge; do
	is "$(grep -c "^# TYPE ${fam%%:*} ${fam#*:}\$" "$WORK/pass.prom")" 1 "${fam%%:*}: TYPE ${fam#*:}, once"
done
is "$(grep -c '^# HELP nv_inference_request_success Number of successful inference requests, all batch sizes$' \
	"$WORK/pass.prom")" 1 "HELP as the server wrote it, once"
ok "HELP escapes kept" grep -qx '# HELP nv_inference_queue_summary_us Summary of queue durations, with \\\\ and \\n escapes' \
	"$WORK/pass.prom"
is "$(grep -c '^# TYPE nv_cpu_utilization untyped$\|^# HELP nv_cpu_utilization' "$WORK/pass.prom")" 0 \
	"no HELP where the server gave none"
ok "accel-prom's own series are there too" grep -q \
	'^execution_status_total{.*model="resnet50",pid="3100",.*runtime_tag="tritonserver",status_type="completed",.*version="1"} 10$' \
	"$WORK/pass.prom"
ok "the server's execution_status_total is not served" sh -c "! grep -q '^execution_status_total{status_type' '$WORK/pass.prom'"
is "$(grep -c 'family "execution_status_total" has the name of one of accel-prom.s own; not served' "$WORK/pass.err")" 1 \
	"one warning for the family named like accel-prom's"
ok "the bad exposition is logged with its runtime and line" grep -q \
	'stdin:2: --passthrough: runtime "tritonserver" (http://127.0.0.1:8012/metrics): bad exposition: line 5: .*its last good families stay' \
	"$WORK/pass.err"
# promtool: the exposition parses; its only lints are of the servers' own names (Triton's _us, _ms, counters
# without _total), which --passthrough keeps as they are (docs/accel-prom.md).
promcheck_pass() {
	out=$(promtool check metrics <"$1" 2>&1) || true
	rest=$(printf '%s\n' "$out" | grep -v -e '^$' \
		-e '^nv_[a-z_]* \(counter metrics should have "_total" suffix\|metric names should not contain abbreviated units\|metric name should not include type .\(histogram\|summary\).\|no help text\)$' || true)
	[ -z "$rest" ] || {
		printf '%s\n' "$rest"
		return 1
	}
}
if command -v promtool >/dev/null 2>&1; then
	ok "promtool check metrics: the servers' names' lints only" promcheck_pass "$WORK/pass.prom"
	printf '%s\n' 'nv_x{a="1"} 1' 'nv_x{a="1"} 2' >"$WORK/dup.prom"
	ok "(promtool does find a duplicate series)" sh -c "! promtool check metrics <'$WORK/dup.prom' >/dev/null 2>&1"
else
	_result 1 "promtool is not installed (scripts/install-deps.sh test installs it)"
fi
ok "OpenMetrics: a counter not named _total is unknown there, its samples' names unchanged" sh -c "
	grep -qx '# TYPE nv_inference_request_success unknown' '$WORK/pass.om' &&
	grep -q '^nv_inference_request_success{model=\"resnet50\",version=\"1\",runtime_tag=\"tritonserver\",pid=\"3100\"} 250\$' '$WORK/pass.om' &&
	grep -qx '# TYPE nv_cpu_utilization gauge' '$WORK/pass.om' && tail -1 '$WORK/pass.om' | grep -qx '# EOF'"

start plain
wait_for "$T" input_done || diag "accel-prom did not finish its input"
get -o "$WORK/plain.prom" "$URL/metrics"
kill "$PID"
wait "$PID" 2>/dev/null || true
is "$(grep -c '^nv_' "$WORK/plain.prom")" 0 "without --passthrough: none of the servers' families"
ok "without --passthrough: accel-prom's own series" grep -q '^execution_status_total{.*model="resnet50"' "$WORK/plain.prom"

done_testing
