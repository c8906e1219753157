#!/bin/sh
# SPDX-License-Identifier: MIT
# Secrets that would add request headers: a bearer_token_file with CR LF
# for an endpoint runtime, and accel-remote-write's --bearer-token-file (at
# start, and rotated to such a file while it runs), are refused with an
# error naming the file; no request with the injected headers is sent (a
# server on 127.0.0.1 logs every request head it gets, raw). A
# tls.server_name that is no host name ("evil.com/x?") is refused when the
# configuration is read.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
RW=$BIN/accel-remote-write
T=$((20 * SLOW))
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED

# --- a server that logs each request's head as it came -------------------------------------
cat >"$WORK/heads.py" <<'EOF'
import socket, sys, threading

log, port_file = sys.argv[1], sys.argv[2]
lock = threading.Lock()


def serve(c):
    data = b""
    while b"\r\n\r\n" not in data:
        b = c.recv(65536)
        if not b:
            return
        data += b
    head, _, body = data.partition(b"\r\n\r\n")
    n = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v)
    while len(body) < n:
        b = c.recv(65536)
        if not b:
            break
        body += b
    with lock, open(log, "ab") as f:
        f.write(head + b"\r\n----\r\n")
    if head.startswith(b"GET"):
        text = b"# TYPE demo_up gauge\ndemo_up 1\n"
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nConnection: close\r\n"
                  b"Content-Length: %d\r\n\r\n%s" % (len(text), text))
    else:
        c.sendall(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
    c.close()


s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(port_file + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
import os
os.rename(port_file + ".tmp", port_file)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
spawn SRV $PY "$WORK/heads.py" "$WORK/heads.log" "$WORK/port"
ok "the logging server listens" wait_for $((10 * SLOW)) test -s "$WORK/port"
U=http://127.0.0.1:$(cat "$WORK/port" 2>/dev/null)
: >"$WORK/heads.log"

printf 'tok\r\nX-Injected: yes\r\nHost: evil.test\n' >"$WORK/bad.token"
echo good-token >"$WORK/good.token"

# --- an endpoint runtime ------------------------------------------------------------------------
G='"metrics": [{"type": "runtime_vcpu_usage"}, {"type": "memory_used"}]'
cat >"$WORK/ep.json" <<EOF
{
  "period": "300ms",
  "system_metrics": [ { "type": "memory_info" } ],
  "runtimes": [
    { "address": "$U/good", "bearer_token_file": "$WORK/good.token", $G },
    { "address": "$U/bad", "bearer_token_file": "$WORK/bad.token", $G }
  ]
}
EOF
RC=0
timeout -k 5 $((30 * SLOW)) "$MON" -c "$WORK/ep.json" -n 4 >"$WORK/ep.out" 2>"$WORK/ep.err" || RC=$?
is "$RC" 0 "endpoint runtimes, one with a token file holding CR LF: -n 4 exits 0"
ok "the good token was sent" grep -a -q '^Authorization: Bearer good-token' "$WORK/heads.log"
ok "the bad runtime's entries say why: the file, the control character" \
	q "$WORK/ep.out" "all(e['error'] == A[0] + ': bearer_token_file ' + A[1] + ': holds a control character (0x0d at byte 3): refused, a secret must be one line of printable text (a CR or LF would add request headers)' for l in L for e in l['runtime_data'] if e['runtime_index'] == 1) and len(L) == 4" \
	"$U/bad" "$WORK/bad.token"
ok "no request for the bad runtime went out" sh -c "! grep -a -q '^GET /bad' '$WORK/heads.log'"
ok "no request carried the injected headers" sh -c "! { grep -a -q -i -e 'X-Injected' -e 'evil\\.test' '$WORK/heads.log'; }"

# --- tls.server_name is a host name ----------------------------------------------------------------
cat >"$WORK/sn.json" <<EOF
{ "runtimes": [ { "address": "https://127.0.0.1:1/metrics", "tls": { "server_name": "evil.com/x?" }, $G } ] }
EOF
RC=0
"$MON" -c "$WORK/sn.json" --check-config >/dev/null 2>"$WORK/sn.err" || RC=$?
is "$RC" 3 "tls.server_name \"evil.com/x?\": a configuration error"
ok "... naming the key and the value" grep -q 'runtimes\[0\]\.tls\.server_name: invalid host name "evil.com/x?"' "$WORK/sn.err"

# --- accel-remote-write --bearer-token-file ----------------------------------------------------------
L=$(sed -n 1p "$FIX/streams/neuron-monitor-2x.jsonl")
: >"$WORK/heads.log"
RC=0
printf '%s\n' "$L" | "$RW" --url "$U/write" --bearer-token-file "$WORK/bad.token" >/dev/null 2>"$WORK/rw1.err" || RC=$?
is "$RC" 3 "accel-remote-write --bearer-token-file with CR LF: a configuration error (3)"
ok "... naming the option, the file and why" \
	grep -q -F -- "--bearer-token-file $WORK/bad.token: holds a control character (0x0d at byte 3)" "$WORK/rw1.err"
ok "... nothing sent" test ! -s "$WORK/heads.log"

# Rotated to such a file while it runs: the request is not sent (retried), never with the headers.
cp "$WORK/good.token" "$WORK/token"
mkfifo "$WORK/in"
"$RW" --url "$U/write" --bearer-token-file "$WORK/token" --batch-send-deadline 50ms --min-backoff 50ms \
	--max-backoff 200ms --drain-timeout 1s <"$WORK/in" >/dev/null 2>"$WORK/rw2.err" &
RWPID=$!
_pids="$_pids $RWPID"
exec 3>"$WORK/in"
printf '%s\n' "$L" >&3
ok "a request with the good token" wait_for "$T" grep -a -q '^Authorization: Bearer good-token' "$WORK/heads.log"
cp "$WORK/bad.token" "$WORK/token.new" && mv "$WORK/token.new" "$WORK/token"
printf '%s\n' "$L" >&3
ok "the rotated token is refused, the request retried" \
	wait_for "$T" grep -q -F -- "--bearer-token-file $WORK/token: holds a control character" "$WORK/rw2.err"
exec 3>&-
wait "$RWPID" 2>/dev/null || :
ok "no request carried the injected headers" sh -c "! { grep -a -q -i -e 'X-Injected' -e 'evil\\.test' '$WORK/heads.log'; }"
ok "stderr holds no sanitizer report" sh -c "! grep -q Sanitizer '$WORK/ep.err' '$WORK/rw1.err' '$WORK/rw2.err'"
done_testing
