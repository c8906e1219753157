#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Container identity from the real kernel: processes started here are moved into cgroups
# laid out as a Kubernetes node lays them out, under a test-owned parent that is removed afterwards, in
# whichever hierarchies this machine has: cgroup v2 (the unified hierarchy, alone or in systemd's hybrid
# layout) with the systemd driver's names, cgroup v1 (the pids controller) with the cgroupfs driver's.
# accel-monitor reads the host's real /proc/PID/cgroup; names come from a containerd task bundle written
# under a --path.rootfs made here. Then the same for Amazon ECS on EC2: the agent's task slice on v2
# (ecstasks-<task>.slice/docker-<id>.scope, named by the Docker labels of a config.v2.json written here) and
# its /ecs/<task>/<id> on v1 (named by a fake ECS agent, tests/helpers/fake_ecs.py): the runtime entries and
# container_usage's per-container CPU carry the task and the container. Needs root and a writable cgroup hierarchy: without them the test
# says why and ends (a property of the machine, not a package to install).
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
CHECK="$PY $HELP/check_report.py"
export AWS_EC2_METADATA_DISABLED=true

skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}
[ "$(id -u)" = 0 ] || skip_all "needs root to create cgroups"

TAG=accel-test-$$
UID_U=1d2e3f40_5a6b_4c7d_8e9f_a0b1c2d3e4f5
UID_D=1d2e3f40-5a6b-4c7d-8e9f-a0b1c2d3e4f5
UID_V1=2e3f4051-6b7c-4d8e-9fa0-b1c2d3e4f506
ID2=$(printf '7a%.0s' $(seq 32))
ID1=$(printf '8b%.0s' $(seq 32))

# The v2 hierarchy: /sys/fs/cgroup itself (pure v2) or systemd's hybrid /sys/fs/cgroup/unified.
V2=
for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	if [ "$(stat -f -c %T "$d" 2>/dev/null)" = cgroup2fs ]; then
		V2=$d
		break
	fi
done
V1=
[ "$(stat -f -c %T /sys/fs/cgroup/pids 2>/dev/null)" = cgroupfs ] && V1=/sys/fs/cgroup/pids
[ -n "$V2$V1" ] || skip_all "no cgroup v2 and no cgroup v1 pids hierarchy mounted"

V2POD=${V2:+$V2/$TAG/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod$UID_U.slice}
V1POD=${V1:+$V1/$TAG/kubepods/besteffort/pod$UID_V1}
made=""

# Stop our sleepers, then remove the cgroups we made, deepest first.
teardown() {
	stop_all
	for d in $made; do
		find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true
	done
	cleanup
}
trap teardown EXIT

# mkcg DIR: create DIR (and its parents) or stop the test with why.
mkcg() {
	if ! mkdir -p "$1" 2>"$WORK/mkdir.err"; then
		skip_all "cannot create a cgroup ($(cat "$WORK/mkdir.err"))"
	fi
}
if [ -n "$V2" ]; then
	mkcg "$V2POD/cri-containerd-$ID2.scope"
	made="$made $V2/$TAG"
fi
if [ -n "$V1" ]; then
	mkcg "$V1POD/$ID1"
	made="$made $V1/$TAG"
fi

# Two sleepers: A in the v2 container (and in the v1 one too, to make a hybrid file), B in v1 only.
spawn A sleep 300
spawn B sleep 300
if [ -n "$V2" ]; then
	ok "v2: a process moved into the pod's container scope" sh -c 'echo "$1" >"$2/cgroup.procs"' sh "$A" \
		"$V2POD/cri-containerd-$ID2.scope"
fi
if [ -n "$V1" ]; then
	ok "v1: a process moved into the cgroupfs driver's container" sh -c 'echo "$1" >"$2/cgroup.procs"' sh "$B" \
		"$V1POD/$ID1"
	[ -n "$V2" ] && echo "$A" >"$V1POD/$ID1/cgroup.procs"
fi
diag "A's cgroup file: $(tr '\n' ' ' </proc/"$A"/cgroup)"

