#!/bin/sh
# SPDX-License-Identifier: MIT
# Endpoint runtimes that fail: refused, hung, slow, closed
# mid-body, a 10 MB body, HTTP 404, garbage, TLS with the wrong CA, a bad
# bearer token. Each gives its runtime the documented "<URL>: what" error
# (a timeout: "timeout after X s" with the configured timeout, or the
# default, the group's period),
# on the entry and on every due group, while the good endpoints (plain,
# gzip, TLS with a client certificate, a rotated bearer token, basic auth)
# report, and every group's periods stay within 5 % of configured.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED
need "openssl (scripts/install-deps.sh test)" openssl version

# --- certificates: a CA, a server and a client certificate from it, and another CA -----------
cert() { # NAME CN SAN [CA]: NAME.key and NAME.pem, self-signed, or signed by CA
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$WORK/$1.key" \
		-subj "/CN=$2" -out "$WORK/$1.csr" 2>/dev/null
	printf 'basicConstraints=critical,CA:%s\nsubjectAltName=%s\n' "$([ -z "${4:-}" ] && echo TRUE || echo FALSE)" \
		"$3" >"$WORK/$1.ext"
	if [ -z "${4:-}" ]; then
		openssl x509 -req -in "$WORK/$1.csr" -signkey "$WORK/$1.key" -days 2 -extfile "$WORK/$1.ext" \
			-out "$WORK/$1.pem" 2>/dev/null
	else
		openssl x509 -req -in "$WORK/$1.csr" -CA "$WORK/$4.pem" -CAkey "$WORK/$4.key" -CAcreateserial \
			-days 2 -extfile "$WORK/$1.ext" -out "$WORK/$1.pem" 2>/dev/null
	fi
}
cert ca "test CA" DNS:ca.test
cert other "another CA" DNS:other.test
cert server localhost "DNS:localhost,DNS:metrics.test,IP:127.0.0.1" ca
cert client accel-monitor DNS:client.test ca
ok "openssl made the CA, server and client certificates" test -s "$WORK/server.pem" -a -s "$WORK/client.pem"

# --- the servers ----------------------------------------------------------------------------
printf '# TYPE demo_requests counter\ndemo_requests_total{model="m"} 7\n# TYPE demo_up gauge\ndemo_up 1\n' \
	>"$WORK/metrics.txt"
echo token-one >"$WORK/token"
echo wrong-token >"$WORK/badtoken"
echo s3cret >"$WORK/password"
spawn SRV $PY "$HELP/fake_endpoint.py" --file "$WORK/metrics.txt" --port-file "$WORK/http.port" \
	--log "$WORK/http.log" --delay 3 --bearer-file "$WORK/token" --basic-user alice --basic-password-file "$WORK/password"
spawn TLS $PY "$HELP/fake_endpoint.py" --file "$WORK/metrics.txt" --port-file "$WORK/tls.port" \
	--log "$WORK/tls.log" --tls-cert "$WORK/server.pem" --tls-key "$WORK/server.key" --client-ca "$WORK/ca.pem"
ok "the fake endpoints listen" wait_for $((10 * SLOW)) test -s "$WORK/http.port" -a -s "$WORK/tls.port"
H=http://127.0.0.1:$(cat "$WORK/http.port")
S=https://127.0.0.1:$(cat "$WORK/tls.port")
REFUSED=http://127.0.0.1:$(free_port)/metrics

# The process groups: any due group makes a scrape, and execution_stats' fields are tested elsewhere.
G='"metrics": [{"type": "runtime_vcpu_usage"}, {"type": "memory_used"}]'
cat >"$WORK/faults.json" <<EOF
{
  "period": "1s",
  "system_metrics": [ { "type": "vcpu_usage", "period": "500ms" }, { "type": "memory_info", "period": "1s" } ],
  "runtimes": [
    { "address": "$H/metrics", $G },
    { "address": "$H/gzip", $G },
    { "address": "$H/hang", $G },
    { "address": "$H/slow", $G },
    { "address": "$H/midbody", $G },
    { "address": "$H/big", $G },
    { "address": "$H/404", $G },
    { "address": "$H/garbage", $G },
    { "address": "$REFUSED", $G },
    { "address": "$S/metrics", "tls": { "ca_file": "$WORK/other.pem" }, $G },
    { "address": "$S/metrics", "tls": { "ca_file": "$WORK/ca.pem", "cert_file": "$WORK/client.pem",
                                        "key_file": "$WORK/client.key", "server_name": "metrics.test" }, $G },
    { "address": "$H/bearer", "bearer_token_file": "$WORK/token", $G },
    { "address": "$H/bearer", "bearer_token_file": "$WORK/badtoken", $G },
    { "address": "$H/basic", "basic_auth": { "username": "alice", "password_file": "$WORK/password" }, $G },
    { "address": "$H/hang", "timeout": "300ms", $G },
    { "address": "$H/slow", "timeout": "0.7", $G }
  ]
}
EOF
ok "the config is valid" "$MON" -c "$WORK/faults.json" --check-config

