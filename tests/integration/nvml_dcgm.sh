#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-prom --collectors with dcgm-exporter's default file, end to end:
# accel-monitor reads three fake GPUs (tests/helpers/fake_nvml.c, scripted by
# tests/fixtures/nvml/multi.nvml) for three reports, accel-prom serves them;
# the DCGM_FI_* series match the golden exposition
# tests/fixtures/dcgm/multi.prom (dcgm-exporter's names, labels and units),
# every series carries the file's DCGM_FI_DRIVER_VERSION label (the fake
# driver's version), DCGM_FI_DEV_XID_ERRORS is the last Xid with err_code and
# err_msg (79, "GPU has fallen off the bus" on GPU 0; 0, "No Error" on the
# GPUs without one), every field the file lists but accel-prom cannot serve
# is named once on stderr with its file:line (a label field the report has no
# value for too), promtool check metrics finds nothing but the lint findings
# dcgm-exporter's own names carry, a real Prometheus scraping accel-prom
# finds the series by those labels (err_msg, DCGM_FI_DRIVER_VERSION), and a
# broken file stops accel-prom with
# "file:line: reason" and exit code 3.
#
# Everything it needs is built by make or installed by `make test` (gcc, curl,
# prometheus and its promtool): a missing one is a failure, never a skip.
# NVML_GOLDEN_UPDATE=1 rewrites the golden file.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
PROM=$BIN/accel-prom
CC=${CC:-cc}
CSV=$FIX/dcgm/default-counters.csv
export AWS_EC2_METADATA_DISABLED=true
need "$PROM is built" test -x "$PROM"
need "$MON is built" test -x "$MON"
need "accel-prom has --collectors" sh -c "'$PROM' --help | grep -q -- --collectors"
need "a C compiler ($CC) for the fake libnvidia-ml.so.1" command -v "$CC"
need "curl" command -v curl
need "promtool (Debian package prometheus)" command -v promtool

mkdir -p "$WORK/lib"
ok "the fake libnvidia-ml.so.1 builds" fake_nvml_build "$WORK/lib/libnvidia-ml.so.1"
# "slow_period": "period": every value read every cycle (the scripted counters step at each read).
cat >"$WORK/mon.json" <<'EOF'
{ "period": "100ms", "system_metrics": [], "devices": [ { "type": "nvidia", "slow_period": "period" } ] }
EOF

rc=0
FAKE_NVML_SCRIPT=$FIX/nvml/multi.nvml ACCEL_NVML_LIBRARY=$WORK/lib/libnvidia-ml.so.1 \
	"$MON" -c "$WORK/mon.json" -n 3 >"$WORK/reports" 2>"$WORK/mon.err" || rc=$?
is "$rc" "0" "accel-monitor writes three reports of three fake GPUs"
PORT=$(free_port)
# Not through spawn: an asynchronous command's stdin would be /dev/null, not the file.
"$PROM" --port "$PORT" --staleness 600 --collectors "$CSV" <"$WORK/reports" >/dev/null 2>"$WORK/prom.err" &
_pids="$_pids $!"
# The end of the input, and an exposition rendered after the last report.
ended() {
	curl -s "http://127.0.0.1:$PORT/health" | grep -q "input ended.* after 3 reports" &&
		curl -s "http://127.0.0.1:$PORT/metrics" >"$WORK/metrics.txt" &&
		grep -q '^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{.*gpu="0".*} 15000$' "$WORK/metrics.txt"
}
ok "accel-prom reads the three reports to the end" wait_for $((10 * SLOW)) ended

# The DCGM families, host name normalized, in the exposition's order.
sed -n '/^# [A-Z]* DCGM_\|^DCGM_/p' "$WORK/metrics.txt" | sed 's/Hostname="[^"]*"/Hostname="<host>"/' >"$WORK/dcgm.prom"
if [ "${NVML_GOLDEN_UPDATE:-0}" = 1 ]; then
	cp "$WORK/dcgm.prom" "$FIX/dcgm/multi.prom"
	_result 0 "golden exposition rewritten"
