#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The report's identities (docs/report-format.md, "Format versions"): format 2 writes each process's,
# container's and pod's identity once, in the report's "identities", where format 1 repeated them in every
# device's "process_containers", "pods" and "containers"; format 3 writes a pod's names in its pod's entry only
# and leaves each device's per-pod and per-container sums to the reader (common/derive.c). A stream made by
# accel-monitor (three pods and two other processes on two GPUs of the fake NVML, device_memory,
# device_utilization and device_power, the containers fixture's /proc and runtimes' state) is rewritten as
# format 2 by tests/helpers/report_v2.py (a second implementation of the reader's step) and as format 1 by
# report_v1.py, and every sink gives the same output for all three: accel-prom's exposition (plain,
# --use-old-namespace and the DCGM series of --collectors), accel-csv's rows (long and wide) and
# accel-cloudwatch's datums (--dry-run). The streams pass check_report.py and csv_check.py (the oracle's
# samples equal accel-csv's).
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
CC=${CC:-cc}
V2=$FIX/containers/v2-systemd
export AWS_EC2_METADATA_DISABLED=true
unset POD_NAME POD_NAMESPACE

need "$CC" command -v "$CC"
need curl command -v curl

mkdir -p "$WORK/nv"
ok "the fake libnvidia-ml.so.1 builds" fake_nvml_build "$WORK/nv/libnvidia-ml.so.1"
cat >"$WORK/two.nvml" <<'EOF'
gpu
name NVIDIA A100-SXM4-40GB
uuid GPU-3a9d1c2e-0000-4000-8000-000000000001
pci 00000000:07:00.0
memory 42949672960 12884901888 30064771072 0
proc 1001 4294967296
proc 1002 2147483648
proc 1003 1073741824
proc 1004 3221225472
proc 1099 2147483648
gpu
name NVIDIA A100-SXM4-40GB
uuid GPU-3a9d1c2e-0000-4000-8000-000000000002
pci 00000000:08:00.0
memory 42949672960 12884901888 30064771072 0
proc 1001 1073741824
proc 1002 1073741824
proc 1005 1073741824
EOF
cat >"$WORK/nv.json" <<'EOF'
{"period": "500ms", "system_metrics": [],
 "devices": [{"type": "nvidia", "metrics": [{"type": "device_memory"}, {"type": "device_utilization"},
                                             {"type": "device_power"}]}],
 "runtimes": [{"address": "pid:1001", "metrics": [{"type": "memory_used"}]}]}
EOF
ok "accel-monitor: three reports on the fake NVML" sh -c 'FAKE_NVML_SCRIPT=$1 ACCEL_NVML_LIBRARY=$2 "$3" -n 3 \
	-c "$4" --path.procfs "$5/proc" --path.rootfs "$5/rootfs" >"$6/v2.jsonl" 2>"$6/v2.err"' sh "$WORK/two.nvml" \
	"$WORK/nv/libnvidia-ml.so.1" "$MON" "$WORK/nv.json" "$V2" "$WORK"
mv "$WORK/v2.jsonl" "$WORK/v3.jsonl"
ok "format 3: every report says its format version and has identities" q "$WORK/v3.jsonl" \
	"len(L) == 3 and all(r['monitor']['format_version'] == 3 and r['identities']['containers'] for r in L)"
ok "format 3: no device repeats an identity or carries a sum (no process_containers, pods, containers)" q \
	"$WORK/v3.jsonl" "(not [1 for r in L for e in r['device_data'] for g in e['report'].values()
	  for d in g.get('devices', {}).values() if {'process_containers', 'pods', 'containers'} & set(d)]
	  and L[-1]['device_data'][0]['report']['device_power']['devices']['0']['processes'])"
ok "format 3: a container names its pod by UID, the pod's names are the pod's entry's" q "$WORK/v3.jsonl" \
	"(not [1 for c in L[-1]['identities']['containers'].values() if {'pod', 'namespace', 'qos'} & set(c)] and
	  sorted(p['pod'] for p in L[-1]['identities']['pods'].values()) == ['infer-7d9f', 'notebook', 'trainer-0'])"
$PY "$HELP/report_v2.py" <"$WORK/v3.jsonl" >"$WORK/v2.jsonl"
ok "format 2 (the rewrite): the sums are there (three pods on GPU 0, memory and power)" q "$WORK/v2.jsonl" \
	"(len(L[-1]['device_data'][0]['report']['device_memory']['devices']['0']['pods']) == 3 and
	  len(L[-1]['device_data'][0]['report']['device_power']['devices']['0']['containers']) == 3)"
ok "format 2 (the rewrite): each container once, with its processes and names; the unit's process alone" \
	q "$WORK/v2.jsonl" \
	"(sorted(c['name'] + ':' + c['pod'] + ':' + str(sorted(c['pids']))
	         for c in L[-1]['identities']['containers'].values()) ==
	  ['jupyter:notebook:[1003]', 'pytorch:trainer-0:[1001]', 'triton:infer-7d9f:[1002]'] and
	  list(L[-1]['identities']['processes']) == ['1005'] and L[-1]['monitor']['format_version'] == 2)"
