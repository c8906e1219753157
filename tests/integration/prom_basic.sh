#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-prom end to end over HTTP with curl: the three input kinds (and
# endpoint runtimes' per-model series) served
# byte for byte as their golden files (tests/fixtures/prom/, made by
# tests/unit/test_prom_store.c), accel_prom_* aside since they depend on
# the clock; promtool on every golden file and every live scrape; content
# negotiation (OpenMetrics, gzip); HEAD, 405, 404, / and /v1/collect; the
# end of input (still serving, /health 503); the command line and its exit
# codes.
. "$(dirname "$0")/lib.sh"

if [ ! -x "$BIN/accel-prom" ] || ! command -v curl >/dev/null 2>&1; then
	echo "ok 1 # skip needs $BIN/accel-prom and curl"
	echo "1..1"
	exit 0
fi
GOLD=$FIX/prom
T=$((10 * SLOW))

# The exposition without accel-prom's own metrics (they depend on the clock).
no_self() { grep -v -e '^accel_prom_' -e '^# [A-Z]* accel_prom_' "$1" || true; }

# promtool check metrics, tolerating only its one lint that a compatible name
# cannot avoid: dashboards query system_vcpu_count (docs/accel-prom.md).
promcheck() {
	out=$(promtool check metrics <"$1" 2>&1) || true
	rest=$(printf '%s\n' "$out" | grep -v -e '^system_vcpu_count non-histogram and non-summary metrics should not have "_count" suffix$' -e '^$' || true)
	[ -z "$rest" ] || {
		printf '%s\n' "$rest"
		return 1
	}
}
HAVE_PROMTOOL=0
command -v promtool >/dev/null 2>&1 && HAVE_PROMTOOL=1

# start NAME INPUT [options]: accel-prom reading INPUT on a free port; sets PORT and PID.
start() {
	name=$1 input=$2
	shift 2
	PORT=$(free_port)
	# Not lib.sh's spawn: an asynchronous command's stdin is /dev/null unless redirected on the command itself.
	KUBE_NODE_NAME=node-7 "$BIN/accel-prom" --listen-address "127.0.0.1:$PORT" "$@" <"$input" 2>"$WORK/$name.err" &
	PID=$!
	_pids="$_pids $PID"
	URL=http://127.0.0.1:$PORT
}
get() { curl -s --max-time "$T" "$@"; }
input_done() { get "$URL/metrics" | grep -qx 'accel_prom_input_open 0'; }
# same_body DECODE CURL_ARGS...: GET /metrics with CURL_ARGS, through DECODE ("gzip -dc", cat), is byte for byte
# the plain body fetched just before it. accel-prom renders again every second (its
# accel_prom_last_report_age_seconds moves), so a pair that straddles a render is fetched again (3 tries).
same_body() {
	_dec=$1
	shift
	for _i in 1 2 3; do
		get -o "$WORK/ref" "$URL/metrics"
		get -o "$WORK/enc" "$@" "$URL/metrics"
		$_dec <"$WORK/enc" | cmp -s - "$WORK/ref" && return 0
	done
	$_dec <"$WORK/enc" | cmp - "$WORK/ref"
}

