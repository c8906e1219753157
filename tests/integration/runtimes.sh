#!/bin/sh
# SPDX-License-Identifier: MIT
# Process runtimes follow processes: process:NAME picks up every process
# whose comm or argv[0] basename is NAME, each its own entry, as they start;
# one that exits is reported once ("process PID exited") and then dropped;
# pid:PID says "no such process" once its process is gone; CPU time shows
# up for a busy process; a tag_filter that matches nothing yields no entries.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED

is_named() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]; }
state() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1; }
# gone PID: exited (a zombie not yet reaped counts as gone).
gone() {
	st=$(state "$1") || st=
	[ -z "$st" ] || [ "$st" = Z ]
}
is_zombie() { [ "$(state "$1")" = Z ]; }
argv0_is() { [ "$(tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | head -n 1)" = "$2" ]; }
# quiet NAME FILE: pass when FILE (a streaming run's stderr) is empty but for
# "behind schedule" warnings, which a loaded host may cause (they are shown).
BEHIND='^accel-monitor: warning: [a-z_]*: behind schedule; skipped [0-9]* slot'
quiet() {
	if grep -v -e "$BEHIND" "$2" >"$WORK/.rest"; then
		_result 1 "$1"
		sed 's/^/#   /' "$WORK/.rest" | head -20
	else
		_result 0 "$1"
	fi
	grep -e "$BEHIND" "$2" | sed 's/^/# (loaded host) /' | head -3 || true
}
has_mon() { pgrep -P "$1" -x accel-monitor >/dev/null; }
mon_pid() {
	wait_for $((5 * SLOW)) has_mon "$1" || true
	pgrep -P "$1" -x accel-monitor | head -n 1 | grep . || echo "$1"
}

# A name no other process has, short enough to be a whole comm (15 chars).
NAME=acsl_$$
cp /bin/sleep "$WORK/$NAME"
OUT=$WORK/out
ERR=$WORK/err

# pid:PID follows a plain sleep; runtime 0 follows NAME.
spawn PS sleep 300
ok "the pid: child runs" wait_for $((5 * SLOW)) is_named "$PS" sleep
cat >"$WORK/rt.json" <<EOF
{
  "period": "300ms",
  "runtimes": [
    { "address": "process:$NAME",
      "metrics": [ { "type": "runtime_vcpu_usage" }, { "type": "memory_used" } ] },
    { "address": "pid:$PS", "metrics": [ { "type": "memory_used" } ] }
  ]
}
EOF
spawn P timeout -k 5 $((40 * SLOW)) "$MON" -c "$WORK/rt.json" >"$OUT" 2>"$ERR"
M=$(mon_pid "$P")
ok "the monitor streams" wait_for $((5 * SLOW)) has_lines "$OUT" 1
ok "no process named $NAME yet: no entry for runtime 0" q "$OUT" 'all(not ents(l, 0) for l in L)'

# --- two children, each its own entry ------------------------------------------------------
spawn C1 "$WORK/$NAME" 300
spawn C2 "$WORK/$NAME" 300
wait_for $((5 * SLOW)) is_named "$C1" "$NAME" || true
wait_for $((5 * SLOW)) is_named "$C2" "$NAME" || true
both='any(ent(l, 0, A[0]) and ent(l, 0, A[1]) for l in L)'
ok "2 children started mid-run: both appear" wait_for $((5 * SLOW)) q "$OUT" "$both" "$C1" "$C2"
last_both='[l for l in L if ent(l, 0, A[0]) and ent(l, 0, A[1])][-1]'
ok "2 children: separate entries, one per pid, nothing else under runtime 0" \
	q "$OUT" "sorted(e['pid'] for e in ents($last_both, 0)) == sorted([A[0], A[1]])" "$C1" "$C2"
ok "2 children: runtime_tag is $NAME, address process:$NAME, error empty" \
	q "$OUT" "all(e['runtime_tag'] == A[2] and e['address'] == 'process:' + A[2] and e['error'] == '' for e in ents($last_both, 0))" \
	"$C1" "$C2" "$NAME"