$PY "$HELP/report_v1.py" <"$WORK/v2.jsonl" >"$WORK/v1.jsonl"
ok "format 1 (the rewrite): process_containers and named sums, no identities" q "$WORK/v1.jsonl" \
	"(all('identities' not in r for r in L) and
	  L[-1]['device_data'][0]['report']['device_memory']['devices']['0']['process_containers']['1001']['name'] == 'pytorch')"
ok "format 2's line is shorter than format 1's" sh -c 'test $(wc -c <"$1") -lt $(wc -c <"$2")' sh \
	"$WORK/v2.jsonl" "$WORK/v1.jsonl"
ok "format 3's line is shorter than format 2's" sh -c 'test $(wc -c <"$1") -lt $(wc -c <"$2")' sh \
	"$WORK/v3.jsonl" "$WORK/v2.jsonl"
$PY "$HELP/report_v1.py" <"$WORK/v3.jsonl" >"$WORK/v1b.jsonl"
ok "report_v1.py takes format 3 too (made format 2 first)" cmp "$WORK/v1.jsonl" "$WORK/v1b.jsonl"
for v in v1 v2 v3; do
	ok "$v: passes check_report.py" $PY "$HELP/check_report.py" "$WORK/$v.jsonl"
done

# accel-prom: serve a stream to its end, write the exposition (its own accel_prom_* aside: the clock's).
scrape() { # NAME INPUT [accel-prom options]
	name=$1 input=$2
	shift 2
	port=$(free_port)
	"$BIN/accel-prom" --listen-address "127.0.0.1:$port" "$@" <"$input" 2>"$WORK/$name.err" &
	pid=$!
	_pids="$_pids $pid"
	wait_for $((10 * SLOW)) sh -c 'curl -s "$1" | grep -qx "accel_prom_input_open 0"' sh \
		"http://127.0.0.1:$port/metrics"
	curl -s "http://127.0.0.1:$port/metrics" | grep -v -e '^accel_prom_' -e '^# [A-Z]* accel_prom_' >"$WORK/$name.prom"
	kill "$pid"
}
NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ) # the reports' time: CloudWatch takes no datum far from it
for v in v1 v2 v3; do
	scrape "$v" "$WORK/$v.jsonl"
	scrape "$v.old" "$WORK/$v.jsonl" --use-old-namespace
	scrape "$v.dcgm" "$WORK/$v.jsonl" --collectors "$FIX/dcgm/default-counters.csv"
	"$BIN/accel-csv" <"$WORK/$v.jsonl" >"$WORK/$v.csv" 2>"$WORK/$v.csv.err"
	mkdir -p "$WORK/$v.wide" # wide: a new file when a column comes
	"$BIN/accel-csv" --format wide -o "$WORK/$v.wide/out.csv" <"$WORK/$v.jsonl" 2>"$WORK/$v.wide.err"
	ACCEL_CLOUDWATCH_NOW=$NOW "$BIN/accel-cloudwatch" --namespace T --dry-run <"$WORK/$v.jsonl" \
		>"$WORK/$v.cw" 2>"$WORK/$v.cw.err"
done
ok "accel-prom: the pods' and containers' series are there" sh -c \
	'grep -q "^accelerator_container_energy_joules_total{.*container=\"pytorch\".*pod=\"trainer-0\"" "$1" &&
	 grep -q "^accelerator_pod_memory_used_bytes{.*pod=\"notebook\"" "$1" &&
	 grep -q "^accelerator_process_memory_used_bytes{.*container=\"triton\".*pid=\"1002\"" "$1"' sh "$WORK/v3.prom"
ok "accel-prom --collectors: the containers are on the DCGM series" grep -q 'container="jupyter"' "$WORK/v3.dcgm.prom"
ok "accel-csv: rows with pods" grep -q 'trainer-0' "$WORK/v3.csv"
ok "accel-cloudwatch: datums with pods" grep -q 'trainer-0' "$WORK/v3.cw"
for pair in "v1 v2" "v2 v3"; do
	set -- $pair
	ok "$1 and $2: the same exposition" cmp "$WORK/$1.prom" "$WORK/$2.prom"
	ok "$1 and $2: accel-prom --use-old-namespace: the same" cmp "$WORK/$1.old.prom" "$WORK/$2.old.prom"
	ok "$1 and $2: accel-prom --collectors (DCGM, one series per container): the same" \
		cmp "$WORK/$1.dcgm.prom" "$WORK/$2.dcgm.prom"
	ok "$1 and $2: accel-csv: the same rows" cmp "$WORK/$1.csv" "$WORK/$2.csv"
	ok "$1 and $2: accel-csv --format wide: the same files" diff -r "$WORK/$1.wide" "$WORK/$2.wide"
	ok "$1 and $2: accel-cloudwatch --dry-run: the same datums" cmp "$WORK/$1.cw" "$WORK/$2.cw"
done
for v in v1 v2 v3; do
	ok "$v: csv_check.py's samples are accel-csv's" $PY "$HELP/csv_check.py" --input "$WORK/$v.jsonl" "$WORK/$v.csv"
done

done_testing
