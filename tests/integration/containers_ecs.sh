#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Amazon ECS: task and container identity from the ECS layouts' cgroup paths, names from the ECS agent's
# introspection API (--ecs-agent-url) and the task metadata endpoint v4 (--ecs-metadata), on the fixture tree
# tests/fixtures/containers/ecs (written by make_fixtures.py): pid 3001 in an EC2 task on cgroup v1, 3002 in one on
# v2 whose Docker state file carries the agent's labels, 3003 in a Fargate 1.4 task, 3004 in the monitor's own
# cgroup seen from its cgroup namespace ("0::/", as its own self/cgroup reads), 3005 a Docker container at the
# cgroup root that no ECS source knows, 3006 in a sibling of the monitor's cgroup ("/../docker-<id>.scope"). A
# fake agent and endpoint (tests/helpers/fake_ecs.py) serve the answers:
#   - both answer: every ECS process gets its task (cluster, ARN, family, revision) and its container's name;
#     3004 is the monitor's own container; 3005 keeps its id;
#   - 404, garbage, the server down, an answer after 10 s: names fall back to what the cgroup and state files
#     say (3002 keeps its labels' names), reports keep their period, the error is logged once although the
#     fetch is retried;
#   - the downward API's POD_UID (and POD_NAME, POD_NAMESPACE) instead: 3004 is the monitor's own pod, 3006 a
#     container of it.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
E=$FIX/containers/ecs
export AWS_EC2_METADATA_DISABLED=true
TASK_A=3f9a1c2b4d5e46f7a8b9c0d1e2f3a4b5
TASK_B=7b6a5c4d3e2f41a0b9c8d7e6f5a4b3c2
TASK_F=c0ffee00d15c4a11b0a7d00dfeedface
ACCT=arn:aws:ecs:us-west-2:111122223333

cd "$WORK"
cat >mon.json <<'EOF'
{"period": "500ms", "system_metrics": [], "devices": [],
 "runtimes": [{"address": "pid:3001", "metrics": [{"type": "memory_used"}]},
              {"address": "pid:3002", "metrics": [{"type": "memory_used"}]},
              {"address": "pid:3003", "metrics": [{"type": "memory_used"}]},
              {"address": "pid:3004", "metrics": [{"type": "memory_used"}]},
              {"address": "pid:3005", "metrics": [{"type": "memory_used"}]},
              {"address": "pid:3006", "metrics": [{"type": "memory_used"}]}]}
EOF
echo ok >mode
spawn SPID $PY "$HELP/fake_ecs.py" --tasks "$E/ecs-agent-tasks.json" --task "$E/ecs-metadata-task.json" \
	--container "$E/ecs-metadata-container.json" --port-file sport --mode-file mode --log slog
ok "the fake ECS agent and endpoint listen" wait_for 10 test -s sport
URL=http://127.0.0.1:$(cat sport)
export ECS_CONTAINER_METADATA_URI_V4=$URL/v4/$TASK_F-2345678901

# run NAME UNTIL: six_reports (lib.sh) of accel-monitor asking both sources (the endpoint through
# --ecs-metadata's variable).
run() {
	six_reports "$1" "$2" "$MON" -c mon.json --path.procfs "$E/proc" --path.rootfs "$E/rootfs" \
		--ecs-agent-url "$URL" --ecs-metadata --ecs-refresh 1s
}
# ctr FILE PID: the container object of pid in FILE's last report, its keys sorted, "-" when none.
ctr() {
	$PY - "$1" "$2" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1], encoding="utf-8").read().splitlines()[-1])
c = [e for e in r["runtime_data"] if e["pid"] == int(sys.argv[2])][0].get("container")
print(" ".join("%s=%s" % kv for kv in sorted(c.items())) if c else "-")
EOF
}
warnings() { grep -c "ecs:" "$1" || true; }

# ---- both answer ------------------------------------------------------------------------------------------
run good "grep -q '\"ecs_task_family\":\"neuron-infer\"' good.out && grep -q '\"name\":\"accel-monitor\"' good.out"
is "$(ctr good.out 3001)" "ecs_cluster=inference ecs_task_arn=$ACCT:task/inference/$TASK_A ecs_task_family=neuron-infer ecs_task_id=$TASK_A ecs_task_revision=7 id=$(printf 'e1%.0s' $(seq 32)) name=app runtime=docker" \
	"good: EC2 on cgroup v1: the agent names the task and the container"
