#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Scenarios of the fake libnvidia-ml.so.1 written from public nvidia-smi
# captures of real GPUs (tests/fixtures/nvml/h100.nvml, h100_mig.nvml,
# h200.nvml, a100.nvml: each file says which values come from a capture and
# which were chosen): for each one, accel-monitor's report, accel-prom's
# accelerator_* series and its DCGM_FI_* series (--collectors with
# dcgm-exporter's default file) agree with the capture's values field by
# field: memory in bytes and in MiB, power in W, temperatures, clocks in MHz
# and Hz, fields the GPU does not have (fan, page retirement, GPM on Ampere,
# utilization in MIG mode) absent everywhere, the MIG layout (GPU instance
# ids, profiles, memory), and the GPM metrics as percents, ratios and bytes
# per second.
#
# Everything it needs is built by make or installed by `make test` (gcc,
# curl): a missing one is a failure, never a skip.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
PROM=$BIN/accel-prom
CC=${CC:-cc}
CSV=$FIX/dcgm/default-counters.csv
export AWS_EC2_METADATA_DISABLED=true
need "$MON is built" test -x "$MON"
need "$PROM is built" test -x "$PROM"
need "a C compiler ($CC) for the fake libnvidia-ml.so.1" command -v "$CC"
need "curl" command -v curl

mkdir -p "$WORK/lib"
ok "the fake libnvidia-ml.so.1 builds" fake_nvml_build "$WORK/lib/libnvidia-ml.so.1"
# 200 ms: GPM's two samples are more than 100 ms apart from the second report on.
cat >"$WORK/mon.json" <<'EOF'
{ "period": "200ms", "system_metrics": [], "devices": [ { "type": "nvidia" } ] }
EOF

