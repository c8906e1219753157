#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Pod and container names from the kubelet's /pods, for containers whose runtime state names
# nothing: a fake kubelet (tests/helpers/fake_kubelet.py, HTTPS on 127.0.0.1 with a certificate from a CA
# made here, bearer token checked) and accel-monitor --kubelet-url/--kubelet-token-file/--kubelet-ca-file on
# the v2 fixture tree (tests/fixtures/containers/v2-systemd: pid 1008's container has no state files; pid
# 1007's pod is unknown to everyone). The fetch runs on the producer's loop and the pod list is reduced on a
# thread, never on the loop:
#   - the kubelet answers: 1008 gets the kubelet's names, 1007 keeps its ids;
#   - 401 (bad token or refused), garbage, the kubelet down, a CA that did not sign it: names fall back to
#     the ids, reports keep their period, the error is logged once although the fetch is retried;
#   - a kubelet that never answers: the reports keep their period, and the monitor exits at once at the end.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
V2=$FIX/containers/v2-systemd
export AWS_EC2_METADATA_DISABLED=true

need openssl command -v openssl

# ---- certificates, token, pods ----------------------------------------------------------------------------
cd "$WORK"
kubelet_tls
tls_ca other.key other.pem
ok "openssl made the CA and the kubelet's certificate" test -s server.pem
printf 'eyJhbGciOiJSUzI1NiJ9.test-service-account-token\n' >token
printf 'not-the-token\n' >badtoken
ID_K=$(printf 'e6%.0s' $(seq 32))
ID_G=$(printf 'd5%.0s' $(seq 32))
cat >pods.json <<EOF
{"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [
 {"metadata": {"name": "from-kubelet", "namespace": "kube-ns", "uid": "0f1e2d3c-4b5a-4697-8877-665544332211"},
  "spec": {"containers": [{"name": "sidecar"}], "nodeName": "node-7"},
  "status": {"phase": "Running", "containerStatuses": [{"name": "sidecar", "containerID": "containerd://$ID_K",
             "ready": true}]}},
 {"metadata": {"name": "other", "namespace": "default", "uid": "99999999-0000-4000-8000-000000000000"},
  "status": {"containerStatuses": [{"name": "x", "containerID": "containerd://$(printf 'f7%.0s' $(seq 32))"}]}}
]}
EOF
cat >mon.json <<'EOF'
{"period": "500ms", "system_metrics": [], "devices": [],
 "runtimes": [{"address": "pid:1007", "metrics": [{"type": "memory_used"}]},
              {"address": "pid:1008", "metrics": [{"type": "memory_used"}]}]}
EOF
echo ok >mode
spawn KPID $PY "$HELP/fake_kubelet.py" --cert server.pem --key server.key --token-file token --pods pods.json \
	--port-file kport --mode-file mode --log klog
ok "the fake kubelet listens" wait_for 10 test -s kport
KURL=https://127.0.0.1:$(cat kport)

# run NAME UNTIL [options]: six_reports (lib.sh) of accel-monitor with the kubelet options (token and CA unless
# given).
run() {
	n_=$1 u_=$2
	shift 2
	six_reports "$n_" "$u_" "$MON" -c mon.json --path.procfs "$V2/proc" --path.rootfs "$V2/rootfs" \
		--kubelet-url "$KURL" --kubelet-refresh 1s "$@"
}
# names FILE LINE PID: the container object's pod/namespace/name of pid in FILE's report LINE (1-based), "-" for
# none. The tests ask the last report's, written once the kubelet's answer (or its failure) was taken in (run's
# UNTIL).
names() {
	$PY - "$1" "$2" "$3" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1], encoding="utf-8").read().splitlines()[int(sys.argv[2]) - 1])
c = [e for e in r["runtime_data"] if e["pid"] == int(sys.argv[3])][0]["container"]
print("%s/%s/%s" % (c.get("namespace", "-"), c.get("pod", "-"), c.get("name", "-")))
EOF
}
warnings() { grep -c "kubelet:" "$1" || true; }

# ---- the kubelet answers ------------------------------------------------------------------------------------
run good "grep -q from-kubelet good.out" --kubelet-token-file token --kubelet-ca-file ca.pem
is "$(names good.out $(nlines good.out) 1008)" "kube-ns/from-kubelet/sidecar" "good: the kubelet names pid 1008's pod and container"
is "$(names good.out $(nlines good.out) 1007)" "-/-/-" "good: pid 1007's pod is unknown to the kubelet too: its ids stand"
ok "good: the token was sent and accepted" grep -q "GET /pods 200" klog
is "$(warnings good.err)" 0 "good: nothing logged"
ok "accel-prom: the kubelet's names label the series" sh -c '
	port=$(python3 -c "import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); print(s.getsockname()[1])")
	"$1" --listen-address 127.0.0.1:$port <good.out 2>/dev/null & p=$!
	i=0; while [ $i -lt 100 ] && ! curl -s http://127.0.0.1:$port/metrics | grep -qx "accel_prom_input_open 0"; do
		sleep 0.1; i=$((i + 1)); done
	curl -s http://127.0.0.1:$port/metrics >good.prom; kill $p
	grep -q "^runtime_memory_used_bytes{.*container=\"sidecar\".*namespace=\"kube-ns\".*pid=\"1008\".*pod=\"from-kubelet\"" good.prom &&
	grep -q "^runtime_memory_used_bytes{.*container=\"$2\".*pid=\"1007\".*pod=\"5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9\"" good.prom' \
	sh "$BIN/accel-prom" "$ID_G"

