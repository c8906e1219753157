#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The NVIDIA collector end to end, against a fake libnvidia-ml.so.1 built
# here from tests/helpers/fake_nvml.c (twice: a current driver, and an old one
# without the newer symbols) and scripted by tests/fixtures/nvml/*.nvml:
# several GPUs with unsupported fields and MIG, the same on the old library,
# a process list that outgrows its buffer (INSUFFICIENT_SIZE), a GPU lost
# mid-run and back, no library, a driver that does not start, "select", a
# process runtime's device memory, and "auto" without a config file. Device
# report fragments are compared with golden files after timestamps and
# periods are normalized; every stream must pass check_report.py.
#
# NVML_GOLDEN_UPDATE=1 rewrites the golden files instead of comparing.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
CHECK="$PY $HELP/check_report.py"
NV=$FIX/nvml
CC=${CC:-cc}
export AWS_EC2_METADATA_DISABLED=true

# The compiler that built the programs builds the fake library: its absence is a failure, not a skip.
need "$CC" command -v "$CC"

# --- the fake library, current and old ---------------------------------------------------
mkdir -p "$WORK/new" "$WORK/old" "$WORK/none"
ok "the fake libnvidia-ml.so.1 builds" fake_nvml_build "$WORK/new/libnvidia-ml.so.1"
ok "the fake builds without the newer symbols (-DFAKE_NVML_OLD)" fake_nvml_build "$WORK/old/libnvidia-ml.so.1" -DFAKE_NVML_OLD
NEW=$WORK/new/libnvidia-ml.so.1
OLD=$WORK/old/libnvidia-ml.so.1

# exited NAME RC: a test that accel-monitor's run NAME exited 0 (sanitizer reports exit 99).
exited() {
	if [ "$2" -eq 0 ]; then
		_result 0 "$1: accel-monitor exits 0"
	else
		_result 1 "$1: accel-monitor exits 0 (got $2)"
		sed 's/^/#   /' "$WORK/$1.err" | head -30
	fi
}

# mon NAME LIB SCRIPT CONFIG ARGS...: run accel-monitor into $WORK/NAME.out (.err, .stats).
mon() {
	name=$1 lib=$2 script=$3 cfg=$4
	shift 4
	rm -f "$WORK/$name.stats"
	rc=0
	FAKE_NVML_SCRIPT=$script FAKE_NVML_STATS=$WORK/$name.stats ACCEL_NVML_LIBRARY=$lib \
		$MON -c "$cfg" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
	exited "$name" "$rc"
}

# fragment FILE LINE [MASK]: device_data of report LINE (1-based), timestamps and periods
# normalized, the work directory's path replaced; MASK=1 also masks running totals.
fragment() {
	$PY - "$@" "$WORK" <<'EOF'
import json, sys
path, line = sys.argv[1], int(sys.argv[2])
mask = len(sys.argv) > 4 and sys.argv[3] == "1"
work = sys.argv[-1]
r = json.loads(open(path, encoding="utf-8").read().splitlines()[line - 1])
def norm(o, key=None):
    if isinstance(o, dict):
        # Attribution to containers depends on the real /proc of the host: containers_identity.sh checks it.
        return {k: norm(v, k) for k, v in o.items() if k not in ("process_containers", "pods", "containers")}
    if isinstance(o, list):
        return [norm(v) for v in o]
    if key in ("timestamp", "last_xid_time", "time"):
        return "<timestamp>"
    if key == "period":
        return "<period>"
    if mask and isinstance(key, str) and key.endswith(("_total", "total_joules")):
        return "<total>"
    if isinstance(o, str):
        return o.replace(work, "<WORK>")
    return o
print(json.dumps(norm(r["device_data"]), indent=1, sort_keys=True, ensure_ascii=False))
EOF
}

