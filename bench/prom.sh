#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-prom's benchmarks, in one run on this machine (loopback only, each
# step bounded in time):
#   1. scrape throughput with wrk: accel-prom (fed the neuron-monitor 2.x
#      fixture), nginx serving the same body as a static file (the floor),
#      collectd 5.12's write_prometheus exporting its cpu and memory plugins;
#      targets: accel-prom >= 0.7 x nginx, >= 2 x collectd;
#   2. ingest rate next to bare jansson parsing of the same lines
#      (bench/prom_ingest.c); target >= 0.7;
#   3. RSS after 100 000 and after 1 000 000 reports; target: flat (<= +10 %).
# Every figure is printed with PASS or FAIL; a missed target still exits 0.
# A missing tool (wrk, nginx, collectd) skips its figure with the apt-get
# line to install it. Exit 1 only when something could not be measured.
#
# Environment: BUILD [build/release], BIN [bin], WRK_SECONDS [5],
# WRK_CONNECTIONS [16], REPORTS [1000000].
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build/release}
BIN=${BIN:-bin}
WRK_SECONDS=${WRK_SECONDS:-5}
WRK_CONNECTIONS=${WRK_CONNECTIONS:-16}
REPORTS=${REPORTS:-1000000}
PY=/usr/bin/python3

WORK=$(mktemp -d "${TMPDIR:-/tmp}/accel-prom-bench.XXXXXX")
chmod 755 "$WORK" # nginx's workers read the body from here
pids=""
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	for p in $pids; do wait "$p" 2>/dev/null || true; done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
errors=0
summary=""

free_port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() { # URL: up to 10 s
	i=0
	while ! curl -sf -o /dev/null "$1"; do
		i=$((i + 1))
		[ $i -ge 100 ] && return 1
		sleep 0.1
	done
}
# cpu_ticks PID...: user + system clock ticks of these processes (all their threads)
cpu_ticks() {
	for p in "$@"; do sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null; done | awk '{ t += $12 + $13 } END { print t + 0 }'
}
# rps URL PID...: wrk's requests/s, then the server processes' CPU per request (µs)
rps() {
	url=$1
	shift
	t0=$(cpu_ticks "$@")
	wrk -t2 -c"$WRK_CONNECTIONS" -d"${WRK_SECONDS}s" "$url" >"$WORK/wrk.out" 2>&1 || true
	t1=$(cpu_ticks "$@")
	r=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$WORK/wrk.out")
	awk -v d=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" -v r="${r:-0}" -v s="$WRK_SECONDS" \
		'BEGIN { printf "%s %s\n", r, (r > 0) ? sprintf("%.1f", d / hz * 1e6 / (r * s)) : "?" }'
}
verdict() { awk -v r="$1" -v t="$2" 'BEGIN { print (r >= t) ? "PASS" : "FAIL" }'; }
add_summary() { summary="$summary$(printf '  %s' "$1")
"; }

[ -x "$BIN/accel-prom" ] || { echo "bench: $BIN/accel-prom is missing; run make first" >&2; exit 1; }

# ---- 1. scrape throughput --------------------------------------------------------
echo "== 1/3 scrape throughput (wrk -t2 -c$WRK_CONNECTIONS -d${WRK_SECONDS}s, GET /metrics, loopback)"
mkfifo "$WORK/in"
exec 3<>"$WORK/in"
AP=$(free_port)
"$BIN/accel-prom" --listen-address "127.0.0.1:$AP" <"$WORK/in" 2>"$WORK/accel-prom.err" 3>&- &
AP_PID=$!
pids="$pids $AP_PID"
cat tests/fixtures/streams/neuron-monitor-2x.jsonl >&3
wait_http "http://127.0.0.1:$AP/metrics" || { echo "  ERROR: accel-prom did not start"; exit 1; }
sleep 0.5
mkdir -p "$WORK/www"
curl -s -o "$WORK/www/metrics" "http://127.0.0.1:$AP/metrics"
chmod 644 "$WORK/www/metrics"
body=$(wc -c <"$WORK/www/metrics" | tr -d ' ')
have_wrk=1
command -v wrk >/dev/null 2>&1 || have_wrk=0
if [ $have_wrk = 0 ]; then
	echo "  SKIP: needs wrk (apt-get install wrk)"
else
	echo "  (req/s; and the server's own CPU per request, user + system, all its threads and processes)"
	set -- $(rps "http://127.0.0.1:$AP/metrics" "$AP_PID")
	r_ap=$1 u_ap=$2
	printf '  %-44s %9s req/s %7s µs/req  (%s bytes)\n' "accel-prom" "$r_ap" "$u_ap" "$body"
	r_ng=""
	if command -v nginx >/dev/null 2>&1; then
		NP=$(free_port)
		mkdir -p "$WORK/nginx"
		cat >"$WORK/nginx.conf" <<EOF
daemon off;
worker_processes auto;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $WORK/nginx/body;
    proxy_temp_path $WORK/nginx/proxy;
    fastcgi_temp_path $WORK/nginx/fastcgi;
    uwsgi_temp_path $WORK/nginx/uwsgi;
    scgi_temp_path $WORK/nginx/scgi;
    server {
        listen 127.0.0.1:$NP;
        location = /metrics { root $WORK/www; default_type "text/plain; version=0.0.4; charset=utf-8"; }
    }
}
EOF
		nginx -c "$WORK/nginx.conf" -p "$WORK/nginx" 2>"$WORK/nginx.err" &
		NG_PID=$!
		pids="$pids $NG_PID"
		if wait_http "http://127.0.0.1:$NP/metrics"; then
			ng_all="$NG_PID $(pgrep -P "$NG_PID" | tr '\n' ' ')"
			# shellcheck disable=SC2086
			set -- $(rps "http://127.0.0.1:$NP/metrics" $ng_all)
			r_ng=$1
			printf '  %-44s %9s req/s %7s µs/req  (the same body, static file)\n' "nginx" "$r_ng" "$2"
			ratio=$(awk -v a="$r_ap" -v b="$r_ng" 'BEGIN { printf "%.2f", a / b }')
			add_summary "$(printf '%-38s %6s   >= 0.7   %s' "accel-prom / nginx" "$ratio" "$(verdict "$ratio" 0.7)")"
		else
			echo "  ERROR: nginx did not start"
			sed 's/^/  | /' "$WORK/nginx.err" | tail -5
			errors=$((errors + 1))
		fi
	else
		echo "  SKIP: needs nginx (apt-get install nginx)"
	fi
	if command -v collectd >/dev/null 2>&1 && [ -e /usr/lib/collectd/write_prometheus.so ]; then
		CP=$(free_port)
		mkdir -p "$WORK/collectd"
		cat >"$WORK/collectd.conf" <<EOF
