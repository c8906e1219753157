#!/bin/sh
# SPDX-License-Identifier: MIT
# The sysfs device collectors end to end (amdgpu, neuron, ncs2, hwmon): accel-monitor
# on the fixture trees tests/fixtures/sysfs/{host,broken,nolinks,oldkernel} and
# tests/fixtures/proc-devices.
#
#  - golden report fragments per kind (tests/fixtures/sysfs/golden/<kind>.json; periods
#    and timestamps normalized), and "auto" finding every kind;
#  - a process runtime's device memory from amdgpu's fdinfo;
#  - a stick pulled out while accel-monitor runs: an error once, then gone;
#  - the broken tree: every kind still reports, each bad file is warned about once;
#  - golden accel-prom output (golden/accel-prom.prom) and promtool check metrics,
#    each skipped when bin/accel-prom or promtool is not there.
#
# ACCEL_UPDATE_GOLDEN=1 rewrites the golden files from this run instead of comparing.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
# Tests that are not about instance metadata keep away from any real IMDS.
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED
SYS=$FIX/sysfs/host
PROC=$FIX/proc-devices
GOLD=$FIX/sysfs/golden

# conf FILE TYPE [PERIOD]: a config with one devices entry.
conf() {
	printf '{ "period": "%s", "devices": [ { "type": "%s" } ] }\n' "${3:-1s}" "$2" >"$1"
}

# normalize KIND < report: that kind's device_data entry, periods 1.0, timestamps fixed, pretty.
normalize() {
	$PY -c '
import json, sys
kind = sys.argv[1]
r = json.loads(sys.stdin.readline())
ents = [e for e in r["device_data"] if e["device_type"] == kind]
for e in ents:
    for g in e["report"].values():
        g["period"] = 1.0
        g["timestamp"] = "2026-11-21T05:30:00.000Z"
print(json.dumps(ents, indent=1, ensure_ascii=False))
' "$1"
}

# golden NAME FILE: compare FILE with the golden file (or write it with ACCEL_UPDATE_GOLDEN=1).
golden() {
	if [ "${ACCEL_UPDATE_GOLDEN:-0}" = 1 ]; then
		mkdir -p "$GOLD"
		cp "$2" "$GOLD/$1"
		_result 0 "golden $1 rewritten"
	elif cmp -s "$2" "$GOLD/$1"; then
		_result 0 "output matches golden/$1"
	else
		_result 1 "output matches golden/$1"
		diff -u "$GOLD/$1" "$2" | head -40 | sed 's/^/#   /'
	fi
}

# --- golden report fragments, one kind at a time -------------------------------------------
for kind in amdgpu neuron ncs2 hwmon; do
	conf "$WORK/$kind.json" "$kind"
	$MON -c "$WORK/$kind.json" --path.sysfs "$SYS" --path.procfs "$PROC" \
		--once >"$WORK/$kind.out" 2>"$WORK/$kind.err" || true
	if [ ! -s "$WORK/$kind.out" ]; then
		_result 1 "$kind: accel-monitor wrote a report"
		sed 's/^/#   /' "$WORK/$kind.err" | head -20
		continue
	fi
	normalize "$kind" <"$WORK/$kind.out" >"$WORK/$kind.frag.json"
	golden "$kind.json" "$WORK/$kind.frag.json"
done
is "$(grep -c 'OpenVINO' "$WORK/ncs2.err")" "1" "ncs2: why there is no temperature is said once"

# --- auto: every kind found, in registry order -----------------------------------------------
conf "$WORK/auto.json" auto
$MON -c "$WORK/auto.json" --path.sysfs "$SYS" --path.procfs "$PROC" --once \
	>"$WORK/auto.out" 2>"$WORK/auto.err" || true
is "$($PY -c 'import json,sys; print(" ".join(e["device_type"] + ("!" if e["error"] else "")
	for e in json.loads(sys.stdin.readline())["device_data"]))' <"$WORK/auto.out" 2>&1)" \
	"amdgpu neuron ncs2 hwmon" "auto: one entry per kind on the host, none in error"

CHECK="$PY $HELP/check_report.py"
ok "auto: the report passes check_report.py" $CHECK --config "$WORK/auto.json" "$WORK/auto.out"

# --- sysfs as other machines lay it out: copied without links, an older kernel ---------------------
for tree in nolinks oldkernel; do
	$MON -c "$WORK/auto.json" --path.sysfs "$FIX/sysfs/$tree" --path.procfs "$PROC" --once \
		>"$WORK/$tree.out" 2>"$WORK/$tree.err" || true
	ok "$tree: the report passes check_report.py" $CHECK --config "$WORK/auto.json" "$WORK/$tree.out"
