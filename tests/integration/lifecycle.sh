#!/bin/sh
# SPDX-License-Identifier: MIT
# accel-monitor's life cycle: SIGTERM/SIGINT end the stream cleanly, a reader
# that goes away ends it quietly, SIGHUP reloads (a broken file is logged
# and the old configuration kept), -n/--once bound the stream, and a failed
# write to stdout is exit status 1 with the reason on stderr.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
# Nothing here is about instance metadata: keep away from any real IMDS.
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED


has() { grep -q -e "$2" "$1"; }
# gone PID: the process has exited (a zombie not yet reaped counts as gone).
gone() {
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1) || st=
	[ -z "$st" ] || [ "$st" = Z ]
}
# The accel-monitor process that `timeout` (pid $1) runs: signals go to it
# directly, since timeout does not relay a second SIGHUP and arms its
# kill-after timer on the first signal it relays.
has_mon() { pgrep -P "$1" -x accel-monitor >/dev/null; }
mon_pid() {
	wait_for $((5 * SLOW)) has_mon "$1" || true
	pgrep -P "$1" -x accel-monitor | head -n 1 | grep . || echo "$1"
}
# no_sanitizer FILE: no ASan/LSan/UBSan report in FILE.
no_sanitizer() { ! grep -E -q 'Sanitizer|runtime error:' "$1"; }
# now_ms: monotonic-enough wall clock in milliseconds.
now_ms() { $PY -c 'import time; print(int(time.time() * 1000))'; }
# show FILE: its first lines as TAP comments (for failures).
show() { sed 's/^/#   /' "$1" | head -20; }
# quiet NAME FILE: pass when FILE (a streaming run's stderr) is empty but for
# "behind schedule" warnings, which a loaded host may cause (they are shown).
BEHIND='^accel-monitor: warning: [a-z_]*: behind schedule; skipped [0-9]* slot'
quiet() {
	if grep -v -e "$BEHIND" "$2" >"$WORK/.rest"; then
		_result 1 "$1"
		show "$WORK/.rest"
	else
		_result 0 "$1"
	fi
	grep -e "$BEHIND" "$2" | sed 's/^/# (loaded host) /' | head -3 || true
}
# empty_err NAME FILE: FILE is empty (else shown).
empty_err() {
	if [ -s "$2" ]; then
		_result 1 "$1"
		show "$2"
	else
		_result 0 "$1"
	fi
}

cat >"$WORK/stream.json" <<'EOF'
{ "period": "200ms", "system_metrics": [ { "type": "vcpu_usage" } ] }
EOF

# --- SIGTERM and SIGINT while streaming ---------------------------------------------
for sig in TERM INT; do
	out=$WORK/sig$sig.out
	err=$WORK/sig$sig.err
	spawn P timeout -k 5 $((30 * SLOW)) "$MON" -c "$WORK/stream.json" >"$out" 2>"$err"
	M=$(mon_pid "$P")
	if wait_for $((10 * SLOW)) has_lines "$out" 3; then
		_result 0 "SIG$sig: streaming (3 lines)"
	else
		_result 1 "SIG$sig: streaming (3 lines)"
		show "$err"
	fi
	kill -"$sig" "$M" || true
	t0=$(now_ms)
	if wait_for $((2 * SLOW)) gone "$M"; then r=0; else r=1; fi
	t1=$(now_ms)
	_result $r "SIG$sig: the process is gone soon after ($((t1 - t0)) ms)"
	rc=0
	wait "$P" || rc=$?
	is "$rc" 0 "SIG$sig: exit status 0"
	ok "SIG$sig: every line on stdout is a whole JSON object, the last ending in a newline" \
		q "$out" 'len(L) >= 3 and partial == ""'
	ok "SIG$sig: seq goes 0, 1, 2, ..." q "$out" '[l["monitor"]["seq"] for l in L] == list(range(len(L)))'
	quiet "SIG$sig: stderr is empty" "$err"
done

# --- the reader of stdout goes away -----------------------------------------------------
# The first report comes after 5 s; head takes it and exits. The monitor must
# notice while waiting (within 1 s, 3 s sanitized; not at its next write, 5 s
# later), exit 0, say nothing.
cat >"$WORK/head.json" <<'EOF'
{ "period": "5s", "system_metrics": [ { "type": "memory_info" } ] }
EOF
spawn H sh -c '
	W=$1
	{ timeout -k 5 60 "$2" -c "$W/head.json" 2>"$W/head.err" & echo $! >"$W/head.pid"
	  wait $!; echo $? >"$W/head.rc.tmp"; date +%s%N >"$W/mon.done"; mv "$W/head.rc.tmp" "$W/head.rc"; } |
		head -n 1 >"$W/head.out"
	date +%s%N >"$W/head.done"' sh "$WORK" "$MON"
