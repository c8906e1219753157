#!/bin/sh
# SPDX-License-Identifier: MIT
# An NCS2 stick's temperature through the application that holds it (issue
# 12): the stick's temperature is readable only in that process, so
# inference applications serve prometheus_ncs2_exporter's
# ncs2_temperature_celsius{name} themselves. An endpoint runtime scraping
# such an application publishes the reading (monitor/host/facts.h), and the ncs2
# collector puts it on the stick the listening process holds open: in
# device_thermal's temperatures_celsius (with temperature_source and a
# bounded temperature_age_seconds), so accel-prom serves it as
# ncs2_temperature_celsius{name}, as the exporter's dashboards and alert
# rules expect. A reading the application stops serving is withdrawn.
#
# The application is a real server (fake_endpoint.py); --path.procfs is a
# copy of tests/fixtures/proc-devices plus the server's process as it really
# is (its stat, its listening socket, /proc/net/tcp) with one more
# descriptor: the NCS2's /dev/bus/usb node (tests/fixtures/sysfs/host,
# port 2-1, index 1).
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED
need "accel-prom (make)" test -x "$BIN/accel-prom"

cat >"$WORK/metrics.txt" <<'EOF2'
# HELP ncs2_temperature_celsius NCS2 device temperature in Celsius
# TYPE ncs2_temperature_celsius gauge
ncs2_temperature_celsius{name="MYRIAD"} 40.917320251464844
EOF2
spawn SRV $PY "$HELP/fake_endpoint.py" --file "$WORK/metrics.txt" --port-file "$WORK/port"
ok "the application's metrics port listens" wait_for $((10 * SLOW)) test -s "$WORK/port"
PORT=$(cat "$WORK/port")
URL=http://127.0.0.1:$PORT/metrics

# The fake /proc: the fixture's processes, and the server's (pid $SRV) holding the NCS2's node 002/002.
PROC=$WORK/proc
cp -a "$FIX/proc-devices" "$PROC"
$PY - "$SRV" "$PROC" <<'EOF2'
import os, sys
pid, root = sys.argv[1], sys.argv[2]
os.makedirs(os.path.join(root, "net"), exist_ok=True)
for f in ("net/tcp", "net/tcp6"):
    with open("/proc/" + f) as src, open(os.path.join(root, f), "w") as dst:
        dst.write(src.read())
d = os.path.join(root, pid)
os.makedirs(os.path.join(d, "fd"))
for f in ("stat", "statm", "comm", "cmdline"):
    with open("/proc/%s/%s" % (pid, f), "rb") as src, open(os.path.join(d, f), "wb") as dst:
        dst.write(src.read())
for fd in os.listdir("/proc/%s/fd" % pid):
    try:
        t = os.readlink("/proc/%s/fd/%s" % (pid, fd))
    except OSError:
        continue
    if t.startswith("socket:"):
        os.symlink(t, os.path.join(d, "fd", fd))
os.symlink("/dev/bus/usb/002/002", os.path.join(d, "fd", "900"))
EOF2
ok "the fake /proc has the server's listening socket" sh -c "ls -l '$PROC/$SRV/fd' | grep -q socket:"

cat >"$WORK/app.json" <<EOF2
{
  "period": "500ms",
  "devices": [ { "type": "ncs2", "metrics": [ { "type": "device_thermal" }, { "type": "device_utilization" } ] } ],
  "runtimes": [ { "address": "$URL", "metrics": [ { "type": "execution_stats" } ] } ]
}
EOF2
ok "the config is valid" "$MON" -c "$WORK/app.json" --check-config

# 12 reports (6 s); after 5 reports (about 2.5 s) the application's reading changes; after 8 it stops serving
# it. (By reports, not seconds: a loaded machine may start the monitor late.) A report's stick reading is the
# previous cycle's scrape, which may have started before the change: two reports later it shows.
N=12
(
	wait_for $((30 * SLOW)) has_lines "$WORK/out" 5
	sed 's/} 40.917320251464844/} 43.5/' "$WORK/metrics.txt" >"$WORK/m.new" && mv "$WORK/m.new" "$WORK/metrics.txt"
	wait_for $((30 * SLOW)) has_lines "$WORK/out" 8
	grep -v '^ncs2_temperature_celsius' "$WORK/metrics.txt" >"$WORK/m.new" && mv "$WORK/m.new" "$WORK/metrics.txt"
) &
_pids="$_pids $!"
RC=0
timeout -k 5 $((40 * SLOW)) "$MON" -c "$WORK/app.json" --path.sysfs "$FIX/sysfs/host" --path.procfs "$PROC" \
	-n $N >"$WORK/out" 2>"$WORK/err" || RC=$?
is "$RC" 0 "-n $N: exit status 0"
ok "the stream passes check_report.py" $PY "$HELP/check_report.py" --config "$WORK/app.json" --count $N "$WORK/out"

# TH, UT: the ncs2 device_thermal and device_utilization devices of report l. The producer writes
# reals with at most 10 significant digits (common/jsonw.c): 40.917320251464844 is 40.91732025.
TH='[e for e in l["device_data"] if e["device_type"] == "ncs2"][0]["report"]["device_thermal"]["devices"]'
UT='[e for e in l["device_data"] if e["device_type"] == "ncs2"][0]["report"]["device_utilization"]["devices"]'
ok "the server ($SRV) is the runtime's pid, and holds the NCS2 on port 2-1 (index 1)" \
	q "$WORK/out" "all(l['runtime_data'][0]['pid'] == A[0] and A[0] in $UT['1']['pids'] for l in L[1:])" "$SRV"