# The runtime state: a containerd task bundle naming the v2 container.
mkdir -p "$WORK/root/run/containerd/io.containerd.runtime.v2.task/k8s.io/$ID2"
cat >"$WORK/root/run/containerd/io.containerd.runtime.v2.task/k8s.io/$ID2/config.json" <<'EOF'
{"annotations": {"io.kubernetes.cri.sandbox-name": "real-pod", "io.kubernetes.cri.sandbox-namespace": "real-ns",
                 "io.kubernetes.cri.container-name": "sleeper"}}
EOF
cat >"$WORK/mon.json" <<EOF
{"period": "1s", "system_metrics": [], "devices": [],
 "runtimes": [{"address": "pid:$A", "metrics": [{"type": "memory_used"}]},
              {"address": "pid:$B", "metrics": [{"type": "memory_used"}]},
              {"address": "pid:$$", "metrics": [{"type": "memory_used"}]}]}
EOF
ok "accel-monitor --once on the real /proc exits 0" sh -c '"$1" --once -c "$2" --path.rootfs "$3" >"$4" 2>"$5"' sh \
	"$MON" "$WORK/mon.json" "$WORK/root" "$WORK/mon.out" "$WORK/mon.err"
ok "the report passes check_report.py" $CHECK "$WORK/mon.out"
entry() { # PID: the container object of PID's entry, keys sorted
	$PY - "$WORK/mon.out" "$1" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1], encoding="utf-8").readline())
print(json.dumps([e for e in r["runtime_data"] if e["pid"] == int(sys.argv[2])][0].get("container"), sort_keys=True))
EOF
}
if [ -n "$V2" ]; then
	is "$(entry "$A")" "{\"id\": \"$ID2\", \"name\": \"sleeper\", \"namespace\": \"real-ns\", \"pod\": \"real-pod\", \"pod_uid\": \"$UID_D\", \"qos\": \"burstable\", \"runtime\": \"containerd\"}" \
		"v2 (systemd driver, under a test parent): the pod UID with dashes, burstable, containerd, the bundle's names"
fi
if [ -n "$V1" ]; then
	is "$(entry "$B")" "{\"id\": \"$ID1\", \"pod_uid\": \"$UID_V1\", \"qos\": \"besteffort\"}" \
		"v1 (cgroupfs driver): the bare id, the pod UID, besteffort; no state: no names, no runtime"
fi
# The test's own shell is wherever the test runner put it: never one of our pods.
self=$(entry $$)
ok "the test's own process is in none of our pods ($self)" sh -c 'case "$1" in *"$2"* | *"$3"*) exit 1 ;; esac' sh \
	"$self" "$UID_D" "$UID_V1"

# ---- Amazon ECS on EC2 ------------------------------------------------------------------------------------------
TASK_E=3f9a1c2b4d5e46f7a8b9c0d1e2f3a4b5 # the fixtures' ECS answers name this task and ECS_E1 (the agent's list)
TASK_V2=9d8c7b6a5f4e43d2c1b0a9f8e7d6c5b4
ECS_E1=$(printf 'e1%.0s' $(seq 32))
ECS_V2=$(printf '9c%.0s' $(seq 32))
ECSV2=${V2:+$V2/$TAG/ecstasks.slice/ecstasks-$TASK_V2.slice/docker-$ECS_V2.scope}
ECSV1=${V1:+$V1/$TAG/ecs/$TASK_E/$ECS_E1}
# container_usage reads CPU from the cpuacct hierarchy on v1 (and hybrid) hosts, from the v2 root on pure v2 ones.
ACCT=
[ "$(stat -f -c %T /sys/fs/cgroup/cpuacct 2>/dev/null)" = cgroupfs ] && ACCT=/sys/fs/cgroup/cpuacct
spawn C sleep 300
spawn D sleep 300
if [ -n "$V2" ]; then
	mkcg "$ECSV2"
	ok "ecs v2: a process moved into the task slice's docker scope" sh -c 'echo "$1" >"$2/cgroup.procs"' sh "$C" \
		"$ECSV2"
fi
if [ -n "$V1" ]; then
	mkcg "$ECSV1"
	ok "ecs v1: a process moved into /ecs/<task>/<id>" sh -c 'echo "$1" >"$2/cgroup.procs"' sh "$D" "$ECSV1"
	if [ -n "$ACCT" ]; then
		mkcg "$ACCT/$TAG/ecs/$TASK_E/$ECS_E1"
		made="$made $ACCT/$TAG"
		ok "ecs v1: and into the cpuacct hierarchy's" sh -c 'echo "$1" >"$2/cgroup.procs"' sh "$D" \
			"$ACCT/$TAG/ecs/$TASK_E/$ECS_E1"
	fi
