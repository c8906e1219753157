# SPDX-License-Identifier: MIT
# Shared by the integration tests: TAP output, a work directory, cleanup of
# every process a test started, and small waiting helpers.
#
#   . "$(dirname "$0")/lib.sh"
#   ok "name" command...      run a command, pass if it exits 0
#   is "got" "want" "name"    compare two strings
#   spawn VAR command...      start a background process; killed at exit
#   stop_all                  stop every process started so far, and what they started; wait for them
#   wait_for SECONDS cmd...   poll until cmd succeeds (0) or time runs out (1)
#   free_port                 print a free TCP port on 127.0.0.1
#   q FILE EXPR [ARG...]      a Python expression over a report stream (tests/helpers/q.py)
#   nlines FILE               complete lines in FILE
#   has_lines FILE N          FILE holds at least N complete lines
#   six_reports NAME UNTIL CMD...  a producer reporting every 500 ms, until six reports and UNTIL; three tests
#   rt command...             run a program whose timing the test measures at a real-time priority
#   ec2_host                  does this host look like an EC2 instance (the facts accel-monitor reads)?
#   prom_values EXPR          the values of an instant query to prometheus_start's Prometheus
#   need NAME cmd...          a prerequisite (built by make, installed by make test): if cmd fails,
#                             one failed test names it and the script stops; never a skip
#   done_testing              print the plan; exit 1 if anything failed
#
# ACCEL_BIN names the directory holding the programs (default: ./bin);
# ACCEL_SANITIZED=1 when they are built with ASan+UBSan (slower: widen
# timing allowances with $SLOW).
#
# A test starts from tests/helpers/clean_env.sh's environment (run_suite.sh's too, for a script run
# alone): the caller's AWS_*, OTEL_*, KUBERNETES_*, POD_*, ECS_* and the like are unset; a test that
# needs one sets it.
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${ACCEL_BIN:-$TOP/bin}
PY=/usr/bin/python3
FIX=$TOP/tests/fixtures
HELP=$TOP/tests/helpers
. "$HELP/clean_env.sh"
SLOW=1
[ "${ACCEL_SANITIZED:-0}" = 1 ] && SLOW=3
# Run alone, a sanitized program reports leaks with the same exit status as under make check.
: "${ASAN_OPTIONS:=detect_leaks=1:abort_on_error=0:exitcode=99}"
export ASAN_OPTIONS
WORK=$(mktemp -d "${TMPDIR:-/tmp}/accel-test.XXXXXX")
_pids=""
_n=0
_failed=0

# _tree PID...: those of the PIDs that are children of this shell (a PID already waited for may have
# been reused by another process), then every descendant of theirs, parents before children.
_tree() {
	ps -e -o pid=,ppid= | awk -v roots="$*" -v me="$$" '
		BEGIN { split(roots, r, " ") }
		{ parent[$1] = $2; kids[$2] = kids[$2] " " $1 }
		END {
			for (i in r) if (parent[r[i]] == me && !(r[i] in seen)) { seen[r[i]] = 1; out[++n] = r[i] }
			for (i = 1; i <= n; i++) {
				split(kids[out[i]], k, " ")
				for (j in k) if (!(k[j] in seen)) { seen[k[j]] = 1; out[++n] = k[j] }
			}
			for (i = 1; i <= n; i++) print out[i]
		}'
}

