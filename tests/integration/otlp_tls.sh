#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-otlp over TLS to the test peer (Node's TLS, a throwaway CA): with the
# right CA (--ca-file, or OTEL_EXPORTER_OTLP_CERTIFICATE) the export goes
# through; with a CA that did not sign the server's certificate nothing is
# sent and the log says why (a TLS verification failure, retried until the
# drain ends); a server that requires a client certificate refuses one
# without and takes one with it (--cert-file/--key-file, or the
# OTEL_EXPORTER_OTLP_CLIENT_* variables).
. "$(dirname "$0")/lib.sh"
. "$HELP/otlp/test_lib.sh"
otlp_need

cd "$WORK"
ok "a CA and the server's certificate for 127.0.0.1" kubelet_tls
tls_ca other.key other.pem
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out client.key 2>/dev/null
openssl req -new -key client.key -subj "/CN=accel-otlp" -out client.csr 2>/dev/null
printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n' >client.ext
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -sha256 -extfile client.ext \
	-out client.pem 2>/dev/null
ok "a client certificate signed by the CA" test -s client.pem
cd "$TOP"

export_one() { # LOG [ARG...]: one report to https://127.0.0.1:$RP, a short drain
	_log=$1
	shift
	timeout $((60 * SLOW)) "$BIN/accel-otlp" --endpoint "https://127.0.0.1:$RP" --drain-timeout 3s \
		--min-backoff 100ms --max-backoff 500ms "$@" <"$WORK/one.json" 2>"$WORK/$_log"
}

otlp_recv tls --tls "$WORK/server.pem" "$WORK/server.key"
ok "the right CA (--ca-file): exit 0" export_one right.log --ca-file "$WORK/ca.pem"
ok "... and the export arrives" test "$(pts "$RDIR" data)" -gt 0
ok "the right CA (OTEL_EXPORTER_OTLP_CERTIFICATE): exit 0" \
	env OTEL_EXPORTER_OTLP_CERTIFICATE="$WORK/ca.pem" timeout $((60 * SLOW)) "$BIN/accel-otlp" --endpoint "https://127.0.0.1:$RP" --drain-timeout 3s <"$WORK/one.json"
is "$(pts "$RDIR" log "len(r)")" 2 "two exports taken"
n=$(pts "$RDIR" log "len(r)")
export_one wrong.log --ca-file "$WORK/other.pem" || true
is "$(pts "$RDIR" log "len(r)")" "$n" "a CA that did not sign the server's certificate: nothing taken"
ok "the log says the certificate could not be verified" \
	grep -Eq 'otlp: https://127\.0\.0\.1:[0-9]+/v1/metrics: TLS: .*(certificate|verify|issuer)' "$WORK/wrong.log"
ok "... and that the requests were not delivered" grep -q 'not delivered at exit' "$WORK/wrong.log"
otlp_stop

otlp_recv mtls --tls "$WORK/server.pem" "$WORK/server.key" --client-ca "$WORK/ca.pem"
export_one nocert.log --ca-file "$WORK/ca.pem" || true
is "$(pts "$RDIR" log "len(r)")" 0 "a server that requires a client certificate: none given, nothing taken"
ok "the log says the TLS handshake failed" grep -Eq 'otlp: .*(TLS|SSL|alert|certificate).*retrying' "$WORK/nocert.log"
ok "with --cert-file and --key-file: exit 0" export_one cert.log --ca-file "$WORK/ca.pem" \
	--cert-file "$WORK/client.pem" --key-file "$WORK/client.key"
is "$(pts "$RDIR" log "[x['status'] for x in r]")" "[200]" "... and the export is taken"
ok "with OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and _CLIENT_KEY: exit 0" \
	env OTEL_EXPORTER_OTLP_CERTIFICATE="$WORK/ca.pem" OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE="$WORK/client.pem" \
	OTEL_EXPORTER_OTLP_CLIENT_KEY="$WORK/client.key" timeout $((60 * SLOW)) "$BIN/accel-otlp" \
	--endpoint "https://127.0.0.1:$RP" --drain-timeout 3s <"$WORK/one.json"
is "$(pts "$RDIR" log "[x['status'] for x in r]")" "[200, 200]" "... taken too"
otlp_stop
done_testing