ok "the runtime carries the reading in execution_stats.server_devices.MYRIAD" \
	q "$WORK/out" "L[2]['runtime_data'][0]['report']['execution_stats']['server_devices']['MYRIAD']['temperature_celsius'] == 40.91732025"
ok "from the first report on, the stick holds the application's reading, keyed by its name label" \
	q "$WORK/out" "all($TH['1']['temperatures_celsius'] == {'MYRIAD': 40.91732025} for l in L[0:4])"
ok "temperature_source names the runtime" \
	q "$WORK/out" "all($TH['1']['temperature_source'] == 'runtime ' + A[0] for l in L[0:4])" "$URL"
ok "temperature_age_seconds: at most the runtime's period (0.5 s) and a little" \
	q "$WORK/out" "all(0 <= $TH['1']['temperature_age_seconds'] <= 0.6 for l in L if 'temperatures_celsius' in $TH['1'])"
ok "the other sticks (not held by the application) have no temperature" \
	q "$WORK/out" "all('temperatures_celsius' not in $TH[k] for l in L for k in ('0', '2'))"
ok "a changed reading follows within a report" \
	q "$WORK/out" "any($TH['1'].get('temperatures_celsius') == {'MYRIAD': 43.5} for l in L[5:9])"
ok "a reading the application no longer serves is withdrawn: the last reports have none" \
	q "$WORK/out" "all('temperatures_celsius' not in $TH['1'] and 'temperature_source' not in $TH['1'] for l in L[-2:])"
ok "no group in error" \
	q "$WORK/out" "all(g['error'] == '' for l in L for e in l['device_data'] + l['runtime_data'] for g in e['report'].values())"
is "$(grep -c OpenVINO "$WORK/err")" 1 "why a stick has no temperature is said once (when the reading was withdrawn)"

# --- a reload that drops the runtime: its reading is withdrawn with it ----------------------------------
printf 'ncs2_temperature_celsius{name="MYRIAD"} 39.5\n' >>"$WORK/metrics.txt"
sed 's/"runtimes": \[.*\]/"runtimes": []/' "$WORK/app.json" >"$WORK/norun.json"
cp "$WORK/app.json" "$WORK/reload.json"
"$MON" -c "$WORK/reload.json" --path.sysfs "$FIX/sysfs/host" --path.procfs "$PROC" -n 10 >"$WORK/rout" 2>"$WORK/rerr" &
MONPID=$!
_pids="$_pids $MONPID"
wait_for $((10 * SLOW)) sh -c "test \$(wc -l <'$WORK/rout') -ge 3" || diag "no 3 reports before the reload"
cp "$WORK/norun.json" "$WORK/reload.json"
kill -HUP "$MONPID"
RC=0
wait "$MONPID" || RC=$?
is "$RC" 0 "reload: -n 10 ends with exit status 0"
ok "reload: before, the reading is on the stick" q "$WORK/rout" "all($TH['1'].get('temperatures_celsius') == {'MYRIAD': 39.5} for l in L[1:3])"
ok "reload: from the first report without the runtime on, no reading (withdrawn at its close, not left to expire)" \
	q "$WORK/rout" "len([l for l in L if not l['runtime_data']]) >= 3 and all('temperatures_celsius' not in $TH['1'] for l in L if not l['runtime_data'])"
ok "reload: stderr holds no sanitizer report" sh -c "! grep -q 'Sanitizer' '$WORK/rerr'"

# --- accel-prom: the exporter's family, as its dashboards and alert rules query it ------------------------
PPORT=$(free_port)
head -n 3 "$WORK/out" >"$WORK/prom.in"
"$BIN/accel-prom" --listen-address "127.0.0.1:$PPORT" <"$WORK/prom.in" 2>"$WORK/prom.err" &
_pids="$_pids $!"
got() { curl -sf "http://127.0.0.1:$PPORT/metrics" -o "$WORK/metrics.prom" && grep -q '^ncs2_temperature_celsius' "$WORK/metrics.prom"; }
wait_for $((10 * SLOW)) got || sed 's/^/#   /' "$WORK/prom.err" | head -20 >&2
is "$(grep '^ncs2_temperature_celsius{' "$WORK/metrics.prom" | grep -c 'name="MYRIAD"')" 1 \
	"accel-prom: one ncs2_temperature_celsius{name=\"MYRIAD\"} series"
is "$(grep '^ncs2_temperature_celsius{.*name="MYRIAD"' "$WORK/metrics.prom" | sed 's/.* //')" 40.91732025 \
	"accel-prom: its value is the application's reading"
ok "accel-prom: on the stick's series (device=\"1\", device_type=\"ncs2\")" \
	sh -c "grep '^ncs2_temperature_celsius{' '$WORK/metrics.prom' | grep 'device=\"1\"' | grep -q 'device_type=\"ncs2\"'"
ok "stderr holds no sanitizer report" sh -c "! grep -q 'Sanitizer' '$WORK/err' '$WORK/prom.err'"
done_testing