ok "2 children: memory_used host RSS > 0, device null" \
	q "$OUT" "all(grp(e, 'memory_used')['runtime_used_bytes']['host'] > 0 and grp(e, 'memory_used')['runtime_used_bytes']['device'] is None for e in ents($last_both, 0))" \
	"$C1" "$C2"
ok "2 children: runtime_vcpu_usage has user and system" \
	q "$OUT" "all(set(grp(e, 'runtime_vcpu_usage')['vcpu_usage']) >= {'user', 'system'} for e in ents($last_both, 0))" \
	"$C1" "$C2"
ok "no line lists a pid twice under runtime 0" \
	q "$OUT" 'all(len(ents(l, 0)) == len(set(e["pid"] for e in ents(l, 0))) for l in L)'

# --- pid:PID while its process lives -----------------------------------------------------------
ok "pid:$PS reports its process (tag sleep, host RSS > 0)" \
	q "$OUT" "any(ent(l, 1, A[0]) and ent(l, 1, A[0])['error'] == '' and ent(l, 1, A[0])['runtime_tag'] == 'sleep' and grp(ent(l, 1, A[0]), 'memory_used')['runtime_used_bytes']['host'] > 0 for l in L)" \
	"$PS"

# --- a third child mid-run -------------------------------------------------------------------
spawn C3 "$WORK/$NAME" 300
ok "a 3rd child appears with its own pid" \
	wait_for $((5 * SLOW)) q "$OUT" 'any(ent(l, 0, A[0]) and ent(l, 0, A[0])["error"] == "" for l in L)' "$C3"
ok "the 3rd child's line lists all three" \
	q "$OUT" 'any(sorted(e["pid"] for e in ents(l, 0)) == sorted(A) for l in L)' "$C1" "$C2" "$C3"
# Found mid-run, it is measured from its start: its first period is at most
# one 300 ms period (plus the 10 ms tick of its start time), not since the monitor started.
first='[l for l in L if ent(l, 0, A[0])][0]'
ok "the 3rd child's first period runs from its start (0 < period <= 0.33 s)" \
	q "$OUT" "all(0 < grp(ent($first, 0, A[0]), g)['period'] <= 0.33 for g in ('runtime_vcpu_usage', 'memory_used'))" "$C3"

# --- one child exits: reported once, then never again ----------------------------------------------
kill "$C1" || true
wait "$C1" 2>/dev/null || true
exited='[i for i, l in enumerate(L) if ent(l, 0, A[0]) and ent(l, 0, A[0])["error"] == "process %d exited" % A[0]]'
ok "the killed child is reported with error \"process $C1 exited\"" \
	wait_for $((5 * SLOW)) q "$OUT" "$exited" "$C1"
n=$(nlines "$OUT")
ok "the stream goes on (3 more lines)" wait_for $((5 * SLOW)) has_lines "$OUT" $((n + 3))
ok "the exit is reported exactly once" q "$OUT" "len($exited) == 1" "$C1"
ok "after that, the killed child never appears again" \
	q "$OUT" "all(not ent(l, 0, A[0]) for l in L[${exited}[0] + 1:])" "$C1"
ok "the exit entry keeps its runtime_tag and has report {}" \
	q "$OUT" "ent(L[${exited}[0]], 0, A[0])['runtime_tag'] == A[1] and ent(L[${exited}[0]], 0, A[0])['report'] == {}" \
	"$C1" "$NAME"
ok "the other two children are still reported after it" \
	q "$OUT" 'all(ent(L[-1], 0, p) and ent(L[-1], 0, p)["error"] == "" for p in A)' "$C2" "$C3"

# --- pid:PID after its process is gone ------------------------------------------------------------
kill "$PS" || true
wait "$PS" 2>/dev/null || true
ok "pid:$PS after the process died: \"no such process: $PS\"" \
	wait_for $((5 * SLOW)) q "$OUT" \
	'any(ent(l, 1, A[0]) and ent(l, 1, A[0])["error"] == "no such process: %d" % A[0] for l in L)' "$PS"
ok "pid:$PS keeps saying so" \
	q "$OUT" 'ent(L[-1], 1, A[0])["error"] == "no such process: %d" % A[0]' "$PS"
