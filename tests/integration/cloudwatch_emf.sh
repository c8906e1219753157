#!/bin/sh
# SPDX-License-Identifier: MIT
# accel-cloudwatch --format emf: Embedded Metric Format events on stdout and
# over TCP to a stand-in for the CloudWatch agent, checked for EMF's
# structure and limits, and value for value against the PutMetricData
# datums of the same input.
. "$(dirname "$0")/lib.sh"

CW=$BIN/accel-cloudwatch
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_REGION AWS_DEFAULT_REGION
export AWS_EC2_METADATA_DISABLED=true AWS_SHARED_CREDENTIALS_FILE=$WORK/none
export ACCEL_CLOUDWATCH_NOW=2026-11-21T00:00:00Z

# The EMF checker: structure, limits, and the datums it carries (printed as JSON lines).
cat >"$WORK/emf_check.py" <<'EOF'
import json, sys
UNITS = {"Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes", "Gigabytes", "Terabytes",
         "Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count", "Bytes/Second",
         "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second", "Bits/Second",
         "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second", "Count/Second", "None"}
ns, res = sys.argv[2], int(sys.argv[3])
for line in open(sys.argv[1]):
    ev = json.loads(line)
    aws = ev["_aws"]
    assert isinstance(aws["Timestamp"], int) and aws["Timestamp"] > 1500000000000
    (d,) = aws["CloudWatchMetrics"]
    assert d["Namespace"] == ns
    (dims,) = d["Dimensions"]
    assert len(dims) <= 30 and len(set(dims)) == len(dims)
    for k in dims:
        assert isinstance(ev[k], str) and ev[k]
    assert 1 <= len(d["Metrics"]) <= 100
    for m in d["Metrics"]:
        assert m["Unit"] in UNITS, m
        assert ("StorageResolution" in m) == (res == 1) and m.get("StorageResolution", 1) == 1
        assert isinstance(ev[m["Name"]], (int, float)) and not isinstance(ev[m["Name"]], bool)
        print(json.dumps([m["Name"], sorted([k, ev[k]] for k in dims), aws["Timestamp"], float(ev[m["Name"]]), m["Unit"]]))
EOF
# The same datums from a PutMetricData dry run.
cat >"$WORK/body_datums.py" <<'EOF'
import datetime, json, sys, urllib.parse
for line in open(sys.argv[1]):
    f = dict(urllib.parse.parse_qsl(line.strip()))
    i = 1
    while "MetricData.member.%d.MetricName" % i in f:
        p = "MetricData.member.%d." % i
        dims, j = [], 1
        while p + "Dimensions.member.%d.Name" % j in f:
            dims.append([f[p + "Dimensions.member.%d.Name" % j], f[p + "Dimensions.member.%d.Value" % j]])
            j += 1
        ts = f[p + "Timestamp"]
        t = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ" if "." in ts else "%Y-%m-%dT%H:%M:%SZ")
        ms = round(t.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)
        print(json.dumps([f[p + "MetricName"], sorted(dims), ms, float(f[p + "Value"]), f[p + "Unit"]]))
        i += 1
EOF

for f in accel neuron-monitor-2x neuron-monitor-2020 endpoint-runtimes; do
	in=$FIX/streams/$f.jsonl
	[ -f "$in" ] || in=$FIX/cloudwatch/$f.jsonl
	rc=0
	now=$ACCEL_CLOUDWATCH_NOW
	# endpoint runtimes: its reports are of 2026-11-27 05:00 (no datum more than two hours ahead)
	[ "$f" != endpoint-runtimes ] || now=2026-11-27T05:10:00Z
	ACCEL_CLOUDWATCH_NOW=$now "$CW" --namespace 'Accel/EMF' --format emf <"$in" >"$WORK/$f.emf" 2>"$WORK/$f.err" || rc=$?
	is "$rc" 0 "EMF of $f: exit 0, no credentials needed"
	ok "EMF of $f: structure and limits" sh -c "'$PY' '$WORK/emf_check.py' '$WORK/$f.emf' Accel/EMF 60 >'$WORK/$f.emf.raw'"
	sort "$WORK/$f.emf.raw" >"$WORK/$f.emf.d"
	ACCEL_CLOUDWATCH_NOW=$now "$CW" --namespace 'Accel/EMF' --dry-run <"$in" 2>/dev/null >"$WORK/$f.body"
	"$PY" "$WORK/body_datums.py" "$WORK/$f.body" | sort >"$WORK/$f.body.d"
	ok "EMF of $f carries the same datums as PutMetricData" cmp "$WORK/$f.emf.d" "$WORK/$f.body.d"