# golden NAME TEXT-FILE: compare with tests/fixtures/nvml/NAME.golden.json (or rewrite it).
golden() {
	if [ "${NVML_GOLDEN_UPDATE:-0}" = 1 ]; then
		cp "$2" "$NV/$1.golden.json"
		_result 0 "$1: golden file rewritten"
		return
	fi
	if diff -u "$NV/$1.golden.json" "$2" >"$WORK/.diff" 2>&1; then
		_result 0 "$1: device_data matches $1.golden.json"
	else
		_result 1 "$1: device_data matches $1.golden.json"
		sed 's/^/#   /' "$WORK/.diff" | head -60
	fi
}

# stat FILE GPU KEY: one counter the fake wrote at nvmlShutdown.
stat() {
	awk -v g="$2" -v k="$3" '$1 == "gpu" && $2 == g { for (i = 3; i < NF; i += 2) if ($i == k) print $(i + 1) }' "$1"
}

# jq-like one-liners over a report stream.
pyq() {
	$PY - "$@" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
print(eval(sys.argv[2], {"lines": lines, "len": len, "sorted": sorted, "sum": sum, "all": all, "any": any}))
EOF
}

# "slow_period": "period": every value read every cycle (the scripted counters step at each read).
cat >"$WORK/all.json" <<'EOF'
{ "period": "100ms", "system_metrics": [], "devices": [ { "type": "nvidia", "slow_period": "period" } ] }
EOF

# --- several GPUs: unsupported fields, MIG, 40 processes ---------------------------------
mon multi "$NEW" "$NV/multi.nvml" "$WORK/all.json" -n 2
ok "multi: 2 reports pass the checker (--config)" $CHECK --config "$WORK/all.json" --count 2 "$WORK/multi.out"
fragment "$WORK/multi.out" 2 >"$WORK/multi.frag"
golden multi "$WORK/multi.frag"
is "$(stat "$WORK/multi.stats" 0 handle_lookups) $(stat "$WORK/multi.stats" 1 handle_lookups) $(stat "$WORK/multi.stats" 2 handle_lookups)" \
	"1 1 1" "multi: each handle looked up once"
is "$(pyq "$WORK/multi.out" 'len(lines[1]["device_data"][0]["report"]["device_memory"]["devices"]["2"]["processes"])')" \
	"40" "multi: 40 processes on GPU 2 (more than the first buffer holds)"
is "$(stat "$WORK/multi.stats" 2 insufficient_size)" "1" "multi: one INSUFFICIENT_SIZE, then the buffer fits"

# --- the same on an old driver: v1 calls, v1 process structs, throttle reasons -----------
mon old "$OLD" "$NV/multi.nvml" "$WORK/all.json" -n 2
ok "old library: passes the checker" $CHECK --config "$WORK/all.json" --count 2 "$WORK/old.out"
fragment "$WORK/old.out" 2 >"$WORK/old.frag"
golden old "$WORK/old.frag"

# --- a process list that grows between calls ---------------------------------------------
mon grow "$NEW" "$NV/grow.nvml" "$WORK/all.json" -n 3
ok "grow: passes the checker" $CHECK --count 3 "$WORK/grow.out"
is "$(pyq "$WORK/grow.out" '[len(l["device_data"][0]["report"]["device_memory"]["devices"]["0"]["processes"]) for l in lines]')" \
	"[40, 45, 50]" "grow: every process reported as the list grows (INSUFFICIENT_SIZE, grow, retry)"
is "$(stat "$WORK/grow.stats" 0 insufficient_size)" "1" "grow: the grown buffer is kept (one INSUFFICIENT_SIZE in 3 cycles)"