# ---- failures: names fall back to ids, one warning per error --------------------------------------------------
: >klog
run badtoken "grep -q kubelet: badtoken.err && [ \$(grep -c ' 401\$' klog) -ge 2 ]" \
	--kubelet-token-file badtoken --kubelet-ca-file ca.pem
is "$(names badtoken.out $(nlines badtoken.out) 1008)" "-/-/-" "401: names fall back to the ids"
is "$(warnings badtoken.err)" 1 "401: the error is logged once"
ok "401: it says HTTP 401" grep -q "kubelet: .*HTTP 401" badtoken.err
ok "401: the fetch was retried (at most once a second)" test "$(grep -c ' 401$' klog)" -ge 2

echo garbage >mode
run garbage "grep -q kubelet: garbage.err" --kubelet-token-file token --kubelet-ca-file ca.pem
is "$(names garbage.out $(nlines garbage.out) 1008)" "-/-/-" "garbage: names fall back to the ids"
is "$(warnings garbage.err)" 1 "garbage: the error is logged once"
ok "garbage: it says not a PodList" grep -q "kubelet: .*not a PodList" garbage.err

echo ok >mode
run wrongca "grep -q kubelet: wrongca.err" --kubelet-token-file token --kubelet-ca-file other.pem
is "$(names wrongca.out $(nlines wrongca.out) 1008)" "-/-/-" "a CA that did not sign the kubelet: names fall back to the ids"
is "$(warnings wrongca.err)" 1 "a CA that did not sign the kubelet: logged once"

echo hang >mode
run hang - --kubelet-token-file token --kubelet-ca-file ca.pem
is "$(names hang.out $(nlines hang.out) 1008)" "-/-/-" "a kubelet that never answers: names fall back to the ids"

# ---- a pod list of 29 MB, and one over the cap (32 MiB): the loop never parses them ----------------------------------
# bigpods N: pods.small with N more pods, each as large as a pod with a long last-applied-configuration and
# managed fields (about 116 kB), into pods.json (the fake kubelet reads it at every request). A node runs 110
# pods by default, 250 at most in practice: a list of tens of megabytes has large pods, not many.
bigpods() {
	$PY - pods.small "$1" >pods.json <<'EOF'
import json, sys
src = json.load(open(sys.argv[1]))
for i in range(int(sys.argv[2])):
    src["items"].append({"metadata": {"name": "filler-%d" % i, "namespace": "ns-%d" % (i % 50),
                                      "uid": "%08x-0000-4000-8000-%012x" % (i, i),
                                      "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "x" * 80000},
                                      "managedFields": [{"manager": "kubelet", "fieldsV1": {"f:status": "y" * 36000}}]},
                         "status": {"containerStatuses": [{"name": "c", "containerID": "containerd://%064x" % i}]}})
json.dump(src, sys.stdout)
EOF
}
# on_time (lib.sh) with 12 reports within 200 ms: a loaded machine's scheduling, a sanitized build's slower
# transfer; the parse of such a list on the loop alone takes 0.55 s in the plain build, seconds in the sanitized one.
cp pods.json pods.small
echo ok >mode
cat >monbig.json <<'EOF'
{"period": "500ms", "system_metrics": [{"type": "memory_info"}], "devices": [],
 "runtimes": [{"address": "pid:1008", "metrics": [{"type": "memory_used"}]}]}
EOF
for case_ in big:250 huge:300; do
	n=${case_#*:}
	case_=${case_%:*}
	bigpods "$n"
	size=$(wc -c <pods.json)
	rt "$MON" -c monbig.json --path.procfs "$V2/proc" --path.rootfs "$V2/rootfs" --kubelet-url "$KURL" \
		--kubelet-refresh 1s --kubelet-token-file token --kubelet-ca-file ca.pem -n 14 >"$case_.out" 2>"$case_.err" || :
	ok "$case_ ($size bytes of pods): every report 500 ms after the last (the list is never parsed on the loop)" \
		on_time "$case_.out" 12 200
done
is "$(names big.out $(nlines big.out) 1008)" "kube-ns/from-kubelet/sidecar" "big: pid 1008 named from a list of 252 pods"
is "$(names huge.out $(nlines huge.out) 1008)" "-/-/-" "huge: over 32 MiB, refused: names fall back to the ids"
ok "huge: the error says the body is over the cap" grep -q "kubelet: .*body over 33554432 bytes" huge.err
cp pods.small pods.json

kill "$KPID"
wait "$KPID" 2>/dev/null || true
run down "grep -q kubelet: down.err" --kubelet-token-file token --kubelet-ca-file ca.pem
is "$(names down.out $(nlines down.out) 1008)" "-/-/-" "the kubelet down: names fall back to the ids"
is "$(warnings down.err)" 1 "the kubelet down: logged once"

done_testing