is "$(ctr good.out 3002)" "ecs_cluster=inference ecs_task_arn=$ACCT:task/inference/$TASK_B ecs_task_family=triton-serve ecs_task_id=$TASK_B ecs_task_revision=4 id=$(printf 'e2%.0s' $(seq 32)) name=triton runtime=docker" \
	"good: EC2 on cgroup v2: the task slice and the Docker labels"
is "$(ctr good.out 3003)" "ecs_cluster=fargate-ml ecs_task_arn=$ACCT:task/fargate-ml/$TASK_F ecs_task_family=bert-serve ecs_task_id=$TASK_F ecs_task_revision=3 id=$TASK_F-1234567890 name=bert runtime=fargate" \
	"good: Fargate 1.4: the endpoint's task names the container"
is "$(ctr good.out 3004)" "ecs_cluster=fargate-ml ecs_task_arn=$ACCT:task/fargate-ml/$TASK_F ecs_task_family=bert-serve ecs_task_id=$TASK_F ecs_task_revision=3 id=$TASK_F-2345678901 name=accel-monitor runtime=fargate" \
	"good: 0::/ from inside the namespace: the monitor's own container"
is "$(ctr good.out 3005)" "id=$(printf 'e3%.0s' $(seq 32)) runtime=docker" "good: Docker at the cgroup root, unknown to ECS: its id"
is "$(ctr good.out 3006)" "ecs_cluster=fargate-ml ecs_task_arn=$ACCT:task/fargate-ml/$TASK_F ecs_task_family=bert-serve ecs_task_id=$TASK_F ecs_task_revision=3 id=$(printf 'e4%.0s' $(seq 32)) runtime=docker" \
	"good: /../docker-<id>.scope, a sibling of the monitor's cgroup: the monitor's task"
is "$(warnings good.err)" 0 "good: nothing logged"
ok "good: the agent and both endpoint paths were asked" sh -c 'grep -q "GET /v1/tasks 200" slog &&
	grep -q "GET /v4/.*/task 200" slog && grep -q "GET /v4/[0-9a-f-]* 200" slog'

# ---- the sinks: labels and dimensions ------------------------------------------------------------------------
ok "accel-csv: the task's labels in other_labels" sh -c '"$1" <good.out >good.csv &&
	grep -q "ecs_cluster=inference.*ecs_task_family=neuron-infer.*ecs_task_id=$2" good.csv' sh "$BIN/accel-csv" "$TASK_A"
ok "accel-cloudwatch: Container Insights' dimension names" sh -c '
	AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=y "$1" --namespace T --region us-west-2 --format emf --dry-run \
		<good.out >good.emf 2>/dev/null
	$2 - good.emf "$3" <<EOF2
import json, sys
want = {"ClusterName": "fargate-ml", "TaskDefinitionFamily": "bert-serve", "TaskId": sys.argv[2], "ContainerName": "bert"}
ev = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if any(all(e.get(k) == v for k, v in want.items()) and
                  any(set(want) <= set(d) for d in e["_aws"]["CloudWatchMetrics"][0]["Dimensions"]) for e in ev) else 1)
EOF2' sh "$BIN/accel-cloudwatch" "$PY" "$TASK_F"

# ---- failures: names fall back, one warning per source and error ------------------------------------------
for m in 404 garbage; do
	echo $m >mode
	: >slog
	run $m "[ \$(grep -c 'GET /v1/tasks' slog) -ge 2 ]"
	is "$(ctr $m.out 3001)" "ecs_task_id=$TASK_A id=$(printf 'e1%.0s' $(seq 32)) runtime=docker" \
		"$m: 3001 keeps the ids its cgroup gives"
	is "$(ctr $m.out 3002)" "ecs_cluster=inference ecs_task_arn=$ACCT:task/inference/$TASK_B ecs_task_family=triton-serve ecs_task_id=$TASK_B ecs_task_revision=4 id=$(printf 'e2%.0s' $(seq 32)) name=triton runtime=docker" \
		"$m: 3002 keeps its Docker labels' names"
	is "$(ctr $m.out 3004)" "-" "$m: the monitor's own identity unknown: 0::/ is no container"
	is "$(warnings $m.err)" 3 "$m: each source's error logged once"
	ok "$m: the fetch was retried (at most once a second)" test "$(grep -c 'GET /v1/tasks' slog)" -ge 2