if wait_for $((20 * SLOW)) test -e "$WORK/head.rc"; then
	_result 0 "| head -n 1: the monitor exits after head does"
	wait_for $((2 * SLOW)) test -e "$WORK/head.done" || true
	d=$((($(cat "$WORK/mon.done" 2>/dev/null || echo 0) - $(cat "$WORK/head.done" 2>/dev/null || echo 0)) / 1000000))
	if [ "$d" -le $((1000 * SLOW)) ]; then r=0; else r=1; fi
	_result $r "| head -n 1: the monitor is gone within 1 s of head ($d ms; its next report was 5 s away)"
	is "$(cat "$WORK/head.rc")" 0 "| head -n 1: exit status 0"
	ok "| head -n 1: head got one whole report" q "$WORK/head.out" 'len(L) == 1 and partial == ""'
	empty_err "| head -n 1: nothing on stderr" "$WORK/head.err"
else
	_result 1 "| head -n 1: the monitor exits after head does"
	kill "$(cat "$WORK/head.pid")" 2>/dev/null || true
fi
wait "$H" || true

# --- SIGHUP: a broken file is logged and the old config kept; a good one is applied ---------
cfg=$WORK/hup.json
out=$WORK/hup.out
err=$WORK/hup.err
cat >"$cfg" <<'EOF'
{ "period": "200ms", "system_metrics": [ { "type": "vcpu_usage" } ] }
EOF
spawn P timeout -k 5 $((40 * SLOW)) "$MON" -c "$cfg" >"$out" 2>"$err"
M=$(mon_pid "$P")
wait_for $((10 * SLOW)) has_lines "$out" 2 || true
printf '{\n  "period": "200ms",\n  "system_metrics": [ { "type": "memory_info" }\n' >"$cfg"
kill -HUP "$M" || true
if wait_for $((5 * SLOW)) has "$err" "keeping the previous"; then r=0; else r=1; fi
_result $r "SIGHUP with invalid JSON: logged, the previous configuration kept"
n1=$(nlines "$out")
ok "SIGHUP with invalid JSON: the message names the file with line:column" \
	grep -E -q "(^|[ :])$cfg:[0-9]+:[0-9]+: " "$err"
ok "SIGHUP with invalid JSON: still streaming" wait_for $((5 * SLOW)) has_lines "$out" $((n1 + 3))
ok "SIGHUP with invalid JSON: the lines after it still carry vcpu_usage only" \
	q "$out" 'len(L) > int(A[0]) and all(sorted(l["system_data"]) == ["vcpu_usage"] for l in L)' "$n1"
ok "SIGHUP with invalid JSON: the process is still there" kill -0 "$M"

cat >"$cfg" <<'EOF'
{ "period": "200ms", "system_metrics": [ { "type": "memory_info" } ] }
EOF
kill -HUP "$M" || true
n2=$(nlines "$out")
# One report may have been under way when the signal came; every later one is the new config.
ok "SIGHUP with a valid file: streaming goes on" wait_for $((5 * SLOW)) has_lines "$out" $((n2 + 4))
ok "SIGHUP with a valid file: later lines have memory_info and no vcpu_usage" \
	q "$out" 'all(sorted(l["system_data"]) == ["memory_info"] for l in L[int(A[0]) + 1:])' "$n2"
ok "SIGHUP: lines before the reload have vcpu_usage only" \
	q "$out" 'all(sorted(l["system_data"]) == ["vcpu_usage"] for l in L[:int(A[0])])' "$n2"
# (Loose bounds: they catch a cycle added or skipped by a reload, or a first
# period not measured from the reload; periods.sh checks precision.)
ok "SIGHUP: the failed reload neither adds nor skips a cycle (vcpu_usage periods 0.1..0.3 s)" \
	q "$out" 'all(0.1 < l["system_data"]["vcpu_usage"]["period"] < 0.3 for l in L if "vcpu_usage" in l["system_data"])'
ok "SIGHUP: after the reload, memory_info periods (the first, from the reload, included) are 0.1..0.3 s" \
	q "$out" 'any("memory_info" in l["system_data"] for l in L) and all(0.1 < l["system_data"]["memory_info"]["period"] < 0.3 for l in L if "memory_info" in l["system_data"])'