# --- a GPU lost mid-run and back ---------------------------------------------------------
sed "/^name Tesla T4/a lost_file $WORK/lost" "$NV/multi.nvml" >"$WORK/lost.nvml"
rm -f "$WORK/lost"
# have_lines FILE N: FILE holds at least N complete report lines.
have_lines() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }
# has_state FILE STATE AFTER: a report after line AFTER where every group of GPU 1 is lost / ok.
has_state() {
	$PY - "$@" <<'EOF'
import json, sys
path, state, after = sys.argv[1], sys.argv[2], int(sys.argv[3])
for n, l in enumerate(open(path, encoding="utf-8").read().splitlines(), 1):
    try:
        rep = json.loads(l)["device_data"][0]["report"]
    except ValueError:
        continue
    errs = [g["devices"]["1"]["error"] for g in rep.values()]
    if n > after and (all(errs) if state == "lost" else not any(errs)):
        print(n)
        sys.exit(0)
sys.exit(1)
EOF
}
(
	FAKE_NVML_SCRIPT=$WORK/lost.nvml FAKE_NVML_STATS=$WORK/lost.stats ACCEL_NVML_LIBRARY=$NEW \
		exec "$MON" -c "$WORK/all.json" -n 200 >"$WORK/lost.out" 2>"$WORK/lost.err"
) &
LOSTPID=$!
_pids="$_pids $LOSTPID"
wait_for $((10 * SLOW)) have_lines "$WORK/lost.out" 2 || true
touch "$WORK/lost"
wait_for $((10 * SLOW)) has_state "$WORK/lost.out" lost 0 || true
LOSTAT=$(has_state "$WORK/lost.out" lost 0 || echo 0)
wait_for $((5 * SLOW)) have_lines "$WORK/lost.out" $((LOSTAT + 2)) || true
rm -f "$WORK/lost"
wait_for $((10 * SLOW)) has_state "$WORK/lost.out" ok "$LOSTAT" || true
BACKAT=$(has_state "$WORK/lost.out" ok "$LOSTAT" || echo 0)
wait_for $((5 * SLOW)) have_lines "$WORK/lost.out" $((BACKAT + 1)) || true
kill -TERM "$LOSTPID" 2>/dev/null || true
rc=0
wait "$LOSTPID" || rc=$?
exited lost "$rc"
ok "lost: the stream passes the checker" $CHECK --config "$WORK/all.json" "$WORK/lost.out"
ok "lost: GPU 1 is lost in a whole report (line $LOSTAT)" test "$LOSTAT" -gt 0
ok "lost: GPU 1 reports again after it returns (line $BACKAT)" test "$BACKAT" -gt "$LOSTAT"
is "$(pyq "$WORK/lost.out" 'sorted({d["error"] for l in lines for g in l["device_data"][0]["report"].values() for k, d in g["devices"].items() if k != "1"})')" \
	"['']" "lost: GPUs 0 and 2 report normally throughout"
if [ "$LOSTAT" -gt 0 ] && [ "$BACKAT" -gt 0 ]; then
	fragment "$WORK/lost.out" "$LOSTAT" 1 >"$WORK/lost.frag"
	golden lost "$WORK/lost.frag"
	fragment "$WORK/lost.out" "$BACKAT" 1 >"$WORK/back.frag"
	golden back "$WORK/back.frag"
	is "$(pyq "$WORK/lost.out" "'energy_joules' in lines[$BACKAT]['device_data'][0]['report']['device_power']['devices']['1']")" \
		"True" "lost: the period after the first one back has increases again"
fi
ok "lost: GPU 1's handle was looked up again, the others' once" \
	test "$(stat "$WORK/lost.stats" 1 handle_lookups)" -ge 2 -a "$(stat "$WORK/lost.stats" 0 handle_lookups)" = 1
ok "lost: the loss and the return are logged" grep -q "answers again" "$WORK/lost.err"