done
ok "404: it says HTTP 404" grep -q "ecs: GET $URL/v1/tasks: HTTP 404" 404.err
ok "garbage: it says no task list" grep -q "ecs: GET $URL/v1/tasks: the answer is no ECS task list" garbage.err

echo slow >mode
run slow "[ \$(grep -c ecs: slow.err) -ge 3 ]"
is "$(ctr slow.out 3003)" "ecs_task_id=$TASK_F id=$TASK_F-1234567890 runtime=fargate" "slow (10 s): names fall back to the ids"
is "$(warnings slow.err)" 3 "slow: each source's timeout logged once"
ok "slow: it says it timed out" grep -q "ecs: GET $URL/v1/tasks: .*[Tt]imeout" slow.err

kill "$SPID"
wait "$SPID" 2>/dev/null || true
run down "grep -q ecs: down.err"
is "$(ctr down.out 3001)" "ecs_task_id=$TASK_A id=$(printf 'e1%.0s' $(seq 32)) runtime=docker" "down: names fall back to the ids"
is "$(warnings down.err)" 3 "down: each source's error logged once"

# ---- answers of 13-16 MB: parsed off the loop, only their facts kept ----------------------------------------
# The own container's answer with 600,000 more labels, the agent's task list with a container of 250,000 volumes,
# both under the 16 MiB cap. Parsed on the loop, they made reports up to 0.9 s late (slots skipped), and the own
# container's answer kept whole held 270 MB; now the loop gets the reduced facts only (id, name, the ECS labels).
$PY - "$E/ecs-metadata-container.json" "$E/ecs-agent-tasks.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
for i in range(600000):
    c["Labels"]["filler.%d" % i] = "v%d" % i
json.dump(c, open("bigcontainer.json", "w"))
t = json.load(open(sys.argv[2]))
t["Tasks"].append({"Arn": "arn:aws:ecs:us-west-2:111122223333:task/filler/%032x" % 1, "Family": "f", "Version": "1",
                   "Containers": [{"DockerId": "%064x" % 1, "Name": "c",
                                   "Volumes": [{"Source": "/v/%d" % j, "Destination": "/d/%d" % j} for j in range(250000)]}]})
json.dump(t, open("bigtasks.json", "w"))
EOF
: >slog
echo ok >mode
spawn BPID $PY "$HELP/fake_ecs.py" --tasks bigtasks.json --task "$E/ecs-metadata-task.json" \
	--container bigcontainer.json --port-file bport --mode-file mode --log slog
ok "big: the fake ECS agent and endpoint listen" wait_for 10 test -s bport
BURL=http://127.0.0.1:$(cat bport)
ECS_CONTAINER_METADATA_URI_V4=$BURL/v4/$TASK_F-2345678901 rt "$MON" -c mon.json --path.procfs "$E/proc" \
	--path.rootfs "$E/rootfs" --ecs-agent-url "$BURL" --ecs-metadata --ecs-refresh 1s -n $((400 * SLOW)) \
	>big.out 2>big.err &
BMON=$!
# It runs until the own container is named (the answers' parse takes seconds under a sanitizer and a loaded
# machine), then at least 20 reports and 3 s more (VmRSS at its least over them: what is kept between the
# parses), and is stopped with SIGTERM, which ends the stream after a whole report.
wait_for $((60 * SLOW)) grep -q '"name":"accel-monitor"' big.out || diag "big: the own container not named within $((60 * SLOW)) s"
BPROC=$(pgrep -x -P "$BMON" accel-monitor || echo "$BMON") # rt's subshell, or the monitor itself
rss=$(for i in $(seq 30); do awk '$1 == "VmRSS:" { print $2 }' "/proc/$BPROC/status"; sleep 0.1; done | sort -n | head -1)
enough() { [ "$(nlines big.out)" -ge 20 ]; }
wait_for $((20 * SLOW)) enough || diag "big: fewer than 20 reports"
kill -TERM "$BPROC" 2>/dev/null || true
wait "$BMON" || echo "exit $?" >>big.err
diag "big: $(wc -c <bigcontainer.json) + $(wc -c <bigtasks.json) bytes; VmRSS at its least ${rss:-?} kB"
ok "big: accel-monitor exits 0" sh -c '! grep -q "^exit " big.err'
ok "big: every report 500 ms after the last (the answers are never parsed on the loop)" on_time big.out 18 150
is "$(ctr big.out 3004 | sed 's/ ecs_task_arn.* id=/ id=/')" "ecs_cluster=fargate-ml id=$TASK_F-2345678901 name=accel-monitor runtime=fargate" \
	"big: the monitor's own container named from the reduced answer"
