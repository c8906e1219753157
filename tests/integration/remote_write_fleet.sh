#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A fleet on one machine: 20 nodes, each an accel-monitor (its own copy of
# the fixture sysfs and procfs trees, its amdgpu VRAM use its own, its own
# KUBE_NODE_NAME) piped into accel-remote-write, each pair in a network
# namespace this test creates, pushing through a veth link to one real
# Prometheus (--web.enable-remote-write-receiver) on a bridge in a hub
# namespace, also created here: addresses 10.77.0.0/24 exist only inside
# these namespaces, nothing leaves the machine. sum(accelerator_memory_used_bytes)
# across the fleet equals the fixtures' total; 5 nodes' links go down for
# 6 s (past the sinks' 2 s --max-backoff) and nothing is lost: for every
# node, Prometheus holds one sample per report accel-monitor wrote (each
# node's stream is kept with tee). Every namespace is deleted at the end,
# whatever happens.
#
# Needs root (network namespaces): make test runs as root here; a run
# without the capability is a failure, not a skip.
. "$(dirname "$0")/lib.sh"

need "$BIN/accel-remote-write is built" test -x "$BIN/accel-remote-write"
need "$BIN/accel-monitor is built" test -x "$BIN/accel-monitor"
need "prometheus (Debian package prometheus)" command -v prometheus
need "ip (Debian package iproute2)" command -v ip
need "network namespaces (root)" sh -c "ip netns add rwf$$-probe && ip netns del rwf$$-probe"
T=$((40 * SLOW))
NODES=20
DOWN_NODES="3 7 11 15 19"
DOWN=6
P=rwf$$
HUB=$P-hub
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED

fleet_down() {
	for n in $(ip netns list 2>/dev/null | awk '{print $1}'); do
		case $n in "$P"-*) ip netns pids "$n" 2>/dev/null | xargs -r kill 2>/dev/null || true ;; esac
	done
	stop_all
	for n in $(ip netns list 2>/dev/null | awk '{print $1}'); do
		case $n in "$P"-*) ip netns del "$n" 2>/dev/null || true ;; esac
	done
}
trap 'fleet_down; cleanup' EXIT

# ---- the hub: a bridge and Prometheus ------------------------------------------------------
ip netns add "$HUB"
ip -n "$HUB" link set lo up
ip -n "$HUB" link add br0 type bridge
ip -n "$HUB" addr add 10.77.0.1/24 dev br0
ip -n "$HUB" link set br0 up
printf 'global:\n  evaluation_interval: 1s\n' >"$WORK/prometheus.yml"
ip netns exec "$HUB" prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
	--web.listen-address=10.77.0.1:9090 --web.enable-remote-write-receiver --log.level=warn \
	2>"$WORK/prometheus.log" &
_pids="$_pids $!"
hub() { ip netns exec "$HUB" "$@"; }
ok "Prometheus is ready in the hub namespace" wait_for "$T" hub curl -sf -o /dev/null http://10.77.0.1:9090/-/ready
q() {
	hub curl -s --max-time 10 --data-urlencode "query=$1" http://10.77.0.1:9090/api/v1/query | $PY -c '
import json, sys
print(" ".join(sorted(x["value"][1] for x in json.load(sys.stdin)["data"]["result"])))' 2>/dev/null
}
q_is() { [ "$(q "$1")" = "$2" ]; }
# by_instance EXPR: "INSTANCE VALUE" lines, one per series of the result.
by_instance() {
	hub curl -s --max-time 10 --data-urlencode "query=$1" http://10.77.0.1:9090/api/v1/query | $PY -c '
import json, sys
for x in json.load(sys.stdin)["data"]["result"]:
    print(x["metric"].get("instance", "-"), x["value"][1])' 2>/dev/null
}

# ---- the nodes ------------------------------------------------------------------------------------------
printf '{ "period": "1s", "devices": [ { "type": "amdgpu" } ] }\n' >"$WORK/mon.json"
VRAM=devices/pci0000:00/0000:00:01.1/0000:03:00.0/mem_info_vram_used
once=""
i=1
while [ $i -le $NODES ]; do
	ns=$P-n$i
	d=$WORK/node$i
	mkdir -p "$d"
	cp -a "$FIX/sysfs/host" "$d/sys"
	cp -a "$FIX/proc-devices" "$d/proc"
	echo $((1000000000 + i * 1048576)) >"$d/sys/$VRAM"
	# This node's fixture total, as accel-monitor reads it (the 20 --once runs at the same time).
	"$BIN/accel-monitor" -c "$WORK/mon.json" --path.sysfs "$d/sys" --path.procfs "$d/proc" --once \
		>"$d/once.json" 2>/dev/null &
	once="$once $!"
	_pids="$_pids $!"
	ip netns add "$ns"
	ip link add "$P-h$i" type veth peer name "$P-v$i"
	ip link set "$P-h$i" netns "$HUB"
	ip link set "$P-v$i" netns "$ns"
	ip -n "$HUB" link set "$P-h$i" master br0 up
	ip -n "$ns" link set lo up
	ip -n "$ns" link set "$P-v$i" name eth0
	ip -n "$ns" addr add "10.77.0.$((10 + i))/24" dev eth0
	ip -n "$ns" link set eth0 up
	i=$((i + 1))