# The expected values, per scenario: the report's fields, accel-prom's series (family, labels that pick one
# series, value; None: no such series), written from the captures' values.
cat >"$WORK/expect.py" <<'EOF'
MiB = 1048576
A = None  # absent
X = {
 "h100": {
  "report": [
   # nvidia-smi: 1MiB / 81559MiB; -q: Reserved 328 MiB, Free 81230 MiB
   ("device_memory", "0", "total_bytes", 81559 * MiB),
   ("device_memory", "0", "used_bytes", 1 * MiB),
   ("device_memory", "0", "free_bytes", 81230 * MiB),
   ("device_memory", "0", "reserved_bytes", 328 * MiB),
   ("device_info", "0", "model", "NVIDIA H100 80GB HBM3"),
   ("device_info", "0", "pci_bus_id", "00000000:53:00.0"),
   ("device_info", "0", "driver_version", "550.90.07"),
   ("device_info", "0", "cuda_driver_version", "12.4"),
   ("device_info", "0", "power_limit_watts", 700.0),          # 92W / 700W
   ("device_info", "0", "mig_mode", "disabled"),              # MIG M.: Disabled
   ("device_info", "0", "profiling_unavailable", A),          # Hopper has GPM
   ("device_power", "0", "power_watts", 92.418),
   ("device_thermal", "0", "temperatures_celsius.gpu", 25),   # 25C
   ("device_thermal", "0", "temperatures_celsius.memory", 36),
   ("device_thermal", "0", "fan_percent", A),                 # Fan N/A
   ("device_clocks", "0", "clocks_mhz.graphics", 1980),
   ("device_clocks", "0", "clocks_mhz.sm", 1980),
   ("device_clocks", "0", "clocks_mhz.memory", 2619),
   ("device_clocks", "0", "clocks_mhz.video", 1545),
   ("device_utilization", "0", "core_percent", 0.0),          # 0%
   ("device_utilization", "0", "sm_active_percent", 91.5),
   ("device_utilization", "0", "tensor_active_percent", 61.75),
   ("device_utilization", "0", "pcie_tx_bytes_per_second", 1525.5 * MiB),
   ("device_utilization", "0", "nvlink_rx_bytes_per_second", 40448 * MiB),
   ("device_errors", "0", "retired_pages", A),                # Retired Pages: N/A
   ("device_errors", "0", "remapped_rows.correctable", 0),
  ],
  "prom": [
   ("accelerator_memory_total_bytes", {"device": "0"}, 81559 * MiB),
   ("accelerator_memory_reserved_bytes", {"device": "0"}, 328 * MiB),
   ("accelerator_power_watts", {"device": "0"}, 92.418),
   ("accelerator_power_limit_watts", {"device": "0"}, 700),
   ("accelerator_temperature_celsius", {"device": "0", "sensor": "gpu"}, 25),
   ("accelerator_fan_speed_ratio", {"device": "0"}, A),
   ("accelerator_clock_hertz", {"device": "0", "clock": "sm"}, 1980e6),
   ("accelerator_clock_hertz", {"device": "0", "clock": "memory"}, 2619e6),
   ("accelerator_utilization_ratio", {"device": "0", "engine": "core"}, 0),
   ("accelerator_activity_ratio", {"device": "0", "engine": "graphics"}, 0.982),
   ("accelerator_activity_ratio", {"device": "0", "engine": "sm"}, 0.915),
   ("accelerator_activity_ratio", {"device": "0", "engine": "fp16"}, 0.0325),
   ("accelerator_sm_occupancy_ratio", {"device": "0"}, 0.3825),
   ("accelerator_pcie_throughput_bytes_per_second", {"device": "0", "direction": "rx"}, 2960.25 * MiB),
   ("accelerator_nvlink_total_throughput_bytes_per_second", {"device": "0", "direction": "tx"}, 40960 * MiB),
   ("accelerator_retired_pages", {"device": "0"}, A),
   ("DCGM_FI_DEV_FB_USED", {"gpu": "0"}, 1),
   ("DCGM_FI_DEV_FB_FREE", {"gpu": "0"}, 81230),
   ("DCGM_FI_DEV_FB_RESERVED", {"gpu": "0"}, 328),
   ("DCGM_FI_DEV_POWER_USAGE", {"gpu": "0", "modelName": "NVIDIA H100 80GB HBM3"}, 92.418),
   ("DCGM_FI_DEV_GPU_TEMP", {"gpu": "0"}, 25),
   ("DCGM_FI_DEV_MEMORY_TEMP", {"gpu": "0"}, 36),
   ("DCGM_FI_DEV_SM_CLOCK", {"gpu": "0"}, 1980),
   ("DCGM_FI_DEV_MEM_CLOCK", {"gpu": "0"}, 2619),
   ("DCGM_FI_DEV_GPU_UTIL", {"gpu": "0"}, 0),
   ("DCGM_FI_DEV_FAN_SPEED", {"gpu": "0"}, A),
   ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", {"gpu": "0", "UUID": "GPU-b1c34a0e-7d2f-4c55-9a3e-2f6b1d0c8e41"}, 0.982),
   ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", {"gpu": "0"}, 0.6175),
   ("DCGM_FI_PROF_DRAM_ACTIVE", {"gpu": "0"}, 0.725),
   ("DCGM_FI_PROF_PCIE_TX_BYTES", {"gpu": "0"}, 1525.5 * MiB),
   ("DCGM_FI_PROF_PCIE_RX_BYTES", {"gpu": "0"}, 2960.25 * MiB),
  ],
 },
 "h100_mig": {
  "report": [
   ("device_info", "0", "mig_mode", "enabled"),
   ("device_utilization", "0", "core_percent", A),            # GPU-Util N/A in MIG mode
   # mig -lgip: 3g.40gb 39.50 GiB, 2g.20gb 19.62 GiB, 1g.10gb 9.75 GiB
   ("device_memory", "0/2/0", "total_bytes", 40448 * MiB),
   ("device_memory", "0/3/0", "total_bytes", 20096 * MiB),
   ("device_memory", "0/9/0", "total_bytes", 9984 * MiB),
   ("device_memory", "0/10/0", "total_bytes", 9984 * MiB),
   ("device_memory", "0/2/0", "used_bytes", 37 * MiB),
   ("device_memory", "0/9/0", "used_bytes", 13 * MiB),
   ("device_memory", "0/2/0", "processes.5101", 30 * 1024 * MiB),
   ("device_memory", "0/9/0", "processes.5202", 8 * 1024 * MiB),
   ("device_memory", "0/9/0", "processes.5203", 1024 * MiB),
   ("device_memory", "0/3/0", "processes", {}),
   ("device_memory", "0", "processes.5101", 30 * 1024 * MiB),  # the GPU's list has every instance's
   ("device_info", "0/2/0", "mig_profile", "3g.40gb"),
   ("device_info", "0/3/0", "mig_profile", "2g.20gb"),
   ("device_info", "0/10/0", "mig_profile", "1g.10gb"),
   ("device_info", "0/9/0", "gpu_instance_id", 9),
   ("device_info", "0/9/0", "compute_instance_id", 0),
   ("device_info", "0/9/0", "parent_uuid", "GPU-5e0a7c2d-91b4-4f3a-8d6e-0c1f2a3b4c5d"),
   ("device_info", "0/9/0", "uuid", "MIG-1a2b3c4d-0003-5e6f-8a9b-0c1d2e3f4a52"),
   ("device_info", "0/9/0", "memory_total_bytes", 9984 * MiB),
   ("device_utilization", "0/2/0", "sm_active_percent", 95.0),
   ("device_utilization", "0/10/0", "sm_active_percent", 0.0),
   ("device_utilization", "0", "graphics_active_percent", 64.5),
  ],
  "prom": [
   ("accelerator_memory_total_bytes", {"device": "0/2/0", "gpu_instance": "2", "compute_instance": "0",
                                       "mig_profile": "3g.40gb"}, 40448 * MiB),
   ("accelerator_memory_used_bytes", {"device": "0/9/0", "gpu_instance": "9"}, 13 * MiB),
   ("accelerator_memory_used_bytes", {"device": "0", "gpu_instance": A}, 42 * MiB),
   ("accelerator_process_memory_used_bytes", {"device": "0/2/0", "pid": "5101"}, 30 * 1024 * MiB),
   ("accelerator_activity_ratio", {"device": "0/2/0", "engine": "sm",
                                   "parent_uuid": "GPU-5e0a7c2d-91b4-4f3a-8d6e-0c1f2a3b4c5d"}, 0.95),
   ("accelerator_activity_ratio", {"device": "0/9/0", "engine": "tensor"}, 0.52),
   ("accelerator_utilization_ratio", {"device": "0", "engine": "core"}, A),
   ("accelerator_info", {"device": "0/3/0", "mig_profile": "2g.20gb",
                         "uuid": "MIG-1a2b3c4d-0002-5e6f-8a9b-0c1d2e3f4a51"}, 1),
   ("DCGM_FI_DEV_FB_USED", {"gpu": "0", "GPU_I_ID": "2", "GPU_I_PROFILE": "3g.40gb",
                            "UUID": "GPU-5e0a7c2d-91b4-4f3a-8d6e-0c1f2a3b4c5d",
                            "modelName": "NVIDIA H100 80GB HBM3", "device": "nvidia0"}, 37),
   ("DCGM_FI_DEV_FB_FREE", {"gpu": "0", "GPU_I_ID": "3"}, 20096 - 25),
   ("DCGM_FI_DEV_FB_USED", {"gpu": "0", "GPU_I_ID": "10", "GPU_I_PROFILE": "1g.10gb"}, 13),
   ("DCGM_FI_DEV_GPU_UTIL", {"gpu": "0"}, A),
   ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", {"gpu": "0", "GPU_I_ID": "2"}, 0.975),
   ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", {"gpu": "0", "GPU_I_ID": "9"}, 0.88),
   ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", {"gpu": "0", "GPU_I_ID": "2"}, 0.705),
   ("DCGM_FI_PROF_DRAM_ACTIVE", {"gpu": "0", "GPU_I_ID": "9"}, 0.4475),
   ("DCGM_FI_PROF_PCIE_TX_BYTES", {"gpu": "0", "GPU_I_ID": A}, 512 * MiB),
  ],
 },
 "h200": {
  "report": [
   ("device_memory", "0", "total_bytes", 143771 * MiB),       # 0MiB / 143771MiB
   ("device_memory", "0", "used_bytes", 0),
   ("device_info", "0", "model", "NVIDIA H200"),
   ("device_info", "0", "power_limit_watts", 700.0),
   ("device_power", "0", "power_watts", 76.204),              # 76W
   ("device_thermal", "0", "temperatures_celsius.gpu", 28),   # 28C
   ("device_thermal", "0", "fan_percent", A),
   ("device_utilization", "0", "dram_active_percent", 8.75),
   ("device_utilization", "0", "nvlink_tx_bytes_per_second", 0),
  ],
  "prom": [
   ("accelerator_memory_total_bytes", {"device": "0"}, 143771 * MiB),
   ("accelerator_temperature_celsius", {"device": "0", "sensor": "gpu"}, 28),
   ("accelerator_activity_ratio", {"device": "0", "engine": "dram"}, 0.0875),
   ("DCGM_FI_DEV_FB_FREE", {"gpu": "0", "modelName": "NVIDIA H200"}, 143771 - 573),
   ("DCGM_FI_DEV_FB_USED", {"gpu": "0"}, 0),
   ("DCGM_FI_DEV_POWER_USAGE", {"gpu": "0"}, 76.204),
   ("DCGM_FI_DEV_GPU_TEMP", {"gpu": "0"}, 28),
   ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", {"gpu": "0"}, 0.125),
   ("DCGM_FI_PROF_DRAM_ACTIVE", {"gpu": "0"}, 0.0875),
   ("DCGM_FI_PROF_PCIE_RX_BYTES", {"gpu": "0"}, 192 * MiB),
  ],
 },
 "a100": {
  "report": [
   ("device_memory", "0", "total_bytes", 81920 * MiB),        # 0MiB / 81920MiB
   ("device_info", "0", "model", "NVIDIA A100-SXM4-80GB"),
   ("device_info", "0", "power_limit_watts", 400.0),          # 62W / 400W
   ("device_power", "0", "power_watts", 62.104),
   ("device_thermal", "0", "temperatures_celsius.gpu", 32),   # 32C
   ("device_thermal", "0", "fan_percent", A),                 # Fan N/A
   ("device_info", "0", "profiling_unavailable", "this GPU does not support GPM (Hopper and newer do)"),
   ("device_utilization", "0", "sm_active_percent", A),
   ("device_utilization", "0", "core_percent", 0.0),
   ("device_info", "1", "mig_mode", "enabled"),
   ("device_utilization", "1", "core_percent", A),
   ("device_memory", "1/1/0", "total_bytes", 40192 * MiB),    # 3g.40gb: 39.25 GiB
   ("device_memory", "1/2/0", "total_bytes", 40192 * MiB),
   ("device_memory", "1/1/0", "processes.7301", 20 * 1024 * MiB),
   ("device_info", "1/2/0", "mig_profile", "3g.40gb"),
   ("device_info", "1/2/0", "profiling_unavailable", "this GPU does not support GPM (Hopper and newer do)"),
   ("device_utilization", "1/1/0", "", A),                     # no GPM: no utilization entry
  ],
  "prom": [
   ("accelerator_memory_total_bytes", {"device": "0"}, 81920 * MiB),
   ("accelerator_power_limit_watts", {"device": "1"}, 400),
   ("accelerator_activity_ratio", {"device": "0"}, A),
   ("accelerator_memory_total_bytes", {"device": "1/2/0", "gpu_instance": "2"}, 40192 * MiB),
   ("DCGM_FI_DEV_FB_USED", {"gpu": "1", "GPU_I_ID": "1", "GPU_I_PROFILE": "3g.40gb",
                            "modelName": "NVIDIA A100-SXM4-80GB"}, 1),
   ("DCGM_FI_DEV_POWER_USAGE", {"gpu": "0"}, 62.104),
   ("DCGM_FI_DEV_GPU_UTIL", {"gpu": "0"}, 0),
   ("DCGM_FI_DEV_GPU_UTIL", {"gpu": "1"}, A),
   ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", {}, A),                  # Ampere: no GPM, no DCP field
   ("DCGM_FI_PROF_PCIE_TX_BYTES", {"gpu": "0"}, 20 * 1024),   # nvmlDeviceGetPcieThroughput's KB/s
  ],
 },
}
EOF