is "$(ctr big.out 3001 | sed 's/.* name=/name=/')" "name=app runtime=docker" "big: 3001 named from the big task list"
if [ "${ACCEL_SANITIZED:-0}" != 1 ]; then # ASan's allocator keeps what is freed (its quarantine)
	ok "big: the own container's answer is not kept whole: VmRSS ${rss:-?} kB < 128 MB" \
		test "${rss:-999999999}" -lt $((128 * 1024))
fi
kill "$BPID"
wait "$BPID" 2>/dev/null || true

# ---- a container no answer names: fetched again with a back-off, not at every refresh -------------------------
# 3005 (unknown to ECS) and 3006 (no container name) miss at every lookup; with --ecs-refresh 1s the sources were
# asked every second (about 8 times in 8 s); a container missed before now waits 1, 2, 4, ... periods (4 times).
echo ok >mode
: >slog
spawn RPID $PY "$HELP/fake_ecs.py" --tasks "$E/ecs-agent-tasks.json" --task "$E/ecs-metadata-task.json" \
	--container "$E/ecs-metadata-container.json" --port-file rport --mode-file mode --log slog
ok "backoff: the fake ECS agent and endpoint listen" wait_for 10 test -s rport
RURL=http://127.0.0.1:$(cat rport)
ECS_CONTAINER_METADATA_URI_V4=$RURL/v4/$TASK_F-2345678901 "$MON" -c mon.json --path.procfs "$E/proc" \
	--path.rootfs "$E/rootfs" --ecs-agent-url "$RURL" --ecs-metadata --ecs-refresh 1s -n 17 >backoff.out 2>backoff.err
n=$(grep -c 'GET /v1/tasks' slog)
is "$(ctr backoff.out 3005)" "id=$(printf 'e3%.0s' $(seq 32)) runtime=docker" "backoff: 3005 stays nameless"
ok "backoff: in 8 s the task list was asked $n times, at most 5 (1, 2, 4 periods apart), not every second" \
	test "$n" -ge 2 -a "$n" -le 5
kill "$RPID"
wait "$RPID" 2>/dev/null || true

# ---- the same namespace in a Kubernetes pod: the downward API's POD_UID, POD_NAME, POD_NAMESPACE ------------
UIDK=5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d
ok "downward API: accel-monitor --once exits 0" sh -c 'POD_UID=$1 POD_NAME=infer-0 POD_NAMESPACE=ml "$2" --once \
	-c mon.json --path.procfs "$3/proc" --path.rootfs "$3/rootfs" >pod.out 2>pod.err' sh "$UIDK" "$MON" "$E"
ok "downward API: the report passes check_report.py" $PY "$HELP/check_report.py" pod.out
is "$(ctr pod.out 3004)" "namespace=ml pod=infer-0 pod_uid=$UIDK" "downward API: 0::/ is the monitor's own pod"
is "$(ctr pod.out 3006)" "id=$(printf 'e4%.0s' $(seq 32)) namespace=ml pod=infer-0 pod_uid=$UIDK runtime=docker" \
	"downward API: a sibling of the monitor's cgroup is a container of its pod"
ok "downward API: a POD_UID that is no UID is ignored" sh -c 'POD_UID="../x" "$1" --once -c mon.json \
	--path.procfs "$2/proc" --path.rootfs "$2/rootfs" >podbad.out 2>/dev/null && "$3" "$4/check_report.py" podbad.out' \
	sh "$MON" "$E" "$PY" "$HELP"
is "$(ctr podbad.out 3004)" "-" "downward API: without a valid POD_UID, 0::/ is the host's"

ok "--ecs-metadata without the variable is a usage error" sh -c '
	env -u ECS_CONTAINER_METADATA_URI_V4 "$1" --once --ecs-metadata >/dev/null 2>err; [ $? = 2 ] &&
	grep -q ECS_CONTAINER_METADATA_URI_V4 err' sh "$MON"

done_testing
