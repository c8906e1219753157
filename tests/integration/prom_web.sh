#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-prom --web.config.file end to end: certificates made here with the
# openssl CLI, requests made with curl. HTTPS accepted and plain HTTP
# refused; min_version honoured; basic auth accepted and refused (401 with
# WWW-Authenticate: Basic); mutual TLS refused without a client certificate
# and with one from an impostor CA of the same name, accepted with a good
# one; a bad web config stops accel-prom at start with "file:line:col: ..."
# and exit code 3, without quoting a secret.
#
# Skips (TAP "ok 1 # skip") while bin/accel-prom is not built, or without
# openssl or curl.
. "$(dirname "$0")/lib.sh"

skip_all() {
	echo "ok 1 # skip $*"
	echo "1..1"
	exit 0
}

[ -x "$BIN/accel-prom" ] || skip_all "$BIN/accel-prom is not built"
command -v openssl >/dev/null 2>&1 || skip_all "needs the openssl CLI"
command -v curl >/dev/null 2>&1 || skip_all "needs curl"

# `htpasswd -nbBC 10 alice scrape-me-7` (as in tests/unit/test_prom_web.c).
ALICE_HASH='$2y$10$hdZ9a9bi3eNTqld0Y2oJUOiRJCH/tYL74apJXq.HWf8lB2BYnopxG'
ALICE_PASS='scrape-me-7'

# ---- certificates ----------------------------------------------------------
cd "$WORK"
newkey() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
newca() { # key pem
	newkey "$1"
	openssl req -x509 -new -key "$1" -sha256 -days 2 -subj "/CN=accel-prom test CA" \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" -out "$2"
}
newcert() { # name ca-name eku san
	newkey "$1.key"
	openssl req -new -key "$1.key" -subj "/CN=$1" -out "$1.csr"
	printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=%s\nsubjectAltName=%s\n' "$3" "$4" >"$1.ext"
	openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 2 -sha256 \
		-extfile "$1.ext" -out "$1.pem" 2>/dev/null
}
newca ca.key ca.pem
newca impostor.key impostor.pem # same subject as ca.pem, another key
newcert server ca serverAuth "DNS:localhost,IP:127.0.0.1"
newcert client ca clientAuth "DNS:prometheus.example"
newcert rogue impostor clientAuth "DNS:prometheus.example"
ok "openssl made the certificates" test -s server.pem -a -s client.pem -a -s rogue.pem

# ---- web configs (file names relative to the config, as exporter-toolkit) --
cat >tls.yml <<'EOF'
tls_server_config:
  cert_file: server.pem
  key_file: server.key
  min_version: TLS13
EOF
cat >auth.yml <<EOF
tls_server_config:
  cert_file: server.pem
  key_file: server.key
basic_auth_users:
  alice: $ALICE_HASH
EOF
cat >mtls.yml <<'EOF'
tls_server_config:
  cert_file: server.pem
  key_file: server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.pem
EOF
cat >bad-auth-type.yml <<'EOF'
tls_server_config:
  cert_file: server.pem
  key_file: server.key
  client_auth_type: RequireAndVerifyClientCerts
EOF
cat >bad-hash.yml <<'EOF'
basic_auth_users:
  alice: $2y$10$SECRETSECRETSECRET
EOF
cat >bad-key.yml <<'EOF'
tls_server_config:
  cert_file: server.pem
  key_file: client.key
EOF

# ---- helpers ---------------------------------------------------------------
mkfifo in
exec 3<>in # accel-prom's stdin: open, never a line, never EOF

PORT=
PID=
start() { # config
	PORT=$(free_port)
	# The redirect must be on the program itself: a command run with & ignores one made on the call to spawn.
	spawn PID sh -c 'exec "$@" <in 2>>prom.log' sh "$BIN/accel-prom" --listen-address "127.0.0.1:$PORT" \
		--web.config.file "$WORK/$1"
	# Any HTTPS answer (401 and 403 included) means it listens.
	if ! wait_for $((10 * SLOW)) curl -sk -o /dev/null "https://127.0.0.1:$PORT/"; then
		diag "accel-prom did not come up with $1:"
		sed 's/^/#   /' "$WORK/prom.log" | tail -20
	fi
}
stop() {
	kill "$PID" 2>/dev/null || true
	wait "$PID" 2>/dev/null || true
}
# code PATH [curl options]: the HTTP status over HTTPS, 000 when no answer came.
code() {
	p=$1
	shift
	curl -s -o /dev/null -w '%{http_code}' --max-time $((10 * SLOW)) --cacert ca.pem \
		--resolve "localhost:$PORT:127.0.0.1" "$@" "https://localhost:$PORT$p" || true
}

