#!/bin/sh
# SPDX-License-Identifier: MIT
# accel-remote-write benchmark.
#  1. encode + compress: bench/remote_write_bench.c (samples/s, CPU per 1000 samples against the bare
#     protobuf-c pack + snappy compress of the same samples, in the same run);
#  2. memory: accel-remote-write's VmRSS, read every 2 s, while RW_REPORTS reports (default 1000000,
#     accel-monitor format, each its own timestamp, ~250 samples) go through it: with a receiver up (a
#     loopback server that takes every request), RSS should be flat; with none listening, bounded by
#     --queue-max-bytes (RW_QUEUE_MB, default 32) plus what the program needs anyway.
#   bench/remote_write.sh           (make bench runs it)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build/release}
BIN=${BIN:-bin}
N=${RW_REPORTS:-1000000}
QMB=${RW_QUEUE_MB:-32}
${MAKE:-make} -s --no-print-directory "$BUILD/bench/remote_write_bench" "$BIN/accel-remote-write" "$BIN/accel-monitor"
W=$(mktemp -d "${TMPDIR:-/tmp}/rw-bench.XXXXXX")
pids=""
trap 'for p in $pids; do kill $p 2>/dev/null || true; done; rm -rf "$W"' EXIT

echo "== encode + compress ($(nproc) CPUs)"
"$BUILD/bench/remote_write_bench" 1000000 500 5

# One accel-monitor report of the fixture tree, restamped: gen N prints N reports 100 ms apart.
printf '{ "period": "1s", "devices": [ { "type": "amdgpu" }, { "type": "neuron" }, { "type": "hwmon" } ] }\n' \
	>"$W/mon.json"
AWS_EC2_METADATA_DISABLED=true "$BIN/accel-monitor" -c "$W/mon.json" --path.sysfs tests/fixtures/sysfs/host \
	--path.procfs tests/fixtures/proc-devices --once >"$W/one.json" 2>/dev/null || true
gen() {
	/usr/bin/python3 - "$W/one.json" "$1" <<'EOF'
import datetime, json, re, sys
line = open(sys.argv[1]).readline().strip()
line = re.sub(r'"timestamp":"[^"]*"', '"timestamp":"%s"', line)
start = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=1)
out = sys.stdout
step = datetime.timedelta(milliseconds=100)
n = line.count("%s")
for i in range(int(sys.argv[2])):
    ts = (start + i * step).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    out.write(line % ((ts,) * n) + "\n")
EOF
}

cat >"$W/discard.py" <<'EOF'
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(204); self.send_header("Content-Length", "0"); self.end_headers()
s = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
print("ready", flush=True)
s.serve_forever()
EOF
port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# run NAME URL ARGS...: feed N reports, print VmRSS every 2 s, then the summary line.
run() {
	name=$1 url=$2
	shift 2
	mkfifo "$W/$name.in"
	t0=$(date +%s)
	"$BIN/accel-remote-write" --url "$url" --drain-timeout 1s -vv "$@" <"$W/$name.in" 2>"$W/$name.err" &
	rw=$!
	gen "$N" >"$W/$name.in" &
	g=$!
	pids="$pids $rw $g"
	: >"$W/$name.rss"
	while kill -0 $rw 2>/dev/null; do
		awk '/^VmRSS/ {print $2}' "/proc/$rw/status" 2>/dev/null >>"$W/$name.rss" || true
		sleep 2
	done
	wait $rw || true
	t1=$(date +%s)
	awk -v n="$name" -v s=$((t1 - t0)) '
		{ v[NR] = $1 }
		END {
			if (NR < 2) { print n ": too short to sample"; exit }
			h = int(NR / 2); mn = 1e18; mx = 0
			for (i = h + 1; i <= NR; i++) { if (v[i] < mn) mn = v[i]; if (v[i] > mx) mx = v[i] }
			line = ""
			for (i = 1; i <= NR; i += (NR > 12 ? int(NR / 12) : 1)) line = line " " v[i]
			printf "%s: %d s, VmRSS kB every %s:%s (last %d)\n", n, s, (NR > 12 ? "~" int(NR / 12) * 2 " s" : "2 s"), line, v[NR]
			printf "%s: second half min %d kB, max %d kB (spread %d kB)\n", n, mn, mx, mx - mn
		}' "$W/$name.rss"
	grep "samples sent" "$W/$name.err" | tail -1 | sed "s/^/$name: /"
}

echo "== memory over $N reports, receiver up"
DP=$(port)
/usr/bin/python3 "$W/discard.py" "$DP" >"$W/discard.out" 2>&1 &
pids="$pids $!"
while ! grep -q ready "$W/discard.out" 2>/dev/null; do sleep 0.1; done
run up "http://127.0.0.1:$DP/api/v1/write"

echo "== memory over $N reports, nothing listening, --queue-max-bytes $((QMB * 1048576)) (in memory)"
run down "http://127.0.0.1:$(port)/api/v1/write" --queue-max-bytes $((QMB * 1048576)) --max-backoff 1s
echo "down: the queue's bound is $((QMB * 1024)) kB"