done
for p in $once; do wait "$p" || true; done
want=$($PY -c '
import json, sys
print(sum(d.get("used_bytes", 0) for f in sys.argv[1:] for e in json.load(open(f))["device_data"]
          for d in e["report"]["device_memory"]["devices"].values()))' "$WORK"/node*/once.json)
i=1
while [ $i -le $NODES ]; do
	d=$WORK/node$i
	ip netns exec "$P-n$i" sh -c 'KUBE_NODE_NAME=node-$1 "$2/accel-monitor" -c "$3/mon.json" --path.sysfs "$4/sys" \
		--path.procfs "$4/proc" 2>"$4/mon.err" | tee "$4/stream.jsonl" |
		KUBE_NODE_NAME=node-$1 "$2/accel-remote-write" --url http://10.77.0.1:9090/api/v1/write \
		--batch-send-deadline 500ms --max-backoff 2s --timeout 5s --drain-timeout 30s -vv 2>"$4/rw.err"' \
		sh "$i" "$BIN" "$WORK" "$d" &
	_pids="$_pids $!"
	i=$((i + 1))
done
ok "$NODES nodes, each in its own namespace, reach Prometheus only through the bridge" \
	test "$(ip netns list | grep -c "^$P-n")" -eq $NODES
ok "every node's series arrive (20 instances)" wait_for "$T" q_is 'count(count by (instance) (accelerator_memory_used_bytes))' $NODES
ok "sum(accelerator_memory_used_bytes) across the fleet equals the fixtures' total ($want)" \
	wait_for "$T" q_is 'sum(accelerator_memory_used_bytes)' "$want"

# ---- 5 nodes' links down for $DOWN s ------------------------------------------------------------------------
for i in $DOWN_NODES; do ip -n "$P-n$i" link set eth0 down; done
sleep "$DOWN"
for i in $DOWN_NODES; do ip -n "$P-n$i" link set eth0 up; done
retried=0
for i in $DOWN_NODES; do grep -q "retrying in" "$WORK/node$i/rw.err" && retried=$((retried + 1)); done
is "$retried" 5 "the 5 cut-off nodes' sinks retried while their link was down"
ok "the 5 cut-off nodes' sinks deliver again" wait_for "$T" sh -c \
	"for i in $DOWN_NODES; do grep -q 'delivered after' '$WORK'/node\$i/rw.err || exit 1; done"

# ---- stop the monitors: each sink drains and exits; then count per node ------------------------------
for i in $(seq 1 $NODES); do
	mon_pid=$(ip netns pids "$P-n$i" | xargs -r ps -o pid=,comm= -p | awk '$2 == "accel-monitor" {print $1}')
	[ -z "$mon_pid" ] || kill $mon_pid
done
ok "every sink exits after its input ends (queues drained)" wait_for "$T" sh -c \
	"for i in \$(seq 1 $NODES); do [ -z \"\$(ip netns pids $P-n\$i)\" ] || exit 1; done"
bad=""
by_instance 'count_over_time(accelerator_memory_used_bytes{device="0"}[10m])' >"$WORK/counts"
for i in $(seq 1 $NODES); do
	fed=$(grep -c '"device_memory"' "$WORK/node$i/stream.jsonl" || true)
	got=$(awk -v n="node-$i" '$1 == n { print $2 }' "$WORK/counts")
	# More reports than the outage's seconds: the cut-off nodes wrote before, during and after it.
	[ "$fed" = "$got" ] && [ "$fed" -gt "$DOWN" ] || bad="$bad node-$i:fed=$fed,got=$got"
done
is "${bad:-none}" none "every node: one sample per report in Prometheus, the 5 cut-off ones included"
ok "Prometheus logged no out-of-order or duplicate sample" \
	sh -c "! grep -Eqi 'out of order|duplicate|out of bounds' '$WORK/prometheus.log'"
grep -Ei 'out of order|duplicate|out of bounds' "$WORK/prometheus.log" | head -5 | cut -c1-400 | sed 's/^/#   /' >&2 || true
ok "no sink dropped or failed a sample" sh -c "! grep -Eh 'samples sent' '$WORK'/node*/rw.err | grep -Ev 'failed 0, retried [0-9]+, dropped 0;' | grep -q ."

fleet_down
ok "every namespace of the test is gone" sh -c "! ip netns list | grep -q '^$P-'"
done_testing