fi
mkdir -p "$WORK/root/var/lib/docker/containers/$ECS_V2"
cat >"$WORK/root/var/lib/docker/containers/$ECS_V2/config.v2.json" <<EOF
{"ID": "$ECS_V2", "Name": "/ecs-vllm-2-engine-c4d5e6f7a8b9c0d1e201", "Config": {"Labels": {
 "com.amazonaws.ecs.cluster": "real-cluster", "com.amazonaws.ecs.container-name": "engine",
 "com.amazonaws.ecs.task-arn": "arn:aws:ecs:us-west-2:111122223333:task/real-cluster/$TASK_V2",
 "com.amazonaws.ecs.task-definition-family": "vllm", "com.amazonaws.ecs.task-definition-version": "2"}}}
EOF
E=$FIX/containers/ecs
spawn SPID $PY "$HELP/fake_ecs.py" --tasks "$E/ecs-agent-tasks.json" --task "$E/ecs-metadata-task.json" \
	--container "$E/ecs-metadata-container.json" --port-file "$WORK/sport"
ok "the fake ECS agent listens" wait_for 10 test -s "$WORK/sport"
cat >"$WORK/ecs.json" <<EOF
{"period": "1s", "system_metrics": [{"type": "container_usage"}], "devices": [],
 "runtimes": [{"address": "pid:$C", "metrics": [{"type": "memory_used"}]},
              {"address": "pid:$D", "metrics": [{"type": "memory_used"}]}]}
EOF
# Two reports: the agent's answer, asked for by the first, names the second's.
ok "accel-monitor -n 2 with --ecs-agent-url exits 0" sh -c '"$1" -n 2 -c "$2" --path.rootfs "$3" --path.cgroupfs /sys/fs/cgroup --ecs-agent-url "$4" \
	>"$5" 2>"$6"' sh "$MON" "$WORK/ecs.json" "$WORK/root" "http://127.0.0.1:$(cat "$WORK/sport")" "$WORK/ecs.out" \
	"$WORK/ecs.err"
ok "the ECS reports pass check_report.py" $CHECK "$WORK/ecs.out"
last() { # PID CGROUP-SUFFIX: PID's container object and the container_usage entry whose key ends in the suffix
	$PY - "$WORK/ecs.out" "$1" "$2" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1], encoding="utf-8").read().splitlines()[-1])
c = [e for e in r["runtime_data"] if e["pid"] == int(sys.argv[2])][0].get("container", {})
u = [v for k, v in r["system_data"]["container_usage"]["containers"].items() if k.endswith(sys.argv[3])]
keys = ("ecs_cluster", "ecs_task_family", "ecs_task_id", "id", "name", "runtime")
print(" ".join("%s=%s" % (k, c.get(k)) for k in keys), "|",
      " ".join("%s=%s" % (k, u[0].get(k)) for k in keys) if u else "no entry",
      "cpu" if u and "cpu_usage_seconds" in u[0] else "no cpu")
EOF
}
if [ -n "$V2" ]; then
	w="ecs_cluster=real-cluster ecs_task_family=vllm ecs_task_id=$TASK_V2 id=$ECS_V2 name=engine runtime=docker"
	got=$(last "$C" "docker-$ECS_V2.scope")
	is "${got%% | *}" "$w" "ecs v2: the runtime entry carries the task and the container (Docker labels)"
	if [ "$V2" = /sys/fs/cgroup ]; then
		is "${got#* | }" "$w cpu" "ecs v2: so does the container's CPU"
	fi
fi
if [ -n "$V1" ]; then
	w="ecs_cluster=inference ecs_task_family=neuron-infer ecs_task_id=$TASK_E id=$ECS_E1 name=app runtime=docker"
	got=$(last "$D" "/ecs/$TASK_E/$ECS_E1")
	is "${got%% | *}" "$w" "ecs v1: the runtime entry carries the task and the container (the agent)"
	if [ -n "$ACCT" ]; then
		is "${got#* | }" "$w cpu" "ecs v1: so does the container's CPU"
	fi
fi

done_testing
