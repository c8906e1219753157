#!/bin/sh
# SPDX-License-Identifier: MIT
#
# container_usage on this machine's real cgroup tree: the test creates a pod and a container
# cgroup under a parent of its own (/sys/fs/cgroup/.../accel-e2e-PID/kubepods/burstable/pod<UID>/<ID>, the
# cgroupfs driver's layout, in every hierarchy it reads: cgroup v2, or v1's cpu, cpuacct and memory; on a
# hybrid host both, read by two monitors at once), moves a workload into it that touches 64 MiB and burns
# 1.5 s of CPU, and checks what accel-monitor reported against what the workload measured itself:
#   - the sum of cpu_usage_seconds over the reports is the CPU time the workload spent in the cgroup
#     (its own clock_gettime(CLOCK_PROCESS_CPUTIME_ID) since it joined), within 0.1 s + 5 %;
#     user + system as much within 25 % + 0.1 s (cgroup v1 counts those in USER_HZ ticks, sampled);
#   - the pod's sum is the container's (the pod holds nothing else);
#   - memory_rss_bytes is 64 MiB to 64 + 32 MiB, memory_usage_bytes at least that, the working set between;
#     on a hierarchy without the memory controller (a hybrid host's v2) the memory fields are absent;
#   - every report passes check_report.py; accel-prom serves container_cpu_usage_seconds_total with
#     cAdvisor's labels and the same sum, and promtool finds the scrape clean.
# First, on the fixture tree tests/fixtures/cgroup/v2-systemd (any user): the reports pass check_report.py,
# accel-csv's rows are what the mapping gives (csv_check.py), accel-cloudwatch's EMF events carry the group's
# families with the dimensions Cgroup, Name, PodName, Namespace, ContainerName.
# The cgroups are removed at the end (trap). Without root or a writable cgroup tree the real run is skipped,
# saying why.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
CG=/sys/fs/cgroup
PARENT=accel-e2e-$$
UID_=5b0e4c2a-7d19-4f3b-8a62-1e9d0c7b3a54
ID=$(printf 'e1%.0s' $(seq 32))
REL=/$PARENT/kubepods/burstable/pod$UID_/$ID
POD_REL=/$PARENT/kubepods/burstable/pod$UID_
ID2=$(printf 'e2%.0s' $(seq 32))
REL2=$POD_REL/$ID2 # made and removed while the monitors run
export AWS_EC2_METADATA_DISABLED=true

# ---- the fixture tree, through accel-csv and accel-cloudwatch -------------------------------------------------
cp -a "$FIX/cgroup/v2-systemd" "$WORK/fx"
printf '{"period": "200ms", "system_metrics": [{"type": "container_usage"}], "devices": []}\n' >"$WORK/f.json"
ok "fixture: accel-monitor -n 3 exits 0" sh -c '"$1" -c "$2" --path.cgroupfs "$3" --path.rootfs "$4" -n 3 >"$5" 2>"$6"' \
	sh "$MON" "$WORK/f.json" "$WORK/fx" "$FIX/cgroup/rootfs" "$WORK/f.out" "$WORK/f.err"
ok "fixture: the reports pass check_report.py" $PY "$HELP/check_report.py" "$WORK/f.out"
ok "fixture: nine entries in every report but the baseline's" q "$WORK/f.out" \
	'len(L) == 3 and all(len(l["system_data"]["container_usage"]["containers"]) == 9 for l in L)'
FXHOST=$($PY -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["instance_info"]["hostname"])' "$WORK/f.out")
ok "fixture: accel-csv's rows are the mapping's (csv_check.py)" sh -c '"$1" <"$2" >"$3" 2>"$4" &&
	'"$PY"' "$5/csv_check.py" --input "$2" --host "$6" "$3"' sh "$BIN/accel-csv" "$WORK/f.out" "$WORK/f.csv" \
	"$WORK/csv.err" "$HELP" "$FXHOST"