# ---- TLS -------------------------------------------------------------------
start tls.yml
is "$(code /metrics)" 200 "https /metrics: 200"
is "$(code /health)" 503 "https /health: 503 until the first report (it answers over TLS)"
is "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$PORT/metrics" || true)" 000 \
	"plain http to the TLS port: no HTTP answer"
is "$(code /metrics --tls-max 1.2)" 000 "min_version TLS13: a TLS 1.2 client is refused"
stop

# ---- basic auth ------------------------------------------------------------
start auth.yml
is "$(code /metrics -u "alice:$ALICE_PASS")" 200 "basic auth: alice with her password: 200"
is "$(code /metrics -u "alice:$ALICE_PASS")" 200 "basic auth: again (cached): 200"
is "$(code /metrics)" 401 "basic auth: no credentials: 401"
is "$(code /metrics -u alice:wrong)" 401 "basic auth: wrong password: 401"
is "$(code /metrics -u "mallory:$ALICE_PASS")" 401 "basic auth: unknown user: 401"
curl -si --max-time 10 --cacert ca.pem --resolve "localhost:$PORT:127.0.0.1" "https://localhost:$PORT/metrics" \
	>headers.txt || true
ok "401 carries WWW-Authenticate: Basic" grep -qi '^WWW-Authenticate: Basic' headers.txt
stop

# ---- mutual TLS ------------------------------------------------------------
start mtls.yml
c=$(code /metrics)
ok "mTLS: no client certificate: refused ($c)" test "$c" != 200
c=$(code /metrics --cert rogue.pem --key rogue.key)
ok "mTLS: certificate from an impostor CA: refused ($c)" test "$c" != 200
c=$(code /metrics --cert server.pem --key server.key)
ok "mTLS: certificate without clientAuth usage: refused ($c)" test "$c" != 200
is "$(code /metrics --cert client.pem --key client.key)" 200 "mTLS: the client certificate: 200"
stop

# ---- bad configs stop accel-prom at start ----------------------------------
bad() { # config expected-exit-code expected-message-fragment name
	rc=0
	timeout $((10 * SLOW)) "$BIN/accel-prom" --listen-address "127.0.0.1:$(free_port)" \
		--web.config.file "$WORK/$1" </dev/null >/dev/null 2>"$WORK/bad.err" || rc=$?
	is "$rc" "$2" "$4: exit code"
	ok "$4: message" grep -qF "$3" "$WORK/bad.err"
}
bad bad-auth-type.yml 3 "$WORK/bad-auth-type.yml:4:21: tls_server_config.client_auth_type: unknown client_auth_type" \
	"unknown client_auth_type"
bad bad-key.yml 3 "$WORK/bad-key.yml:3:13: tls_server_config.key_file: the private key does not match the certificate" \
	"key of another certificate"
bad bad-hash.yml 3 "$WORK/bad-hash.yml:2:10: basic_auth_users.alice: not a bcrypt hash" "not a bcrypt hash"
ok "the refused hash is not quoted" sh -c "! grep -q SECRET '$WORK/bad.err'"
bad nosuch.yml 3 "$WORK/nosuch.yml: No such file or directory" "missing web config"
# A FIFO where a file belongs: refused at once and named (it used to hang accel-prom at start).
mkfifo fifo.pem
printf 'tls_server_config:\n  cert_file: fifo.pem\n  key_file: server.key\n' >fifo-cert.yml
bad fifo-cert.yml 3 "$WORK/fifo-cert.yml:2:14: tls_server_config.cert_file: cannot read $WORK/fifo.pem: a FIFO, not a regular file" \
	"cert_file is a FIFO"
bad fifo.pem 3 "$WORK/fifo.pem: a FIFO, not a regular file" "the web config is a FIFO"
ok "no secret in accel-prom's log" sh -c "! grep -qE 'SECRET|$ALICE_PASS|PRIVATE KEY' '$WORK/prom.log'"

exec 3>&-
done_testing
