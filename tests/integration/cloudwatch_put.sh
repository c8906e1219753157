#!/bin/sh
# SPDX-License-Identifier: MIT
# accel-cloudwatch on the wire: --dry-run bodies compared byte for byte with
# golden files and with botocore's own serializer; PutMetricData to the
# botocore-checking receiver (tests/helpers/cw_receiver.py) signed with
# environment credentials, with and without a session token, gzipped or
# not; every value the receiver accepted compared with the input stream;
# batching limits, bad values and timestamps; secrets never printed.
. "$(dirname "$0")/lib.sh"

CW=$BIN/accel-cloudwatch
GOLD=$FIX/cloudwatch
# Never reach a real metadata service or pick up real credentials.
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_REGION AWS_DEFAULT_REGION
export AWS_EC2_METADATA_DISABLED=true AWS_SHARED_CREDENTIALS_FILE=$WORK/none
NOW=2026-11-21T00:00:00Z
NOW_S=$(date -d "$NOW" +%s)

# start_rx NAME ARGS...: a receiver recording to $WORK/NAME.{rec,log}; sets RX_PORT and RX_PID.
start_rx() {
	name=$1
	shift
	rm -f "$WORK/$name.port"
	spawn RX_PID "$PY" "$HELP/cw_receiver.py" --port-file "$WORK/$name.port" --record "$WORK/$name.rec" \
		--log "$WORK/$name.log" "$@"
	wait_for 20 test -s "$WORK/$name.port" || echo "# receiver $name did not start" >&2
	RX_PORT=$(cat "$WORK/$name.port")
}

# ---- --dry-run: golden bodies, checked by botocore ----------------------------
for f in accel neuron-monitor-2x neuron-monitor-2020 endpoint-runtimes; do
	in=$FIX/streams/$f.jsonl
	[ -f "$in" ] || in=$GOLD/$f.jsonl
	rc=0
	now=$NOW
	# its reports are of 2026-11-27 05:00: CloudWatch takes no datum more than two hours ahead
	[ "$f" != endpoint-runtimes ] || now=2026-11-27T05:10:00Z
	ACCEL_CLOUDWATCH_NOW=$now "$CW" --namespace 'Accel Test/Neuron' --dry-run <"$in" >"$WORK/$f.body" 2>"$WORK/$f.err" || rc=$?
	is "$rc" 0 "dry-run $f exits 0"
	if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then cp "$WORK/$f.body" "$GOLD/$f.body"; fi
	ok "dry-run $f matches $GOLD/$f.body" cmp "$WORK/$f.body" "$GOLD/$f.body"
	ok "dry-run $f bodies are what botocore serializes" env CW_CHECK_NOW="$(date -d "$now" +%s)" \
		"$PY" "$HELP/cw_receiver.py" --check-bodies "$WORK/$f.body"
done
ok "the bad value (1.5e300) is dropped with a counted warning" \
	grep -q "dropped datum SystemMemoryUsed{.*} 1.5e+300 .*(1 bad values so far)" "$WORK/accel.err"
ok "the other datums of that report still go out" grep -q "MetricName=RuntimeMemoryUsed.*Value=7000000000000000.0" \
	"$WORK/accel.body"
ok "dry-run needs no credentials and says nothing else" sh -c "! grep -v 'bad values so far' '$WORK/accel.err'"

# Units and names (see docs/accel-cloudwatch.md).
tr '&' '\n' <"$WORK/neuron-monitor-2x.body" >"$WORK/2x.fields"
for pat in 'MetricName=NeuronCoreUtilization' 'MetricName=ExecutionLatencyP99' 'Value=62.41' 'Unit=Percent' \
	'Unit=Seconds' 'Unit=Bytes' 'Unit=Count' 'Name=NeuronCore' 'Name=RuntimeTag' 'Name=InstanceId' \
	'Name=InstanceType' 'Name=ErrorType' 'Name=NeuronDevice' 'Name=EventType'; do
	ok "2.x body has $pat" grep -q -- "$pat" "$WORK/2x.fields"
