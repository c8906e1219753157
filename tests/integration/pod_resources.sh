#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-monitor's kubelet pod-resources client, end to end: a real gRPC server on a unix socket
# (tests/helpers/podres_server.py, Debian's python3-grpcio, our podres_api.proto) and accel-monitor with
# --pod-resources-socket or the config's host.pod_resources_socket:
#   - the socket answers: GetAllocatableResources once, List once per --kubelet-refresh; reports keep their
#     period and nothing is logged;
#   - the default: ROOTFS/var/lib/kubelet/pod-resources/kubelet.sock is asked when it exists, and nothing
#     (no call, no log) when it does not;
#   - the socket missing: one warning that names the socket and the method, however many retries;
#   - the flag wins over the file, "" turns the client off (--check-config shows each);
#   - SIGHUP: a config that names another socket moves the client to it.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
export AWS_EC2_METADATA_DISABLED=true
need "python3-grpcio and python3-grpc-tools (scripts/install-deps.sh)" $PY -c 'import grpc, grpc_tools'

cd "$WORK"
cat >scenario.json <<'EOF'
{"pods": [{"name": "train-0", "namespace": "ml", "containers": [{"name": "main",
   "devices": [{"resource": "nvidia.com/gpu", "ids": ["GPU-aaaa", "GPU-bbbb"]}]}]}],
 "allocatable": [{"resource": "nvidia.com/gpu", "ids": ["GPU-aaaa", "GPU-bbbb"]}]}
EOF
cat >mon.json <<'EOF'
{"period": "500ms", "system_metrics": [], "devices": []}
EOF
mkdir -p root/var/lib/kubelet/pod-resources empty
SOCK=$WORK/root/var/lib/kubelet/pod-resources/kubelet.sock
spawn SPID $PY "$HELP/podres_server.py" --proto "$TOP/monitor/host/podres_api.proto" --dir "$WORK/py" \
	--socket "$SOCK" --scenario scenario.json --log calls
ok "the pod-resources server serves" wait_for $((30 * SLOW)) test -e "$SOCK.ready"
calls() { grep -c "$1" calls 2>/dev/null || true; }
socket_of() { $PY -c 'import json, sys; print(json.load(sys.stdin)["host"]["pod_resources_socket"])'; }
warnings() { grep -c "podres:" "$1" || true; }

# ---- the socket answers --------------------------------------------------------------------------------------
six_reports good "[ \$(grep -c /v1.PodResourcesLister/List calls) -ge 3 ]" "$MON" -c mon.json \
	--pod-resources-socket "$SOCK" --kubelet-refresh 1s
is "$(calls GetAllocatableResources)" 1 "good: GetAllocatableResources once, at the start"
ok "good: List at most once a second ($(calls /List) in about 3 s)" sh -c '[ "$1" -ge 3 ] && [ "$1" -le 5 ]' sh "$(calls /List)"
is "$(warnings good.err)" 0 "good: nothing logged"

# ---- the default path --------------------------------------------------------------------------------------
: >calls
six_reports default "[ \$(grep -c /List calls) -ge 1 ]" "$MON" -c mon.json --path.rootfs "$WORK/root"
ok "default: ROOTFS/var/lib/kubelet/pod-resources/kubelet.sock is asked when it exists" test "$(calls /List)" -ge 1
: >calls
six_reports nodefault - "$MON" -c mon.json --path.rootfs "$WORK/empty"
is "$(calls /v1)" 0 "no socket at the default path: nothing is asked"
is "$(warnings nodefault.err)" 0 "... and nothing is logged"

# ---- the socket missing ----------------------------------------------------------------------------------------
six_reports missing - "$MON" -c mon.json --pod-resources-socket "$WORK/none.sock" --kubelet-refresh 1s
is "$(warnings missing.err)" 1 "missing: one warning however many retries"
ok "missing: it names the socket, the method and the error" \
	grep -q "podres: pod-resources $WORK/none.sock /v1.PodResourcesLister/GetAllocatableResources: cannot connect: No such file or directory" missing.err

# ---- the flag, the file, "" -------------------------------------------------------------------------------------
cat >file.json <<EOF
{"period": "500ms", "system_metrics": [], "devices": [], "host": {"pod_resources_socket": "$WORK/from-file.sock"}}
EOF
is "$($MON -c file.json --check-config | socket_of)" "$WORK/from-file.sock" "--check-config: the file's socket"
is "$($MON -c file.json --pod-resources-socket "$SOCK" --check-config | socket_of)" "$SOCK" \
	"--check-config: the flag wins over the file"
is "$($MON -c file.json --pod-resources-socket "" --path.rootfs "$WORK/root" --check-config | socket_of)" "" \
	"--check-config: \"\" turns it off, even with the default path present"
: >calls
six_reports off - "$MON" -c mon.json --pod-resources-socket "" --path.rootfs "$WORK/root"
is "$(calls /v1)" 0 "\"\": nothing is asked"

# ---- SIGHUP moves the client ---------------------------------------------------------------------------------------
: >calls
"$MON" -c file.json --kubelet-refresh 1s >hup.out 2>hup.err &
MPID=$!
_pids="$_pids $MPID"
wait_for $((10 * SLOW)) grep -q "from-file.sock" hup.err || true
cat >file.json <<EOF
{"period": "500ms", "system_metrics": [], "devices": [], "host": {"pod_resources_socket": "$SOCK"}}
EOF
kill -HUP "$MPID"
ok "SIGHUP: the client asks the socket the reloaded config names" wait_for $((20 * SLOW)) grep -q /List calls
kill -TERM "$MPID"
wait "$MPID" || true
ok "SIGHUP: the old socket's failure was logged (once)" test "$(grep -c 'from-file.sock' hup.err)" -eq 1
done_testing
