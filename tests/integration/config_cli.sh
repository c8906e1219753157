#!/bin/sh
# SPDX-License-Identifier: MIT
# The configuration and the command line: neuron-monitor's user-guide
# configurations (2020 and 2.x) are accepted, mapped to canonical names and
# streamed; --check-config prints a configuration that is itself valid and
# stable; YAML equals JSON; errors say file:line:column: path: message with
# exit status 3; usage errors are 2; --version and --help (whose example
# configuration is valid).
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED
CFG=$FIX/config
F2020=$CFG/neuron-monitor-2020-userguide.json
F2X=$CFG/neuron-monitor-2x-userguide.json

# run NAME [ARG...]: run accel-monitor (bounded), stdout in $WORK/NAME.out,
# stderr in $WORK/NAME.err, exit status in $RC.
run() {
	name=$1
	shift
	RC=0
	timeout -k 5 $((20 * SLOW)) "$MON" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || RC=$?
}

# j FILE EXPR [ARG...]: evaluate EXPR with d = the JSON document in FILE
# (every line of a report stream: L) and A = the ARGs; exit 0 when true.
cat >"$WORK/j.py" <<'EOF'
import json, sys
path, expr, A = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(path, encoding="utf-8").read()
try:
    d = json.loads(text)
except ValueError:
    d = None
L = []
for s in text.split("\n"):
    if s.strip():
        try:
            L.append(json.loads(s))
        except ValueError:
            L = None
            break
r = eval(expr, {"d": d, "L": L, "A": A, "json": json})
if not r:
    print("false: %s" % expr)
    print(text[:1500])
sys.exit(0 if r else 1)
EOF
j() { $PY "$WORK/j.py" "$@"; }
empty() { [ ! -s "$1" ] || { cat "$1"; false; }; }
# stderr_is NAME TEXT TESTNAME: the whole of stderr is TEXT.
stderr_is() {
	if [ "$(cat "$WORK/$1.err")" = "$2" ]; then
		_result 0 "$3"
	else
		_result 1 "$3"
		echo "#   expected: $2"
		sed 's/^/#   got:      /' "$WORK/$1.err" | head -10
	fi
}

# --- neuron-monitor's user-guide configurations ---------------------------------------------
run c2020 -c "$F2020" --check-config
is "$RC" 0 "2020 user-guide config: --check-config exits 0"
ok "2020: stderr is empty" empty "$WORK/c2020.err"
ok "2020: runtimes[0].metrics types are canonical" j "$WORK/c2020.out" \
	'[m["type"] for m in d["runtimes"][0]["metrics"]] == ["neuroncore_counters", "memory_used", "runtime_vcpu_usage", "execution_stats", "hw_counters"]'
ok "2020: hw_counters has period 2.0, the others 1.0 (inherited)" j "$WORK/c2020.out" \
	'[m["period"] for m in d["runtimes"][0]["metrics"]] == [1.0, 1.0, 1.0, 1.0, 2.0]'
ok "2020: the unix: address is kept, system_metrics vcpu_usage + memory_info at 1.0" j "$WORK/c2020.out" \
	'd["runtimes"][0]["address"] == "unix:/run/neuron.sock" and d["system_metrics"] == [{"type": "vcpu_usage", "period": 1.0}, {"type": "memory_info", "period": 1.0}]'

run c2x -c "$F2X" --check-config
is "$RC" 0 "2.x user-guide config: --check-config exits 0"
ok "2.x: stderr is empty" empty "$WORK/c2x.err"
ok "2.x: neuron_runtimes -> runtimes; metrics types canonical" j "$WORK/c2x.out" \
	'[m["type"] for m in d["runtimes"][0]["metrics"]] == ["neuroncore_counters", "memory_used", "runtime_vcpu_usage", "execution_stats"]'
ok "2.x: tag_filter kept, no address (runtime discovery)" j "$WORK/c2x.out" \
	'd["runtimes"][0]["tag_filter"] == ".*" and "address" not in d["runtimes"][0]'
ok "2.x: system_metrics with neuron_hw_counters at period 2.0" j "$WORK/c2x.out" \
	'[(m["type"], m["period"]) for m in d["system_metrics"]] == [("vcpu_usage", 1.0), ("memory_info", 1.0), ("neuron_hw_counters", 2.0)]'
