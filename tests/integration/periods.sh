#!/bin/sh
# SPDX-License-Identifier: MIT
# Real periods within 5 % over 10 s: system groups at 500 ms and 1 s and a
# process runtime's group at 2 s, each collected on its own period, with no
# drift, and groups that fall due together coalesced into one report line.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED

# The runtime: a sleep child under a name no other process on the host has
# (comm is at most 15 characters).
NAME=prdsl_$$
cp /bin/sleep "$WORK/$NAME"
spawn CHILD "$WORK/$NAME" 300
is_named() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]; }
ok "the sleep child runs as $NAME" wait_for $((5 * SLOW)) is_named "$CHILD" "$NAME"

cat >"$WORK/periods.json" <<EOF
{
  "period": "1s",
  "system_metrics": [ { "type": "vcpu_usage", "period": "500ms" },
                      { "type": "memory_info", "period": "1s" } ],
  "runtimes": [ { "address": "process:$NAME",
                  "metrics": [ { "type": "runtime_vcpu_usage", "period": "2s" } ] } ]
}
EOF

# The checks, one TAP line each: "ok NAME" or "not ok NAME" plus "# ..." details.
cat >"$WORK/check.py" <<'EOF'
import datetime, json, sys

path, child, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lines = open(path, encoding="utf-8").read().split("\n")
partial = lines.pop()
L = [json.loads(s) for s in lines]
out = []


def check(name, cond, *detail):
    out.append((name, bool(cond), [str(d) for d in detail]))


def ms(iso):
    t = datetime.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ")
    return t.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000.0


def rt_group(line):
    for e in line["runtime_data"]:
        if e.get("pid") == child and "runtime_vcpu_usage" in e.get("report", {}):
            return e["report"]["runtime_vcpu_usage"]
    return None


def within(x, want, tol):
    return abs(x - want) <= want * tol


check("%d whole lines" % n, len(L) == n and partial == "", "got %d line(s), partial %r" % (len(L), partial[:80]))
V = [l for l in L if "vcpu_usage" in l["system_data"]]
M = [l for l in L if "memory_info" in l["system_data"]]
R = [l for l in L if rt_group(l) is not None]
# Expected over 20 x 500 ms = 10 s: 20, 10 and 5 collections.
for name, got, want in (("vcpu_usage (500ms)", V, 20), ("memory_info (1s)", M, 10),
                        ("runtime_vcpu_usage (2s)", R, 5)):
    check("reports with %s: %d (+-1)" % (name, want), abs(len(got) - want) <= 1, "got %d" % len(got))

# Each collection's own "period" (the first one included) within 5 %.
per = [("vcpu_usage", 0.5, [l["system_data"]["vcpu_usage"]["period"] for l in V]),
       ("memory_info", 1.0, [l["system_data"]["memory_info"]["period"] for l in M]),
       ("runtime_vcpu_usage", 2.0, [rt_group(l)["period"] for l in R])]
for name, want, got in per:
    bad = [p for p in got if not within(p, want, 0.05)]
    check("%s: every period field within 5 %% of %g s (first included)" % (name, want), got and not bad,
          "periods: %s" % got)
check("runtime_vcpu_usage: no error, vcpu_usage present",
      R and all(rt_group(l)["error"] == "" and "vcpu_usage" in rt_group(l) for l in R),
      [rt_group(l) for l in R][:2])

# Root timestamps of the 500 ms group's lines: 500 ms apart within 5 %, and
# no drift: over the whole run the mean step is 500 ms within 1 %.
t = [ms(l["timestamp"]) for l in V]
steps = [round(b - a, 3) for a, b in zip(t, t[1:])]
check("vcpu_usage lines: consecutive timestamps 500 ms apart within 5 %",
      steps and all(within(s, 500, 0.05) for s in steps), "steps (ms): %s" % steps)
mean = (t[-1] - t[0]) / (len(t) - 1) if len(t) > 1 else 0
check("vcpu_usage lines: no drift (mean step %.2f ms over %.2f s, 500 within 1 %%)" % (mean, (t[-1] - t[0]) / 1e3),
      within(mean, 500, 0.01))

# Coalescing: each line sits on one 500 ms slot after the start and holds
# exactly the groups due then (memory_info every 2nd slot, the runtime every
# 4th); one line per distinct due time, none split, none missing.
t0 = t[0] - 500 if t else 0
slots, wrong = [], []
for l in L:
    k = round((ms(l["timestamp"]) - t0) / 500)
    slots.append(k)
    have = (sorted(l["system_data"]), rt_group(l) is not None)
    want = (sorted(["vcpu_usage"] + (["memory_info"] if k % 2 == 0 else [])), k % 4 == 0)
    if have != want:
        wrong.append((k, have, want))
