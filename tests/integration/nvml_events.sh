#!/bin/sh
# SPDX-License-Identifier: MIT
#
# NVML events end to end: accel-monitor on two fake GPUs
# (tests/helpers/fake_nvml.c) whose events a test appends to the fake's
# events file while it runs: two XIDs between two reports are two, a burst
# of 120 XIDs spread over many cycles is counted exactly once, double-bit
# ECC events, GPU 0 lost while the event thread waits (GPU 1's events still
# arrive, the loss is counted once, GPU 0's events are counted again once
# it answers), a reload that reopens the collector (the thread stops and
# starts; events after it are counted), and a clean exit (the sanitized
# build reports leaks as exit 99). Then accel-prom serves
# accelerator_xid_errors_total{xid} as the sums, and DCGM_FI_DEV_XID_ERRORS
# under --collectors keeps dcgm-exporter's meaning: the last XID.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
PROM=$BIN/accel-prom
CHECK="$PY $HELP/check_report.py"
CC=${CC:-cc}
export AWS_EC2_METADATA_DISABLED=true
need "$MON is built" test -x "$MON"
need "$PROM is built" test -x "$PROM"
need "a C compiler ($CC) for the fake libnvidia-ml.so.1" command -v "$CC"
need "curl" command -v curl

mkdir -p "$WORK/lib"
ok "the fake libnvidia-ml.so.1 builds" fake_nvml_build "$WORK/lib/libnvidia-ml.so.1"
EV=$WORK/events
: >"$EV"
rm -f "$WORK/lost"
cat >"$WORK/gpus.nvml" <<EOF
events_file $EV
gpu
name NVIDIA H100 80GB HBM3
lost_file $WORK/lost
gpu
name NVIDIA H100 80GB HBM3
EOF
cat >"$WORK/mon.json" <<'EOF'
{ "period": "200ms", "system_metrics": [], "devices": [ { "type": "nvidia" } ] }
EOF

# lines FILE: complete report lines so far.
lines() { if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }
# more N: at least N more reports than now (N periods passed).
more() {
	want=$(($(lines "$WORK/mon.out") + $1))
	wait_for $((5 * SLOW)) sh -c "[ \$(wc -l <'$WORK/mon.out') -ge $want ]" || true
}
# sum CODE GPU: XID CODE's counts of GPU over every report.
pysum() {
	$PY - "$WORK/mon.out" "$@" <<'EOF'
import json, sys
path, what, gpu = sys.argv[1], sys.argv[2], sys.argv[3]
total = 0
for l in open(path, encoding="utf-8"):
    try:
        r = json.loads(l)
    except ValueError:
        continue
    for e in r["device_data"]:
        d = e["report"].get("device_errors", {}).get("devices", {}).get(gpu, {})
        if what.startswith("events."):
            total += d.get("events", {}).get(what[7:], 0)
        elif what == "codes":
            total += sum(d.get("xid_errors", {}).values())
        elif what == "listed":
            total += len(d.get("xid_events", []))
        else:
            total += d.get("xid_errors", {}).get(what, 0)
print(total)
EOF
}

(
	FAKE_NVML_SCRIPT=$WORK/gpus.nvml FAKE_NVML_STATS=$WORK/stats ACCEL_NVML_LIBRARY=$WORK/lib/libnvidia-ml.so.1 \
		exec "$MON" -c "$WORK/mon.json" >"$WORK/mon.out" 2>"$WORK/mon.err"
) &
MONPID=$!
_pids="$_pids $MONPID"
more 2

# Between cycles: two XIDs 79 and a double-bit ECC event.
printf 'xid 0 79\nxid 0 79\ndbe 1\n' >>"$EV"
more 2
# During cycles: 120 XIDs, one every 10 ms or so, over about six periods.
i=0
while [ $i -lt 120 ]; do
	echo "xid 1 $((40 + i % 3))" >>"$EV"
	i=$((i + 1))
	sleep 0.01
done
more 2
# GPU 0 lost while the thread waits; GPU 1's event arrives meanwhile; back; GPU 0's next XID.
touch "$WORK/lost"
more 3
echo "xid 1 48" >>"$EV"
more 2
rm -f "$WORK/lost"
more 3
echo "xid 0 31" >>"$EV"
more 2
# A reload that changes the device block: the collector (and its thread) is closed and opened again.
cat >"$WORK/mon.json" <<'EOF'
{ "period": "250ms", "system_metrics": [], "devices": [ { "type": "nvidia" } ] }
EOF
kill -HUP "$MONPID"
more 3
echo "xid 0 13" >>"$EV"
more 3
kill -TERM "$MONPID"
rc=0
wait "$MONPID" || rc=$?
is "$rc" "0" "accel-monitor exits 0 after SIGTERM (the sanitized build: no leak, no error)"
ok "the stream passes the checker" $CHECK --reloads "$WORK/mon.out"