Interval 1
BaseDir "$WORK/collectd"
PIDFile "$WORK/collectd/collectd.pid"
PluginDir "/usr/lib/collectd"
TypesDB "/usr/share/collectd/types.db"
LoadPlugin cpu
LoadPlugin memory
LoadPlugin write_prometheus
<Plugin write_prometheus>
  Host "127.0.0.1"
  Port "$CP"
</Plugin>
EOF
		collectd -f -C "$WORK/collectd.conf" >"$WORK/collectd.err" 2>&1 &
		CD_PID=$!
		pids="$pids $CD_PID"
		if wait_http "http://127.0.0.1:$CP/metrics"; then
			sleep 2 # a couple of intervals, so that both plugins have values
			cbody=$(curl -s "http://127.0.0.1:$CP/metrics" | wc -c | tr -d ' ')
			set -- $(rps "http://127.0.0.1:$CP/metrics" "$CD_PID")
			r_cd=$1 u_cd=$2
			printf '  %-44s %9s req/s %7s µs/req  (%s bytes: cpu and memory plugins)\n' "collectd write_prometheus" \
				"$r_cd" "$u_cd" "$cbody"
			ratio=$(awk -v a="$r_ap" -v b="$r_cd" 'BEGIN { printf "%.2f", a / b }')
			add_summary "$(printf '%-38s %6s   >= 2     %s' "accel-prom / collectd, req/s" "$ratio" "$(verdict "$ratio" 2)")"
			ratio=$(awk -v a="$u_ap" -v b="$u_cd" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "?" }')
			add_summary "$(printf '%-38s %6s   >= 2     %s' "collectd / accel-prom, CPU per request" "$ratio" "$(verdict "$ratio" 2)")"
		else
			echo "  ERROR: collectd did not start"
			sed 's/^/  | /' "$WORK/collectd.err" | tail -5
			errors=$((errors + 1))
		fi
	else
		echo "  SKIP: needs collectd 5.12 (apt-get install collectd-core libprotobuf-c1)"
	fi
	gz=$(curl -s -H 'Accept-Encoding: gzip' "http://127.0.0.1:$AP/metrics" | wc -c | tr -d ' ')
	printf '  %-44s %9s bytes gzip, made once per snapshot\n' "accel-prom, Accept-Encoding: gzip" "$gz"