kill -TERM "$M" || true
wait_for $((3 * SLOW)) gone "$M" || true
rc=0
wait "$P" || rc=$?
is "$rc" 0 "SIGHUP test: SIGTERM afterwards exits 0"
ok "SIGHUP: monitor.seq goes up by one across both reloads, every line whole" \
	q "$out" '[l["monitor"]["seq"] for l in L] == list(range(len(L))) and partial == ""'
ok "SIGHUP: stderr has no sanitizer report" no_sanitizer "$err"
ok "SIGHUP: stderr has only accel-monitor's own messages" \
	sh -c '! grep -v "^accel-monitor: " "$1"' sh "$err"

# --- a reload that names a kind explicitly next to "auto": that kind is then collected once ---
acfg=$WORK/hupauto.json
aout=$WORK/hupauto.out
printf '{ "period": "200ms", "devices": [ { "type": "auto", "metrics": [ { "type": "device_errors" } ] } ] }\n' >"$acfg"
spawn P timeout -k 5 $((40 * SLOW)) "$MON" -c "$acfg" --path.sysfs "$FIX/sysfs/host" --path.procfs "$FIX/proc-devices" \
	>"$aout" 2>"$WORK/hupauto.err"
M=$(mon_pid "$P")
wait_for $((10 * SLOW)) has_lines "$aout" 2 || true
printf '{ "period": "200ms", "devices": [ { "type": "auto", "metrics": [ { "type": "device_errors" } ] },\n  { "type": "amdgpu", "metrics": [ { "type": "device_errors" } ] } ] }\n' >"$acfg"
kill -HUP "$M" || true
n3=$(nlines "$aout")
ok "SIGHUP auto -> auto + amdgpu: streaming goes on" wait_for $((5 * SLOW)) has_lines "$aout" $((n3 + 4))
# Collected twice, amdgpu would come on two schedules: as many amdgpu entries as hwmon ones says once.
ok "SIGHUP auto -> auto + amdgpu: amdgpu collected once after the reload (auto re-expanded without it)" \
	q "$aout" '(lambda T: T.count("hwmon") > 2 and T.count("amdgpu") == T.count("hwmon"))([e["device_type"] for l in L[int(A[0]) + 1:] for e in l["device_data"]])' "$n3"
kill -TERM "$M" || true
wait_for $((3 * SLOW)) gone "$M" || true
wait "$P" || true
ok "SIGHUP: stderr has the error and the notice of the failed reload only" \
	sh -c '! grep -v -e "$2" -e "^accel-monitor: error: $3:" -e "^accel-monitor: error: monitor: SIGHUP: keeping the previous configuration$" "$1"' \
	sh "$err" "$BEHIND" "$cfg"

