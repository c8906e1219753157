#!/bin/sh
# SPDX-License-Identifier: MIT
#
# NVLink end to end: accel-monitor on three fake GPUs
# (tests/helpers/fake_nvml.c): one without NVLink (NOT_SUPPORTED: no
# "nvlink" fields at all), one with four links (link 2 down, link 1's error
# counters rising by one per read), and the same on the old library
# (-DFAKE_NVML_OLD). The report passes the checker, throughput is the data
# counters' increase over the period in bytes per second, error counts are
# increases per period; accel-prom serves accelerator_nvlink_active,
# accelerator_nvlink_throughput_bytes_per_second{link,direction} and
# accelerator_nvlink_errors_total{link,type}, and promtool finds nothing to
# say about them. Also the clock-event reasons of the same GPUs:
# accelerator_clock_event_reasons{reason} and the raw mask. Under
# --collectors, dcgm-exporter's NVLink error totals (commented out in its
# default file) are the sums over the links; its bandwidth field is named
# as not served.
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
need "promtool (Debian package prometheus)" command -v promtool

mkdir -p "$WORK/new" "$WORK/old"
ok "the fake libnvidia-ml.so.1 builds" fake_nvml_build "$WORK/new/libnvidia-ml.so.1"
ok "the old fake builds" fake_nvml_build "$WORK/old/libnvidia-ml.so.1" -DFAKE_NVML_OLD
cat >"$WORK/gpus.nvml" <<'EOF'
gpu
name NVIDIA A10
reasons 0x1
gpu
name NVIDIA H100 80GB HBM3
nvlink 4 1000 2000
nvlink_down 2
nvlink_errors 1 0 0 5 0 1
reasons 0x44
EOF
cat >"$WORK/mon.json" <<'EOF'
{ "period": "200ms", "system_metrics": [], "devices": [ { "type": "nvidia" } ] }
EOF

# field FILE EXPR: a Python expression over the reports (r: the list), printed.
field() {
	$PY - "$@" <<'EOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
def dev(n, group, gpu):
    return r[n]["device_data"][0]["report"][group]["devices"][gpu]
print(eval(sys.argv[2]))
EOF
}

for lib in new old; do
	rc=0
	FAKE_NVML_SCRIPT=$WORK/gpus.nvml ACCEL_NVML_LIBRARY=$WORK/$lib/libnvidia-ml.so.1 \
		"$MON" -c "$WORK/mon.json" -n 3 >"$WORK/$lib.out" 2>"$WORK/$lib.err" || rc=$?
	is "$rc" "0" "$lib: accel-monitor writes three reports"
	ok "$lib: they pass the checker" $CHECK --config "$WORK/mon.json" --count 3 "$WORK/$lib.out"
	O=$WORK/$lib.out
	is "$(field "$O" '"nvlink" in dev(2, "device_utilization", "0") or "nvlink_errors" in dev(2, "device_errors", "0")')" \
		"False" "$lib: a GPU without NVLink has no NVLink fields"
	is "$(field "$O" 'sorted(dev(2, "device_utilization", "1")["nvlink"])')" "['0', '1', '2', '3']" \
		"$lib: four links"
	is "$(field "$O" '[dev(2, "device_utilization", "1")["nvlink"][k]["active"] for k in "0123"]')" \
		"[True, True, False, True]" "$lib: link 2 is down"
	# 1000 KiB per read, one read per period: 1000 * 1024 bytes over the period.
	is "$(field "$O" 'round(dev(2, "device_utilization", "1")["nvlink"]["0"]["tx_bytes_per_second"] * r[2]["device_data"][0]["report"]["device_utilization"]["period"] / 1024)')" \
		"1000" "$lib: TX throughput is the counter's increase over the period"
	is "$(field "$O" 'round(dev(2, "device_utilization", "1")["nvlink"]["3"]["rx_bytes_per_second"] * r[2]["device_data"][0]["report"]["device_utilization"]["period"] / 1024)')" \
		"2000" "$lib: RX throughput likewise"
	is "$(field "$O" '[dev(n, "device_errors", "1")["nvlink_errors"]["1"]["crc_flit"] for n in range(3)]')" "[1, 1, 1]" \
		"$lib: link 1's CRC flit errors, one per period (primed at open)"
	is "$(field "$O" 'sorted(dev(2, "device_errors", "1")["nvlink_errors"]["0"].items())')" \
		"[('crc_data', 0), ('crc_flit', 0), ('recovery', 0), ('replay', 0)]" "$lib: link 0 has none"
	is "$(field "$O" '(dev(2, "device_thermal", "1")["clock_event_reasons"]["hw_thermal_slowdown"], dev(2, "device_thermal", "1")["clock_event_reasons_mask"])')" \
		"(1, 68)" "$lib: clock-event reasons by name and as the mask"
