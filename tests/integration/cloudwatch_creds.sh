#!/bin/sh
# SPDX-License-Identifier: MIT
# accel-cloudwatch's credentials chain, each source against the botocore
# receiver: environment, shared credentials file with profiles, and an EC2
# instance role through the fake IMDSv2 (tests/helpers/fake_imds.py) whose
# keys expire every two seconds and must be refreshed; ExpiredToken forces
# a refresh; a missing credential is a startup error naming the sources.
. "$(dirname "$0")/lib.sh"

CW=$BIN/accel-cloudwatch
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_REGION
unset AWS_EC2_METADATA_SERVICE_ENDPOINT AWS_SHARED_CREDENTIALS_FILE AWS_CONTAINER_CREDENTIALS_RELATIVE_URI
unset AWS_CONTAINER_CREDENTIALS_FULL_URI AWS_CONTAINER_AUTHORIZATION_TOKEN AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE
export AWS_EC2_METADATA_DISABLED=true AWS_REGION=us-west-2 HOME=$WORK/home
mkdir -p "$HOME/.aws"
FAST="--flush-interval 100ms --backoff-min 20ms --backoff-max 200ms --drain-timeout 10s"

start_rx() { # NAME ARGS...
	name=$1
	shift
	rm -f "$WORK/$name.port"
	spawn RX_PID "$PY" "$HELP/cw_receiver.py" --port-file "$WORK/$name.port" --record "$WORK/$name.rec" \
		--log "$WORK/$name.log" "$@"
	wait_for 20 test -s "$WORK/$name.port" || echo "# receiver $name did not start"
	RX_PORT=$(cat "$WORK/$name.port")
}

"$PY" "$HELP/cw_gen.py" --count 20 --age-s 10 --expected "$WORK/g.exp" >"$WORK/g.jsonl"

start_rx rx --cred AKIDDEFAULT00000000:defaultSecret0000000000000000000000000 \
	--cred AKIDPROD000000000000:prodSecret000000000000000000000000000000 \
	--cred ASIAFILETOKEN000000:fileSecret000000000000000000000000000000:fileSessionToken+/= \
	--cred AKIDENV0000000000000:envSecret0000000000000000000000000000000 \
	--cred ASIACONTAINER000000:containerSecret0000000000000000000000000:containerSessionToken/+= --imds-creds
URL=http://127.0.0.1:$RX_PORT
last_key() { tail -1 "$WORK/rx.log" | "$PY" -c 'import json,sys; print(json.loads(sys.stdin.read()).get("key"))'; }

# ---- the shared credentials file ---------------------------------------------
cat >"$HOME/.aws/credentials" <<'EOF'
# comment
[default]
aws_access_key_id = AKIDDEFAULT00000000
aws_secret_access_key=defaultSecret0000000000000000000000000

; another comment
[prod]
AWS_ACCESS_KEY_ID =   AKIDPROD000000000000
aws_secret_access_key = prodSecret000000000000000000000000000000

[withtoken]
aws_access_key_id = ASIAFILETOKEN000000
aws_secret_access_key = fileSecret000000000000000000000000000000
aws_session_token = fileSessionToken+/=
EOF
rc=0
"$CW" --namespace T --endpoint-url "$URL" $FAST -v2 <"$WORK/g.jsonl" 2>"$WORK/c1.err" || rc=$?
is "$rc" 0 "~/.aws/credentials [default]: exit 0"
is "$(last_key)" AKIDDEFAULT00000000 "signed with the default profile's key"
ok "the source is named, the key only by its end" grep -q "credentials from $HOME/.aws/credentials \[default\] (key ...0000)" "$WORK/c1.err"

rc=0
AWS_PROFILE=prod "$CW" --namespace T --endpoint-url "$URL" $FAST <"$WORK/g.jsonl" 2>"$WORK/c2.err" || rc=$?
is "$rc" 0 "AWS_PROFILE=prod: exit 0"
is "$(last_key)" AKIDPROD000000000000 "signed with the prod key (case-insensitive keys, spaces)"

cp "$HOME/.aws/credentials" "$WORK/creds-elsewhere"
rc=0
AWS_SHARED_CREDENTIALS_FILE=$WORK/creds-elsewhere AWS_PROFILE=withtoken "$CW" --namespace T --endpoint-url "$URL" $FAST \
	<"$WORK/g.jsonl" 2>"$WORK/c3.err" || rc=$?
is "$rc" 0 "AWS_SHARED_CREDENTIALS_FILE with a session token: exit 0"
ok "the token went along" sh -c "tail -1 '$WORK/rx.log' | grep -q '\"key\": \"ASIAFILETOKEN000000\", \"token\": true'"