# check SCENARIO REPORTS METRICS: every expectation of the scenario, one line per miss on stdout.
check() {
	$PY - "$@" "$WORK/expect.py" <<'EOF'
import json, re, sys
name, reports, metrics, expect = sys.argv[1:5]
ns = {}
exec(open(expect).read(), ns)
X, A = ns["X"], ns["A"]
rep = json.loads(open(reports).read().splitlines()[-1])
ent = [e for e in rep["device_data"] if e["device_type"] == "nvidia"][0]["report"]
bad = []
def close(a, b):
    if isinstance(b, (int, float)) and not isinstance(b, bool):
        return isinstance(a, (int, float)) and abs(a - b) <= 1e-9 * max(1.0, abs(b))
    return a == b
for g, dev, path, want in X[name]["report"]:
    o = ent.get(g, {}).get("devices", {}).get(dev)
    for k in (path.split(".") if path else []):
        o = o.get(k) if isinstance(o, dict) else None
    if want is A:
        if o is not None:
            bad.append("report %s.%s.%s: %r, expected absent" % (g, dev, path, o))
    elif not close(o, want):
        bad.append("report %s.%s.%s: %r, expected %r" % (g, dev, path, o, want))
series = []
lre = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
for line in open(metrics):
    if line.startswith("#") or not line.strip():
        continue
    m = re.match(r'^([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})? (\S+)$', line.strip())
    if m:
        series.append((m.group(1), dict(lre.findall(m.group(3) or "")), float(m.group(4))))
for fam, labels, want in X[name]["prom"]:
    hits = [v for f, l, v in series if f == fam and
            all((k not in l or l[k] == "") if x is A else l.get(k) == x for k, x in labels.items())]
    if want is A:
        if hits:
            bad.append("%s%s: %r, expected no series" % (fam, labels, hits))
    elif len(hits) != 1 or not close(hits[0], want):
        bad.append("%s%s: %r, expected one series of %r" % (fam, labels, hits, want))
for b in bad:
    print(b)
print("%d report fields and %d series checked" % (len(X[name]["report"]), len(X[name]["prom"])), file=sys.stderr)
EOF
}