# _running PID...: those of the PIDs whose process still runs (not a zombie), one a line.
_running() {
	[ $# -gt 0 ] || return 0
	ps -o pid=,stat= -p "$(echo "$@" | tr ' ' ',')" 2>/dev/null | awk '$2 !~ /^Z/ { print $1 }'
}

# stop_all: SIGTERM to every process spawned (or added to _pids) and to everything they started, found
# while they still run; wait for those this shell started (a sink may drain first), give the others 5 s,
# then SIGKILL what is left. What a test started in a namespace of its own it stops itself.
stop_all() {
	_all=$(_tree $_pids)
	for p in $_all; do kill "$p" 2>/dev/null || true; done
	for p in $_pids; do wait "$p" 2>/dev/null || true; done
	_end=$(($(date +%s) + 5))
	while _left=$(_running $_all) && [ -n "$_left" ]; do
		if [ "$(date +%s)" -ge "$_end" ]; then
			kill -KILL $_left 2>/dev/null || true
			break
		fi
		sleep 0.05
	done
	_pids=""
}

cleanup() {
	stop_all
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

_result() { # status name
	_n=$((_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $_n - $2"
	else
		echo "not ok $_n - $2"
		_failed=$((_failed + 1))
	fi
}

ok() {
	name=$1
	shift
	if "$@" >"$WORK/.out" 2>&1; then
		_result 0 "$name"
	else
		_result 1 "$name"
		sed 's/^/#   /' "$WORK/.out" | tail -40 >&2
	fi
}

is() {
	if [ "$1" = "$2" ]; then
		_result 0 "$3"
	else
		_result 1 "$3"
		printf '#   got:      %s\n#   expected: %s\n' "$1" "$2" >&2
	fi
}

diag() { echo "# $*" >&2; }

# spawn VAR cmd...: run cmd in the background, store its pid in VAR.
spawn() {
	var=$1
	shift
	"$@" &
	_pids="$_pids $!"
	eval "$var=$!"
}

# The clock is read every 10 tries (half a second), not at each: polling costs a process less.
wait_for() {
	_wt=$1
	shift
	_wend=$(($(date +%s) + _wt))
	_wk=0
	while ! "$@" >/dev/null 2>&1; do
		_wk=$((_wk + 1))
		[ $((_wk % 10)) -eq 0 ] && [ "$(date +%s)" -ge "$_wend" ] && return 1
		sleep 0.05
	done
	return 0
}

free_port() {
	$PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

q() { $PY "$HELP/q.py" "$@"; }

nlines() { wc -l <"$1" | tr -d ' '; }

# has_lines FILE N: FILE holds at least N complete lines (a missing file none).
has_lines() { [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ]; }

# six_reports NAME UNTIL CMD...: run CMD (accel-monitor with a 500 ms period) with its reports in NAME.out and
# its log in NAME.err, until there are six and the shell command UNTIL ("-": none) holds (an answer it waits on
# may come late on a loaded machine); then SIGTERM. Three tests: it exits 0, the reports pass check_report.py,
# six came in about 3 s (nothing stalled the cycle).
six_reports() {
	_rn=$1
	_until=$2
	shift 2
	_start=$(date +%s%N)
	"$@" >"$_rn.out" 2>"$_rn.err" &
	_mpid=$!
	_pids="$_pids $_mpid"
	sleep 2.5 # six reports 500 ms apart take this long at least: polled from then on
	wait_for $((20 * SLOW)) has_lines "$_rn.out" 6
	_ms=$((($(date +%s%N) - _start) / 1000000))
	[ "$_until" = - ] || wait_for $((20 * SLOW)) sh -c "$_until" || diag "$_rn: still not true: $_until"
	kill -TERM "$_mpid"
	wait "$_mpid" || echo "exit $?" >>"$_rn.err"
	ok "$_rn: accel-monitor exits 0" sh -c '! grep -q "^exit " "$1"' sh "$_rn.err"
	ok "$_rn: the reports pass check_report.py" $PY "$HELP/check_report.py" "$_rn.out"
	ok "$_rn: six reports in about 3 s, nothing stalled (${_ms} ms)" test "$_ms" -lt $((6000 * SLOW))
}

# rt CMD...: CMD at a real-time priority where allowed (root, as make test runs), else at nice -10, else as it
# is: for a program whose schedule a test measures, so that the tests running alongside (and a loaded machine)
# do not delay its wake-ups. Its children inherit the priority.
rt() {
	if chrt -f 10 true 2>/dev/null; then
		chrt -f 10 "$@"
	elif [ "$(nice -n -10 nice 2>/dev/null)" = -10 ]; then
		nice -n -10 "$@"
	else
		"$@"
	fi
}

# ec2_host: whether this host is an EC2 instance by the facts accel-monitor reads (monitor/host/instance.c;
# product_uuid only when readable). Tests that must not reach the metadata service from one give the
# producer the sysfs of a QEMU guest ($FIX/ec2/other) for that decision.
ec2_host() {
	_d=/sys/class/dmi/id
	grep -qsx 'Amazon EC2' "$_d/sys_vendor" "$_d/bios_vendor" ||
		grep -qsE '^i-[0-9a-f]{8}([0-9a-f]{9})?$' "$_d/board_asset_tag" ||
		grep -qsi '^ec2' /sys/hypervisor/uuid "$_d/product_uuid" ||
		grep -qsE '\.amazon$' "$_d/bios_version"
}

# tls_ca KEY PEM: a throwaway CA (EC P-256, 2 days): its key and certificate.
tls_ca() {
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null &&
		openssl req -x509 -new -key "$1" -sha256 -days 2 -subj "/CN=fake kubelet test CA" \
			-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" -out "$2" 2>/dev/null
}
# kubelet_tls: in the current directory, a CA (ca.key, ca.pem) and the certificate of a fake kubelet on 127.0.0.1
# it signed (server.key, server.pem), for tests/helpers/fake_kubelet.py; 0 when made.
kubelet_tls() {
	tls_ca ca.key ca.pem &&
		openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out server.key 2>/dev/null &&
		openssl req -new -key server.key -subj "/CN=kubelet" -out server.csr 2>/dev/null &&
		printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n' >server.ext &&
		openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -sha256 \
			-extfile server.ext -out server.pem 2>/dev/null && test -s server.pem
}

# fake_nvml_build OUT [CFLAG...]: the fake NVML (tests/helpers/fake_nvml.c, its cost model and scripts) as the
# shared library OUT, warning-free; extra flags such as -DFAKE_NVML_OLD (a driver without the newer symbols).
fake_nvml_build() {
	_out=$1
	shift
	"${CC:-cc}" -std=c11 -D_GNU_SOURCE -shared -fPIC -O1 -Wall -Wextra -Werror "$@" -o "$_out" "$HELP/fake_nvml.c"
}

need() {
	_need=$1
	shift
	if ! "$@" >/dev/null 2>&1; then
		_result 1 "prerequisite: $_need"
		done_testing || exit 1
	fi
}

# A short libFuzzer run (about 10 s) of build/fuzz/fuzz_TARGET (tests/fuzz/fuzz_TARGET.c under ASan and
# UBSan, built by make: clang and libclang-rt-dev come with scripts/install-deps.sh test; missing, it fails,
# it does not skip), then the plan: the whole of a *_fuzz.sh test. make check-sanitize runs these.
fuzz_short() {
	_t=$1
	_fz=$TOP/build/fuzz/fuzz_$_t
	need "$_fz is built (make build/fuzz/fuzz_$_t)" test -x "$_fz"
	"$TOP/tests/fuzz/seed.sh" "$WORK/corpus" "$_t"
	ok "10 s of fuzzing find nothing" sh -c 'cd "$1" && log=$2 && shift 2 && "$@" >"$log" 2>&1 ||
		{ tail -40 "$log" >&2; exit 1; }' sh "$WORK" "$WORK/fuzz.log" "$_fz" -max_total_time=10 \
		-max_len=65536 -timeout=10 -dict="$TOP/tests/fuzz/$([ -f "$TOP/tests/fuzz/$_t.dict" ] && echo "$_t" || echo prom_line).dict" -artifact_prefix="$WORK/" \
		-print_final_stats=1 "$WORK/corpus"
	grep -h -e '^stat::number_of_executed_units' "$WORK/fuzz.log" | sed 's/^/# /' >&2 || true
	done_testing
}

# prometheus_start HOST:PORT...: a real Prometheus (Debian's prometheus) on a free loopback port, scraping the
# targets (job "accel") every second, its data and log in $WORK; sets PURL and PROM (its pid). $PROM_EXTRA, when
# set, is more top-level configuration (rule_files, alerting). Descriptors 3 to 9 that the test holds (a FIFO's
# writer end) are not passed on, so that the test's own close ends the stream.
prometheus_start() {
	_pp=$(free_port)
	PURL=http://127.0.0.1:$_pp
	_pt=
	for _t in "$@"; do
		_pt="$_pt${_pt:+, }'$_t'"
	done
	cat >"$WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: accel
    static_configs:
      - targets: [$_pt]
${PROM_EXTRA:-}
EOF
	spawn PROM prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
		--web.listen-address="127.0.0.1:$_pp" --log.level=warn 2>"$WORK/prometheus.log" 3>&- 4>&- 5>&- 6>&- \
		7>&- 8>&- 9>&-
}

# prom_values EXPR: the values of an instant query to the Prometheus of prometheus_start, sorted,
# space-separated ("" for no data).
prom_values() {
	curl -s --max-time 10 --data-urlencode "query=$1" "$PURL/api/v1/query" | $PY -c '
import json, sys
d = json.load(sys.stdin)
assert d["status"] == "success", d
print(" ".join(sorted(x["value"][1] for x in d["data"]["result"])))' 2>/dev/null
}

# on_time FILE N MS: FILE holds at least N reports, each 500 ms after the one before it within MS ms times $SLOW
# (the steps are printed as a diagnostic).
on_time() {
	$PY - "$1" "$2" "$3" "$SLOW" <<'EOF'
import datetime, json, sys
L = [json.loads(x) for x in open(sys.argv[1]).read().splitlines()]
T = [datetime.datetime.strptime(l["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp() * 1000 for l in L]
steps = [round(b - a) for a, b in zip(T, T[1:])]
print("# steps (ms):", steps)
ok = len(L) >= int(sys.argv[2]) and all(abs(s - 500) <= int(sys.argv[3]) * int(sys.argv[4]) for s in steps)
sys.exit(0 if ok else 1)
EOF
}

# cw_dims BODY: run the Python on stdin with dims (datum -> {dimension: value}) and names (datum -> MetricName)
# of accel-cloudwatch --dry-run's query body in file BODY.
cw_dims() {
	cat >"$WORK/cw_dims.py" <<'EOF'
import collections, re, sys
body = open(sys.argv[1], encoding="utf-8").read().replace("\n", "&")
kv = dict(p.split("=", 1) for p in body.split("&") if "=" in p)
dims = collections.defaultdict(dict)
for k, v in kv.items():
    m = re.match(r"MetricData\.member\.(\d+)\.Dimensions\.member\.(\d+)\.Name$", k)
    if m:
        dims[m.group(1)][v] = kv[k[:-4] + "Value"]
names = {m: kv["MetricData.member.%s.MetricName" % m] for m in dims}
EOF
	cat >>"$WORK/cw_dims.py"
	$PY "$WORK/cw_dims.py" "$1"
}

# prom_listen PORTVAR ERR INPUT ARG...: accel-prom ARG... reading INPUT, on a free port, its stderr in ERR; sets
# PORTVAR once it accepts connections. free_port's port can be taken before accel-prom binds it (another test's
# outgoing connection gets it as its ephemeral port: seen beside prom_load.sh), so a "cannot listen" is tried again
# on another port, up to five times. Fails (with what accel-prom said) when it never listens.
prom_listen() {
	_lv=$1 _le=$2 _li=$3
	shift 3
	for _lt in 1 2 3 4 5; do
		_lp=$(free_port)
		"$BIN/accel-prom" --port "$_lp" "$@" <"$_li" >/dev/null 2>"$_le" &
		_lpid=$!
		_pids="$_pids $_lpid"
		wait_for $((10 * SLOW)) sh -c 'curl -s -o /dev/null "http://127.0.0.1:$1/health" || ! kill -0 "$2" 2>/dev/null' \
			sh "$_lp" "$_lpid" || true
		if kill -0 "$_lpid" 2>/dev/null; then
			eval "$_lv=\$_lp"
			return 0
		fi
		grep -q "cannot listen" "$_le" || break
	done
	diag "accel-prom $*: $(cat "$_le")"
	return 1
}

done_testing() {
	echo "1..$_n"
	[ "$_failed" -eq 0 ]
}