rc=0
AWS_ACCESS_KEY_ID=AKIDENV0000000000000 AWS_SECRET_ACCESS_KEY=envSecret0000000000000000000000000000000 \
	"$CW" --namespace T --endpoint-url "$URL" $FAST <"$WORK/g.jsonl" 2>/dev/null || rc=$?
is "$rc" 0 "environment and file both set: exit 0"
is "$(last_key)" AKIDENV0000000000000 "the environment comes first"

rc=0
AWS_PROFILE=nosuch "$CW" --namespace T --endpoint-url "$URL" </dev/null 2>"$WORK/c4.err" || rc=$?
is "$rc" 3 "a named profile that is not there: configuration error"
ok "naming the file and profile" grep -q "$HOME/.aws/credentials: no profile \[nosuch\]" "$WORK/c4.err"

# A directory or a FIFO where the file belongs is named as what it is, and a FIFO does not hang the program.
mkdir "$WORK/credsdir"
rc=0
AWS_SHARED_CREDENTIALS_FILE=$WORK/credsdir "$CW" --namespace T --endpoint-url "$URL" </dev/null 2>"$WORK/c6.err" || rc=$?
is "$rc" 3 "a directory as AWS_SHARED_CREDENTIALS_FILE: configuration error"
ok "the message says it is a directory" \
	grep -q "shared credentials file $WORK/credsdir is a directory, not a regular file" "$WORK/c6.err"
ok "and not \"no profile\"" sh -c '! grep -q "no profile" "$1"' sh "$WORK/c6.err"
mkfifo "$WORK/credsfifo"
rc=0
AWS_SHARED_CREDENTIALS_FILE=$WORK/credsfifo timeout 10 "$CW" --namespace T --endpoint-url "$URL" </dev/null \
	2>"$WORK/c7.err" || rc=$?
is "$rc" 3 "a FIFO as AWS_SHARED_CREDENTIALS_FILE: configuration error at once, no hang"
ok "the message says it is a FIFO" \
	grep -q "shared credentials file $WORK/credsfifo is a FIFO, not a regular file" "$WORK/c7.err"
rm "$HOME/.aws/credentials"
mkdir "$HOME/.aws/credentials"
rc=0
"$CW" --namespace T --endpoint-url "$URL" </dev/null 2>"$WORK/c8.err" || rc=$?
is "$rc" 3 "~/.aws/credentials a directory, nothing else: no credentials"
ok "the sources tried say it is a directory" \
	grep -q "shared credentials file $HOME/.aws/credentials is a directory, not a regular file;" "$WORK/c8.err"
rmdir "$HOME/.aws/credentials"

rc=0
"$CW" --namespace T --endpoint-url "$URL" </dev/null 2>"$WORK/c5.err" || rc=$?
is "$rc" 3 "no credentials anywhere: configuration error"
ok "the message names every source tried" grep -q \
	"no AWS credentials found; tried environment: AWS_ACCESS_KEY_ID not set; shared credentials file .*/credentials: No such file or directory; container credentials: .* not set; EC2 instance role: AWS_EC2_METADATA_DISABLED=true" \
	"$WORK/c5.err"