ok "pid:$PS: live entries, then \"process $PS exited\" once, then only \"no such process\"" \
	q "$OUT" '(lambda errs: (lambda i: errs[:i].count("") == i and errs[i] == "process %d exited" % A[0] and set(errs[i + 1:]) == {"no such process: %d" % A[0]})(errs.index("process %d exited" % A[0]) if "process %d exited" % A[0] in errs else -1))([ent(l, 1, A[0])["error"] for l in L if ent(l, 1, A[0])])' "$PS"

# --- a busy process matched by argv[0]; a zombie ---------------------------------------------------
# Both are set up before a second monitor starts, so that it never sees them
# before their exec() (see the exec test below).
#
# Busy (30 % of a CPU, to spare tests running alongside): comm python3,
# argv[0] /no/such/dir/NAME (its basename is NAME).
spawn BUSY "$PY" -c 'import os, sys; os.execv(sys.executable, ["/no/such/dir/'"$NAME"'", "-c", "import time\nwhile True:\n    t = time.time()\n    while time.time() - t < 0.03: pass\n    time.sleep(0.07)"])'
wait_for $((5 * SLOW)) argv0_is "$BUSY" "/no/such/dir/$NAME" || true
diag "busy process: comm $(cat "/proc/$BUSY/comm" 2>/dev/null), argv[0] $(tr '\0' '\n' <"/proc/$BUSY/cmdline" 2>/dev/null | head -n 1)"
# Zombie-to-be: a NAME child of a parent that never waits for it.
spawn ZPARENT "$PY" -c '
import os, sys, time
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "300"])
print(pid, flush=True)
time.sleep(300)' "$WORK/$NAME" >"$WORK/zombie.pid"
wait_for $((5 * SLOW)) test -s "$WORK/zombie.pid" || true
Z=$(cat "$WORK/zombie.pid" 2>/dev/null || echo 0)
wait_for $((5 * SLOW)) is_named "$Z" "$NAME" || true

OUT2=$WORK/out2
ERR2=$WORK/err2
cat >"$WORK/rt2.json" <<EOF
{ "period": "300ms",
  "runtimes": [ { "address": "process:$NAME",
                  "metrics": [ { "type": "runtime_vcpu_usage" }, { "type": "memory_used" } ] } ] }
EOF
spawn P2 timeout -k 5 $((40 * SLOW)) "$MON" -c "$WORK/rt2.json" >"$OUT2" 2>"$ERR2"
M2=$(mon_pid "$P2")
ok "argv[0] basename $NAME (comm python3) matches process:$NAME" \
	wait_for $((5 * SLOW)) q "$OUT2" 'any(ent(l, 0, A[0]) for l in L)' "$BUSY"
ok "the busy process shows runtime_vcpu_usage.vcpu_usage.user > 0" \
	wait_for $((5 * SLOW)) q "$OUT2" \
	'any((grp(ent(l, 0, A[0]), "runtime_vcpu_usage") or {}).get("vcpu_usage", {}).get("user", 0) > 0 for l in L)' "$BUSY"
ok "the busy process's runtime_tag is its comm" \
	q "$OUT2" '[e["runtime_tag"] for l in L for e in ents(l, 0) if e["pid"] == A[0]][-1] == A[1]' \
	"$BUSY" "$(cat "/proc/$BUSY/comm")"
kill "$BUSY" || true
wait "$BUSY" 2>/dev/null || true

ok "the zombie-to-be child is reported" \
	q "$OUT2" 'any(ent(l, 0, A[0]) and ent(l, 0, A[0])["error"] == "" for l in L)' "$Z"
kill -KILL "$Z" || true
ok "killed, it is a zombie (its parent does not reap it)" wait_for $((5 * SLOW)) is_zombie "$Z"
zexit='[i for i, l in enumerate(L) if ent(l, 0, A[0]) and ent(l, 0, A[0])["error"] == "process %d exited" % A[0]]'
ok "the zombie is reported as \"process $Z exited\"" wait_for $((5 * SLOW)) q "$OUT2" "$zexit" "$Z"
n=$(nlines "$OUT2")
wait_for $((5 * SLOW)) has_lines "$OUT2" $((n + 2)) || true
ok "... once, and then never again, while it is still a zombie" \
	q "$OUT2" "len($zexit) == 1 and all(not ent(l, 0, A[0]) for l in L[${zexit}[0] + 1:])" "$Z"