ok "no alias survives in --check-config output" \
	sh -c '! grep -E -q "neuron_runtime_vcpu_usage|inference_stats|neuron_runtimes" "$1" "$2"' sh \
	"$WORK/c2020.out" "$WORK/c2x.out"

run s2020 -c "$F2020" --once
is "$RC" 0 "2020 config --once: exit status 0"
ok "2020 --once: one report line" j "$WORK/s2020.out" 'L is not None and len(L) == 1'
ok "2020 --once: the runtime entry says the unix: address cannot be polled" j "$WORK/s2020.out" \
	'len(L[0]["runtime_data"]) == 1 and "cannot poll" in L[0]["runtime_data"][0]["error"] and "unix:/run/neuron.sock" in L[0]["runtime_data"][0]["error"]'
ok "2020 --once: each of its groups carries the same error" j "$WORK/s2020.out" \
	'sorted(L[0]["runtime_data"][0]["report"]) == sorted(["neuroncore_counters", "memory_used", "runtime_vcpu_usage", "execution_stats", "hw_counters"]) and all(g["error"] == L[0]["runtime_data"][0]["error"] for g in L[0]["runtime_data"][0]["report"].values())'
ok "2020 --once: system_data has vcpu_usage and memory_info, without error" j "$WORK/s2020.out" \
	'sorted(L[0]["system_data"]) == ["memory_info", "vcpu_usage"] and all(g["error"] == "" for g in L[0]["system_data"].values())'
ok "2020 --once: stderr is empty" empty "$WORK/s2020.err"

run s2x -c "$F2X" --once
is "$RC" 0 "2.x config --once: exit status 0"
ok "2.x --once: one report; the runtime and neuron_hw_counters say why they are not collected" j "$WORK/s2x.out" \
	'L is not None and len(L) == 1 and L[0]["runtime_data"][0]["error"] != "" and L[0]["system_data"]["neuron_hw_counters"]["error"] != "" and L[0]["system_data"]["vcpu_usage"]["error"] == ""'

# --- --check-config output is itself a valid configuration, and a fixed point ---------------------
for c in c2020 c2x; do
	cp "$WORK/$c.out" "$WORK/$c.eff.json"
	run "$c.again" -c "$WORK/$c.eff.json" --check-config
	is "$RC" 0 "$c: the --check-config output passes --check-config"
	ok "$c: ... and gives the same output" cmp "$WORK/$c.out" "$WORK/$c.again.out"
done
run cdef --check-config
is "$RC" 0 "no config: --check-config exits 0"
cp "$WORK/cdef.out" "$WORK/cdef.eff.json"
run cdef.again -c "$WORK/cdef.eff.json" --check-config
ok "no config: the effective default configuration is valid and a fixed point" cmp "$WORK/cdef.out" "$WORK/cdef.again.out"
ok "no config: vcpu_usage and memory_info every 5 s" j "$WORK/cdef.out" \
	'd["period"] == 5.0 and d["system_metrics"] == [{"type": "vcpu_usage", "period": 5.0}, {"type": "memory_info", "period": 5.0}]'

# An endpoint runtime's own keys: printed back by its collector, a fixed point.
cat >"$WORK/cep.json" <<'EOF'
{ "runtimes": [ { "address": "https://127.0.0.1:8002/metrics", "server": "triton", "timeout": "2s",
                  "tls": { "ca_file": "/etc/ca.pem" }, "bearer_token_file": "/run/token", "passthrough": true,
                  "metrics": [ { "type": "execution_stats" }, { "type": "memory_used" } ] } ] }
EOF
run cep -c "$WORK/cep.json" --check-config
is "$RC" 0 "endpoint runtime: --check-config exits 0"
ok "endpoint runtime: its keys printed back, with the defaults" j "$WORK/cep.out" \
	'{k: v for k, v in d["runtimes"][0].items() if k not in ("address", "period", "metrics")} == {"server": "triton", "timeout": 2.0, "max_body_bytes": 4194304, "tls": {"ca_file": "/etc/ca.pem", "insecure_skip_verify": False}, "bearer_token_file": "/run/token", "passthrough": True}'