done
# Endpoint runtimes: per-model datums carry Model and ModelVersion (none when the server names no
# version: CloudWatch takes no empty value), and no datum has more than CloudWatch's 30 dimensions.
tr '&' '\n' <"$WORK/endpoint-runtimes.body" >"$WORK/ep.fields"
for pat in 'MetricName=ExecutionStatus' 'MetricName=InferenceComputeInferDurationSeconds' \
	'MetricName=InferenceQueueLatencyP90' 'MetricName=InferenceTokens' 'Name=Model' 'Value=resnet50' \
	'Name=ModelVersion' 'Name=Kind' 'Value=generation' 'Name=Device' \
	'MetricName=InferenceServerDeviceEnergyJoules'; do
	ok "endpoint-runtimes body has $pat" grep -qx -- ".*\.$pat" "$WORK/ep.fields"
done
ok "the body's most dimensions in one datum is within 30" $PY -c '
import re, sys
most = {}
for f in open(sys.argv[1]):
    m = re.match(r"MetricData\.member\.(\d+)\.Dimensions\.member\.(\d+)\.Name=", f)
    if m:
        most[m.group(1)] = max(most.get(m.group(1), 0), int(m.group(2)))
print("# most dimensions in a datum: %d" % max(most.values()))
sys.exit(not 5 <= max(most.values()) <= 30)
' "$WORK/ep.fields"
ok "no instance_info or memory_location=None datums" sh -c "! grep -q 'InstanceInfo\|Value=None' '$WORK/2x.fields'"

# A dry run whose stdout fails: exit 1 and the reason, never "delivered".
rc=0
"$CW" --namespace T --dry-run -v2 <"$FIX/streams/neuron-monitor-2x.jsonl" >/dev/full 2>"$WORK/full.err" || rc=$?
is "$rc" 1 "--dry-run >/dev/full: exit 1"
ok "--dry-run >/dev/full: says why" grep -q "cannot write to stdout: No space left on device" "$WORK/full.err"
ok "--dry-run >/dev/full: no datum counted as delivered" grep -q " 0 datums delivered" "$WORK/full.err"
ok "--dry-run >/dev/full: the undelivered are blamed on stdout, not on the drain timeout" \
	sh -c "grep 'undelivered' '$WORK/full.err' | grep -q 'cannot write to stdout' && ! grep -q 'drain-timeout' '$WORK/full.err'"

# Limits: 1000 datums per request; every datum kept.
"$PY" "$HELP/cw_gen.py" --count 400 --age-s 60 --expected "$WORK/gen.exp" >"$WORK/gen.jsonl"
"$CW" --namespace T --dry-run <"$WORK/gen.jsonl" >"$WORK/gen.body" 2>"$WORK/gen.err"
is "$(wc -l <"$WORK/gen.body" | tr -d ' ')" 2 "1600 datums go out as two requests"
is "$(head -1 "$WORK/gen.body" | tr '&' '\n' | grep -c 'MetricName=')" 1000 "the first holds 1000 datums"
ok "both bodies pass botocore" "$PY" "$HELP/cw_receiver.py" --check-bodies "$WORK/gen.body"

# Timestamps: more than two weeks old -> dropped with a warning.
"$PY" "$HELP/cw_gen.py" --count 3 --old-at 1 >"$WORK/old.jsonl"
"$CW" --namespace T --dry-run <"$WORK/old.jsonl" >"$WORK/old.body" 2>"$WORK/old.err"
is "$(tr '&' '\n' <"$WORK/old.body" | grep -c 'MetricName=')" 8 "a report 15 days old is dropped, the others kept"
ok "with a warning per datum" grep -q "more than two weeks old (4 so far)" "$WORK/old.err"

# Usage and configuration errors.
rc=0
"$CW" --dry-run </dev/null 2>"$WORK/e1" || rc=$?
is "$rc" 2 "no --namespace: usage error"
rc=0
"$CW" --namespace AWS/EC2 --dry-run </dev/null 2>"$WORK/e2" || rc=$?
is "$rc" 3 "an AWS/ namespace is refused"
rc=0
"$CW" --namespace T </dev/null 2>"$WORK/e3" || rc=$?
is "$rc" 3 "no region: configuration error"
ok "which says how to give one" grep -q "give --region or set AWS_REGION" "$WORK/e3"
rc=0
"$CW" --namespace T --storage-resolution 5 </dev/null 2>/dev/null || rc=$?
is "$rc" 2 "--storage-resolution 5 is refused"

# ---- PutMetricData to the botocore receiver ------------------------------------
start_rx rx --cred AKIDPLAIN0000000000:plainSecretKey0000000000000000000000000 \
	--cred ASIATOKEN0000000000:tokenSecretKey0000000000000000000000000:FwoGZXIvYXdzEXAMPLETOKEN//+=
URL=http://127.0.0.1:$RX_PORT