elif diff -u "$FIX/dcgm/multi.prom" "$WORK/dcgm.prom" >"$WORK/.diff" 2>&1; then
	_result 0 "the DCGM series match tests/fixtures/dcgm/multi.prom"
else
	_result 1 "the DCGM series match tests/fixtures/dcgm/multi.prom"
	sed 's/^/#   /' "$WORK/.diff" | head -60 >&2
fi
is "$(grep -c 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{.*gpu="0"' "$WORK/dcgm.prom")" "1" "one energy series for GPU 0"
is "$(sed -n 's/^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{.*gpu="0".*} //p' "$WORK/dcgm.prom")" "15000" \
	"energy in mJ, accumulated over three periods of 5 J"
is "$(sed -n 's/^DCGM_FI_DEV_FB_USED{.*gpu="1".*} //p' "$WORK/dcgm.prom")" "256" "framebuffer in MiB"
is "$(grep -c 'DCGM_FI_DEV_VGPU_LICENSE_STATUS is not served' "$WORK/prom.err")" "1" \
	"a field NVML cannot give is named once on stderr"
ok "... with the file and line that list it" grep -q "$CSV:70: DCGM_FI_DEV_VGPU_LICENSE_STATUS is not served" \
	"$WORK/prom.err"
is "$(grep -c 'DCGM_FI_DRIVER_VERSION' "$WORK/prom.err")" "0" "the driver version label field is served, not named"
# dcgm-exporter's "DCGM_FI_DRIVER_VERSION, label": the driver's version on every DCGM series of the GPU.
is "$(grep -c '^DCGM_' "$WORK/dcgm.prom")" "$(grep -c '^DCGM_.*[{,]DCGM_FI_DRIVER_VERSION="535.104.05"[,}]' "$WORK/dcgm.prom")" \
	"every DCGM series carries DCGM_FI_DRIVER_VERSION=\"535.104.05\" (the driver's)"
ok "there are DCGM series" test "$(grep -c '^DCGM_' "$WORK/dcgm.prom")" -gt 40
# DCGM_FI_DEV_XID_ERRORS: the last Xid, with dcgm-exporter's err_code and err_msg; 0, "No Error" before any.
ok "GPU 0: DCGM_FI_DEV_XID_ERRORS 79, err_code=\"79\", err_msg=\"GPU has fallen off the bus\"" \
	grep -q '^DCGM_FI_DEV_XID_ERRORS{.*err_code="79",err_msg="GPU has fallen off the bus",gpu="0",.*} 79$' \
	"$WORK/dcgm.prom"
for g in 1 2; do
	ok "GPU $g (no Xid): DCGM_FI_DEV_XID_ERRORS 0, err_code=\"0\", err_msg=\"No Error\"" \
		grep -q "^DCGM_FI_DEV_XID_ERRORS{.*err_code=\"0\",err_msg=\"No Error\",gpu=\"$g\",.*} 0\$" "$WORK/dcgm.prom"
done
is "$(grep -c '^DCGM_FI_DEV_XID_ERRORS{' "$WORK/dcgm.prom")" "3" "one Xid series per GPU (none for a MIG instance)"

is "$(grep -c 'DCGM_FI_PROF_GR_ENGINE_ACTIVE is not served' "$WORK/prom.err")" "0" \
	"a profiling field GPM gives is served, not named"
is "$(grep -c 'DCGM_FI_DEV_GPU_UTIL is not served' "$WORK/prom.err")" "0" "a served field is not named"

rc=0
promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.out" 2>&1 || rc=$?
# dcgm-exporter's names: counters without _total, camelCase labels, "counter" in a name.
grep -v -e "^DCGM_[A-Z0-9_]* label names should be written in 'snake_case' not 'camelCase'\$" \
	-e '^DCGM_[A-Z0-9_]* counter metrics should have "_total" suffix$' \
	-e "^DCGM_[A-Z0-9_]* metric name should not include type 'counter'\$" \
	"$WORK/promtool.out" >"$WORK/promtool.other" || true
