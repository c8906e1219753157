#!/bin/sh
# SPDX-License-Identifier: MIT
#
# MIG turned on, changed and turned off while accel-monitor runs, against the
# fake libnvidia-ml.so.1 (its "mig_file": MIG mode is on, with the layout the
# file gives, only while the file exists): the MIG instance entries follow the
# layout from one report to the next, every group of one report shows the same
# layout, GPM metrics reach each instance that has them, and the stream passes
# the report checker throughout.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
CC=${CC:-cc}
export AWS_EC2_METADATA_DISABLED=true
need "$MON is built" test -x "$MON"
need "a C compiler ($CC) for the fake libnvidia-ml.so.1" command -v "$CC"

mkdir -p "$WORK/lib"
ok "the fake libnvidia-ml.so.1 builds" fake_nvml_build "$WORK/lib/libnvidia-ml.so.1"
# "slow_period": "period": every value read every cycle (the scripted counters step at each read).
cat >"$WORK/mon.json" <<'EOF'
{ "period": "200ms", "system_metrics": [], "devices": [ { "type": "nvidia", "slow_period": "period" } ] }
EOF
cat >"$WORK/mig.nvml" <<EOF
gpu
name NVIDIA H100 80GB HBM3
uuid GPU-5e0a7c2d-91b4-4f3a-8d6e-0c1f2a3b4c5d
memory 85520809984 1048576 85175828480 343932928
mig_file $WORK/layout
mig_proc 2 0 5101 32212254720
gpm sm=60
gpm_mig 2 sm=95
gpm_mig 9 sm=80.5
gpm_mig 0 sm=12.5
EOF
rm -f "$WORK/layout"

# layout FILE: each report's MIG keys of device_memory, one line per report ("-" when none).
layout() {
	$PY - "$1" <<'EOF'
import json, sys
for l in open(sys.argv[1], encoding="utf-8").read().splitlines():
    try:
        rep = json.loads(l)["device_data"][0]["report"]
    except (ValueError, KeyError, IndexError):
        continue
    print(",".join(k for k in rep["device_memory"]["devices"] if "/" in k) or "-")
EOF
}
# seen FILE KEYS: a report after the ones counted in $AFTER shows exactly that layout.
seen() { layout "$1" | tail -n +"$((AFTER + 1))" | grep -qx "$2"; }
at() { layout "$1" | grep -nx "$2" | tail -n 1 | cut -d: -f1; }

(
	FAKE_NVML_SCRIPT=$WORK/mig.nvml ACCEL_NVML_LIBRARY=$WORK/lib/libnvidia-ml.so.1 \
		exec "$MON" -c "$WORK/mon.json" -n 400 >"$WORK/out" 2>"$WORK/err"
) &
MONPID=$!
_pids="$_pids $MONPID"
AFTER=0
ok "MIG off: reports without instance entries" wait_for $((10 * SLOW)) seen "$WORK/out" "-"
AFTER=$(at "$WORK/out" "-")
# Each layout written whole, then renamed: the fake never reads half a file.
printf '3g.40gb 2 0 42412802048 38797312\n1g.10gb 9 0 10468982784 13631488\n' >"$WORK/layout.new"
mv "$WORK/layout.new" "$WORK/layout"
ok "MIG on: the two instances appear" wait_for $((10 * SLOW)) seen "$WORK/out" "0/2/0,0/9/0"
AFTER=$(at "$WORK/out" "0/2/0,0/9/0")
# Two more reports with the layout: GPM has had two samples of each instance.
wait_for $((10 * SLOW)) sh -c "[ \$(wc -l <'$WORK/out') -ge $((AFTER + 2)) ]" || true
printf '7g.80gb 0 0 84825604096 1048576\n' >"$WORK/layout.new"
mv "$WORK/layout.new" "$WORK/layout"
ok "MIG changed: one 7g.80gb instance replaces them" wait_for $((10 * SLOW)) seen "$WORK/out" "0/0/0"
AFTER=$(at "$WORK/out" "0/0/0")
wait_for $((10 * SLOW)) sh -c "[ \$(wc -l <'$WORK/out') -ge $((AFTER + 2)) ]" || true
rm -f "$WORK/layout"
ok "MIG off again: no instance entry" wait_for $((10 * SLOW)) seen "$WORK/out" "-"
kill -TERM "$MONPID" 2>/dev/null || true
rc=0
wait "$MONPID" || rc=$?
is "$rc" "0" "accel-monitor stops cleanly"
ok "the stream passes the checker" $PY "$HELP/check_report.py" --config "$WORK/mon.json" "$WORK/out"
is "$(layout "$WORK/out" | uniq | tr '\n' ' ')" "- 0/2/0,0/9/0 0/0/0 - " "the layouts in order, nothing in between"
is "$($PY - "$WORK/out" <<'EOF'
import json, sys
bad = 0
for l in open(sys.argv[1], encoding="utf-8").read().splitlines():
    rep = json.loads(l)["device_data"][0]["report"]
    keys = [sorted(k for k in rep[g]["devices"] if "/" in k) for g in ("device_info", "device_memory")]
    bad += keys[0] != keys[1]
print(bad)
EOF
)" "0" "every report's device_info and device_memory show the same layout"
is "$($PY - "$WORK/out" <<'EOF'
import json, sys
got = set()
for l in open(sys.argv[1], encoding="utf-8").read().splitlines():
    u = json.loads(l)["device_data"][0]["report"]["device_utilization"]["devices"]
    for k, want in (("0/2/0", 95), ("0/9/0", 80.5), ("0/0/0", 12.5), ("0", 60)):
        if u.get(k, {}).get("sm_active_percent") == want:
            got.add(k)
print(" ".join(sorted(got)))
EOF
)" "0 0/0/0 0/2/0 0/9/0" "GPM metrics reach the GPU and every instance of each layout"
is "$($PY - "$WORK/out" <<'EOF'
import json, sys
for l in open(sys.argv[1], encoding="utf-8").read().splitlines():
    m = json.loads(l)["device_data"][0]["report"]["device_memory"]["devices"]
    if "0/2/0" in m:
        print(m["0/2/0"]["processes"], m["0/9/0"]["processes"])
        break
EOF
)" "{'5101': 32212254720} {}" "each instance lists its own processes"
ok "no GPM call refused (samples more than 100 ms apart)" sh -c "! grep -q fake_nvml '$WORK/err'"

done_testing