rc=0
AWS_ACCESS_KEY_ID=AKIDPLAIN0000000000 AWS_SECRET_ACCESS_KEY=plainSecretKey0000000000000000000000000 \
	"$CW" --namespace 'Accel Test/Neuron' --region us-west-2 --endpoint-url "$URL" -v2 \
	<"$FIX/streams/neuron-monitor-2x.jsonl" 2>"$WORK/p1.err" || rc=$?
is "$rc" 0 "2.x stream with env credentials: exit 0"
is "$(grep -c '"status": 200' "$WORK/rx.log")" 1 "one request, accepted (signature checked by botocore)"
ok "gzipped (10 KB body)" grep -q '"gzip": true' "$WORK/rx.log"
is "$(wc -l <"$WORK/rx.rec" | tr -d ' ')" "$(tr '&' '\n' <"$WORK/neuron-monitor-2x.body" | grep -c MetricName=)" \
	"every datum of the dry run arrived"
# Values, against docs/neuron-monitor-formats.md 6.4: completed = 118+121+97+125.
sum=$("$PY" -c '
import json, sys
t = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    d = dict(r["dims"])
    if r["name"] == "ExecutionStatus" and d.get("StatusType") == "completed" and d.get("RuntimeTag") == "my_app_1":
        assert r["unit"] == "Count"
        t += r["value"]
print(int(t))' "$WORK/rx.rec")
is "$sum" 461 "ExecutionStatus{completed} sums to 461 over the stream (per-period counts)"
ok "NeuronCoreUtilization of core 0 on line 4 is 67.35 Percent" "$PY" -c '
import json, sys
v = [r for r in map(json.loads, open(sys.argv[1])) if r["name"] == "NeuronCoreUtilization"
     and ["NeuronCore", "0"] in r["dims"] and ["RuntimeTag", "my_app_1"] in r["dims"]]
assert [r["value"] for r in v][-1] == 67.35 and v[-1]["unit"] == "Percent", v' "$WORK/rx.rec"

# Session token, no gzip, high resolution, chosen dimensions.
: >"$WORK/rx.rec"
rc=0
AWS_ACCESS_KEY_ID=ASIATOKEN0000000000 AWS_SECRET_ACCESS_KEY=tokenSecretKey0000000000000000000000000 \
	AWS_SESSION_TOKEN='FwoGZXIvYXdzEXAMPLETOKEN//+=' AWS_REGION=us-west-2 \
	"$CW" --namespace T --endpoint-url "$URL" --no-gzip --storage-resolution 1 \
	--dimensions InstanceId,AvailabilityZone,Cluster=blue -v2 <"$GOLD/accel.jsonl" 2>"$WORK/p2.err" || rc=$?
is "$rc" 0 "with a session token (X-Amz-Security-Token signed): exit 0"
ok "the receiver saw the token and no gzip" sh -c "tail -1 '$WORK/rx.log' | grep -q '\"gzip\": false.*\"token\": true'"
ok "StorageResolution 1 and the chosen dimensions" "$PY" -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert recs and all(r["res"] == 1 for r in recs)
for r in recs:
    names = [d[0] for d in r["dims"]]
    assert names[:3] == ["InstanceId", "AvailabilityZone", "Cluster"], names
    assert "InstanceType" not in names and "Pid" not in names' "$WORK/rx.rec"

# Secrets never appear in messages or output.
rc=0
AWS_ACCESS_KEY_ID=AKIDPLAIN0000000000 AWS_SECRET_ACCESS_KEY=WRONGsecretWRONGsecretWRONGsecret000000 \
	AWS_SESSION_TOKEN=SECRETTOKENVALUE AWS_REGION=us-west-2 "$CW" --namespace T --endpoint-url "$URL" \
	--backoff-min 20ms --drain-timeout 300ms -v4 <"$GOLD/accel.jsonl" >"$WORK/p3.out" 2>"$WORK/p3.err" || rc=$?
is "$rc" 1 "refused credentials: datums left undelivered, exit 1"
ok "the refusal is logged" grep -q "InvalidClientTokenId\|SignatureDoesNotMatch" "$WORK/p3.err"
ok "and the count left" grep -q "exiting with [0-9]* datums undelivered" "$WORK/p3.err"
ok "no secret key or token in any message" sh -c "! grep -q 'WRONGsecret\|SECRETTOKENVALUE' '$WORK/p3.err' '$WORK/p3.out'"

done_testing
