#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-otlp end to end: ten reports of the fixture tree exported to the
# test peer (tests/helpers/otlp/receiver.mjs, which decodes each request with
# OpenTelemetry's own generated types, and checks OTLP/JSON against its
# rules), in each protocol and compression: every report's point of a
# series arrives once, the content type and encoding say what was sent, the
# receiver finds nothing wrong, and the exporter's accel_otlp_* health
# points ride along. Then the configuration end to end: the OTEL_*
# variables and the flags over them (endpoint path rules and precedence,
# headers percent-decoded, resource attributes and service name), and bad
# values refused with exit 3 and a message naming the variable or flag.
. "$(dirname "$0")/lib.sh"
. "$HELP/otlp/test_lib.sh"
otlp_need

otlp_gen 1 10 >"$WORK/ten.jsonl"
N_PER_REPORT=$(
	otlp_recv count >/dev/null
	"$BIN/accel-otlp" --endpoint "http://127.0.0.1:$RP" <"$WORK/one.json" 2>/dev/null
	pts "$RDIR" data
	otlp_stop
)
diag "one report: $N_PER_REPORT points"

for proto in http/protobuf http/json; do
	for comp in gzip none; do
		name=$(echo "$proto-$comp" | tr / _)
		otlp_recv "$name"
		ok "$proto $comp: accel-otlp exits 0 at the end of the input" \
			"$BIN/accel-otlp" --endpoint "http://127.0.0.1:$RP" --protocol "$proto" --compression "$comp" \
			--max-points-per-send 200 <"$WORK/ten.jsonl"
		is "$(pts "$RDIR" times $S_POWER)" "10 distinct, 0 duplicates" "$proto $comp: every report's point once"
		ok "$proto $comp: the receiver decoded every request (no protocol error)" no_proto_errors "$RDIR"
		want_ct=application/x-protobuf
		[ "$proto" = http/json ] && want_ct=application/json
		want_ce=gzip
		[ "$comp" = none ] && want_ce=
		is "$(pts "$RDIR" log "sorted({(x['contentType'], x['contentEncoding']) for x in r})")" \
			"[('$want_ct', '$want_ce')]" "$proto $comp: Content-Type and Content-Encoding"
		ok "$proto $comp: requests of at most 200 points plus the health ones" \
			test "$(pts "$RDIR" log "max(x['points'] for x in r)")" -le 211
		ok "$proto $comp: more than one request (the batch was cut)" test "$(pts "$RDIR" log "len(r)")" -gt 1
		ok "$proto $comp: the health points arrive" test "$(pts "$RDIR" count accel_otlp_input_lines)" -ge 1
		is "$(pts "$RDIR" log "sorted({x['headers'].get('user-agent', '')[:11] for x in r})")" "['accel-otlp/']" \
			"$proto $comp: User-Agent accel-otlp/VERSION"
		otlp_stop
	done
done
otlp_recv total
"$BIN/accel-otlp" --endpoint "http://127.0.0.1:$RP" <"$WORK/ten.jsonl" 2>/dev/null || true
is "$(pts "$RDIR" data)" $((10 * N_PER_REPORT)) "all points of ten reports arrive: ten times one report's"
otlp_stop

# ---- the configuration, end to end ----------------------------------------------------------------
otlp_recv env --path /custom
DEAD=$(free_port)
ok "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is used as is and wins over OTEL_EXPORTER_OTLP_ENDPOINT" \
	env OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$DEAD" \
	OTEL_EXPORTER_OTLP_METRICS_ENDPOINT="http://127.0.0.1:$RP/custom" \
	OTEL_EXPORTER_OTLP_HEADERS="x-api-key=s%20k%2C1 , x-tenant=env" \
	OTEL_RESOURCE_ATTRIBUTES="deployment.environment=prod,team=a%20b" OTEL_SERVICE_NAME=gpu-fleet \
	"$BIN/accel-otlp" --drain-timeout 5s --header "X-Tenant: flag" --resource-attribute team=ml <"$WORK/one.json"