cp "$WORK/cep.out" "$WORK/cep.eff.json"
run cep.again -c "$WORK/cep.eff.json" --check-config
ok "endpoint runtime: the effective configuration is a fixed point" cmp "$WORK/cep.out" "$WORK/cep.again.out"
printf '{ "runtimes": [ { "address": "process:x",\n    "passthrough": true, "metrics": [] } ] }\n' >"$WORK/cep2.json"
run cep2 -c "$WORK/cep2.json" --check-config
is "$RC" 3 "an endpoint key in a process: runtime: exit status 3"
stderr_is cep2 "accel-monitor: error: $WORK/cep2.json:2:5: runtimes[0].passthrough: unknown key \"passthrough\" for address \"process:x\"; known: address, tag_filter, period, metrics (\"passthrough\" is a key of http: and https: runtimes)" \
	"an endpoint key in a process: runtime: file:2:5 (the key), whose key it is"

# --- YAML equals JSON ---------------------------------------------------------------------
cat >"$WORK/twin.json" <<'EOF'
{
  "period": "2s",
  "runtimes": [
    { "address": "process:tritonserver", "tag_filter": "^triton", "period": "500ms",
      "metrics": [ { "type": "neuron_runtime_vcpu_usage" }, { "type": "memory_used", "period": 3 } ] },
    { "address": "pid:1", "metrics": [ { "type": "memory_used" } ] }
  ],
  "system_metrics": [ { "type": "vcpu_usage", "period": "250ms" }, { "type": "memory_info" } ],
  "devices": []
}
EOF
cat >"$WORK/twin.yaml" <<'EOF'
# The same configuration as twin.json.
period: 2s
runtimes:
  - address: "process:tritonserver"
    tag_filter: ^triton
    period: 500ms
    metrics:
      - type: neuron_runtime_vcpu_usage
      - {type: memory_used, period: 3}
  - address: pid:1
    metrics: [ {type: memory_used} ]
system_metrics:
  - type: vcpu_usage
    period: 250ms
  - type: memory_info
devices: []
EOF
run tj -c "$WORK/twin.json" --check-config
run ty -c "$WORK/twin.yaml" --check-config
is "$RC" 0 "YAML config: --check-config exits 0"
ok "YAML config: --check-config output equals its JSON twin's" cmp "$WORK/tj.out" "$WORK/ty.out"
ok "the twins' effective periods: inherited and converted" j "$WORK/tj.out" \
	'[(m["type"], m["period"]) for m in d["runtimes"][0]["metrics"]] == [("runtime_vcpu_usage", 0.5), ("memory_used", 3.0)] and d["runtimes"][1]["metrics"] == [{"type": "memory_used", "period": 2.0}] and d["system_metrics"][0]["period"] == 0.25'
cp "$WORK/twin.yaml" "$WORK/twin.yml"
run tyml -c "$WORK/twin.yml" --check-config
ok "a .yml file is YAML too" cmp "$WORK/tj.out" "$WORK/tyml.out"

# --- configuration errors: exit 3, file:line:col: path: message -------------------------------
printf '{\n  "runtimes": [\n    { "address": "pid:1",\n      "metrics": [ {"type": "memory_used"},\n                   {"type": "bogus"} ] }\n  ]\n}\n' >"$WORK/bad1.json"
run bad1 -c "$WORK/bad1.json" --check-config
is "$RC" 3 "unknown metric group: exit status 3"
stderr_is bad1 "accel-monitor: error: $WORK/bad1.json:5:29: runtimes[0].metrics[1].type: unknown metric group \"bogus\"; known: runtime_vcpu_usage, memory_used, execution_stats, neuroncore_counters, hw_counters" \
	"unknown metric group: file:5:29 (the value), path runtimes[0].metrics[1].type, message"
ok "unknown metric group: nothing on stdout" empty "$WORK/bad1.out"
run bad1s -c "$WORK/bad1.json"
is "$RC" 3 "unknown metric group, streaming: exit status 3 before any report"
ok "unknown metric group, streaming: nothing on stdout" empty "$WORK/bad1s.out"

printf '{\n  "period": "1s",\n    "system_metrics": [ { "type": "vcpu_usage",\n                          "perod": "2s" } ]\n}\n' >"$WORK/bad2.json"
run bad2 -c "$WORK/bad2.json" --check-config
is "$RC" 3 "unknown key: exit status 3"
stderr_is bad2 "accel-monitor: error: $WORK/bad2.json:4:27: system_metrics[0].perod: unknown key \"perod\"; known: type, period" \
	"unknown key: file:4:27 (the key), path, message"