ok "fixture: accel-cloudwatch (EMF): ContainerCpuUsageSeconds and ContainerMemoryWorkingSet with cAdvisor's dimensions" \
	sh -c 'AWS_REGION=us-east-1 "$1" --namespace T --dry-run --format emf <"$2" >"$3" 2>"$4" && '"$PY"' - "$3" <<EOF
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
want = {"Cgroup": "/kubepods.slice/kubepods-pod8f2b7c1e_3a4d_4e5f_9a6b_1c2d3e4f5a6b.slice/cri-containerd-0f3c2a9be1d47777777777777777777777777777777777777777777777777777.scope",
        "PodName": "trainer-0", "Namespace": "ml", "ContainerName": "pytorch",
        "Name": "0f3c2a9be1d47777777777777777777777777777777777777777777777777777"}
hit = [e for e in ev if all(e.get(k) == v for k, v in want.items())]
names = {m["Name"]: m["Unit"] for e in hit for d in e["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]}
print(names)
assert names.get("ContainerCpuUsageSeconds") == "Seconds" and names.get("ContainerMemoryWorkingSet") == "Bytes"
assert any(e.get("Cpu") == "total" and "ContainerCpuUsageSeconds" in e for e in hit)
assert any(e.get("ContainerMemoryWorkingSet") == 184000000 for e in hit)
EOF' sh "$BIN/accel-cloudwatch" "$WORK/f.out" "$WORK/f.emf" "$WORK/cw.err"

# ---- the real cgroup tree ------------------------------------------------------------------------------------
# The hierarchies to create the cgroups in, and the roots to read them from: "DIR" lines.
dirs=""
roots=""
if [ -f $CG/cgroup.controllers ]; then
	dirs=$CG
	roots=$CG
else
	for h in cpu cpuacct memory "cpu,cpuacct"; do
		[ -d "$CG/$h" ] && [ ! -L "$CG/$h" ] && dirs="$dirs $CG/$h"
	done
	[ -n "$dirs" ] && roots=$CG
	[ -f $CG/unified/cgroup.procs ] && dirs="$dirs $CG/unified" && roots="$roots $CG/unified"
fi
if [ "$(id -u)" != 0 ] || [ -z "$dirs" ] || ! mkdir "$(echo $dirs | cut -d' ' -f1)/$PARENT" 2>/dev/null; then
	echo "ok $((_n + 1)) # SKIP the real run: cannot create cgroups here (uid $(id -u); hierarchies: ${dirs:-none} under $CG)"
	_n=$((_n + 1))
	done_testing
	exit $?
fi

remove_cgroups() {
	for d in $dirs; do
		# Deepest first; a cgroup with a process left in it cannot go, so the workload is killed first (and
		# the kernel may take a moment to let its cgroup go after it was reaped).
		for rel in "$REL2" "$REL" "$POD_REL" "/$PARENT/kubepods/burstable" "/$PARENT/kubepods" "/$PARENT"; do
			[ -d "$d$rel" ] || continue
			for _t in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
				rmdir "$d$rel" 2>/dev/null && break
				sleep 0.1
			done
			[ -d "$d$rel" ] && echo "# could not remove $d$rel" >&2
		done
	done
	return 0
}
cleanup_cg() {
	stop_all
	remove_cgroups
	cleanup
}
trap cleanup_cg EXIT

procs=""
for d in $dirs; do
	mkdir -p "$d$REL"
	procs="$procs $d$REL/cgroup.procs"
done
# A pure v2 tree charges CPU and memory to a cgroup only with the controllers enabled on the way down.
if [ "$roots" = "$CG" ] && [ -f $CG/cgroup.controllers ]; then
	for rel in "" "/$PARENT" "/$PARENT/kubepods" "/$PARENT/kubepods/burstable" "$POD_REL"; do
		for c in cpu memory; do echo "+$c" >"$CG$rel/cgroup.subtree_control" 2>/dev/null || true; done
	done
fi

# One monitor per root, period 500 ms; its first report means its baseline scan is done.
printf '{"period": "500ms", "system_metrics": [{"type": "container_usage"}], "devices": []}\n' >"$WORK/c.json"
i=0
for r in $roots; do
	i=$((i + 1))
	spawn M$i $MON -c "$WORK/c.json" --path.cgroupfs "$r" >"$WORK/m$i.out" 2>"$WORK/m$i.err"
	echo "$r" >"$WORK/m$i.root"
done
for k in $(seq 1 $i); do
	wait_for $((10 * SLOW)) has_lines "$WORK/m$k.out" 1 || diag "monitor $k: no first report"
done

# A container made while the monitors run is in their reports, and gone from them once removed: the tree is
# listed again when inotify says a directory changed (a mkdir or rmdir on a cgroup file system goes through
# the VFS, which tells it), not every period.
in_last() { # FILE: whether the last report has REL2
	tail -n 1 "$1" | $PY -c 'import json, sys; sys.exit(0 if sys.argv[1] in json.loads(sys.stdin.read())
		["system_data"]["container_usage"].get("containers", {}) else 1)' "$REL2" 2>/dev/null
}
not_in_last() { # FILE: the last report is whole and has no REL2
	tail -n 1 "$1" | $PY -c 'import json, sys; sys.exit(1 if sys.argv[1] in json.loads(sys.stdin.read())
		["system_data"]["container_usage"].get("containers", {}) else 0)' "$REL2" 2>/dev/null
}
for k in $(seq 1 $i); do # a few periods with nothing made: the monitors stop listing the tree
	wait_for $((10 * SLOW)) has_lines "$WORK/m$k.out" 4 || diag "monitor $k: stalled"