is "$(pts "$RDIR" log "[x['path'] for x in r]")" "['/custom']" "the request went to /custom"
is "$(pts "$RDIR" log "r[0]['headers'].get('x-api-key')")" "s k,1" "OTEL_EXPORTER_OTLP_HEADERS percent-decoded"
is "$(pts "$RDIR" log "r[0]['headers'].get('x-tenant')")" "flag" "--header wins over the variable's header"
is "$(pts "$RDIR" resource deployment.environment)" prod "OTEL_RESOURCE_ATTRIBUTES in the resource"
is "$(pts "$RDIR" resource team)" ml "--resource-attribute wins over OTEL_RESOURCE_ATTRIBUTES"
is "$(pts "$RDIR" resource service.name)" gpu-fleet "OTEL_SERVICE_NAME is service.name"
otlp_stop

otlp_recv base
ok "--endpoint (a base URL) wins over the variables, and gets /v1/metrics" \
	env OTEL_EXPORTER_OTLP_METRICS_ENDPOINT="http://127.0.0.1:$DEAD/x" OTEL_SERVICE_NAME=from-env \
	"$BIN/accel-otlp" --drain-timeout 5s --endpoint "http://127.0.0.1:$RP/" --service-name from-flag \
	<"$WORK/one.json"
is "$(pts "$RDIR" log "[x['path'] for x in r]")" "['/v1/metrics']" "base URL + /v1/metrics (one slash)"
is "$(pts "$RDIR" resource service.name)" from-flag "--service-name wins over OTEL_SERVICE_NAME"
otlp_stop

otlp_recv gen_env
ok "OTEL_EXPORTER_OTLP_ENDPOINT alone, with the protocol and compression from variables" \
	env OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$RP" OTEL_EXPORTER_OTLP_PROTOCOL=http/json \
	OTEL_EXPORTER_OTLP_METRICS_COMPRESSION=none OTEL_EXPORTER_OTLP_COMPRESSION=gzip \
	"$BIN/accel-otlp" --drain-timeout 5s <"$WORK/one.json"
is "$(pts "$RDIR" log "[(x['path'], x['contentType'], x['contentEncoding']) for x in r]")" \
	"[('/v1/metrics', 'application/json', '')]" "the variables' endpoint, JSON, METRICS_COMPRESSION=none winning"
ok "... and the JSON passed the receiver's OTLP/JSON rules" no_proto_errors "$RDIR"
otlp_stop

# bad values: exit 3, the message names the variable or flag
bad() { # NAME EXPECTED-IN-MESSAGE ENV-OR-FLAGS...
	_name=$1
	_say=$2
	shift 2
	_rc=0
	env "$@" </dev/null >/dev/null 2>"$WORK/bad.err" || _rc=$?
	is "$_rc" 3 "$_name: exit 3 (configuration)"
	ok "$_name: the message says \"$_say\"" grep -qF -- "$_say" "$WORK/bad.err"
}
bad "grpc" "OTEL_EXPORTER_OTLP_PROTOCOL: grpc is not supported" OTEL_EXPORTER_OTLP_PROTOCOL=grpc "$BIN/accel-otlp"
bad "--protocol" "--protocol: \"http/xml\": expected http/protobuf or http/json" "$BIN/accel-otlp" --protocol http/xml
bad "a timeout in seconds" "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: \"10s\": expected milliseconds" \
	OTEL_EXPORTER_OTLP_METRICS_TIMEOUT=10s "$BIN/accel-otlp"
bad "an endpoint without a scheme" "OTEL_EXPORTER_OTLP_ENDPOINT: \"collector:4318\": expected an http:// or https:// URL" \
	OTEL_EXPORTER_OTLP_ENDPOINT=collector:4318 "$BIN/accel-otlp"
bad "a header without =" "OTEL_EXPORTER_OTLP_HEADERS: \"token\" at byte 0: expected key=value" \
	OTEL_EXPORTER_OTLP_HEADERS=token "$BIN/accel-otlp"
bad "a CR LF in a header" "OTEL_EXPORTER_OTLP_HEADERS: header \"k\": a control character" \
	OTEL_EXPORTER_OTLP_HEADERS=k=a%0D%0AX-Evil:1 "$BIN/accel-otlp"
bad "a missing CA file" "OTEL_EXPORTER_OTLP_CERTIFICATE: $WORK/none.pem: No such file" \
	OTEL_EXPORTER_OTLP_CERTIFICATE="$WORK/none.pem" "$BIN/accel-otlp"
bad "bad percent-encoding" "OTEL_RESOURCE_ATTRIBUTES: the value of \"a\" at byte 2" \
	OTEL_RESOURCE_ATTRIBUTES=a=%zz "$BIN/accel-otlp"
done_testing
