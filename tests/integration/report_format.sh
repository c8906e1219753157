#!/bin/sh
# SPDX-License-Identifier: MIT
# The report stream against its contract (docs/report-format.md): the checker
# checks itself, then real output from --once, from process runtimes over
# several cycles, and instance_info from a fake IMDS (up, tag-less, disabled
# and down).
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
CHECK="$PY $HELP/check_report.py"

# jfield FILE PATH: print one value of the first report in FILE (PATH like
# instance_info.error or runtime_data.0.pid); strings bare, the rest as JSON.
jfield() {
	$PY - "$@" <<'EOF'
import json, sys
v = json.loads(open(sys.argv[1], encoding="utf-8").readline())
for k in sys.argv[2].split("."):
    v = v[int(k)] if isinstance(v, list) else v[k]
print(v if isinstance(v, str) else json.dumps(v))
EOF
}

# Ends the script with a failed test when FILE has no report line.
need_output() {
	if [ ! -s "$1" ]; then
		_result 1 "$2: accel-monitor wrote a report"
		sed 's/^/#   /' "$1.err" 2>/dev/null | head -20
		done_testing
		exit 1
	fi
}

# --- the checker itself ---------------------------------------------------------------
ok "check_report.py --self-test rejects every broken report" $CHECK --self-test

# --- --once with the default config ------------------------------------------------------
# Tests that are not about instance metadata keep away from any real IMDS.
# An empty sysfs: the default config monitors every device found, and this host's own are not the subject here.
mkdir -p "$WORK/nosys"
AWS_EC2_METADATA_DISABLED=true ACCEL_NVML_LIBRARY=/nonexistent $MON --once --path.sysfs "$WORK/nosys" \
	>"$WORK/once.out" 2>"$WORK/once.out.err" || true
need_output "$WORK/once.out" "--once"
ok "--once passes the checker (vcpu_usage + memory_info, no errors, one line)" \
	$CHECK --expect-groups vcpu_usage,memory_info --no-system-errors --count 1 "$WORK/once.out"
ok "--once | python3 -m json.tool" $PY -m json.tool "$WORK/once.out"
is "$(jfield "$WORK/once.out" monitor.seq)" "0" "--once: seq is 0"
is "$(jfield "$WORK/once.out" device_data)" "[]" "--once: device_data is []"

# The checker is not vacuous on real output: break one thing, it must fail.
sed 's/"device_data":\[\],//' "$WORK/once.out" >"$WORK/broken1.out"
sed 's/"seq":0/"seq":1/' "$WORK/once.out" >"$WORK/broken2.out"
sed 's/"memory_used_bytes":[0-9]*/"memory_used_bytes":-1/' "$WORK/once.out" >"$WORK/broken3.out"
for b in broken1 broken2 broken3; do
	if $CHECK <"$WORK/$b.out" >"$WORK/$b.msg" 2>&1; then r=1; else r=0; fi
	_result $r "the checker rejects real output with one thing broken ($b: $(head -1 "$WORK/$b.msg"))"
done

# --- process runtimes over several cycles --------------------------------------------------
spawn S1 sleep 300
spawn S2 sleep 300
sleep 0 &
DEAD=$!
wait "$DEAD" || true
cat >"$WORK/rt.json" <<EOF
{
  "period": "300ms",
  "runtimes": [
    { "address": "process:sleep",
      "metrics": [ { "type": "neuron_runtime_vcpu_usage" }, { "type": "memory_used", "period": "600ms" } ] },
    { "address": "pid:$DEAD", "metrics": [ { "type": "memory_used" } ] },
    { "address": "unix:/run/neuron.sock",
      "metrics": [ { "type": "inference_stats" }, { "type": "memory_used" } ] }
  ],
  "system_metrics": [ { "type": "vcpu_usage" }, { "type": "memory_info", "period": "600ms" } ]
}
EOF
AWS_EC2_METADATA_DISABLED=true $MON -c "$WORK/rt.json" -n 3 >"$WORK/rt.out" 2>"$WORK/rt.out.err" || true
need_output "$WORK/rt.out" "-n 3 with runtimes"
ok "process, dead pid and unix: runtimes, -n 3: passes the checker" \
	$CHECK --config "$WORK/rt.json" --expect-groups vcpu_usage,memory_info --some --count 3 "$WORK/rt.out"

# What the checker cannot know: which entries each report must hold.
$PY - "$WORK/rt.out" "$S1" "$S2" "$DEAD" >"$WORK/rt.sum" 2>&1 <<'EOF' || true
import json, sys
out, s1, s2, dead = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for n, line in enumerate(open(out, encoding="utf-8")):
    r = json.loads(line)
    ents = r["runtime_data"]
    mine = {e["pid"]: e for e in ents if e["runtime_index"] == 0 and e["pid"] in (s1, s2)}
    d = [e for e in ents if e["runtime_index"] == 1]
    u = [e for e in ents if e["runtime_index"] == 2]
    sleeps = sorted(mine) == sorted((s1, s2)) and all(
        e["runtime_tag"] == "sleep" and e["error"] == "" and "runtime_vcpu_usage" in e["report"]
        and e["report"]["runtime_vcpu_usage"]["error"] == "" for e in mine.values())
    dead_ok = len(d) == 1 and d[0]["pid"] == dead and d[0]["error"] == "no such process: %d" % dead \
        and d[0]["report"] == {}
    unix_ok = len(u) == 1 and u[0]["pid"] is None and u[0]["error"] != "" \
        and sorted(u[0]["report"]) == ["execution_stats", "memory_used"] \
        and all(g["error"] == u[0]["error"] for g in u[0]["report"].values())
    every = sorted({"memory_used" in e["report"] for e in mine.values()} | {"memory_info" in r["system_data"]})
    print("line %d: sleeps %s, dead pid %s, unix %s, 600 ms groups %s" % (n + 1, sleeps, dead_ok, unix_ok, every))