done
is "$($PY -c 'import json,sys; print(" ".join(e["device_type"] + ("!" if e["error"] else "")
	for e in json.loads(sys.stdin.readline())["device_data"]))' <"$WORK/nolinks.out" 2>&1)" \
	"amdgpu ncs2 hwmon" "no links: amdgpu, ncs2 and hwmon found, none in error"
ok "no links: every device has its PCI address and values as with links" $PY $HELP/q.py "$WORK/nolinks.out" \
	'(lambda d: d["amdgpu"]["device_info"]["devices"]["1"]["pci_bus_id"] == "0000:43:00.0" and
	 d["hwmon"]["device_info"]["devices"]["7"]["pci_bus_id"] == "0000:09:00.0" and
	 d["ncs2"]["device_info"]["devices"]["1"]["serial"] == "03e72485" and
	 d["amdgpu"]["device_errors"]["devices"]["1"]["pcie_replays_total"] == 3)(
	{e["device_type"]: e["report"] for e in L[0]["device_data"]})'
ok "old kernel: hwmon attributes in the device directory, the link speed in the old format" $PY $HELP/q.py \
	"$WORK/oldkernel.out" '(lambda d: d["hwmon"]["device_thermal"]["devices"]["0"]["fan_rpm"] == {"master": 2000} and
	 d["amdgpu"]["device_info"]["devices"]["0"]["pcie_link_speed_gts"] == 8.0)(
	{e["device_type"]: e["report"] for e in L[0]["device_data"]})'

# --- u64 values at the edges, end to end: 2^63 a real that keeps its value, 2^64-1 left out ---------
cp -a "$SYS" "$WORK/esys"
echo 9223372036854775808 >"$WORK/esys/class/drm/card1/device/mem_info_vram_used"
echo 18446744073709551615 >"$WORK/esys/class/drm/card1/device/mem_info_gtt_used"
echo 18446744073709551614 >"$WORK/esys/class/drm/card1/device/mem_info_vram_total"
conf "$WORK/edge.json" amdgpu
$MON -c "$WORK/edge.json" --path.sysfs "$WORK/esys" --path.procfs "$PROC" --once >"$WORK/edge.out" 2>"$WORK/edge.err" || true
ok "2^63 bytes: written 9.223372036854776e+18, never negative" grep -q '"used_bytes":9.223372036854776e+18,' "$WORK/edge.out"
ok "2^63 bytes: reads back as 2^63, 2^64-1 left out" $PY $HELP/q.py "$WORK/edge.out" \
	'(lambda d: d["used_bytes"] == 2 ** 63 and "gtt_used_bytes" not in d and "-" not in open(A[0]).read().split("used_bytes")[1][:3])(
	L[0]["device_data"][0]["report"]["device_memory"]["devices"]["0"])' "$WORK/edge.out"
ok "2^63 bytes: the report passes check_report.py" $CHECK --config "$WORK/edge.json" "$WORK/edge.out"

# --- a process runtime's device memory comes from amdgpu's fdinfo ------------------------------
cat >"$WORK/rt.json" <<'EOF'
{ "period": "1s",
  "runtimes": [ { "address": "pid:2000", "metrics": [ { "type": "memory_used" } ] },
                { "address": "pid:3000", "metrics": [ { "type": "memory_used" } ] } ],
  "devices": [ { "type": "amdgpu", "metrics": [ { "type": "device_memory" } ] } ] }
EOF
$MON -c "$WORK/rt.json" --path.sysfs "$SYS" --path.procfs "$PROC" --once \
	>"$WORK/rt.out" 2>"$WORK/rt.err" || true
is "$($PY -c 'import json,sys
r = json.loads(sys.stdin.readline())
print(" ".join("%s=%s" % (e["pid"], e["report"]["memory_used"]["runtime_used_bytes"]["device"])
      for e in r["runtime_data"]))' <"$WORK/rt.out" 2>&1)" \
	"2000=26843545600 3000=0" "runtime device memory: pid 2000's two clients' VRAM, pid 3000 none"

# --- hot-plug: a stick pulled out while accel-monitor runs ----------------------------------------
cp -a "$SYS" "$WORK/sys"
conf "$WORK/hot.json" ncs2 200ms
spawn HOT $MON -c "$WORK/hot.json" --path.sysfs "$WORK/sys" --path.procfs "$PROC" \
	-n 12 >"$WORK/hot.out" 2>"$WORK/hot.err"