printf '{ "system_metrics": [ { "type": "vcpu_usage", "period": "50ms" } ] }\n' >"$WORK/bad3.json"
run bad3 -c "$WORK/bad3.json" --check-config
is "$RC" 3 "period too short: exit status 3"
stderr_is bad3 "accel-monitor: error: $WORK/bad3.json:1:57: system_metrics[0].period: period too short: 50 ms; the minimum is 100ms" \
	"period too short: file:1:57, path, message"

printf 'period: 1s\nruntimes:\n  - address: "pid:1"\n    metrics:\n      - type: memory_used\n      - {type: vcpu_usage}\n' >"$WORK/bad4.yaml"
run bad4 -c "$WORK/bad4.yaml" --check-config
is "$RC" 3 "YAML: a system group among runtime metrics: exit status 3"
ok "YAML: file:6:16: runtimes[0].metrics[1].type: ... is a system group" \
	grep -q -F "$WORK/bad4.yaml:6:16: runtimes[0].metrics[1].type: \"vcpu_usage\" is a system group, not allowed here" "$WORK/bad4.err"

printf '{\n  "period": "1s"\n  "system_metrics": []\n}\n' >"$WORK/bad5.json"
run bad5 -c "$WORK/bad5.json" --check-config
is "$RC" 3 "JSON syntax error: exit status 3"
ok "JSON syntax error: file:3:COL: names the line of the error" \
	grep -E -q "^accel-monitor: error: $WORK/bad5.json:3:[1-9][0-9]*: " "$WORK/bad5.err"

run bad6 -c "$WORK/no-such-file.json" --check-config
is "$RC" 3 "missing config file: exit status 3"
ok "missing config file: stderr names the file and the reason" \
	grep -q -F "$WORK/no-such-file.json: No such file or directory" "$WORK/bad6.err"

# --- an empty --path.procfs / --path.sysfs is refused, as "procfs": "" is in a config ---
for p in procfs sysfs; do
	run "empty$p" "--path.$p" "" --check-config
	is "$RC" 2 "--path.$p \"\": usage error (exit 2)"
	ok "--path.$p \"\": says what it expected" grep -q -F "accel-monitor: --path.$p: expected a directory, got \"\"" "$WORK/empty$p.err"
done

# --- a kind named explicitly and by "auto" is collected once, with the explicit block's settings ---
printf '{ "devices": [ { "type": "auto" }, { "type": "amdgpu", "metrics": [ { "type": "device_errors" } ] } ] }\n' \
	>"$WORK/autoamd.json"
run autoamd -c "$WORK/autoamd.json" --path.sysfs "$FIX/sysfs/host" --path.procfs "$FIX/proc-devices" --once
is "$RC" 0 "auto + amdgpu on the fixture tree: exit status 0"
ok "auto + amdgpu: one amdgpu entry (not two), the other kinds from auto" j "$WORK/autoamd.out" \
	'sorted(e["device_type"] for e in L[0]["device_data"]) == ["amdgpu", "hwmon", "ncs2", "neuron"]'
ok "auto + amdgpu: the amdgpu entry is the explicit block's (device_errors only), its ECC counters once" \
	j "$WORK/autoamd.out" \
	'[sorted(e["report"]) for e in L[0]["device_data"] if e["device_type"] == "amdgpu"] == [["device_errors"]] and str([e for e in L[0]["device_data"] if e["device_type"] == "amdgpu"]).count("ecc_corrected_volatile_total") == 1'
printf '{ "devices": [ { "type": "amdgpu" },\n  { "type": "amdgpu", "select": [0] } ] }\n' >"$WORK/twoamd.json"
run twoamd -c "$WORK/twoamd.json" --check-config
is "$RC" 3 "two amdgpu blocks that both select device 0: exit status 3"
stderr_is twoamd "accel-monitor: error: $WORK/twoamd.json:2:33: devices[1].select: devices[0] already collects these \"amdgpu\" devices (both select \"all\"); one block per device, or give each block its own \"select\"" \
	"two amdgpu blocks: file:2:33, path, message"