for s in h100 h100_mig h200 a100; do
	rc=0
	FAKE_NVML_SCRIPT=$FIX/nvml/$s.nvml ACCEL_NVML_LIBRARY=$WORK/lib/libnvidia-ml.so.1 \
		"$MON" -c "$WORK/mon.json" -n 3 >"$WORK/$s.jsonl" 2>"$WORK/$s.err" || rc=$?
	is "$rc" "0" "$s: accel-monitor writes three reports"
	ok "$s: the reports pass the checker" $PY "$HELP/check_report.py" --config "$WORK/mon.json" --count 3 \
		"$WORK/$s.jsonl"
	ok "$s: no NVML call refused (GPM samples more than 100 ms apart)" sh -c "! grep -q fake_nvml '$WORK/$s.err'"
	PORT=$(free_port)
	"$PROM" --port "$PORT" --collectors "$CSV" <"$WORK/$s.jsonl" >/dev/null 2>"$WORK/$s.prom.err" &
	PROMPID=$!
	_pids="$_pids $PROMPID"
	ended() {
		curl -s "http://127.0.0.1:$PORT/health" | grep -q "input ended.* after 3 reports" &&
			curl -s "http://127.0.0.1:$PORT/metrics" >"$WORK/$s.metrics"
	}
	ok "$s: accel-prom reads the three reports" wait_for $((10 * SLOW)) ended
	kill "$PROMPID" 2>/dev/null || true
	check "$s" "$WORK/$s.jsonl" "$WORK/$s.metrics" >"$WORK/$s.misses" 2>"$WORK/$s.count" || true
	if [ -s "$WORK/$s.misses" ] || ! [ -s "$WORK/$s.count" ]; then
		_result 1 "$s: report, accelerator_* and DCGM_FI_* agree with the capture field by field"
		sed 's/^/#   /' "$WORK/$s.misses" "$WORK/$s.count" | head -40 >&2
	else
		_result 0 "$s: report, accelerator_* and DCGM_FI_* agree with the capture field by field ($(cat "$WORK/$s.count"))"
	fi
done

# accel-top over the MIG stream: a process in a MIG instance is counted once (its GPU's list has it too).
"$BIN/accel-top" --once --width 120 <"$WORK/h100_mig.jsonl" >"$WORK/top.txt" 2>"$WORK/top.err" || true
ok "accel-top: the MIG instances are lines under their GPU" grep -q '^  MIG 0/9/0  1g\.10gb' "$WORK/top.txt"
ok "accel-top: a MIG instance's process memory is counted once (30.0G, not 60.0G)" \
	grep -Eq '^ +5101 .* 30\.0G nvidia0:30\.0G$' "$WORK/top.txt"

done_testing
