#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make install and make uninstall (docs/deploy.md): install into a temporary
# DESTDIR with PREFIX=/usr, check the layout (bin/, share/man/man1 and man5,
# share/doc/accel-monitor/ with the example configs, lib/systemd/system/ with
# the install paths filled in, /etc/accel-monitor/accel-monitor.env), run the
# installed pipeline from there (accel-monitor into accel-csv and into
# accel-prom, scraped over HTTP), then uninstall and check that nothing is
# left but an environment file the administrator changed.
. "$(dirname "$0")/lib.sh"

need "scdoc (Debian package scdoc)" command -v scdoc
need "make" command -v make
need "curl" command -v curl
need "strace (scripts/install-deps.sh test)" command -v strace
T=$((20 * SLOW))
SAN=
[ "${ACCEL_SANITIZED:-0}" = 1 ] && SAN=address,undefined
D=$WORK/dest
U=$D/usr
mk() { make --no-print-directory -s -C "$TOP" SANITIZER=$SAN PREFIX=/usr DESTDIR="$D" "$@" >>"$WORK/make.log" 2>&1; }

ok "make install DESTDIR=... PREFIX=/usr" mk install
programs=$(cd "$BIN" && ls)
for p in $programs; do
	ok "$p installed, executable" test -x "$U/bin/$p"
done
ok "man pages in share/man/man1 (one per program that has --help)" test -s "$U/share/man/man1/accel-monitor.1"
ok "the report format in share/man/man5" test -s "$U/share/man/man5/accel-monitor-report.5"
ok "docs in share/doc/accel-monitor" test -s "$U/share/doc/accel-monitor/accel-prom.md"
ok "example configs in share/doc/accel-monitor/examples" test -s "$U/share/doc/accel-monitor/examples/example.yaml"
ok "alert rules and dashboards in share/doc/accel-monitor/examples" test -s "$U/share/doc/accel-monitor/examples/accel-monitor.rules.yml" -a -s "$U/share/doc/accel-monitor/examples/accel-monitor-devices.json"
ok "the environment file in /etc/accel-monitor" test -s "$D/etc/accel-monitor/accel-monitor.env"
for u in accel-monitor-prom.service accel-monitor-cloudwatch.service accel-monitor-csv.service accel-monitor-csv.timer; do
	ok "unit $u in lib/systemd/system" test -s "$U/lib/systemd/system/$u"
done
ok "units name the installed programs and /etc" grep -q "ExecStart=/bin/sh -c 'set -e; /usr/bin/accel-monitor .* | /usr/bin/accel-prom " \
	"$U/lib/systemd/system/accel-monitor-prom.service"
ok "no @TOKEN@ left in the units" sh -c "! grep -n '@[A-Z]*@' $U/lib/systemd/system/*"

# ---- the installed pipeline -------------------------------------------------------
# Every connect recorded (strace -f): nothing may leave the host (tests/integration/loopback_only.sh says why
# the fixture sysfs on an EC2 instance).
SYSFS=
ec2_host && SYSFS="--path.sysfs $FIX/ec2/other"
# LeakSanitizer cannot run under ptrace (a sanitized build).
(unset AWS_EC2_METADATA_DISABLED AWS_EC2_METADATA_SERVICE_ENDPOINT
 ASAN_OPTIONS=$(echo "$ASAN_OPTIONS" | sed 's/detect_leaks=1/detect_leaks=0/')
 export ASAN_OPTIONS
 strace -f -e trace=connect,sendto,sendmsg -e signal=none -o "$WORK/install.strace" sh -c '"$1/bin/accel-monitor" --once $3 -c \
	"$1/share/doc/accel-monitor/examples/default.json" 2>"$2/mon.err" | "$1/bin/accel-csv" >"$2/out.csv" 2>"$2/csv.err"' \
	sh "$U" "$WORK" "$SYSFS")
ok "installed accel-monitor --once | accel-csv: nothing off the host (strace)" $PY "$HELP/connects.py" "$WORK/install.strace"
ok "installed accel-monitor --once | accel-csv: a header and rows" sh -c "head -1 $WORK/out.csv | grep -q '^timestamp,' && [ \$(wc -l <$WORK/out.csv) -ge 3 ]"
ok "installed accel-monitor found libcurl when it needed it (no 'cannot load libcurl' on stderr)" \
	sh -c "! grep -q 'cannot load libcurl' $WORK/mon.err"
P=$(free_port)
mkfifo "$WORK/in"
"$U/bin/accel-monitor" -n 2 -c "$U/share/doc/accel-monitor/examples/default.json" >"$WORK/in" 2>>"$WORK/mon.err" &
_pids="$_pids $!"
# Not spawn: a background command of a function gets /dev/null as stdin in sh.
"$U/bin/accel-prom" --listen-address "127.0.0.1:$P" <"$WORK/in" 2>"$WORK/prom.err" &
_pids="$_pids $!"
ok "installed accel-monitor | accel-prom: /metrics has system_memory_total_bytes" \
	wait_for "$T" sh -c "curl -sf http://127.0.0.1:$P/metrics | grep -q '^system_memory_total_bytes'"
ok "installed accel-prom --version" sh -c "'$U/bin/accel-prom' --version | grep -q '[0-9]\\.[0-9]'"
ok "man -l reads the installed page" sh -c "MANWIDTH=80 man -l '$U/share/man/man1/accel-prom.1' | grep -q -- --listen-address"

# ---- make uninstall ----------------------------------------------------------------------
echo "# changed by the administrator" >>"$D/etc/accel-monitor/accel-monitor.env"
ok "make uninstall" mk uninstall
is "$(cd "$D" && find . -type f | sort | tr '\n' ' ')" "./etc/accel-monitor/accel-monitor.env " \
	"uninstall leaves only the changed environment file"
ok "install again (the changed environment file is kept)" mk install
ok "the changed environment file was not overwritten" grep -q "changed by the administrator" "$D/etc/accel-monitor/accel-monitor.env"
cp "$TOP/deploy/accel-monitor.env" "$D/etc/accel-monitor/accel-monitor.env"
ok "make uninstall (unchanged environment file)" mk uninstall
is "$(cd "$D" && find . -type f | wc -l | tr -d ' ')" 0 "nothing left: no file"
is "$(cd "$D" && find . -path ./usr -prune -o -type d -print | grep -c accel-monitor)" 0 "no /etc/accel-monitor left"
done_testing