done

PORT=$(free_port)
"$PROM" --port "$PORT" <"$WORK/new.out" >/dev/null 2>"$WORK/prom.err" &
_pids="$_pids $!"
ended() {
	curl -s "http://127.0.0.1:$PORT/health" | grep -q "input ended.* after 3 reports" &&
		curl -s "http://127.0.0.1:$PORT/metrics" >"$WORK/metrics.txt"
}
ok "accel-prom reads the three reports" wait_for $((10 * SLOW)) ended
ok "accelerator_nvlink_active{link=\"2\"} 0" grep -q '^accelerator_nvlink_active{.*device="1".*link="2".*} 0$' "$WORK/metrics.txt"
ok "accelerator_nvlink_active{link=\"0\"} 1" grep -q '^accelerator_nvlink_active{.*device="1".*link="0".*} 1$' "$WORK/metrics.txt"
ok "accelerator_nvlink_throughput_bytes_per_second by link and direction" \
	grep -q '^accelerator_nvlink_throughput_bytes_per_second{.*device="1".*direction="tx".*link="3".*} ' "$WORK/metrics.txt"
ok "accelerator_nvlink_errors_total{link=\"1\",type=\"crc_flit\"} 3 (three periods)" \
	grep -q '^accelerator_nvlink_errors_total{.*device="1".*link="1".*type="crc_flit".*} 3$' "$WORK/metrics.txt"
ok "no NVLink series for the GPU without NVLink" sh -c "! grep -q '^accelerator_nvlink.*device=\"0\"' '$WORK/metrics.txt'"
ok "accelerator_clock_event_reasons{reason=\"gpu_idle\"} 1 on GPU 0" \
	grep -q '^accelerator_clock_event_reasons{.*device="0".*reason="gpu_idle".*} 1$' "$WORK/metrics.txt"
ok "accelerator_clock_event_reasons_mask 68 on GPU 1" \
	grep -q '^accelerator_clock_event_reasons_mask{.*device="1".*} 68$' "$WORK/metrics.txt"
grep -E '^(# (HELP|TYPE) )?accelerator_(nvlink|clock_event|xid|device_events)' "$WORK/metrics.txt" >"$WORK/ours.txt"
ok "promtool check metrics: nothing to say about the new families" sh -c "promtool check metrics <'$WORK/ours.txt'"

# dcgm-exporter's NVLink fields: the error totals summed over the links; the bandwidth field named as not served.
cat >"$WORK/nvlink.csv" <<'EOF'
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL, counter, Total number of NVLink flow-control CRC errors.
DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL, counter, Total number of NVLink data CRC errors.
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL,   counter, Total number of NVLink retries.
DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL, counter, Total number of NVLink recovery errors.
DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL,            counter, Total number of NVLink bandwidth counters for all lanes.
EOF
PORT2=$(free_port)
"$PROM" --port "$PORT2" --collectors "$WORK/nvlink.csv" <"$WORK/new.out" >/dev/null 2>"$WORK/prom2.err" &
_pids="$_pids $!"
ended2() {
	curl -s "http://127.0.0.1:$PORT2/health" | grep -q "input ended.* after 3 reports" &&
		curl -s "http://127.0.0.1:$PORT2/metrics" >"$WORK/metrics2.txt"
}
ok "accel-prom --collectors reads the three reports" wait_for $((10 * SLOW)) ended2
# Link 1: one CRC flit, replay, recovery and CRC data error per period, links 0, 2, 3 none: 3 each over 3 periods.
for f in CRC_FLIT_ERROR CRC_DATA_ERROR REPLAY_ERROR RECOVERY_ERROR; do
	ok "DCGM_FI_DEV_NVLINK_${f}_COUNT_TOTAL is the sum over the links (3)" \
		grep -q "^DCGM_FI_DEV_NVLINK_${f}_COUNT_TOTAL{.*gpu=\"1\".*} 3\$" "$WORK/metrics2.txt"
done
is "$(grep -c '^DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{' "$WORK/metrics2.txt")" "1" \
	"one series per GPU with NVLink, none for the GPU without"
ok "the bandwidth field is named as not served, with the reason" \
	grep -q "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL.*per link and direction" "$WORK/prom2.err"

done_testing