check("coalescing: each line holds exactly the groups due at its time", not wrong, "slot, got, want: %s" % wrong[:5])
check("coalescing: %d lines for %d distinct due times (one line each)" % (len(L), len(set(slots))),
      slots == list(range(1, len(L) + 1)), "slots: %s" % slots)
check("monitor.seq goes 0..%d" % (n - 1), [l["monitor"]["seq"] for l in L] == list(range(len(L))))

for name, good, detail in out:
    print(("ok" if good else "not ok") + " " + name)
    if not good:
        for d in detail:
            print("#   " + d[:1000])
EOF

# 20 reports: the 500 ms group's due times over 10 s.
N=20
# rt (lib.sh): the tests running alongside (make check runs them in parallel)
# do not delay the monitor's wake-ups: what is measured is its schedule, not
# the host's load.

# measure: run the monitor, analyse its lines into $WORK/check.out; $RC, $WORK/err.
measure() {
	RC=0
	rt timeout -k 5 $((30 * SLOW)) "$MON" -c "$WORK/periods.json" -n $N >"$WORK/out" 2>"$WORK/err" || RC=$?
	: >"$WORK/check.out"
	if [ -s "$WORK/out" ]; then $PY "$WORK/check.py" "$WORK/out" "$CHILD" $N >"$WORK/check.out" 2>&1 || true; fi
}
good() { [ "$RC" = 0 ] && [ ! -s "$WORK/err" ] && grep -q '^ok ' "$WORK/check.out" && ! grep -q '^not ok ' "$WORK/check.out"; }

# A timing measurement on a shared host: when the first run misses, it is
# shown and measured once more (a real scheduling fault misses both times).
measure
if ! good; then
	diag "first measurement missed (rc $RC); measuring again. It had:"
	{ grep -A 3 '^not ok ' "$WORK/check.out"; cat "$WORK/err"; } | sed 's/^/#   /' | head -20
	measure
fi
is "$RC" 0 "-n $N over 10 s: exit status 0"
if [ -s "$WORK/err" ]; then
	_result 1 "stderr is empty"
	sed 's/^/#   /' "$WORK/err" | head -20
else
	_result 0 "stderr is empty"
fi

if ! grep -q '^ok \|^not ok ' "$WORK/check.out"; then
	_result 1 "the report lines can be analysed"
	sed 's/^/#   /' "$WORK/check.out" | head -20
fi
while IFS= read -r line; do
	case $line in
	"ok "*) _result 0 "${line#ok }" ;;
	"not ok "*) _result 1 "${line#not ok }" ;;
	*) echo "$line" ;;
	esac
done <"$WORK/check.out"

# --- a source that hangs does not move the schedule ---------------------------------------
# The metadata helper (a child process whose pipe the event loop watches)
# talks to an IMDS that takes 5 s per answer: the 200 ms stream keeps its
# periods meanwhile, and instance_info says it has no metadata.
spawn IMDS $PY "$HELP/fake_imds.py" --port-file "$WORK/imds.port" --hang 5
wait_for $((10 * SLOW)) test -s "$WORK/imds.port" || diag "fake IMDS did not start"
echo '{ "period": "200ms", "system_metrics": [ { "type": "vcpu_usage" } ] }' >"$WORK/hang.json"
RC=0
rt env -u AWS_EC2_METADATA_DISABLED AWS_EC2_METADATA_SERVICE_ENDPOINT="http://127.0.0.1:$(cat "$WORK/imds.port" 2>/dev/null)" \
	timeout -k 5 $((30 * SLOW)) "$MON" -c "$WORK/hang.json" -n 10 >"$WORK/hang.out" 2>"$WORK/hang.err" || RC=$?
is "$RC" 0 "IMDS hanging: -n 10 exits 0"
ok "IMDS hanging: 10 reports, each vcpu_usage period within 10 % of 200 ms" \
	q "$WORK/hang.out" 'len(L) == 10 and all(abs(l["system_data"]["vcpu_usage"]["period"] - 0.2) <= 0.02 for l in L)'
ok "IMDS hanging: instance_info says it has no metadata (not fetched yet, or timed out)" \
	q "$WORK/hang.out" 'all(l["instance_info"]["error"] != "" and l["instance_info"]["instance_id"] == "" for l in L)'

done_testing