# --- input quoted in an error is capped and escaped: a 900 kB value with escape sequences ---------
$PY -c 'import sys; sys.stdout.write("{\"system_metrics\": [{\"type\": \"" + "\\u001b[2J" + "k" * 900000 + "\"}]}\n")' \
	>"$WORK/huge.json"
run huge -c "$WORK/huge.json" --check-config
is "$RC" 3 "a 900 kB metric group name: exit status 3"
ok "a 900 kB metric group name: one short stderr line, no raw escape character" sh -c \
	'[ "$(wc -l <"$1")" -eq 1 ] && [ "$(wc -c <"$1")" -lt 1000 ] && ! grep -q "$(printf "\033")" "$1" && grep -q -F "\\u001b[2Jkkk" "$1" && grep -q -F "kkk...\"; known" "$1"' \
	sh "$WORK/huge.err"

# --- a config path that is a FIFO or a directory: an error that says so, never a hang -----------
mkfifo "$WORK/fifo.json"
run fifo -c "$WORK/fifo.json" --check-config
is "$RC" 3 "a FIFO as the config: exit status 3 at once"
stderr_is fifo "accel-monitor: error: $WORK/fifo.json: not a regular file (a FIFO)" "a FIFO as the config: says it is a FIFO"
mkdir "$WORK/dir.json"
run dir -c "$WORK/dir.json" --check-config
is "$RC" 3 "a directory as the config: exit status 3"
stderr_is dir "accel-monitor: error: $WORK/dir.json: not a regular file (a directory)" \
	"a directory as the config: says it is a directory"

# SIGHUP after the config file was replaced by a FIFO: the old configuration keeps
# running, and SIGTERM still ends it. Signals go to accel-monitor itself, not to timeout.
has() { grep -q -e "$2" "$1"; }
has_mon() { pgrep -P "$1" -x accel-monitor >/dev/null; }
gone() { ! kill -0 "$1" 2>/dev/null; }
printf '{ "period": "200ms", "system_metrics": [ { "type": "vcpu_usage" } ] }\n' >"$WORK/hup.json"
timeout -k 2 $((30 * SLOW)) "$MON" -c "$WORK/hup.json" >"$WORK/hup.out" 2>"$WORK/hup.err" &
T=$!
_pids="$_pids $T"
wait_for $((5 * SLOW)) has_mon "$T" || true
M=$(pgrep -P "$T" -x accel-monitor | head -n 1 || true)
ok "SIGHUP with a FIFO: accel-monitor is running" test -n "$M"
wait_for $((10 * SLOW)) has_lines "$WORK/hup.out" 2 || true
rm "$WORK/hup.json"
mkfifo "$WORK/hup.json"
kill -HUP "$M" 2>/dev/null || true
if wait_for $((5 * SLOW)) has "$WORK/hup.err" "keeping the previous"; then r=0; else r=1; fi
_result $r "SIGHUP with a FIFO: logged at once, the previous configuration kept"
ok "SIGHUP with a FIFO: the message says the path is a FIFO" \
	grep -q -F "$WORK/hup.json: not a regular file (a FIFO)" "$WORK/hup.err"
n1=$(wc -l <"$WORK/hup.out")
ok "SIGHUP with a FIFO: still streaming the old configuration" wait_for $((5 * SLOW)) has_lines "$WORK/hup.out" $((n1 + 3))
kill -TERM "$M" 2>/dev/null || true
ok "SIGHUP with a FIFO: SIGTERM still ends it" wait_for $((5 * SLOW)) gone "$M"
wait "$T" 2>/dev/null || true

# --- config/default.json is the configuration used without -c ----------------------------------------
run dflt --check-config
run dfile --check-config -c "$TOP/config/default.json"
is "$(cat "$WORK/dfile.out")" "$(cat "$WORK/dflt.out")" "config/default.json: the same effective configuration as no -c"
ok "no -c: vcpu_usage, memory_info and every group of every device found" j "$WORK/dflt.out" \
	'([g["type"] for g in d["system_metrics"]] == ["vcpu_usage", "memory_info"] and
	  [(b["type"], b["select"], len(b["metrics"])) for b in d["devices"]] == [("auto", "all", 7)])'