done
for d in $dirs; do mkdir "$d$REL2"; done
for k in $(seq 1 $i); do
	ok "$(cat "$WORK/m$k.root"): a container made while it runs is in a report" wait_for $((10 * SLOW)) in_last \
		"$WORK/m$k.out"
done
for d in $dirs; do rmdir "$d$REL2"; done
for k in $(seq 1 $i); do
	ok "$(cat "$WORK/m$k.root"): and gone from the reports once removed" wait_for $((10 * SLOW)) \
		not_in_last "$WORK/m$k.out"
done

# The workload: joins the cgroups, touches 64 MiB, burns 1.5 s of CPU, says what it spent, then holds on.
cat >"$WORK/work.py" <<'EOF'
import os, sys, time
for f in sys.argv[2:]:
    with open(f, "w") as fh:
        fh.write(str(os.getpid()))
t0 = time.process_time()
buf = bytearray(64 << 20)
for i in range(0, len(buf), 4096):
    buf[i] = 1
while time.process_time() - t0 < 1.5:
    pass
with open(sys.argv[1] + ".tmp", "w") as fh:
    fh.write("%.6f\n" % (time.process_time() - t0))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(120)
EOF
spawn WL $PY "$WORK/work.py" "$WORK/spent" $procs
wait_for $((20 * SLOW)) test -s "$WORK/spent" || diag "the workload did not finish"
SPENT=$(cat "$WORK/spent" 2>/dev/null || echo 0)
diag "the workload spent $SPENT s of CPU in the cgroup"
# Three more reports after it finished, so the last one holds everything.
for k in $(seq 1 $i); do
	n=$(nlines "$WORK/m$k.out")
	wait_for $((10 * SLOW)) has_lines "$WORK/m$k.out" $((n + 3)) || diag "monitor $k: stalled"
done
for k in $(seq 1 $i); do
	eval "kill \$M$k"
	eval "wait \$M$k" || true
done

for k in $(seq 1 $i); do
	r=$(cat "$WORK/m$k.root")
	ok "$r: every report passes check_report.py" $PY "$HELP/check_report.py" "$WORK/m$k.out"
	ok "$r: the container and its pod, with their identity" q "$WORK/m$k.out" '(
(lambda es: print(es[-1] if es else "no entry") or len(es) >= 3 and all(
  e.get("id") == A[0] and e.get("pod_uid") == A[1] and e.get("qos") == "burstable" and e.get("name") == A[0]
  for e in es))([l["system_data"]["container_usage"]["containers"][A[2]] for l in L
                if A[2] in l["system_data"]["container_usage"].get("containers", {})]) and
