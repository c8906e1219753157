#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Nothing leaves the host unless the user asks: the default programs run with every connect(), sendto() and
# sendmsg() recorded (strace -f, the sinks and any child included), and any address outside 127.0.0.0/8,
# ::1 and AF_UNIX/AF_NETLINK fails (tests/helpers/connects.py). Run: accel-monitor --once (no option, no
# AWS variable), the same with config/default.json, and make run's pipeline (accel-monitor | accel-prom --port)
# until accel-prom serves a report. On a host that is not an EC2 instance none of them may ask the instance
# metadata service (169.254.169.254). On an EC2 instance the test itself would be traffic off the host, so
# there the programs read the fixture sysfs of a QEMU guest (tests/fixtures/ec2/other) for that decision.
. "$(dirname "$0")/lib.sh"

need "strace (scripts/install-deps.sh test)" command -v strace
need "$BIN/accel-monitor and $BIN/accel-prom are built" test -x "$BIN/accel-monitor" -a -x "$BIN/accel-prom"
need "curl" command -v curl
unset AWS_EC2_METADATA_DISABLED AWS_EC2_METADATA_SERVICE_ENDPOINT
# LeakSanitizer cannot run under ptrace: leaks are the other tests' to find.
ASAN_OPTIONS=$(echo "$ASAN_OPTIONS" | sed 's/detect_leaks=1/detect_leaks=0/')
export ASAN_OPTIONS
CONNECTS="$PY $HELP/connects.py"
TRACE="strace -f -e trace=connect,sendto,sendmsg -e signal=none"

# ---- the recorder can fail: a UDP connect() sends nothing, but is recorded ----------------------------------
$TRACE -o "$WORK/self.log" $PY -c 'import socket
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).connect(("192.0.2.1", 9))
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).connect(("127.0.0.1", 9))' >"$WORK/self.out" 2>&1 || true
ok "the recorder flags a connect to 192.0.2.1 (TEST-NET-1, nothing sent)" sh -c \
	"$CONNECTS '$WORK/self.log' | grep -q 'off the host: .*192.0.2.1'"
ok "and not one to 127.0.0.1" sh -c "$CONNECTS '$WORK/self.log' | grep -c 'off the host' | grep -qx 1"

# ---- this host ------------------------------------------------------------------------------------------
SYSFS=
if ec2_host; then
	SYSFS="--path.sysfs $FIX/ec2/other"
	diag "this host is an EC2 instance: the programs decide on $FIX/ec2/other"
fi

# ---- accel-monitor --once, and with the default config --------------------------------------------------
ok "accel-monitor --once runs under strace" sh -c "$TRACE -o '$WORK/once.log' '$BIN/accel-monitor' --once $SYSFS \
	>'$WORK/once.json' 2>'$WORK/once.err'"
ok "accel-monitor --once: nothing off the host" $CONNECTS "$WORK/once.log"
ok "accel-monitor --once: instance_info says it did not ask" q "$WORK/once.json" \
	'"not an EC2 instance" in L[0]["instance_info"]["error"]'
ok "accel-monitor --once -c config/default.json runs under strace" sh -c "$TRACE -o '$WORK/default.log' \
	'$BIN/accel-monitor' --once -c '$TOP/config/default.json' $SYSFS >'$WORK/default.json' 2>'$WORK/default.err'"
ok "accel-monitor --once -c config/default.json: nothing off the host" $CONNECTS "$WORK/default.log"

# ---- make run's pipeline, until accel-prom serves a report -----------------------------------------------
P=$(free_port)
spawn PIPE $TRACE -o "$WORK/run.log" sh -c "'$BIN/accel-monitor' $SYSFS | '$BIN/accel-prom' --port $P" \
	2>"$WORK/run.err"
ok "accel-monitor | accel-prom --port: /metrics has a report" wait_for $((30 * SLOW)) sh -c \
	"curl -sf http://127.0.0.1:$P/metrics | grep -q '^system_memory_total_bytes'"
stop_all
ok "accel-monitor | accel-prom --port: nothing off the host" $CONNECTS "$WORK/run.log"
done_testing