# --- the "host" block: --check-config prints it, the command line wins, SIGHUP reloads it ---------------
V2=$FIX/containers/v2-systemd
cat >"$WORK/host.yaml" <<EOF
period: 200ms
system_metrics: []
devices: []
runtimes: [{address: "pid:1001", metrics: [{type: memory_used}]}]
host:
  rootfs: $V2/rootfs
  kubelet_url: https://127.0.0.1:10250
  kubelet_refresh: 10s
  instance_metadata: "off"
EOF
run hc -c "$WORK/host.yaml" --check-config
is "$RC" 0 "host block: --check-config exits 0"
ok "host block: --check-config prints it, the defaults filled in" j "$WORK/hc.out" \
	'd["host"] == {"rootfs": A[0] + "/rootfs", "run": A[0] + "/rootfs/run", "cgroupfs": A[0] + "/rootfs/sys/fs/cgroup",
	 "kubelet_url": "https://127.0.0.1:10250", "kubelet_refresh": 10, "ecs_refresh": 30, "instance_metadata": "off"}' "$V2"
run hc2 -c "$WORK/host.yaml" --check-config --path.cgroupfs /cg --kubelet-url http://127.0.0.1:10255 \
	--instance-metadata on
ok "host block: the command line's options win over the file's, the rest stays" j "$WORK/hc2.out" \
	'(d["host"]["cgroupfs"] == "/cg" and d["host"]["kubelet_url"] == "http://127.0.0.1:10255" and
	  d["host"]["instance_metadata"] == "on" and d["host"]["rootfs"] == A[0] + "/rootfs" and
	  d["host"]["kubelet_refresh"] == 10)' "$V2"
printf '{"host": {"kubelet_url": "10.0.0.7:10250"}}\n' >"$WORK/hbad.json"
run hbad -c "$WORK/hbad.json" --check-config
is "$RC" 3 "host block: a bad value is a configuration error"
stderr_is hbad "accel-monitor: error: $WORK/hbad.json:1:26: host.kubelet_url: expected an http:// or https:// URL, got \"10.0.0.7:10250\"" \
	"host block: the error says file:line:column and the path"
# --kubelet-pod-labels N: the file's kubelet_pod_labels, the command line's winning, 0 to 64.
printf '{"host": {"kubelet_pod_labels": 8}}\n' >"$WORK/hpl.json"
run hpl -c "$WORK/hpl.json" --check-config
ok "host block: kubelet_pod_labels in the effective host block" j "$WORK/hpl.out" 'd["host"]["kubelet_pod_labels"] == 8'
run hpl0 -c "$WORK/hpl.json" --check-config --kubelet-pod-labels 0
ok "--kubelet-pod-labels 0 wins over the file's (left out: the default)" j "$WORK/hpl0.out" \
	'"kubelet_pod_labels" not in d["host"]'
run hpl65 --kubelet-pod-labels 65 --check-config
is "$RC" 2 "--kubelet-pod-labels 65: a usage error"
stderr_is hpl65 "accel-monitor: --kubelet-pod-labels: expected an integer from 0 (none) to 64, got \"65\"" \
	"--kubelet-pod-labels 65: says the range and the value"

# SIGHUP: the rootfs (where the runtimes' state files name pid 1001's container) comes with a reload.
# Before it, the container has its ids only; after it, the next reports name its pod.
pod1001() { # FILE: the last report's pod name of pid 1001's container, "-" when none
	$PY - "$1" <<'EOF'
import json, sys
lines = [l for l in open(sys.argv[1], encoding="utf-8").read().split("\n") if l.strip()]
c = [e for e in json.loads(lines[-1])["runtime_data"] if e["pid"] == 1001][0].get("container", {})
print(c.get("pod", "-"))
EOF
}
hr_config() { # [ROOTFS]: the reload test's configuration, with a host block when ROOTFS is given
	_h=
	[ -z "${1:-}" ] || _h=", \"host\": {\"rootfs\": \"$1\"}"
	printf '{"period": "200ms", "system_metrics": [], "devices": [], "runtimes": [{"address": "pid:1001", "metrics": [{"type": "memory_used"}]}]%s}\n' \
		"$_h" >"$WORK/hr.json"
}
hr_config
spawn HM "$MON" -v -c "$WORK/hr.json" --path.procfs "$V2/proc" --instance-metadata off >"$WORK/hr.out" 2>"$WORK/hr.err"
ok "host reload: reports stream" wait_for $((10 * SLOW)) has_lines "$WORK/hr.out" 2
is "$(pod1001 "$WORK/hr.out")" "-" "host reload: without a rootfs, pid 1001's container has no pod name"
hr_config "$V2/rootfs"
n1=$(nlines "$WORK/hr.out")
kill -HUP "$HM"
ok "host reload: reloaded" wait_for $((10 * SLOW)) grep -q "reloaded" "$WORK/hr.err"
has_pod() { has_lines "$WORK/hr.out" $((n1 + 2)) && [ "$(pod1001 "$WORK/hr.out")" = trainer-0 ]; }
ok "host reload: the next reports name the pod from the new rootfs" wait_for $((10 * SLOW)) has_pod
kill -TERM "$HM"
wait "$HM" 2>/dev/null || true