ok "(it is still a zombie)" is_zombie "$Z"
kill "$ZPARENT" 2>/dev/null || true
wait "$ZPARENT" 2>/dev/null || true
kill -TERM "$M2" || true
wait_for $((3 * SLOW)) gone "$M2" || true
rc=0
wait "$P2" || rc=$?
is "$rc" 0 "second monitor: SIGTERM, exit status 0"
quiet "second monitor: stderr is empty" "$ERR2"

# --- a process that becomes NAME by exec() after the monitor has seen it ------------------------------
# Same pid, same start time, new comm and argv[0] (a wrapper script that ends
# with "exec NAME ..." does this): it must be picked up once it is NAME.
spawn EX sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done; exec "$2" 300' sh "$WORK/exec.go" "$WORK/$NAME"
wait_for $((5 * SLOW)) is_named "$EX" sh || true
n=$(nlines "$OUT")
wait_for $((5 * SLOW)) has_lines "$OUT" $((n + 2)) || true
ok "before the exec (comm sh) the wrapper is not an entry" q "$OUT" 'all(not ent(l, 0, A[0]) for l in L)' "$EX"
: >"$WORK/exec.go"
ok "the wrapper execs into $NAME" wait_for $((5 * SLOW)) is_named "$EX" "$NAME"
ok "after exec into $NAME (same pid $EX) it is picked up" \
	wait_for $((5 * SLOW)) q "$OUT" 'any(ent(l, 0, A[0]) and ent(l, 0, A[0])["runtime_tag"] == A[1] for l in L)' "$EX" "$NAME"
kill "$EX" 2>/dev/null || true
wait "$EX" 2>/dev/null || true

# --- tag_filter matching nothing: no entries at all -----------------------------------------------
cat >"$WORK/filter.json" <<EOF
{
  "period": "200ms",
  "runtimes": [
    { "address": "process:$NAME", "tag_filter": "^no-such-tag$",
      "metrics": [ { "type": "runtime_vcpu_usage" }, { "type": "memory_used" } ] },
    { "address": "pid:$C2", "tag_filter": "^no-such-tag$", "metrics": [ { "type": "memory_used" } ] }
  ],
  "system_metrics": [ { "type": "memory_info" } ]
}
EOF
rc=0
timeout -k 5 $((20 * SLOW)) "$MON" -c "$WORK/filter.json" -n 3 >"$WORK/filter.out" 2>"$WORK/filter.err" || rc=$?
is "$rc" 0 "tag_filter matching nothing: exit status 0"
ok "tag_filter matching nothing: 3 reports, runtime_data empty in each" \
	q "$WORK/filter.out" 'len(L) == 3 and all(l["runtime_data"] == [] for l in L)'
quiet "tag_filter matching nothing: stderr is empty" "$WORK/filter.err"
# ... while a filter that matches the tag keeps them.
sed 's/\^no-such-tag\$/^acsl_/' "$WORK/filter.json" >"$WORK/filter2.json"
timeout -k 5 $((20 * SLOW)) "$MON" -c "$WORK/filter2.json" -n 1 >"$WORK/filter2.out" 2>"$WORK/filter2.err" || true
ok "tag_filter matching the tag: both runtimes have entries" \
	q "$WORK/filter2.out" 'len(L) == 1 and {e["runtime_index"] for e in L[0]["runtime_data"]} == {0, 1}'

# --- the end -------------------------------------------------------------------------------------
kill -TERM "$M" || true
wait_for $((3 * SLOW)) gone "$M" || true
rc=0
wait "$P" || rc=$?
is "$rc" 0 "SIGTERM: exit status 0"
ok "every line whole, seq 0, 1, 2, ..." \
	q "$OUT" 'partial == "" and [l["monitor"]["seq"] for l in L] == list(range(len(L)))'
quiet "stderr is empty" "$ERR"

done_testing