done
ok "EMF of endpoint-runtimes: per-model events with Model and ModelVersion" sh -c \
	"grep -q '\"Model\":\"resnet50\"' '$WORK/endpoint-runtimes.emf' && grep -q '\"ModelVersion\":\"2\"' '$WORK/endpoint-runtimes.emf' && [ \$(wc -l <'$WORK/endpoint-runtimes.emf.d') -gt 100 ]"
is "$(grep -c ExecutionLatencyP50 "$WORK/neuron-monitor-2x.emf")" 4 "latency percentiles travel together, one event per report"
ok "7 percentiles in one event" sh -c "grep ExecutionLatencyP50 '$WORK/neuron-monitor-2x.emf' | head -1 | grep -o '\"Name\":\"ExecutionLatencyP[0-9]*\"' | wc -l | grep -qx 7"

# More than 100 metrics with the same dimensions and time: split into events of at most 100.
"$PY" -c '
import json
rep = {"timestamp": "2026-11-20T23:00:00.000Z", "monitor": {"version": "0.1.0", "seq": 0}, "device_data": [],
       "runtime_data": [], "instance_info": {"instance_id": "i-1", "instance_type": "t", "error": ""},
       "system_data": {"vcpu_usage": {"period": 1, "error": "", "timestamp": "2026-11-20T23:00:00.000Z",
       "average_usage": {"user": 1, "nice": 0, "system": 1, "idle": 98, "io_wait": 0, "irq": 0, "soft_irq": 0},
       "usage_data": {}}}}
print(json.dumps(rep))' >"$WORK/few.jsonl"
"$CW" --namespace N --format emf --storage-resolution 1 <"$WORK/few.jsonl" >"$WORK/few.emf"
ok "high resolution is marked per metric" "$PY" "$WORK/emf_check.py" "$WORK/few.emf" N 1

# Over TCP to the agent's port (a listener standing in for the CloudWatch agent).
cat >"$WORK/agent.py" <<'EOF'
import socket, sys, os
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(4)
open(sys.argv[1] + ".tmp", "w").write("%d\n" % s.getsockname()[1]); os.replace(sys.argv[1] + ".tmp", sys.argv[1])
with open(sys.argv[2], "wb") as out:
    while True:
        c, _ = s.accept()
        while True:
            b = c.recv(65536)
            if not b:
                break
            out.write(b); out.flush()
        c.close()
EOF
spawn AGENT "$PY" "$WORK/agent.py" "$WORK/agent.port" "$WORK/agent.out"
wait_for 10 test -s "$WORK/agent.port" || echo "# agent did not start"
rc=0
"$CW" --namespace 'Accel/EMF' --format emf --emf-endpoint "tcp://127.0.0.1:$(cat "$WORK/agent.port")" \
	<"$FIX/streams/neuron-monitor-2x.jsonl" 2>"$WORK/tcp.err" || rc=$?
is "$rc" 0 "EMF to tcp://127.0.0.1:PORT: exit 0"
wait_for 5 cmp -s "$WORK/agent.out" "$WORK/neuron-monitor-2x.emf" || true
ok "the agent received exactly the stdout events" cmp "$WORK/agent.out" "$WORK/neuron-monitor-2x.emf"

PORT=$(free_port)
rc=0
"$CW" --namespace N --format emf --emf-endpoint "tcp://127.0.0.1:$PORT" --backoff-min 20ms --drain-timeout 300ms \
	<"$FIX/streams/neuron-monitor-2x.jsonl" 2>"$WORK/tcp2.err" || rc=$?
is "$rc" 1 "no agent listening past the deadline: exit 1"
ok "retried, then said what was left" sh -c "grep -q 'sending EMF to tcp://127.0.0.1:$PORT failed' '$WORK/tcp2.err' &&
	grep -q 'exiting with [0-9]* datums undelivered' '$WORK/tcp2.err'"

done_testing
