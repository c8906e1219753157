#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-prom under connection pressure, on loopback only, bounded in count
# and time: 1000 connections held open mid-request, a slowloris trickling
# header bytes and another flooding headers, while normal scrapes keep
# succeeding; then the 1000 finish their requests and all get 200; an idle
# connection is closed by the server's connection timeout (10 s). Then a
# slowloris: at most 64 connections per client address, 4000 slow clients
# (80 loopback addresses) while scrapes stay under a second, and the 10 s
# request deadline closing clients that are never idle.
. "$(dirname "$0")/lib.sh"

if [ ! -x "$BIN/accel-prom" ]; then
	echo "ok 1 # skip needs $BIN/accel-prom"
	echo "1..1"
	exit 0
fi

PORT=$(free_port)
"$BIN/accel-prom" --listen-address "127.0.0.1:$PORT" <"$FIX/streams/neuron-monitor-2x.jsonl" 2>"$WORK/err" &
PID=$!
_pids="$_pids $PID"
ok "listening" wait_for $((10 * SLOW)) $PY -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 1)"

# The client: prints TAP-like "ok"/"not ok" lines that we count, and stops by itself.
timeout $((90 * SLOW)) $PY - "$PORT" "$SLOW" >"$WORK/load.out" 2>&1 <<'EOF' || true
import resource, selectors, socket, sys, threading, time, urllib.request

port, slow = int(sys.argv[1]), int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
results = []
def check(cond, name):
    results.append((bool(cond), name))
    print(("ok" if cond else "not ok") + " - " + name, flush=True)

def scrape():
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5 * slow) as r:
        return r.status, r.read()

# An idle connection: the server's connection timeout must close it.
idle_closed = []
def idle():
    s = socket.create_connection(("127.0.0.1", port), timeout=30 * slow)
    t0 = time.time()
    try:
        data = s.recv(1)
    except OSError:
        data = b""
    idle_closed.append((data == b"", time.time() - t0))
    s.close()
ti = threading.Thread(target=idle); ti.start()

# 1000 connections held in the middle of a request.
held = []
t0 = time.time()
for i in range(1000):
    # From 25 loopback addresses: one address may hold at most 64 connections.
    s = socket.create_connection(("127.0.0.1", port), timeout=10 * slow, source_address=("127.0.0.%d" % (10 + i % 25), 0))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    held.append(s)
check(len(held) == 1000, "1000 connections open (%.1f s)" % (time.time() - t0))

# A slowloris: one header byte every 0.2 s, never finishing.
stop = threading.Event()
def trickle():
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    try:
        while not stop.wait(0.2):
            s.sendall(b"a")
    except OSError:
        pass
    s.close()
tt = threading.Thread(target=trickle); tt.start()

# A header flood: the per-connection memory limit must end it.
def flood():
    s = socket.create_connection(("127.0.0.1", port), timeout=10 * slow)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    sent, answer = 0, b""
    try:
        while sent < (16 << 20):
            s.sendall(b"X-Flood-%d: %s\r\n" % (sent, b"b" * 1000))
            sent += 1000
    except OSError:
        pass
    try:
        answer = s.recv(100)
    except OSError:
        pass
    s.close()
    return sent, answer
sent, answer = flood()
check(sent < (16 << 20), "a header flood is cut off by the server after %d bytes (%r)" % (sent, answer[:40]))

# Normal scrapes meanwhile.
good = 0
for i in range(20):
    try:
        st, body = scrape()
        good += st == 200 and b"accel_prom_reports_total 4" in body
    except Exception as e:
        print("# scrape failed: %r" % e)
check(good == 20, "20 scrapes while 1000 connections and a slowloris are held: %d succeeded" % good)

# The 1000 finish their requests; every one gets its 200.
for s in held:
    s.sendall(b"\r\n")
sel = selectors.DefaultSelector()
for s in held:
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ, [])
done, ok200, end = 0, 0, time.time() + 30 * slow
while done < len(held) and time.time() < end:
    for key, _ in sel.select(timeout=1):
        try:
            chunk = key.fileobj.recv(65536)
        except BlockingIOError:
            continue
        except OSError:
            chunk = b""
        buf = key.data
        buf.append(chunk)
        data = b"".join(buf)
        head, sep, body = data.partition(b"\r\n\r\n")
        clen = None
        for h in head.split(b"\r\n"):
            if h.lower().startswith(b"content-length:"):
                clen = int(h.split(b":")[1])
        if not chunk or (sep and clen is not None and len(body) >= clen):
            ok200 += head.startswith(b"HTTP/1.1 200")
            done += 1
            sel.unregister(key.fileobj)
            key.fileobj.close()
check(ok200 == 1000, "the 1000 held requests answered 200: %d" % ok200)