# 16 reports: the 500 ms group's due times over 8 s; the token rotates after about 4 s.
N=16
(sleep 4; echo token-two >"$WORK/token.new"; mv "$WORK/token.new" "$WORK/token") &
_pids="$_pids $!"
RC=0
rt timeout -k 5 $((40 * SLOW)) "$MON" -c "$WORK/faults.json" -n $N >"$WORK/out" 2>"$WORK/err" || RC=$?
is "$RC" 0 "-n $N with every fault: exit status 0"
ok "the stream passes check_report.py" $PY "$HELP/check_report.py" --config "$WORK/faults.json" --count $N "$WORK/out"

cat >"$WORK/check.py" <<'EOF'
import json, re, sys

L = [json.loads(s) for s in open(sys.argv[1], encoding="utf-8")]
H, S, REFUSED = sys.argv[2:5]
out = []


def check(name, cond, *detail):
    out.append((name, bool(cond), [str(d) for d in detail]))


def ents(i):
    return [e for l in L for e in l["runtime_data"] if e["runtime_index"] == i]


within = lambda x, want: abs(x - want) <= 0.05 * want
for g, want in (("vcpu_usage", 0.5), ("memory_info", 1.0)):
    got = [l["system_data"][g]["period"] for l in L if g in l["system_data"]]
    check("%s: every period within 5 %% of %g s" % (g, want), got and all(within(p, want) for p in got), got)
rper = [e["report"][g]["period"] for l in L for e in l["runtime_data"] for g in e["report"]]
check("runtime groups: every period within 5 % of 1 s", rper and all(within(p, 1.0) for p in rper),
      [p for p in rper if not within(p, 1.0)][:10])

faults = [(2, H + "/hang", r"timeout after 1 s \(no answer\)"),
          (3, H + "/slow", r"timeout after 1 s \(no answer\)"),
          (14, H + "/hang", r"timeout after 0\.3 s \(no answer\)"),
          (15, H + "/slow", r"timeout after 0\.7 s \(no answer\)"),
          (4, H + "/midbody", r"connection closed mid-body \(\d+ bytes received\)"),
          (5, H + "/big", r"body over 4194304 bytes \(max_body_bytes\)"),
          (6, H + "/404", r"HTTP 404"),
          (7, H + "/garbage", r"bad exposition: line \d+: .+"),
          (8, REFUSED, r"cannot connect: Connection refused"),
          (9, S + "/metrics", r"TLS: .+"),
          (12, H + "/bearer", r"HTTP 401")]
for i, url, what in faults:
    es = ents(i)
    bad = [e["error"] for e in es if not re.fullmatch(re.escape(url) + ": " + what, e["error"])]
    check("runtime %d (%s): each entry's error is \"<URL>: %s\"" % (i, url, what), es and not bad, bad[:2])
    gbad = [(g, x["error"]) for e in es for g, x in e["report"].items() if x["error"] != e["error"]]
    check("runtime %d: every due group carries the entry's error" % i, es and not gbad, gbad[:2])
    check("runtime %d: %d entries (one per 1 s report)" % (i, len(es)), len(es) >= 7, len(es))
bare = [e["error"] for l in L for e in l["runtime_data"] if "no answer within" in e["error"]]
check("no entry has the monitor's bare \"no answer within\" (the URL is always there)", not bare, bare[:2])
for i, what in ((0, "plain"), (1, "gzip"), (10, "TLS, client certificate, server_name"),
                (11, "bearer token, rotated"), (13, "basic auth")):
    es = ents(i)
    bad = [e["error"] for e in es if e["error"] != ""]
    check("runtime %d (%s): no error in %d entries" % (i, what, len(es)), len(es) >= 7 and not bad, bad[:2])
for name, good, detail in out:
    print(("ok" if good else "not ok") + " " + name)
    if not good:
        for d in detail:
            print("#   " + d[:1500])
EOF
$PY "$WORK/check.py" "$WORK/out" "$H" "$S" "$REFUSED" >"$WORK/check.out" 2>&1 || true
while IFS= read -r line; do
	case $line in
	"ok "*) _result 0 "${line#ok }" ;;
	"not ok "*) _result 1 "${line#not ok }" ;;
	*) echo "$line" ;;
	esac
done <"$WORK/check.out"
grep -q '^ok \|^not ok ' "$WORK/check.out" || { _result 1 "the report can be analysed"; sed 's/^/#   /' "$WORK/check.out" | head; }

ok "gzip: the scrape asked for gzip" grep -q '^/gzip gzip=1 ' "$WORK/http.log"
ok "bearer: the first token was sent" grep -q '^/bearer .*auth=ok' "$WORK/http.log"
ok "bearer: the rotated token was sent after the rotation (read at each scrape)" \
	sh -c "tail -n 20 '$WORK/http.log' | grep -q '^/bearer .*auth=ok'"
ok "basic auth: the server took it" grep -q '^/basic .*auth=ok' "$WORK/http.log"
ok "one connection per endpoint: /metrics came over one kept-alive connection" \
	sh -c "test \$(grep '^/metrics ' '$WORK/http.log' | awk '{print \$4}' | sort -u | wc -l) -eq 1"
ok "stderr holds no sanitizer report" sh -c "! grep -q 'Sanitizer' '$WORK/err'"
done_testing