lines() { [ -s "$WORK/hot.out" ] && [ "$(wc -l <"$WORK/hot.out")" -ge "$1" ]; }
wait_for $((10 * SLOW)) lines 2 || diag "no report from the hot-plug run"
rm -rf "$WORK/sys/bus/usb/devices/2-1" "$WORK/sys/devices/pci0000:00/0000:00:14.0/usb2/2-1"
wait_for $((20 * SLOW)) lines 12 || diag "the hot-plug run did not finish"
is "$($PY -c '
import json, sys
seen = []
for line in sys.stdin:
    devs = json.loads(line)["device_data"][0]["report"]["device_info"]["devices"]
    d = devs.get("1")
    s = "-" if d is None else ("E" if "disappeared" in d["error"] else "ok")
    if not seen or seen[-1] != s:
        seen.append(s)
print(" ".join(seen))' <"$WORK/hot.out" 2>&1)" "ok E -" "a stick pulled out: reported, then its error once, then gone"
ok "hot-plug: every report passes check_report.py" $CHECK --config "$WORK/hot.json" --count 12 "$WORK/hot.out"

# --- the broken tree: every kind reports, every bad file is warned about once ------------------------
conf "$WORK/broken.json" auto 100ms
if $MON -c "$WORK/broken.json" --path.sysfs "$FIX/sysfs/broken" --path.procfs "$PROC" \
	-n 3 >"$WORK/broken.out" 2>"$WORK/broken.err"; then rc=0; else rc=$?; fi
is "$rc" "0" "broken tree: accel-monitor exits 0"
is "$(wc -l <"$WORK/broken.out")" "3" "broken tree: three reports"
is "$(grep -c 'left out' "$WORK/broken.err")" "$(grep 'left out' "$WORK/broken.err" | sort -u | wc -l)" \
	"broken tree: each bad file warned about once in three cycles"
ok "broken tree: warnings name the files" grep -q 'gpu_busy_percent does not hold' "$WORK/broken.err"
ok "broken tree: every report passes check_report.py" $CHECK --config "$WORK/broken.json" --count 3 "$WORK/broken.out"
is "$($PY -c 'import json,sys
r = json.loads(sys.stdin.readline())
bad = [e["device_type"] for e in r["device_data"] if e["error"] or any(
       g["error"] or any(d["error"] for d in g["devices"].values()) for g in e["report"].values())]
print(" ".join(e["device_type"] for e in r["device_data"]), "|", " ".join(bad))' <"$WORK/broken.out" 2>&1)" \
	"amdgpu neuron ncs2 hwmon | " "broken tree: every kind reports, no group or device in error"

# --- neuron_hw_counters: a neuron-monitor config's system group, filled from the Neuron sysfs -------------------
Q="$PY $HELP/q.py"
$MON -c "$TOP/config/neuron-monitor.json" --path.sysfs "$SYS" --path.procfs "$PROC" --once \
	>"$WORK/nm.out" 2>"$WORK/nm.err" || true
ok "neuron-monitor.json --once: neuron_hw_counters has neuron_devices[] in neuron-monitor 2.x's schema" \
	$Q "$WORK/nm.out" '(len(L) == 1 and L[0]["system_data"]["neuron_hw_counters"]["error"] == "" and
[sorted(d) for d in L[0]["system_data"]["neuron_hw_counters"]["neuron_devices"]] == [
 ["mem_ecc_uncorrected", "neuron_device_index", "sram_ecc_uncorrected"],
 ["mem_ecc_corrected", "mem_ecc_uncorrected", "neuron_device_index", "sram_ecc_corrected", "sram_ecc_uncorrected"]])'
ok "neuron-monitor.json --once: the report passes check_report.py" \
	$CHECK --config "$TOP/config/neuron-monitor.json" "$WORK/nm.out"
# Four corrected DRAM errors on neuron1 while it runs: counted once, per period, as neuron-monitor does.
cp -a "$SYS" "$WORK/nsys"
printf '{"period": "200ms", "system_metrics": [{"type": "neuron_hw_counters"}]}\n' >"$WORK/nhw.json"
spawn NHW $MON -c "$WORK/nhw.json" --path.sysfs "$WORK/nsys" --path.procfs "$PROC" -n 6 \
	>"$WORK/nhw.out" 2>"$WORK/nhw.err"