is "$(pysum 79 0)" "2" "two XIDs between two reports are two"
is "$(pysum events.double_bit_ecc 1)" "1" "one double-bit ECC event on GPU 1"
is "$(pysum 40 1) $(pysum 41 1) $(pysum 42 1)" "40 40 40" "120 XIDs during cycles: each counted once, by code"
is "$(pysum 48 1)" "1" "GPU 1's XID while GPU 0 is lost"
is "$(pysum events.gpu_lost 0)" "1" "GPU 0 lost once"
is "$(pysum events.gpu_lost 1)" "0" "GPU 1 never lost"
is "$(pysum 31 0)" "1" "GPU 0's XID after it answers again"
is "$(pysum 13 0)" "1" "an XID after the reload"
is "$(pysum codes 0)" "4" "GPU 0: 4 XIDs in all, none twice"
is "$(pysum listed 0)" "4" "GPU 0: each XID listed once with its time (xid_events)"
is "$($PY -c '
import json, sys
last = [json.loads(l) for l in open(sys.argv[1])][-1]
d = last["device_data"][0]["report"]["device_errors"]["devices"]["0"]
print(d.get("last_xid"), d.get("last_xid_time", "")[:2])' "$WORK/mon.out")" "13 20" "last_xid is the last code, with its time"
ok "a lost GPU in the wait is logged" grep -q "waiting for events: GPU is lost" "$WORK/mon.err"
ok "XIDs are logged" grep -q "GPU 0: XID 79" "$WORK/mon.err"
waits=$(sed -n 's/^event_waits \([0-9]*\).*/\1/p' "$WORK/stats" | tail -1)
ok "the event thread waits (200 ms each), it does not spin: $waits waits" test "${waits:-0}" -gt 0 -a "${waits:-0}" -lt 400

# accel-prom: the counter sums, and DCGM_FI_DEV_XID_ERRORS as dcgm-exporter means it (the last XID).
N=$(lines "$WORK/mon.out")
PORT=$(free_port)
"$PROM" --port "$PORT" --collectors "$FIX/dcgm/default-counters.csv" <"$WORK/mon.out" >/dev/null 2>"$WORK/prom.err" &
_pids="$_pids $!"
ended() {
	curl -s "http://127.0.0.1:$PORT/health" | grep -q "input ended.* after $N reports" &&
		curl -s "http://127.0.0.1:$PORT/metrics" >"$WORK/metrics.txt"
}
ok "accel-prom reads the $N reports" wait_for $((10 * SLOW)) ended
ok "accelerator_xid_errors_total{xid=\"79\"} 2 on GPU 0" \
	grep -q '^accelerator_xid_errors_total{.*device="0".*xid="79".*} 2$' "$WORK/metrics.txt"
ok "accelerator_xid_errors_total{xid=\"41\"} 40 on GPU 1" \
	grep -q '^accelerator_xid_errors_total{.*device="1".*xid="41".*} 40$' "$WORK/metrics.txt"
ok "accelerator_device_events_total{event_type=\"gpu_lost\"} 1 on GPU 0" \
	grep -q '^accelerator_device_events_total{.*device="0".*event_type="gpu_lost".*} 1$' "$WORK/metrics.txt"
ok "accelerator_last_xid 13 on GPU 0" grep -q '^accelerator_last_xid{.*device="0".*} 13$' "$WORK/metrics.txt"
ok "DCGM_FI_DEV_XID_ERRORS is the last XID (13), as in dcgm-exporter" \
	grep -q '^DCGM_FI_DEV_XID_ERRORS{.*gpu="0".*} 13$' "$WORK/metrics.txt"
ok "... with err_code=\"13\" and NVIDIA's name of it, err_msg=\"Graphics Engine Exception\"" \
	grep -q '^DCGM_FI_DEV_XID_ERRORS{.*err_code="13",err_msg="Graphics Engine Exception",gpu="0".*} 13$' \
	"$WORK/metrics.txt"
is "$(grep -c '^DCGM_FI_DEV_XID_ERRORS{.*gpu="0"' "$WORK/metrics.txt")" "1" \
	"one DCGM_FI_DEV_XID_ERRORS series of GPU 0: the earlier Xids' series are gone"

done_testing