# --- a SIGHUP storm -----------------------------------------------------------------------
# 100 SIGHUPs 10 ms apart with the file unchanged: reloads are coalesced (at
# most one per root period) and the unchanged group keeps its collector and
# schedule, so reports go on every 200 ms through the storm; the last SIGHUP
# (after the file changed) is still applied.
cfg=$WORK/storm.json
out=$WORK/storm.out
err=$WORK/storm.err
echo '{ "period": "200ms", "system_metrics": [ { "type": "vcpu_usage" } ] }' >"$cfg"
spawn P timeout -k 5 $((40 * SLOW)) "$MON" -c "$cfg" -v2 >"$out" 2>"$err"
M=$(mon_pid "$P")
wait_for $((10 * SLOW)) has_lines "$out" 2 || true
# The storm's length as it ran (a loaded machine stretches it): reloads are bounded by it, one per 200 ms.
storm_ms=$($PY -c 'import os, signal, sys, time
t0 = time.monotonic()
for _ in range(100):
    os.kill(int(sys.argv[1]), signal.SIGHUP)
    time.sleep(0.01)
print(int((time.monotonic() - t0) * 1000))' "$M") || storm_ms=1000
n1=$(nlines "$out")
echo '{ "period": "200ms", "system_metrics": [ { "type": "vcpu_usage" }, { "type": "memory_info" } ] }' >"$cfg"
kill -HUP "$M" || true
ok "SIGHUP storm: the last SIGHUP's file is applied (memory_info appears)" \
	wait_for $((5 * SLOW)) q "$out" 'any("memory_info" in l["system_data"] for l in L)'
kill -TERM "$M" || true
wait_for $((3 * SLOW)) gone "$M" || true
rc=0
wait "$P" || rc=$?
is "$rc" 0 "SIGHUP storm: exit status 0"
# Timestamps in ms from the ISO 8601 text ("...THH:MM:SS.mmmZ").
TS='[((int(l["timestamp"][11:13]) * 60 + int(l["timestamp"][14:16])) * 60 + int(l["timestamp"][17:19])) * 1000 + int(l["timestamp"][20:23]) for l in L]'
ok "SIGHUP storm: a report every 200 ms throughout (no gap over 350 ms)" \
	q "$out" "len(L) >= 8 and max(b - a for a, b in zip($TS, $TS[1:])) <= 350 or print('steps (ms):', [b - a for a, b in zip($TS, $TS[1:])])"
ok "SIGHUP storm: vcpu_usage keeps its baseline (every period 0.1..0.3 s: loose, as above, for loaded machines)" \
	q "$out" 'all(0.1 <= l["system_data"]["vcpu_usage"]["period"] <= 0.3 for l in L if "vcpu_usage" in l["system_data"]) or print([l["system_data"].get("vcpu_usage", {}).get("period") for l in L])'
ok "SIGHUP storm: seq goes on, every line whole" \
	q "$out" '[l["monitor"]["seq"] for l in L] == list(range(len(L))) and partial == ""'
nr=$(grep -c "monitor: reloaded" "$err" || true)
# One reload per 200 ms of the storm, plus the first at once and the last SIGHUP's.
max_nr=$((storm_ms / 200 + 3))
if [ "$nr" -ge 2 ] && [ "$nr" -le "$max_nr" ]; then r=0; else r=1; fi
_result $r "SIGHUP storm: 101 signals over $storm_ms ms, reloads coalesced to one per 200 ms ($nr <= $max_nr)"
ok "SIGHUP storm: no warning or error" sh -c '! grep -E "warning|error|Sanitizer" "$1"' sh "$err"

# --- a reload keeps what did not change ---------------------------------------------------
# The runtime (a sleep child) is unchanged, the system group is swapped: the
# runtime's collector, baseline and schedule carry over (its periods stay
# 200 ms across the reload), the new group starts from the reload.
cp /bin/sleep "$WORK/lcsleep"
spawn SL "$WORK/lcsleep" 300
cfg=$WORK/carry.json
out=$WORK/carry.out
err=$WORK/carry.err
cat >"$cfg" <<EOF
{ "period": "200ms", "system_metrics": [ { "type": "vcpu_usage" } ],
  "runtimes": [ { "address": "pid:$SL", "metrics": [ { "type": "runtime_vcpu_usage" }, { "type": "memory_used" } ] } ] }
EOF
spawn P timeout -k 5 $((40 * SLOW)) "$MON" -c "$cfg" >"$out" 2>"$err"
M=$(mon_pid "$P")
wait_for $((10 * SLOW)) has_lines "$out" 3 || true
sed -i 's/"vcpu_usage"/"memory_info"/' "$cfg"
# Halfway between two reports: a reload that restarted the schedule would move the runtime's slots by ~100 ms.
n0=$(nlines "$out")
wait_for $((5 * SLOW)) has_lines "$out" $((n0 + 1)) || true
sleep 0.1
kill -HUP "$M" || true
n1=$(nlines "$out")
wait_for $((5 * SLOW)) has_lines "$out" $((n1 + 4)) || true
kill -TERM "$M" || true
wait_for $((3 * SLOW)) gone "$M" || true
rc=0
wait "$P" || rc=$?
is "$rc" 0 "reload with an unchanged runtime: exit status 0"
ok "reload with an unchanged runtime: memory_info after it, vcpu_usage before" \
	q "$out" 'any("memory_info" in l["system_data"] for l in L) and all(sorted(l["system_data"]) in (["vcpu_usage"], ["memory_info"], []) for l in L)'
# The new group starts from the reload, so its lines need not be the runtime's.
ok "reload with an unchanged runtime: its groups every 200 ms throughout (baseline kept), no error" \
	q "$out" 'len([l for l in L if ents(l, 0)]) >= int(A[0]) + 2 and all(ents(l, 0)[0]["error"] == "" and all(0.1 <= grp(ents(l, 0)[0], g)["period"] <= 0.3 for g in ("runtime_vcpu_usage", "memory_used")) for l in L if ents(l, 0))' "$n1"
RT_TS='[((int(l["timestamp"][11:13]) * 60 + int(l["timestamp"][14:16])) * 60 + int(l["timestamp"][17:19])) * 1000 + int(l["timestamp"][20:23]) for l in L if ents(l, 0)]'
ok "reload with an unchanged runtime: its schedule goes on (no step over 300 ms across the reload; a re-primed one steps 345 ms)" \
	q "$out" "max(b - a for a, b in zip($RT_TS, $RT_TS[1:])) <= 300 or print('steps (ms):', [b - a for a, b in zip($RT_TS, $RT_TS[1:])])"
ok "reload with an unchanged runtime: seq goes on, every line whole" \
	q "$out" '[l["monitor"]["seq"] for l in L] == list(range(len(L))) and partial == ""'
quiet "reload with an unchanged runtime: stderr is empty" "$err"
kill "$SL" 2>/dev/null || true

# --- -n and --once -------------------------------------------------------------------
rc=0
timeout -k 5 $((20 * SLOW)) "$MON" -c "$WORK/stream.json" -n 3 >"$WORK/n3.out" 2>"$WORK/n3.err" || rc=$?
is "$rc" 0 "-n 3: exit status 0"
ok "-n 3: exactly 3 whole lines, seq 0..2" \
	q "$WORK/n3.out" 'len(L) == 3 and partial == "" and [l["monitor"]["seq"] for l in L] == [0, 1, 2]'
quiet "-n 3: stderr is empty" "$WORK/n3.err"

rc=0
t0=$(now_ms)
timeout -k 5 $((20 * SLOW)) "$MON" --once >"$WORK/once.out" 2>"$WORK/once.err" || rc=$?
t1=$(now_ms)
is "$rc" 0 "--once: exit status 0"
if [ $((t1 - t0)) -le $((2000 * SLOW)) ]; then r=0; else r=1; fi
_result $r "--once: done within 2 s ($((t1 - t0)) ms)"
ok "--once: exactly 1 whole line" q "$WORK/once.out" 'len(L) == 1 and partial == ""'
empty_err "--once: stderr is empty" "$WORK/once.err"

# --once has no schedule to fall behind: with the shortest period (100 ms, less
# than half its 250 ms window) it must not warn about skipped slots either.
cat >"$WORK/once100.json" <<'EOF'
{ "period": "100ms", "system_metrics": [ { "type": "vcpu_usage" }, { "type": "memory_info" } ] }
EOF
rc=0
timeout -k 5 $((20 * SLOW)) "$MON" -c "$WORK/once100.json" --once >"$WORK/once100.out" 2>"$WORK/once100.err" || rc=$?
is "$rc" 0 "--once, period 100ms: exit status 0"
ok "--once, period 100ms: exactly 1 whole line with both groups" \
	q "$WORK/once100.out" 'len(L) == 1 and partial == "" and sorted(L[0]["system_data"]) == ["memory_info", "vcpu_usage"]'
empty_err "--once, period 100ms: stderr is empty (no \"behind schedule\" warning)" "$WORK/once100.err"

# --- stdout cannot be written ----------------------------------------------------------
if [ -w /dev/full ]; then
	rc=0
	timeout -k 5 $((20 * SLOW)) "$MON" --once >/dev/full 2>"$WORK/full.err" || rc=$?
	is "$rc" 1 "--once >/dev/full: exit status 1"
	ok "--once >/dev/full: stderr says why" grep -q "No space left on device" "$WORK/full.err"
	ok "--once >/dev/full: no sanitizer report" no_sanitizer "$WORK/full.err"
else
	diag "no writable /dev/full: skipping the full-device test"
fi

# --- standard descriptors at start ----------------------------------------------------
# A closed stdout is refused with a message, not taken by a pipe and read as "reader gone".
rc=0
timeout -k 5 $((20 * SLOW)) "$MON" --once >&- 2>"$WORK/closed.err" || rc=$?
is "$rc" 1 "--once >&-: exit status 1"
ok "--once >&-: stderr says stdout is closed" grep -q "stdout is closed" "$WORK/closed.err"
ok "--once >&-: no sanitizer report" no_sanitizer "$WORK/closed.err"
# A closed stdin or stderr is not needed: /dev/null takes its place, one report comes out.
rc=0
timeout -k 5 $((20 * SLOW)) "$MON" --once <&- 2>&- >"$WORK/closed01.out" || rc=$?
is "$rc" 0 "--once <&- 2>&-: exit status 0"
ok "--once <&- 2>&-: one whole report" q "$WORK/closed01.out" 'len(L) == 1 and partial == ""'
if [ -w /dev/full ]; then
	for opt in --help --version; do
		rc=0
		"$MON" $opt >/dev/full 2>"$WORK/helpfull.err" || rc=$?
		is "$rc" 1 "$opt >/dev/full: exit status 1"
		ok "$opt >/dev/full: stderr says why" grep -q "accel-monitor: cannot write to stdout: No space left on device" "$WORK/helpfull.err"
	done
fi

done_testing