nlines() { [ -s "$WORK/nhw.out" ] && [ "$(wc -l <"$WORK/nhw.out")" -ge "$1" ]; }
wait_for $((10 * SLOW)) nlines 2 || diag "no report from the neuron_hw_counters run"
echo 9 >"$WORK/nsys/devices/virtual/neuron_device/neuron1/stats/hardware/mem_ecc_corrected/total"
wait_for $((10 * SLOW)) nlines 6 || diag "the neuron_hw_counters run did not finish"
ok "neuron_hw_counters: 5 -> 9 corrected on neuron1 sums to 4 over the periods, 0 elsewhere" \
	$Q "$WORK/nhw.out" '(len(L) == 6 and all(l["system_data"]["neuron_hw_counters"]["error"] == "" for l in L) and
[sum(d.get(k, 0) for l in L for d in l["system_data"]["neuron_hw_counters"]["neuron_devices"]
     if d["neuron_device_index"] == i) for i in (0, 1) for k in ("mem_ecc_corrected", "sram_ecc_corrected")] == [0, 0, 4, 0])'
if [ -x "$BIN/accel-prom" ]; then
	PORT=$(free_port)
	"$BIN/accel-prom" --listen-address "127.0.0.1:$PORT" <"$WORK/nhw.out" 2>"$WORK/nprom.err" &
	_pids="$_pids $!"
	# accel-prom reads the stream as it comes: wait until it has read it all (its last report's count), not
	# only until the series exists (the first report's 0 is already one).
	got_ecc() { curl -sf "http://127.0.0.1:$PORT/metrics" -o "$WORK/nmetrics.txt" &&
		grep '^hardware_ecc_events_total{' "$WORK/nmetrics.txt" | grep 'neuron_device_index="1"' |
			grep -q 'event_type="mem_ecc_corrected".* 4$'; }
	wait_for $((10 * SLOW)) got_ecc || sed 's/^/#   /' "$WORK/nprom.err" | head -20
	is "$(grep '^hardware_ecc_events_total{' "$WORK/nmetrics.txt" | grep 'neuron_device_index="1"' |
		grep 'event_type="mem_ecc_corrected"' | sed 's/.* //')" "4" \
		"accel-prom: hardware_ecc_events_total{event_type=mem_ecc_corrected,neuron_device_index=1} 4, from neuron_hw_counters"
else
	_result 1 "accel-prom is built ($BIN/accel-prom)"
fi

# --- accel-prom: golden exposition and promtool ---------------------------------------------------------
if [ ! -x "$BIN/accel-prom" ]; then
	echo "ok $((_n + 1)) # SKIP $BIN/accel-prom is not built"
	_n=$((_n + 1))
else
	PORT=$(free_port)
	mkfifo "$WORK/prom.in"
	# Held open read-write first, so neither side blocks; closing it is accel-prom's end of input.
	exec 3<>"$WORK/prom.in"
	# Not spawn: a background command's stdin would be /dev/null unless redirected on the command itself.
	"$BIN/accel-prom" --listen-address "127.0.0.1:$PORT" <"$WORK/prom.in" 2>"$WORK/prom.err" &
	_pids="$_pids $!"
	normalize_report() {
		$PY -c '
import json, sys
r = json.loads(sys.stdin.readline())
r["instance_info"] = {k: "" for k in r["instance_info"]}
r["instance_info"]["error"] = "off EC2 (test)"
print(json.dumps(r))'
	}
	normalize_report <"$WORK/auto.out" >&3
	got_metrics() { curl -sf "http://127.0.0.1:$PORT/metrics" -o "$WORK/metrics.txt" && grep -q '^ncs2_num_devices' "$WORK/metrics.txt"; }
	if wait_for $((10 * SLOW)) got_metrics; then
		grep -E '^(# (HELP|TYPE) )?(accelerator_|hardware_ecc_|neuroncore_|ncs2_)' "$WORK/metrics.txt" \
			>"$WORK/devices.prom"
		golden accel-prom.prom "$WORK/devices.prom"
	else
		_result 1 "accel-prom serves the device metrics"
		sed 's/^/#   /' "$WORK/prom.err" | head -20
	fi
	if command -v promtool >/dev/null 2>&1; then
		ok "promtool check metrics: the whole scrape is clean" sh -c "promtool check metrics <'$WORK/metrics.txt'"
	else
		echo "ok $((_n + 1)) # SKIP promtool is not installed"
		_n=$((_n + 1))
	fi
	exec 3>&-
fi

done_testing
