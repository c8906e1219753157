#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-remote-write toward hosted receivers (tests/helpers/rw_receiver.py
# with TLS): the receiver verified with --ca-file, a client certificate
# (--cert-file, --key-file) the receiver requires, a bearer token read
# from its file, a custom --header, basic auth; without the client
# certificate or the CA nothing is taken and the sink retries; a wrong
# token is a 401, dropped and counted; option errors exit 2 or 3.
. "$(dirname "$0")/lib.sh"

need "$BIN/accel-remote-write is built" test -x "$BIN/accel-remote-write"
need "python3-snappy (Debian package)" $PY -c 'import snappy'
need "openssl" command -v openssl
T=$((20 * SLOW))
RW=$BIN/accel-remote-write
L=$(sed -n 1p "$FIX/streams/neuron-monitor-2x.jsonl")

# ---- certificates: a CA, the receiver's (for 127.0.0.1), a client's -----------------------------
C=$WORK/pki
mkdir -p "$C"
(
	cd "$C"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=test-ca
	openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=127.0.0.1
	printf 'subjectAltName=IP:127.0.0.1\n' >srv.ext
	openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt -days 2 -extfile srv.ext
	openssl req -newkey rsa:2048 -nodes -keyout cli.key -out cli.csr -subj /CN=node-1
	openssl x509 -req -in cli.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out cli.crt -days 2
) >"$WORK/pki.log" 2>&1
ok "certificates made" test -s "$C/cli.crt"
echo "s3cret-token" >"$WORK/token"
echo "wrong-token" >"$WORK/token.bad"
printf 'pa:ss word\n' >"$WORK/pass"

# receiver NAME ARGS...: a receiver in $WORK/NAME; its port in $RP.
receiver() {
	d=$WORK/$1
	shift
	mkdir -p "$d"
	RP=$(free_port)
	$PY "$HELP/rw_receiver.py" --port "$RP" --dir "$d" "$@" >"$d.out" 2>"$d.err" &
	_pids="$_pids $!"
	wait_for "$T" grep -q ready "$d.out"
}
# push NAME URL ARGS...: three reports through accel-remote-write (exits at the end of input, 3 s to drain).
push() {
	n=$1 url=$2
	shift 2
	for i in 1 2 3; do
		printf '%s\n' "$L"
		sleep 0.2
	done | "$RW" --url "$url" --batch-send-deadline 50ms --drain-timeout 3s --max-backoff 500ms -vv "$@" \
		2>"$WORK/$n.rw.err"
}
taken() { [ -s "$WORK/$1/accepted.jsonl" ]; }

# ---- TLS, client certificate, bearer token, header --------------------------------------------------
receiver tls --tls "$C/srv.crt" "$C/srv.key" --client-ca "$C/ca.crt" --bearer s3cret-token \
	--header "X-Scope-OrgID:tenant-1"
U=https://127.0.0.1:$RP/api/v1/write
push good "$U" --ca-file "$C/ca.crt" --cert-file "$C/cli.crt" --key-file "$C/cli.key" \
	--bearer-token-file "$WORK/token" --header "X-Scope-OrgID: tenant-1"
ok "TLS + client certificate + bearer token + header: samples taken" taken tls
ok "... and no protocol error" test ! -s "$WORK/tls/errors.log"
ok "... the log says all were sent" grep -q "failed 0, retried 0" "$WORK/good.rw.err"

mv "$WORK/tls/accepted.jsonl" "$WORK/tls/accepted.before"
push nocert "$U" --ca-file "$C/ca.crt" --bearer-token-file "$WORK/token" --header "X-Scope-OrgID: tenant-1"
ok "without the client certificate nothing is taken" sh -c "! test -s '$WORK/tls/accepted.jsonl'"
ok "... the sink retried (a network error)" grep -q "retrying in" "$WORK/nocert.rw.err"
ok "... and says at exit what it could not deliver" grep -q "not delivered at exit" "$WORK/nocert.rw.err"

push noca "$U" --cert-file "$C/cli.crt" --key-file "$C/cli.key" --bearer-token-file "$WORK/token" \
	--header "X-Scope-OrgID: tenant-1"
ok "without --ca-file the receiver's certificate is not trusted: nothing taken" \
	sh -c "! test -s '$WORK/tls/accepted.jsonl'"
ok "... the error names the certificate" grep -qi "certificate" "$WORK/noca.rw.err"

push badtoken "$U" --ca-file "$C/ca.crt" --cert-file "$C/cli.crt" --key-file "$C/cli.key" \
	--bearer-token-file "$WORK/token.bad" --header "X-Scope-OrgID: tenant-1"
ok "a wrong token: HTTP 401, dropped (not retried) and logged" grep -q "refused a request of .* HTTP 401" \
	"$WORK/badtoken.rw.err"
ok "... counted as failed" grep -Eq "failed [1-9]" "$WORK/badtoken.rw.err"

push nohdr "$U" --ca-file "$C/ca.crt" --cert-file "$C/cli.crt" --key-file "$C/cli.key" \
	--bearer-token-file "$WORK/token"
ok "without the tenant header: 403, dropped" grep -q "HTTP 403" "$WORK/nohdr.rw.err"

# ---- basic auth over plain HTTP -----------------------------------------------------------------------
receiver basic --basic "node-1:pa:ss word"
push basic "http://127.0.0.1:$RP/api/v1/write" --basic-auth-user node-1 --basic-auth-password-file "$WORK/pass"
ok "basic auth: samples taken" taken basic
push basicbad "http://127.0.0.1:$RP/api/v1/write"
ok "basic auth missing: 401" grep -q "HTTP 401" "$WORK/basicbad.rw.err"

# ---- option errors ---------------------------------------------------------------------------------------
rc=0
"$RW" --url "$U" --cert-file "$C/cli.crt" </dev/null 2>"$WORK/e1" || rc=$?
is "$rc" 2 "--cert-file without --key-file: usage error (2)"
rc=0
"$RW" --url "$U" --header "no colon" </dev/null 2>"$WORK/e2" || rc=$?
is "$rc" 3 "a --header without a colon: configuration error (3)"
rc=0
"$RW" --url "$U" --bearer-token-file "$WORK/missing" </dev/null 2>"$WORK/e3" || rc=$?
is "$rc" 3 "a missing token file: configuration error (3)"
ok "... named in the message" grep -q "missing" "$WORK/e3"
rc=0
"$RW" --url "ftp://x/" </dev/null 2>"$WORK/e4" || rc=$?
is "$rc" 2 "a URL that is not http(s): usage error (2)"
rc=0
"$RW" </dev/null 2>"$WORK/e5" || rc=$?
is "$rc" 2 "no --url: usage error (2)"
done_testing