fi
echo

# ---- 2. ingest --------------------------------------------------------------------
echo "== 2/3 ingest rate vs. bare jansson parsing (CPU time, medians of 5 rounds)"
if [ -e "$BUILD/libsinks.a" ] && [ -e "$BUILD/libcommon.a" ]; then
	${MAKE:-make} -s --no-print-directory BUILD="$BUILD" "$BUILD/bench/prom_ingest"
	for kind in neuron-monitor-2x accel-monitor; do
		case $kind in
		accel-monitor) src=tests/fixtures/prom/$kind.jsonl n=2000 ;;
		*) src=tests/fixtures/streams/$kind.jsonl n=2500 ;;
		esac
		i=0
		while [ $i -lt $n ]; do
			cat "$src"
			i=$((i + 1))
		done >"$WORK/$kind.jsonl"
		echo "  $kind (the fixture repeated):"
		if "$BUILD/bench/prom_ingest" -r 5 "$WORK/$kind.jsonl" >"$WORK/ingest.out"; then
			sed 's/^/    /' "$WORK/ingest.out"
			ratio=$(awk '$1 == "ratio" { print $3 }' "$WORK/ingest.out")
			add_summary "$(printf '%-38s %6s   >= 0.7   %s' "ingest / jansson, $kind" "$ratio" "$(verdict "$ratio" 0.7)")"
		else
			echo "    ERROR: prom_ingest failed"
			errors=$((errors + 1))
		fi
	done
else
	echo "  ERROR: $BUILD/libsinks.a or libcommon.a missing; run make first"
	errors=$((errors + 1))
fi
echo

# ---- 3. RSS over a million reports ---------------------------------------------------
echo "== 3/3 RSS of accel-prom over $REPORTS reports (the accel-monitor fixture, repeated)"
RP=$(free_port)
$PY - "$RP" "$REPORTS" "$BIN/accel-prom" tests/fixtures/prom/accel-monitor.jsonl >"$WORK/rss.out" 2>&1 <<'EOF' || true
import subprocess, sys, time, urllib.request
port, total, prog, src = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
lines = open(src, "rb").read().splitlines(keepends=True)
block = b"".join(lines[i % len(lines)] for i in range(1200))
p = subprocess.Popen([prog, "--listen-address", "127.0.0.1:%d" % port], stdin=subprocess.PIPE,
                     stderr=subprocess.DEVNULL)
def reports():
    try:
        body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10).read().decode()
    except OSError:
        return -1
    for l in body.splitlines():
        if l.startswith("accel_prom_reports_total "):
            return int(float(l.split()[1]))
    return -1
def rss():
    for l in open("/proc/%d/status" % p.pid):
        if l.startswith("VmRSS:"):
            return int(l.split()[1])
marks, sent, t0, out = [total // 10, total], 0, time.time(), []
for m in marks:
    while sent < m:
        p.stdin.write(block)
        sent += 1200
    p.stdin.flush()
    while reports() < m and time.time() - t0 < 600:
        time.sleep(0.2)
    out.append((reports(), rss(), time.time() - t0))
p.stdin.close()
p.terminate(); p.wait(10)
for n, r, t in out:
    print("%d %d %.1f" % (n, r, t))
EOF
if [ "$(wc -l <"$WORK/rss.out")" -eq 2 ]; then
	set -- $(cat "$WORK/rss.out")
	printf '  %-44s %9s kB   (%s s)\n' "VmRSS after $1 reports" "$2" "$3"
	printf '  %-44s %9s kB   (%s s: %.0f reports/s end to end)\n' "VmRSS after $4 reports" "$5" "$6" \
		"$(awk -v n="$4" -v t="$6" 'BEGIN { print n / t }')"
	growth=$(awk -v a="$2" -v b="$5" 'BEGIN { printf "%.2f", b / a }')
	add_summary "$(printf '%-38s %6s   <= 1.1   %s' "RSS 1M / RSS 100k reports" "$growth" \
		"$(awk -v g="$growth" 'BEGIN { print (g <= 1.1) ? "PASS" : "FAIL" }')")"
else
	echo "  ERROR: the RSS run failed"
	sed 's/^/  | /' "$WORK/rss.out" | tail -10
	errors=$((errors + 1))
fi
echo

echo "== summary"
printf '%s' "$summary"
if [ "$errors" -ne 0 ]; then
	echo "bench: $errors measurement(s) failed" >&2
	exit 1
fi
exit 0