# ---- ECS / EKS Pod Identity container credentials -------------------------------
cat >"$WORK/container.py" <<'PYEOF'
import http.server, json, os, sys, datetime
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        with open(sys.argv[2], "a") as f:
            f.write("%s %s\n" % (self.path, self.headers.get("Authorization")))
        if self.path != "/v2/credentials/abc" or self.headers.get("Authorization") != "pod-identity-token":
            self.send_response(401); self.send_header("Content-Length", "0"); self.end_headers(); return
        exp = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        body = json.dumps({"AccessKeyId": "ASIACONTAINER000000", "SecretAccessKey": "containerSecret0000000000000000000000000",
                           "Token": "containerSessionToken/+=", "Expiration": exp, "RoleArn": "arn:aws:iam::1:role/x"}).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write("%d\n" % s.server_address[1]); os.replace(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
PYEOF
spawn CT_PID "$PY" "$WORK/container.py" "$WORK/ct.port" "$WORK/ct.log"
wait_for 10 test -s "$WORK/ct.port" || echo "# container endpoint did not start"
CT_URL=http://127.0.0.1:$(cat "$WORK/ct.port")/v2/credentials/abc
printf 'pod-identity-token\n' >"$WORK/ct.token"
rc=0
AWS_CONTAINER_CREDENTIALS_FULL_URI=$CT_URL AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE=$WORK/ct.token \
	"$CW" --namespace T --endpoint-url "$URL" $FAST -v2 <"$WORK/g.jsonl" 2>"$WORK/ct.err" || rc=$?
is "$rc" 0 "container credentials (EKS Pod Identity style, token file): exit 0"
ok "signed with the container's key and token" sh -c \
	"tail -1 '$WORK/rx.log' | grep -q '\"key\": \"ASIACONTAINER000000\", \"token\": true'"
ok "the endpoint saw the Authorization token" grep -q "^/v2/credentials/abc pod-identity-token$" "$WORK/ct.log"
rc=0
AWS_CONTAINER_CREDENTIALS_FULL_URI=$CT_URL AWS_CONTAINER_AUTHORIZATION_TOKEN=wrongtoken \
	"$CW" --namespace T --endpoint-url "$URL" </dev/null 2>"$WORK/ct2.err" || rc=$?
is "$rc" 3 "a refused container token: configuration error"
ok "saying so, without the token" sh -c "grep -q 'container credentials: http://127.0.0.1:.*: HTTP 401' '$WORK/ct2.err' &&
	! grep -q wrongtoken '$WORK/ct2.err'"
rc=0
AWS_CONTAINER_CREDENTIALS_FULL_URI=http://198.51.100.7/creds "$CW" --namespace T --endpoint-url "$URL" </dev/null \
	2>"$WORK/ct3.err" || rc=$?
is "$rc" 3 "a plain-http full URI off the allowed hosts is refused before any request"
ok "naming it" grep -q "neither https nor a loopback" "$WORK/ct3.err"

# ---- the EC2 instance role (IMDSv2), with keys that expire every 2 s ----------------
unset AWS_EC2_METADATA_DISABLED
spawn IMDS_PID "$PY" "$HELP/fake_imds.py" --port-file "$WORK/imds.port" --log "$WORK/imds.log" --cred-ttl 2
wait_for 20 test -s "$WORK/imds.port" || echo "# fake IMDS did not start"
export AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:$(cat "$WORK/imds.port")
: >"$WORK/rx.rec"
rc=0
"$PY" "$HELP/cw_gen.py" --count 100 --rate 20 --expected "$WORK/i.exp" |
	"$CW" --namespace T --endpoint-url "$URL" $FAST --flush-interval 300ms -v2 2>"$WORK/i.err" || rc=$?
is "$rc" 0 "instance role credentials over 5 s: exit 0"
ok "everything delivered" "$PY" "$HELP/cw_compare.py" "$WORK/i.exp" "$WORK/rx.rec"
ok "IMDSv2: a token first, then the role, then its credentials" "$PY" -c '
import sys
log = [l.split() for l in open(sys.argv[1])]
assert log[0][:2] == ["PUT", "/latest/api/token"] and log[0][2] == "200", log[0]
assert log[1][1] == "/latest/meta-data/iam/security-credentials/", log[1]
assert log[2][1] == "/latest/meta-data/iam/security-credentials/test-role", log[2]' "$WORK/imds.log"
ok "refreshed before expiry: at least two role keys signed requests" "$PY" -c '
import json, sys
keys = {json.loads(l).get("key") for l in open(sys.argv[1]) if "ASIATESTKEY" in l}
assert len(keys) >= 2, keys' "$WORK/rx.log"
ok "refreshes are logged without secrets" sh -c "grep -q 'refreshed credentials from EC2 instance role test-role' '$WORK/i.err' &&
	! grep -q 'fakeSecretKey\|IQoJb3JpZ2luX2VjEFAKE' '$WORK/i.err'"

# ExpiredToken: refresh at once, then retry.
stop_pid() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
stop_pid "$RX_PID"
start_rx ex --imds-creds --faults expired
n0=$(grep -c security-credentials/test-role "$WORK/imds.log")
rc=0
"$CW" --namespace T --endpoint-url "http://127.0.0.1:$RX_PORT" $FAST <"$WORK/g.jsonl" 2>"$WORK/ex.err" || rc=$?
is "$rc" 0 "403 ExpiredToken: exit 0"
ok "delivered after the retry" "$PY" "$HELP/cw_compare.py" "$WORK/g.exp" "$WORK/ex.rec"
n1=$(grep -c security-credentials/test-role "$WORK/imds.log")
is "$((n1 - n0 >= 2))" 1 "the credentials were fetched again after the 403"

# An IMDS that is not there: a clear error, quickly.
stop_pid "$IMDS_PID"
rc=0
"$CW" --namespace T --endpoint-url "$URL" </dev/null 2>"$WORK/c6.err" || rc=$?
is "$rc" 3 "instance role unreachable and nothing else: configuration error"
ok "naming the metadata endpoint" grep -q "EC2 instance role: token request to $AWS_EC2_METADATA_SERVICE_ENDPOINT" "$WORK/c6.err"

done_testing