# --- usage errors: exit 2 --------------------------------------------------------------------------
run u1 --no-such-option
is "$RC" 2 "unknown option: exit status 2"
ok "unknown option: stderr points to --help" grep -q -F "Try 'accel-monitor --help'" "$WORK/u1.err"
ok "unknown option: nothing on stdout" empty "$WORK/u1.out"
run u2 -n 0
is "$RC" 2 "-n 0: exit status 2"
run u3 stray-argument
is "$RC" 2 "a stray argument: exit status 2"
run u4 -c
is "$RC" 2 "-c without its argument: exit status 2"

# --- --version and --help --------------------------------------------------------------------------
VERSION=$(sed -n 's/^VERSION *:= *//p' "$TOP/Makefile")
run v --version
is "$RC" 0 "--version: exit status 0"
is "$(cat "$WORK/v.out")" "accel-monitor $VERSION" "--version prints accel-monitor $VERSION"

run h --help
is "$RC" 0 "--help: exit status 0"
ok "--help: on stdout, nothing on stderr" sh -c '[ -s "$1" ] && [ ! -s "$2" ]' sh "$WORK/h.out" "$WORK/h.err"
codes=$(grep -i "exit codes" "$WORK/h.out" || true)
for c in "0 ok" "1 system error" "2 usage error" "3 configuration error"; do
	case $codes in
	*"$c"*) _result 0 "--help exit codes: \"$c\"" ;;
	*) _result 1 "--help exit codes: \"$c\"" ; diag "got: $codes" ;;
	esac
done
sed -n '/^  {$/,/^  }$/p' "$WORK/h.out" >"$WORK/help-example.json"
ok "--help has an example configuration" test -s "$WORK/help-example.json"
run hex -c "$WORK/help-example.json" --check-config
is "$RC" 0 "the example configuration in --help passes --check-config"
ok "... with the periods it explains (inherited root -> runtime -> group)" j "$WORK/hex.out" \
	'[(m["type"], m["period"]) for m in d["runtimes"][0]["metrics"]] == [("runtime_vcpu_usage", 2.0), ("memory_used", 5.0)] and [(m["type"], m["period"]) for m in d["system_metrics"]] == [("vcpu_usage", 1.0), ("memory_info", 10.0)]'
run hh -h
ok "-h prints the same help" cmp "$WORK/h.out" "$WORK/hh.out"

# --- stdout cannot be written: exit 1 ("system error: stdout write failure"), saying why ---------
if [ -w /dev/full ]; then
	RC=0
	timeout -k 5 $((20 * SLOW)) "$MON" -c "$F2020" --check-config >/dev/full 2>"$WORK/full1.err" || RC=$?
	is "$RC" 1 "--check-config >/dev/full: exit status 1"
	ok "--check-config >/dev/full: stderr says why" grep -q "No space left on device" "$WORK/full1.err"
	RC=0
	timeout -k 5 $((20 * SLOW)) "$MON" --version >/dev/full 2>"$WORK/full2.err" || RC=$?
	is "$RC" 1 "--version >/dev/full: exit status 1"
	RC=0
	timeout -k 5 $((20 * SLOW)) "$MON" --help >/dev/full 2>"$WORK/full3.err" || RC=$?
	is "$RC" 1 "--help >/dev/full: exit status 1"
else
	diag "no writable /dev/full: skipping the full-device tests"
fi

# No sanitizer report anywhere.
ok "no sanitizer report in any stderr" sh -c '! cat "$1"/*.err | grep -E -q "Sanitizer|runtime error:"' sh "$WORK"

done_testing