any(l["system_data"]["container_usage"].get("containers", {}).get(A[3], {}).get("pod_uid") == A[1] for l in L))' \
		"$ID" "$UID_" "$REL" "$POD_REL"
	ok "$r: sum of cpu_usage_seconds = the CPU the workload spent ($SPENT s) within 0.1 s + 5 %" q "$WORK/m$k.out" '
(lambda s, spent: print("reported", s, "spent", spent) or abs(s - spent) <= 0.1 + 0.05 * spent)(
 sum(l["system_data"]["container_usage"].get("containers", {}).get(A[0], {}).get("cpu_usage_seconds", 0) for l in L),
 float(A[1]))' "$REL" "$SPENT"
	ok "$r: user + system = usage within 0.1 s + 25 %" q "$WORK/m$k.out" '
(lambda c: print(c) or abs(c[1] + c[2] - c[0]) <= 0.1 + 0.25 * c[0])(
 [sum(l["system_data"]["container_usage"].get("containers", {}).get(A[0], {}).get(f, 0) for l in L)
  for f in ("cpu_usage_seconds", "cpu_user_seconds", "cpu_system_seconds")])' "$REL"
	ok "$r: the pod's CPU is its container's" q "$WORK/m$k.out" '
(lambda p, c: print(p, c) or abs(p - c) <= 0.02 + 0.01 * c)(
 *[sum(l["system_data"]["container_usage"].get("containers", {}).get(k, {}).get("cpu_usage_seconds", 0) for l in L)
   for k in (A[0], A[1])])' "$POD_REL" "$REL"
	if [ -f "$r/cgroup.controllers" ] && ! grep -qw memory "$r/cgroup.controllers"; then
		ok "$r: no memory controller here: the memory fields are absent" q "$WORK/m$k.out" '
not any(k.startswith("memory_") for l in L for k in l["system_data"]["container_usage"].get("containers", {}).get(A[0], {}))' "$REL"
	else
		ok "$r: rss 64..96 MiB (the 64 MiB touched), usage >= rss, rss <= working set <= usage" q "$WORK/m$k.out" '
(lambda e: print(e) or (64 << 20) <= e["memory_rss_bytes"] <= (96 << 20) and e["memory_usage_bytes"] >= e["memory_rss_bytes"]
 and e["memory_rss_bytes"] <= e["memory_working_set_bytes"] <= e["memory_usage_bytes"])(
 L[-1]["system_data"]["container_usage"]["containers"][A[0]])' "$REL"
	fi
done

# accel-prom: the first monitor's reports, as cAdvisor's families.
PORT=$(free_port)
"$BIN/accel-prom" --listen-address "127.0.0.1:$PORT" <"$WORK/m1.out" 2>"$WORK/prom.err" &
_pids="$_pids $!"
# Every report read: accel-prom reads its input while it serves.
got() { curl -sf "http://127.0.0.1:$PORT/metrics" -o "$WORK/metrics.txt" &&
	grep -q "^accel_prom_reports_total $(nlines "$WORK/m1.out")\$" "$WORK/metrics.txt"; }
wait_for $((10 * SLOW)) got || sed 's/^/#   /' "$WORK/prom.err" | head -20 >&2
ok "accel-prom: container_cpu_usage_seconds_total{id,name,cpu=\"total\"} = the sum of the reports" $PY - \
	"$WORK/metrics.txt" "$WORK/m1.out" "$REL" "$ID" <<'EOF'
import json, re, sys
text, out, rel, cid = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4]
m = [l for l in text.splitlines() if l.startswith("container_cpu_usage_seconds_total{") and 'id="%s"' % rel in l]
want = sum(json.loads(l)["system_data"]["container_usage"].get("containers", {}).get(rel, {}).get("cpu_usage_seconds", 0)
           for l in open(out))
print(m, want)
assert len(m) == 1 and 'name="%s"' % cid in m[0] and 'cpu="total"' in m[0]
assert abs(float(m[0].rsplit(" ", 1)[1]) - want) < 1e-6
EOF
if command -v promtool >/dev/null 2>&1; then
	ok "promtool check metrics: the scrape is clean" sh -c "promtool check metrics <'$WORK/metrics.txt'"
else
	_result 1 "promtool is installed (scripts/install-deps.sh test)"
fi
done_testing