ok "promtool check metrics: no error (exit $rc; 3 is lint only)" test "$rc" -eq 0 -o "$rc" -eq 3
if [ -s "$WORK/promtool.other" ]; then
	_result 1 "promtool: nothing but dcgm-exporter's own lint findings"
	sed 's/^/#   /' "$WORK/promtool.other" | head -20 >&2
else
	_result 0 "promtool: nothing but dcgm-exporter's own lint findings"
fi

# A label field the report has no value for: named with file:line, the rest served.
printf 'DCGM_FI_DEV_GPU_UTIL, gauge, GPU\nDCGM_FI_DEV_BRAND, label, Device Brand\n' >"$WORK/brand.csv"
PORT2=$(free_port)
"$PROM" --port "$PORT2" --collectors "$WORK/brand.csv" <"$WORK/reports" >/dev/null 2>"$WORK/brand.err" &
_pids="$_pids $!"
brand_ended() {
	curl -s "http://127.0.0.1:$PORT2/health" | grep -q "input ended.* after 3 reports" &&
		curl -s "http://127.0.0.1:$PORT2/metrics" >"$WORK/brand.txt"
}
ok "accel-prom --collectors with DCGM_FI_DEV_BRAND reads the three reports" wait_for $((10 * SLOW)) brand_ended
ok "DCGM_FI_DEV_BRAND (no brand in the report) is named with file:line and why" \
	grep -q "$WORK/brand.csv:2: DCGM_FI_DEV_BRAND is not served: a label field the report has no value for" \
	"$WORK/brand.err"
ok "... and the other fields are served, without that label" sh -c \
	"grep -q '^DCGM_FI_DEV_GPU_UTIL{' '$WORK/brand.txt' && ! grep -q 'DCGM_FI_DEV_BRAND' '$WORK/brand.txt'"

# A broken file: exit 3, "file:line: reason".
printf 'DCGM_FI_DEV_GPU_UTIL, gauge, GPU\nDCGM_FI_DEV_SM_CLOCK, gauges, SM\n' >"$WORK/bad.csv"
rc=0
"$PROM" --port 0 --collectors "$WORK/bad.csv" </dev/null >/dev/null 2>"$WORK/bad.err" || rc=$?
is "$rc" "3" "a broken collectors file: exit code 3"
ok "a broken collectors file: the message names file:line" grep -q "$WORK/bad.csv:2: unknown Prometheus type" \
	"$WORK/bad.err"

# A real Prometheus scraping the first accel-prom (its series kept by --staleness; last, as prometheus_start sets
# PROM): the queries written for dcgm-exporter's labels find the same series.
need "prometheus (Debian package prometheus)" command -v prometheus
prometheus_start "127.0.0.1:$PORT"
xid79() { [ "$(prom_values 'DCGM_FI_DEV_XID_ERRORS{err_msg="GPU has fallen off the bus"}')" = "79" ]; }
ok "Prometheus: DCGM_FI_DEV_XID_ERRORS{err_msg=\"GPU has fallen off the bus\"} is 79" wait_for $((20 * SLOW)) xid79
is "$(prom_values 'DCGM_FI_DEV_XID_ERRORS{err_code="0",err_msg="No Error"}')" "0 0" \
	"Prometheus: the two GPUs without an Xid: 0, \"No Error\""
is "$(prom_values 'count by (DCGM_FI_DRIVER_VERSION) ({__name__=~"DCGM_.*"})')" \
	"$(grep -c '^DCGM_' "$WORK/dcgm.prom")" "Prometheus: every DCGM series has the one driver version"
is "$(prom_values 'count({__name__=~"DCGM_.*",DCGM_FI_DRIVER_VERSION="535.104.05",gpu="1"})')" \
	"$(grep -c '^DCGM_.*gpu="1"' "$WORK/dcgm.prom")" "Prometheus: the driver label selects the GPU's series"

done_testing
