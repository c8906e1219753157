#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The systemd units (deploy/systemd/, docs/deploy.md), as make install writes
# them under a temporary PREFIX: systemd-analyze verify prints nothing (a
# bad key does print, shown first), systemd-analyze security --offline puts
# each service at an exposure of 2.0 or less, the hardening the docs promise
# is there, and each unit's ExecStart line, run by sh as systemd would run it
# (with $$ turned into $ and the environment file's variables set), gives a
# working pipeline: accel-monitor | accel-prom serving /metrics, and
# accel-monitor --once | accel-csv appending to a file.
. "$(dirname "$0")/lib.sh"

need "systemd-analyze (Debian package systemd)" command -v systemd-analyze
need "scdoc (Debian package scdoc)" command -v scdoc
need "curl" command -v curl
T=$((20 * SLOW))
SAN=
[ "${ACCEL_SANITIZED:-0}" = 1 ] && SAN=address,undefined
P=$WORK/p
UD=$P/lib/systemd/system
ok "make install PREFIX=$P" sh -c "make --no-print-directory -s -C '$TOP' SANITIZER=$SAN PREFIX='$P' install >'$WORK/make.log' 2>&1"
units=$(cd "$UD" && ls)
is "$(echo $units)" "accel-monitor-cloudwatch.service accel-monitor-csv.service accel-monitor-csv.timer accel-monitor-prom.service" "the units installed"

# ---- systemd-analyze verify -------------------------------------------------------------
printf '[Service]\nExecStart=/bin/true\nBogusKey=1\n' >"$WORK/bad.service"
ok "verify prints a bad key (so an empty output means something)" sh -c "systemd-analyze verify '$WORK/bad.service' 2>&1 | grep -q BogusKey"
# MANPATH: verify runs man for each Documentation= page; the installed ones must be found.
for u in $units; do
	ok "systemd-analyze verify $u: no output" sh -c "out=\$(cd '$UD' && MANPATH='$P/share/man' systemd-analyze verify '$UD/$u' 2>&1) && [ -z \"\$out\" ] || { echo \"\$out\"; exit 1; }"
done

# ---- hardening --------------------------------------------------------------------------------
for u in accel-monitor-prom.service accel-monitor-cloudwatch.service accel-monitor-csv.service; do
	ok "$u: security exposure 2.0 or less" sh -c "systemd-analyze security --offline=true --threshold=20 '$UD/$u' >'$WORK/sec.$u' 2>&1 || { tail -1 '$WORK/sec.$u'; exit 1; }"
	diag "$(tail -1 "$WORK/sec.$u")"
	for k in DynamicUser=yes NoNewPrivileges=yes ProtectSystem=strict 'ReadOnlyPaths=/sys /proc' CapabilityBoundingSet= EnvironmentFile=-$P/etc/accel-monitor/accel-monitor.env; do
		ok "$u: $k" grep -qx "$k" "$UD/$u"
	done
done
ok "the timer starts the CSV service once a minute" grep -qx OnCalendar=minutely "$UD/accel-monitor-csv.timer"

# ---- the ExecStart lines run --------------------------------------------------------------------
# execstart UNIT: the command sh -c is given, as systemd passes it ($$ -> $).
execstart() { sed -n "s/^ExecStart=\/bin\/sh -c '\(.*\)'\$/\1/p" "$UD/$1" | sed 's/\$\$/$/g'; }
AP=$(free_port)
cmd=$(execstart accel-monitor-prom.service)
ok "accel-monitor-prom.service: ExecStart is sh -c on the installed programs" sh -c "echo '$cmd' | grep -q '^set -e; $P/bin/accel-monitor '"
# In a session of its own, so that the whole pipeline is stopped at exit (lib.sh's cleanup stops the shell).
ACCEL_MONITOR_OPTS="-c $TOP/config/default.json" ACCEL_PROM_OPTS="--listen-address 127.0.0.1:$AP" \
	setsid sh -c "$cmd" >/dev/null 2>"$WORK/prom.err" &
PIPE=$!
trap 'kill -TERM -$PIPE 2>/dev/null || true; cleanup' EXIT
ok "accel-monitor-prom.service's command serves /metrics with the options of the environment file" \
	wait_for "$T" sh -c "curl -sf http://127.0.0.1:$AP/metrics | grep -q '^system_memory_total_bytes'"
cmd=$(execstart accel-monitor-csv.service)
ok "accel-monitor-csv.service's command appends to the file ACCEL_CSV_OPTS names" \
	env ACCEL_MONITOR_OPTS="-c $TOP/config/default.json" ACCEL_CSV_OPTS="-o $WORK/a.csv" sh -c "$cmd && $cmd && test \$(grep -c ^timestamp, $WORK/a.csv) = 1 && test \$(wc -l <$WORK/a.csv) -ge 5"
cmd=$(execstart accel-monitor-cloudwatch.service)
ok "accel-monitor-cloudwatch.service's command (with --dry-run) prints a PutMetricData body" \
	env ACCEL_MONITOR_OPTS="-n 1 -c $TOP/config/default.json" ACCEL_CLOUDWATCH_OPTS="--namespace Test --region us-east-1 --dry-run --drain-timeout 1s" \
	AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=x AWS_EC2_METADATA_DISABLED=true sh -c "$cmd | grep -q MetricData"
ok "the shipped environment file has every variable the units use" sh -c \
	"for v in ACCEL_MONITOR_OPTS ACCEL_PROM_OPTS ACCEL_CLOUDWATCH_OPTS ACCEL_CSV_OPTS; do grep -q \"^\$v=\" '$P/etc/accel-monitor/accel-monitor.env' || exit 1; done"
done_testing