EOF
is "$(cat "$WORK/rt.sum")" "line 1: sleeps True, dead pid True, unix True, 600 ms groups [False]
line 2: sleeps True, dead pid True, unix True, 600 ms groups [True]
line 3: sleeps True, dead pid True, unix True, 600 ms groups [False]" \
	"per report: both sleeps, the dead pid, unix: errors in each group; 600 ms groups only in report 2"

# --- instance_info from a fake IMDS ------------------------------------------------------
spawn IMDS $PY "$HELP/fake_imds.py" --port-file "$WORK/imds.port" --log "$WORK/imds.log"
wait_for 10 test -s "$WORK/imds.port" || diag "fake IMDS did not start"
EP=http://127.0.0.1:$(cat "$WORK/imds.port" 2>/dev/null)

AWS_EC2_METADATA_SERVICE_ENDPOINT=$EP KUBE_NODE_NAME=test-node-1 \
	$MON --once >"$WORK/imds.out" 2>"$WORK/imds.out.err" || true
need_output "$WORK/imds.out" "fake IMDS"
ok "with the fake IMDS: passes the checker" $CHECK "$WORK/imds.out"
got=""
for f in instance_id instance_type instance_availability_zone instance_availability_zone_id \
	instance_region ami_id subnet_id instance_name error node_name; do
	got="$got$f=$(jfield "$WORK/imds.out" "instance_info.$f");"
done
is "$got" "instance_id=i-0123456789abcdef0;instance_type=inf2.xlarge;instance_availability_zone=us-west-2b;\
instance_availability_zone_id=usw2-az2;instance_region=us-west-2;ami_id=ami-0abcdef1234567890;\
subnet_id=subnet-0123abcd;instance_name=my-inference-node;error=;node_name=test-node-1;" \
	"instance_info from the fake IMDS, node_name from KUBE_NODE_NAME"
is "$(jfield "$WORK/imds.out" instance_info.hostname)" "$(uname -n)" "instance_info.hostname is the host name"

# Disabled: no request reaches the fake.
before=$(wc -l <"$WORK/imds.log")
AWS_EC2_METADATA_DISABLED=true AWS_EC2_METADATA_SERVICE_ENDPOINT=$EP \
	$MON --once >"$WORK/dis.out" 2>"$WORK/dis.out.err" || true
need_output "$WORK/dis.out" "AWS_EC2_METADATA_DISABLED"
case $(jfield "$WORK/dis.out" instance_info.error) in
*disabled*) r=0 ;;
*) r=1 ;;
esac
_result $r "AWS_EC2_METADATA_DISABLED=true: error says disabled ($(jfield "$WORK/dis.out" instance_info.error))"
is "$(jfield "$WORK/dis.out" instance_info.instance_id)" "" "AWS_EC2_METADATA_DISABLED=true: instance_id is empty"
is "$(wc -l <"$WORK/imds.log")" "$before" "AWS_EC2_METADATA_DISABLED=true: the fake IMDS got no request"

# Tags not exposed in metadata (the EC2 default): instance_name is "" and that is no error.
spawn IMDS2 $PY "$HELP/fake_imds.py" --port-file "$WORK/imds2.port" --no-tags
wait_for 10 test -s "$WORK/imds2.port" || diag "fake IMDS --no-tags did not start"
AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:$(cat "$WORK/imds2.port" 2>/dev/null) \
	$MON --once >"$WORK/notags.out" 2>"$WORK/notags.out.err" || true
need_output "$WORK/notags.out" "fake IMDS --no-tags"
is "$(jfield "$WORK/notags.out" instance_info.instance_name)|$(jfield "$WORK/notags.out" instance_info.error)|$(jfield "$WORK/notags.out" instance_info.instance_id)" \
	"||i-0123456789abcdef0" "--no-tags: instance_name \"\", error \"\", the rest still there"

# IMDS down (nothing listens on the port): an error, and --once is not held up.
DOWN=$(free_port)
t0=$(date +%s%N)
AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:$DOWN $MON --once >"$WORK/down.out" 2>"$WORK/down.out.err" || true
t1=$(date +%s%N)
need_output "$WORK/down.out" "IMDS down"
ms=$(((t1 - t0) / 1000000))
[ "$ms" -le $((2000 * SLOW)) ] && r=0 || r=1
_result $r "IMDS down: --once finishes in ${ms} ms (limit $((2000 * SLOW)))"
[ -n "$(jfield "$WORK/down.out" instance_info.error)" ] && r=0 || r=1
_result $r "IMDS down: instance_info.error is set ($(jfield "$WORK/down.out" instance_info.error))"
ok "IMDS down: passes the checker" $CHECK --expect-groups vcpu_usage,memory_info "$WORK/down.out"

done_testing