stop.set(); tt.join(10)
st, body = scrape()
check(st == 200, "a scrape after it all")
ti.join(30 * slow)
closed, after = idle_closed[0] if idle_closed else (False, 0)
check(closed and 5 <= after <= 12 + 5 * slow, "an idle connection is closed by the server after %.1f s" % after)
sys.exit(0 if all(c for c, _ in results) else 1)
EOF
sed "s/^/# /" "$WORK/load.out"
for n in "1000 connections open" "header flood is cut off" "20 scrapes while" "1000 held requests answered 200" \
	"a scrape after it all" "an idle connection is closed"; do
	ok "$n" grep -q "^ok - .*$n" "$WORK/load.out"
done

# Slowloris. libmicrohttpd's idle timeout never fires for a client that sends a
# header line every 2 s, and every client here comes from loopback: the test uses source
# addresses 127.0.0.x (all of 127/8 is loopback on Linux) to stand for distinct clients.
timeout $((120 * SLOW)) $PY - "$PORT" "$SLOW" >"$WORK/slow.out" 2>&1 <<'EOF' || true
import resource, socket, sys, time, urllib.error, urllib.request

port, slow = int(sys.argv[1]), int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
results = []
def check(cond, name):
    results.append((bool(cond), name))
    print(("ok" if cond else "not ok") + " - " + name, flush=True)

def closed(s):
    """Whether the server has closed s (end of stream or reset); never blocks."""
    try:
        return s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True

def timed(path):
    t0 = time.time()
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=30) as r:
            r.read()
            return r.status, time.time() - t0
    except urllib.error.HTTPError as e:
        return e.code, time.time() - t0  # /health: 503 once the input has ended, as here
    except Exception as e:
        print("# %s: %r" % (path, e))
        return 0, time.time() - t0

def connect(src):
    s = socket.socket()
    s.bind((src, 0))
    s.settimeout(10 * slow)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    s.setblocking(False)  # closed() peeks without waiting; the lines sent later are small
    return s

# 1. One address gets at most 64 connections: the rest are closed at once.
one = [connect("127.0.0.2") for i in range(300)]
time.sleep(1)
alive = sum(not closed(s) for s in one)
check(0 < alive <= 64, "one client address holds at most 64 connections: %d of 300 kept" % alive)
for s in one:
    s.close()
time.sleep(0.5)

# 2. 4000 slow clients from 80 addresses, a header line every 2 s; scrapes stay fast.
n = min(4000, hard - 500)
if n < 4000:
    print("# the open-file limit (%d) allows %d slow clients only" % (hard, n))
t0 = time.time()
slow_c = [connect("127.0.0.%d" % (100 + i % 80)) for i in range(n)]
t_conn = time.time()
time.sleep(0.5)
held = sum(not closed(s) for s in slow_c)
check(held >= n - 10, "%d slow clients connected in %.1f s: %d held" % (n, t_conn - t0, held))
lat, bad = [], 0
for rnd in range(4):
    for s in slow_c:
        try:
            s.sendall(b"X-Slow: a\r\n")
        except OSError:
            pass
    for path in ("/health", "/metrics"):
        st, dt = timed(path)
        bad += st != (503 if path == "/health" else 200)
        lat.append(dt)
    time.sleep(max(0, 2 - (time.time() - t_conn) % 2))
check(bad == 0 and max(lat) < 1.0 * slow,
      "8 scrapes while the slow clients trickle: all answered (%d failed), slowest %.3f s" % (bad, max(lat)))

# 3. The request deadline (10 s from the connection) closes every slow client, though none is idle.
while time.time() - t_conn < 10 + 4 * slow:
    for s in slow_c:
        try:
            s.sendall(b"X-Slow: a\r\n")
        except OSError:
            pass
    time.sleep(2)
gone = sum(closed(s) for s in slow_c)
check(gone == n, "the request deadline closed the slow clients: %d of %d, %.1f s after they connected" %
      (gone, n, time.time() - t_conn))
for s in slow_c:
    s.close()
st, dt = timed("/metrics")
check(st == 200 and dt < 1.0 * slow, "a scrape after it all (%.3f s)" % dt)
sys.exit(0 if all(c for c, _ in results) else 1)
EOF
sed "s/^/# /" "$WORK/slow.out"
for n in "one client address holds at most 64" "slow clients connected" "8 scrapes while the slow clients" \
	"the request deadline closed" "a scrape after it all"; do
	ok "slowloris: $n" grep -q "^ok - .*$n" "$WORK/slow.out"
done
ok "slowloris: the cut is logged, rate-limited" test "$(grep -c 'did not arrive whole' "$WORK/err")" -le 3
ok "slowloris: and logged at all" grep -q 'did not arrive whole within 10 s' "$WORK/err"
ok "accel-prom is still running" kill -0 "$PID"
done_testing
