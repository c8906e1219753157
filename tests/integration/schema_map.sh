#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The report schema through the real sinks (common/schema.h, common/samples.c):
# four neuron-monitor runtimes that share the tag "1" stay four distinct
# accel-csv keys (wide rows and long series) and one summed accel-prom series
# as neuron-monitor-prometheus.py gives; ultraserver_id on every accel-prom
# series; a report without instance_info keeps the last instance labels;
# accel-csv's label columns are the schema's; values at the edges (2^63,
# 2^64-1, 1e19, 1e308 decoded as reals, a scaled value past DBL_MAX) never
# become inf or a negative number.
. "$(dirname "$0")/lib.sh"

CSV=$BIN/accel-csv
PROM=$BIN/accel-prom
export ACCEL_CSV_NOW=2026-11-21T05:30:00Z ACCEL_CSV_NOW_STEP=1s

# Four runtimes tagged "1", host memory 1..4; one line with ultraserver_id, one without instance_info.
"$PY" - "$WORK/same-tag.jsonl" <<'PYEOF'
import json, sys
inst = {"instance_name": "n", "instance_id": "i-1", "instance_type": "trn2u.48xlarge",
        "instance_availability_zone": "az", "instance_region": "r", "subnet_id": "s",
        "ultraserver_id": "us-7", "error": ""}
rts = [{"pid": 100 + k, "neuron_runtime_tag": "1", "error": "",
        "report": {"memory_used": {"period": 1.0, "error": "",
                                   "neuron_runtime_used_bytes": {"host": k, "neuron_device": 10 * k}}}}
       for k in (1, 2, 3, 4)]
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"neuron_runtime_data": rts, "instance_info": inst, "system_data": None}) + "\n")
    f.write(json.dumps({"neuron_runtime_data": rts, "system_data": None}) + "\n")
PYEOF

# ---- accel-csv: four keys ------------------------------------------------------
"$CSV" --host h --format wide -o "$WORK/wide.csv" <"$WORK/same-tag.jsonl" 2>"$WORK/wide.err"
ok "wide: four rows per report for the four runtimes tagged 1, told apart by pid" "$PY" - "$WORK/wide.csv" <<'PYEOF'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["entity"] == "1"]
keys = {(r["timestamp"], r["entity"], r["pid"]) for r in rows}
pids = sorted({r["pid"] for r in rows})
sys.exit(0 if len(rows) == 8 and len(keys) == 8 and pids == ["101", "102", "103", "104"] else 1)
PYEOF
"$CSV" --host h -o "$WORK/long.csv" <"$WORK/same-tag.jsonl" 2>"$WORK/long.err"
ok "long: four distinct series per family and report" "$PY" - "$WORK/long.csv" <<'PYEOF'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline=""))
        if r["metric"] == "neuron_runtime_memory_used_bytes" and r["memory_location"] == "host"]
per = {}
for r in rows:
    per.setdefault(r["timestamp"], set()).add(r["series"])
sys.exit(0 if len(per) == 2 and all(len(s) == 4 for s in per.values()) else 1)
PYEOF
ok "a report without instance_info keeps the instance labels (wide rows of report 2)" "$PY" - "$WORK/wide.csv" <<'PYEOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
sys.exit(0 if rows and all(r["instance_id"] == "i-1" for r in rows) else 1)
PYEOF

# ---- accel-csv: the label columns are the schema's ---------------------------------
ok "accel-csv's label columns are the schema's (tests/fixtures/schema.json)" "$PY" - "$WORK/long.csv" \
	"$FIX/schema.json" <<'PYEOF'
import csv, json, sys
head = next(csv.reader(open(sys.argv[1], newline="")))
schema = json.load(open(sys.argv[2]))
labels = [x["name"] for x in schema["labels"] if x["csv_column"] and x["kind"] != "instance"]
inst = [x["name"] for x in schema["labels"] if x["csv_column"] and x["kind"] == "instance"]
want = head[:10] + labels + inst + ["other_labels"]
if head != want:
    print("# header %s\n# schema %s" % (head, want), file=sys.stderr)
sys.exit(0 if head == want else 1)
PYEOF

# ---- numbers at the edges -------------------------------------------------------------
printf '%s\n' '{"monitor":{},"system_data":{"memory_info":{"period":1.0,"error":"","memory_total_bytes":9223372036854775808.0,"memory_used_bytes":18446744073709551615.0,"swap_total_bytes":1e19,"swap_used_bytes":1e308}},"device_data":[{"device_type":"nvidia","error":"","report":{"device_clocks":{"period":1.0,"error":"","devices":{"0":{"clocks_mhz":{"sm":1e308,"memory":1215}}}}}}]}' \
	>"$WORK/edge.jsonl"
"$CSV" --host h -o "$WORK/edge.csv" <"$WORK/edge.jsonl" 2>"$WORK/edge.err"
ok "2^63, 2^64-1, 1e19 and 1e308 are written as the doubles they are; no inf, no negative" "$PY" - "$WORK/edge.csv" <<'PYEOF'
import csv, sys
v = {r["metric"]: r["value"] for r in csv.DictReader(open(sys.argv[1], newline="")) if r["group"] == "memory_info"}
want = {"system_memory_total_bytes": 2.0**63, "system_memory_used_bytes": 2.0**64, "system_swap_total_bytes": 1e19,
        "system_swap_used_bytes": 1e308}
sys.exit(0 if v.keys() == want.keys() and all(float(v[k]) == want[k] for k in want) else 1)
PYEOF
ok "1e308 MHz (past DBL_MAX in hertz) is no row at all, not inf" sh -c \
	"! grep -q ',-\?inf,' '$WORK/edge.csv' && grep -q 'clock=memory' '$WORK/edge.csv' && ! grep -q 'clock=sm' '$WORK/edge.csv'"
ok "... and a warning names its path" grep -q 'device_clocks.devices.0.clocks_mhz.sm: out of range' "$WORK/edge.err"

# ---- accel-prom: one summed series, ultraserver_id --------------------------------------
if [ -x "$PROM" ] && command -v curl >/dev/null 2>&1; then
	PORT=$(free_port)
	"$PROM" --listen-address "127.0.0.1:$PORT" <"$WORK/same-tag.jsonl" 2>"$WORK/prom.err" &
	_pids="$_pids $!"
	scrape() { curl -s --max-time $((10 * SLOW)) "http://127.0.0.1:$PORT/metrics" >"$WORK/metrics"; }
	wait_for $((10 * SLOW)) sh -c "curl -s http://127.0.0.1:$PORT/metrics | grep -qx 'accel_prom_input_open 0'" || true
	scrape || true
	ok "accel-prom: the four runtimes tagged 1 are one series, as neuron-monitor-prometheus.py" "$PY" - \
		"$WORK/metrics" <<'PYEOF'
import sys
lines = [l for l in open(sys.argv[1]) if l.startswith("neuron_runtime_memory_used_bytes{") and 'memory_location="host"' in l]
ok = len(lines) == 1 and 'runtime_tag="1"' in lines[0] and "pid=" not in lines[0] and 'ultraserver_id="us-7"' in lines[0]
if not ok:
    sys.stderr.write("".join(lines))
sys.exit(0 if ok else 1)
PYEOF
	ok "accel-prom: ultraserver_id on every series of the report" sh -c \
		"grep -v '^#' '$WORK/metrics' | grep -v '^accel_prom_' | grep -v 'ultraserver_id=\"us-7\"' | grep -q . && exit 1 || exit 0"
else
	ok "accel-prom and curl are there" false
fi

done_testing