# --- no library, a driver that does not start ---------------------------------------------
mon nolib "$WORK/none/libnvidia-ml.so.1" "$NV/multi.nvml" "$WORK/all.json" -n 1
ok "no library: passes the checker" $CHECK --count 1 "$WORK/nolib.out"
fragment "$WORK/nolib.out" 1 >"$WORK/nolib.frag"
golden nolib "$WORK/nolib.frag"
rc=0
ACCEL_NVML_LIBRARY=$WORK/none/libnvidia-ml.so.1 $MON --once >"$WORK/auto-none.out" 2>"$WORK/auto-none.err" || rc=$?
exited auto-none "$rc"
is "$(pyq "$WORK/auto-none.out" 'lines[0]["device_data"]')" "[]" "no library, no config: no nvidia entry (auto finds none)"
rc=0
ACCEL_NVML_LIBRARY=$NEW $MON -c "$WORK/all.json" -n 1 >"$WORK/noinit.out" 2>"$WORK/noinit.err" || rc=$?
exited noinit "$rc"
is "$(pyq "$WORK/noinit.out" 'lines[0]["device_data"][0]["error"]')" \
	"NVML cannot start: Driver Not Loaded (NVML error 9)" "a driver that does not start: the entry says so"

# --- select --------------------------------------------------------------------------------
cat >"$WORK/select.json" <<'EOF'
{ "period": "100ms", "system_metrics": [],
  "devices": [ { "type": "nvidia", "select": [ "GPU-3e5d1c90-0000-4000-8000-000000000000", 0 ],
                 "metrics": [ { "type": "device_power" }, { "type": "device_errors", "period": "200ms" } ] } ] }
EOF
mon select "$NEW" "$NV/multi.nvml" "$WORK/select.json" -n 4
ok "select + metrics + periods: passes the checker (--config)" $CHECK --config "$WORK/select.json" --count 4 "$WORK/select.out"
is "$(pyq "$WORK/select.out" 'sorted({k for l in lines for g in l["device_data"][0]["report"].values() for k in g["devices"]})')" \
	"['0', '2']" "select by UUID and index: GPUs 0 and 2 only"
is "$(pyq "$WORK/select.out" '[sorted(l["device_data"][0]["report"]) for l in lines]')" \
	"[['device_power'], ['device_errors', 'device_power'], ['device_power'], ['device_errors', 'device_power']]" \
	"select: each group on its own period"

# --- a process runtime's device memory ------------------------------------------------------
spawn SLEEPER sleep 300
cat >"$WORK/pid.nvml" <<EOF
gpu
memory 1000000000 600000000 400000000 0
proc $SLEEPER 300000000
proc 1 1000
gpu
memory 1000000000 600000000 400000000 0
proc $SLEEPER 200000000
EOF
cat >"$WORK/pid.json" <<EOF
{ "period": "100ms", "system_metrics": [],
  "runtimes": [ { "address": "pid:$SLEEPER", "metrics": [ { "type": "memory_used" } ] },
                { "address": "pid:$$", "metrics": [ { "type": "memory_used" } ] } ],
  "devices": [ { "type": "nvidia", "metrics": [ { "type": "device_memory" } ] } ] }
EOF
mon pid "$NEW" "$WORK/pid.nvml" "$WORK/pid.json" -n 2
ok "process runtimes: passes the checker" $CHECK --config "$WORK/pid.json" --count 2 "$WORK/pid.out"
is "$(pyq "$WORK/pid.out" '[e["report"]["memory_used"]["runtime_used_bytes"]["device"] for e in lines[1]["runtime_data"]]')" \
	"[500000000, 0]" "pid: device memory summed over both GPUs; 0 for a process on none"

# --- no config file: auto finds the fake ----------------------------------------------------
rc=0
FAKE_NVML_SCRIPT=$NV/multi.nvml ACCEL_NVML_LIBRARY=$NEW $MON --once >"$WORK/auto.out" 2>"$WORK/auto.err" || rc=$?
exited auto "$rc"
ok "auto: --once passes the checker" $CHECK --count 1 "$WORK/auto.out"
is "$(pyq "$WORK/auto.out" '[(e["device_type"], e["error"], sorted(e["report"]), sorted(e["report"]["device_clocks"]["devices"])) for e in lines[0]["device_data"]]')" \
	"[('nvidia', '', ['device_clocks', 'device_errors', 'device_info', 'device_memory', 'device_power', 'device_thermal', 'device_utilization'], ['0', '1', '2'])]" \
	"auto: one nvidia entry, every device group, every GPU"

done_testing