# ---- golden files ------------------------------------------------------------
for g in "$GOLD"/*.prom; do
	if [ $HAVE_PROMTOOL = 1 ]; then
		ok "promtool check metrics $(basename "$g")" promcheck "$g"
	fi
	ok "$(basename "$g") is sorted and has HELP and TYPE" $PY -c '
import sys
fams = []; seen = set(); typed = set(); helped = set()
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("# HELP "): helped.add(line.split()[2]); continue
    if line.startswith("# TYPE "):
        n = line.split()[2]; typed.add(n); fams.append(n); continue
    name = line.split("{")[0].split(" ")[0]
    assert name in typed and name in helped, name
assert fams == sorted(fams), "families not sorted"
' "$g"
done

for kind in neuron-monitor-2x neuron-monitor-2020 accel-monitor endpoint-runtimes; do
	case $kind in
	accel-monitor) input=$GOLD/$kind.jsonl ;;
	*) input=$FIX/streams/$kind.jsonl ;;
	esac
	start "$kind" "$input"
	wait_for "$T" input_done || diag "$kind: accel-prom did not finish its input"
	get -o "$WORK/$kind.prom" "$URL/metrics"
	no_self "$WORK/$kind.prom" >"$WORK/$kind.got"
	no_self "$GOLD/$kind.prom" >"$WORK/$kind.want"
	ok "$kind: /metrics equals the golden file (accel_prom_* aside)" cmp "$WORK/$kind.want" "$WORK/$kind.got"
	get -H 'Accept: application/openmetrics-text; version=1.0.0' -o "$WORK/$kind.om" "$URL/metrics"
	no_self "$WORK/$kind.om" >"$WORK/$kind.omgot"
	no_self "$GOLD/$kind.om" >"$WORK/$kind.omwant"
	ok "$kind: OpenMetrics equals the golden file (accel_prom_* aside)" cmp "$WORK/$kind.omwant" "$WORK/$kind.omgot"
	if [ $HAVE_PROMTOOL = 1 ]; then
		ok "$kind: promtool check metrics on the live scrape" promcheck "$WORK/$kind.prom"
	fi
	kill "$PID"
	wait "$PID" 2>/dev/null || true
done
is "$(grep -c 'stdin:[0-9]*: ' "$WORK/neuron-monitor-2x.err" || true)" 0 "a good stream logs no warning"

# ---- --collectors: promtool reports only the lints docs/accel-prom.md lists -----------
# tests/fixtures/dcgm/reports.jsonl: three reports of three fake GPUs (accel-monitor with
# tests/helpers/fake_nvml.c and tests/fixtures/nvml/multi.nvml, as nvml_dcgm.sh makes them).
promcheck_dcgm() { # scrape
	out=$(promtool check metrics <"$1" 2>&1) || true
	counters=$(sed -n 's/^# TYPE \(DCGM_[A-Z0-9_]*\) counter$/\1/p' "$1")
	rest=$(printf '%s\n' "$out" | grep -v -e '^$' \
		-e '^system_vcpu_count non-histogram and non-summary metrics should not have "_count" suffix$' \
		-e "^DCGM_[A-Z0-9_]* label names should be written in 'snake_case' not 'camelCase'\$" \
		-e "^DCGM_FI_DEV_PCIE_REPLAY_COUNTER metric name should not include type 'counter'\$" || true)
	for c in $counters; do
		rest=$(printf '%s\n' "$rest" | grep -vx "$c counter metrics should have \"_total\" suffix" || true)
	done
	[ -z "$rest" ] || {
		printf 'not in docs/accel-prom.md:\n%s\n' "$rest"
		return 1
	}
}
if [ $HAVE_PROMTOOL = 1 ]; then
	start dcgm "$FIX/dcgm/reports.jsonl" --collectors "$FIX/dcgm/default-counters.csv"
	wait_for "$T" input_done || diag "--collectors: accel-prom did not finish its input"
	get -o "$WORK/dcgm.prom" "$URL/metrics"
	ok "--collectors: DCGM families served" grep -q '^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{' "$WORK/dcgm.prom"
	ok "--collectors: promtool check metrics reports only the documented lints" promcheck_dcgm "$WORK/dcgm.prom"
	kill "$PID"
	wait "$PID" 2>/dev/null || true
else
	_result 1 "promtool is not installed (scripts/install-deps.sh test installs it)"
fi

# ---- one server: negotiation, methods, pages ----------------------------------
start nm2x "$FIX/streams/neuron-monitor-2x.jsonl" -v
wait_for "$T" input_done || diag "accel-prom did not finish its input"
H=$WORK/h
get -D "$H" -o "$WORK/plain" "$URL/metrics"
ok "text format: Content-Type 0.0.4" grep -qi '^Content-Type: text/plain; version=0.0.4; charset=utf-8' "$H"
get -D "$H" -o "$WORK/om" -H 'Accept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1' "$URL/metrics"
ok "Prometheus's Accept: OpenMetrics 1.0.0" grep -qi '^Content-Type: application/openmetrics-text; version=1.0.0' "$H"
is "$(tail -n 1 "$WORK/om")" "# EOF" "OpenMetrics ends with # EOF"
get -D "$H" -o /dev/null -H 'Accept: text/plain;q=1, application/openmetrics-text;q=0.5' "$URL/metrics"
ok "Accept preferring text: text" grep -qi '^Content-Type: text/plain; version=0.0.4' "$H"
get -D "$H" -o "$WORK/gz" -H 'Accept-Encoding: gzip' "$URL/metrics"
ok "gzip: Content-Encoding" grep -qi '^Content-Encoding: gzip' "$H"
ok "gzip: the same bytes once inflated" same_body "gzip -dc" -H 'Accept-Encoding: gzip'
get -D "$H" -o /dev/null -H 'Accept-Encoding: gzip;q=0, identity' "$URL/metrics"
ok "gzip;q=0: plain" sh -c "! grep -qi '^Content-Encoding' '$H'"
ok "gzip;q=0: the plain body" same_body cat -H 'Accept-Encoding: gzip;q=0, identity'
get -I -o "$H" "$URL/metrics"
ok "HEAD: 200 with a Content-Length and no body" grep -qi '^Content-Length: [1-9]' "$H"
is "$(get -o /dev/null -w '%{http_code}' -X POST -d x=1 "$URL/metrics")" 405 "POST: 405"
get -D "$H" -o /dev/null -X DELETE "$URL/health"
ok "405 names the allowed methods" grep -qi '^Allow: GET, HEAD' "$H"
is "$(get -o /dev/null -w '%{http_code}' "$URL/nope")" 404 "unknown path: 404"
is "$(get -o /dev/null -w '%{http_code}' "$URL/metrics/")" 404 "/metrics/: 404"
get -o "$WORK/index" "$URL/"
ok "/: HTML naming the version" grep -q "Version $("$BIN/accel-prom" --version | cut -d' ' -f2)" "$WORK/index"
ok "/: links /metrics and /health" sh -c "grep -q 'href=\"metrics\"' '$WORK/index' && grep -q 'href=\"health\"' '$WORK/index'"
is "$(get "$URL/v1/collect")" \
	'{"node-7":{"deviceNum":0,"devices":[],"usedMemory":0,"totalMemory":0,"percent":0.0}}' \
	"/v1/collect: BIE JSON under KUBE_NODE_NAME"
is "$(get -o /dev/null -w '%{http_code} %{content_type}' "$URL/v1/collect")" "200 application/json" "/v1/collect: JSON"
# A keep-alive connection serves several requests.
is "$(get -w '%{num_connects}' -o /dev/null -o /dev/null -o /dev/null "$URL/health" "$URL/health" "$URL/metrics")" "100" \
	"keep-alive: three requests on one connection"

# End of input: still serving the last values, /health 503 with the reason.
is "$(get -o /dev/null -w '%{http_code}' "$URL/health")" 503 "end of input: /health 503"
ok "end of input: /health says why" sh -c "curl -s '$URL/health' | grep -q '^input ended .* after 4 reports$'"
ok "end of input: the last values are still served" \
	grep -q '^execution_status_total{.*status_type="completed".*} 461$' "$WORK/plain"
ok "end of input: logged on stderr" grep -q 'stdin: end of input after 4 lines' "$WORK/nm2x.err"
ok "runtime errors logged with their line (-v)" grep -q 'stdin:2: runtime of 5151' "$WORK/nm2x.err"
kill -TERM "$PID"
wait "$PID" && rc=0 || rc=$?
is "$rc" 0 "SIGTERM: exit 0"

# ---- the command line ---------------------------------------------------------
ok "--help: exit 0 and usage" sh -c "'$BIN/accel-prom' --help | grep -q '^Usage: accel-prom'"
ok "--version" sh -c "'$BIN/accel-prom' --version | grep -q '^accel-prom [0-9]'"
code() {
	"$@" </dev/null >/dev/null 2>"$WORK/cl.err" && echo 0 || echo $?
}
is "$(code "$BIN/accel-prom" --bogus)" 2 "unknown option: exit 2"
is "$(code "$BIN/accel-prom" --port 70000)" 2 "bad port: exit 2"
is "$(code "$BIN/accel-prom" --port 1 --listen-address 127.0.0.1:2)" 2 "--port with --listen-address: exit 2"
is "$(code "$BIN/accel-prom" --listen-address 127.0.0.1)" 2 "--listen-address without a port: exit 2"
is "$(code "$BIN/accel-prom" --staleness soon)" 2 "bad --staleness: exit 2"
is "$(code "$BIN/accel-prom" --max-line-bytes 0)" 2 "bad --max-line-bytes: exit 2"
is "$(code "$BIN/accel-prom" --web.config.file "$WORK/missing.yml")" 3 "missing web config: exit 3"
ok "missing web config: the message names the file" grep -q "missing.yml" "$WORK/cl.err"
# A port already taken: exit 1 and why.
start first /dev/null
wait_for "$T" curl -s -o /dev/null "$URL/health" || diag "accel-prom did not come up"
is "$(code "$BIN/accel-prom" --listen-address "127.0.0.1:$PORT")" 1 "port in use: exit 1"
ok "port in use: the message says so" grep -q "cannot listen on 127.0.0.1:$PORT" "$WORK/cl.err"
ok "input /dev/null: serves, /health 503" sh -c "curl -s '$URL/health' | grep -q 'input ended'"
# --port: every address (IPv6 with IPv4 mapped in, or IPv4 alone); we talk to loopback only.
PD=$(free_port)
"$BIN/accel-prom" --port "$PD" </dev/null 2>/dev/null &
_pids="$_pids $!"
ok "--port: answers on 127.0.0.1" wait_for "$T" curl -s -o /dev/null "http://127.0.0.1:$PD/"
# IPv6 loopback, where the host has it.
if $PY -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
	P6=$(free_port)
	spawn PID6 "$BIN/accel-prom" --listen-address "[::1]:$P6" </dev/null 2>/dev/null
	ok "--listen-address [::1]:PORT" wait_for "$T" curl -s -o /dev/null "http://[::1]:$P6/"
fi
done_testing
