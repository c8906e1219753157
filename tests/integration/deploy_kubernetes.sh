#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The Kubernetes manifests (deploy/kubernetes/, docs/deploy.md), offline:
#  - every document of every manifest parses into the API types of Debian's python3-kubernetes
#    with unknown fields, wrong shapes and missing required fields as failures
#    (tests/helpers/k8s_validate.py; each of the three shown to fail first); ServiceMonitor and
#    PrometheusRule against their CRD fields; the PrometheusRule holds the groups of the
#    promtool-tested rule file;
#  - what the issue asks of each: host /proc, /sys, /run read-only and no hostPID in the
#    DaemonSet, NFD node affinity and tolerations, the BIE namespace, label and KUBE_NODE_NAME,
#    the sidecar's shared process namespace; the OTLP DaemonSet's accel-otlp sending to its collector sidecar;
#  - the container command line is the image's CMD (deploy/container/Dockerfile), and the test
#    runs it: the DaemonSet's, the BIE Deployment's and the sidecar's accel-monitor container,
#    each in a mount+network namespace with the manifest's mounts, env, user and capabilities
#    (tests/helpers/k8s_run.sh), serve /metrics from the host's mounted trees, /v1/collect under
#    the node's name, and stop on SIGTERM with status 0;
#  - the DaemonSet's accel-monitor reaches a kubelet pod-resources socket that is root's
#    (srwxr-xr-x, tests/helpers/podres_server.py) through its hostPath mount, as user 0 with
#    every capability dropped; the same manifest as user 65534 gets EACCES and says so.
. "$(dirname "$0")/lib.sh"

PY3=/usr/bin/python3
K=$TOP/deploy/kubernetes
need "python3-kubernetes and python3-yaml" $PY3 -c 'import kubernetes.client, yaml'
need "unshare, chroot, setsid, ip (util-linux, coreutils, iproute2)" sh -c 'command -v unshare && command -v chroot && command -v setsid && command -v ip'
need "scdoc (make install)" command -v scdoc
need "curl" command -v curl
need "$BIN/accel-monitor is built" test -x "$BIN/accel-monitor"
need "python3-grpcio and python3-grpc-tools (scripts/install-deps.sh)" $PY3 -c 'import grpc, grpc_tools'
need "setpriv (util-linux)" command -v setpriv
manifests=$(cd "$TOP" && ls deploy/kubernetes/*.yaml deploy/kubernetes/*/*.yaml)

# ---- the validator can fail ---------------------------------------------------------------------
sed 's/^      automountServiceAccountToken: true$/      automountServiceAccountToken: true\n      hostPIDx: true/' "$K/daemonset.yaml" >"$WORK/unknown.yaml"
ok "validator: an unknown field fails" sh -c "! $PY3 '$HELP/k8s_validate.py' '$WORK/unknown.yaml' 2>'$WORK/v.err' && grep -q \"unknown field 'hostPIDx'\" '$WORK/v.err'"
sed 's/containerPort: 8000/containerPort: "eight"/' "$K/daemonset.yaml" >"$WORK/type.yaml"
ok "validator: a wrong type fails" sh -c "! $PY3 '$HELP/k8s_validate.py' '$WORK/type.yaml' 2>'$WORK/v.err' && grep -q 'int expected' '$WORK/v.err'"
sed 's/^        - name: accel-monitor$/        - stdin: false/' "$K/daemonset.yaml" >"$WORK/req.yaml"
ok "validator: a missing required field fails" sh -c "! $PY3 '$HELP/k8s_validate.py' '$WORK/req.yaml' 2>'$WORK/v.err' && grep -q 'name' '$WORK/v.err'"
sed 's/^    - port: metrics$/    - port: metrics\n      portx: 1/' "$K/servicemonitor.yaml" >"$WORK/sm.yaml"
ok "validator: an unknown ServiceMonitor field fails" sh -c "! $PY3 '$HELP/k8s_validate.py' '$WORK/sm.yaml' 2>/dev/null"

# ---- every manifest --------------------------------------------------------------------------------
for m in $manifests; do
	ok "$m: every document valid" $PY3 "$HELP/k8s_validate.py" "$TOP/$m"
done
ok "the PrometheusRule holds the rule file's groups (else run deploy/kubernetes/prometheusrule.py)" $PY3 -c '
import sys, yaml
a = yaml.safe_load(open(sys.argv[1]))["spec"]
b = yaml.safe_load(open(sys.argv[2]))
sys.exit(a != b)' "$K/prometheusrule.yaml" "$TOP/deploy/prometheus/accel-monitor.rules.yml"
ok "kustomization: every resource exists" sh -c "cd '$K' && for r in \$(sed -n 's/^  - //p' kustomization.yaml); do test -s \$r || exit 1; done"

# facts FILE EXPR: a Python expression over the documents of FILE (list d), printed.
facts() { $PY3 -c '
import sys, yaml
d = [x for x in yaml.safe_load_all(open(sys.argv[1])) if x]
print(eval(sys.argv[2]))' "$@"; }
DS=$K/daemonset.yaml
is "$(facts "$DS" 'sorted((v["hostPath"]["path"], m["readOnly"]) for v in d[0]["spec"]["template"]["spec"]["volumes"] if "hostPath" in v for m in d[0]["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] if m["name"] == v["name"])')" \
	"[('/proc', True), ('/run', True), ('/sys', True), ('/var/lib/kubelet/pod-resources', True)]" \
	"DaemonSet: host /proc, /sys, /run and the kubelet's pod-resources folder mounted read-only"
is "$(facts "$DS" 'd[0]["spec"]["template"]["spec"].get("hostPID", False)')" False "DaemonSet: no hostPID"
is "$(facts "$DS" '(d[0]["spec"]["template"]["spec"]["securityContext"], d[0]["spec"]["template"]["spec"]["containers"][0]["securityContext"])')" \
	"({'runAsNonRoot': False, 'runAsUser': 0, 'runAsGroup': 0, 'seccompProfile': {'type': 'RuntimeDefault'}}, {'allowPrivilegeEscalation': False, 'readOnlyRootFilesystem': True, 'capabilities': {'drop': ['ALL']}})" \
	"DaemonSet: user 0 with every capability dropped, no privilege escalation, read-only root, seccomp RuntimeDefault"
is "$(facts "$DS" 'sorted(e["key"] for t in d[0]["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] for e in t["matchExpressions"])')" \
	"['feature.node.kubernetes.io/pci-1002.present', 'feature.node.kubernetes.io/pci-10de.present', 'feature.node.kubernetes.io/pci-1d0f.present', 'feature.node.kubernetes.io/usb-ff_03e7_2485.present']" \
	"DaemonSet: NFD node affinity for NVIDIA, AMD, Neuron, NCS2"
is "$(facts "$DS" 'sorted(t["key"] for t in d[0]["spec"]["template"]["spec"]["tolerations"])')" \
	"['amd.com/gpu', 'aws.amazon.com/neuron', 'nvidia.com/gpu']" "DaemonSet: tolerations for GPU and Neuron taints"
B=$K/bie/deployment.yaml
is "$(facts "$B" '[(x["kind"], x["metadata"]["namespace"], x["metadata"]["labels"]["baetyl-service-name"]) for x in d]')" \
	"[('Deployment', 'baetyl-edge-system', 'baetyl-accelerator-metrics'), ('Service', 'baetyl-edge-system', 'baetyl-accelerator-metrics')]" \
	"BIE: namespace baetyl-edge-system, label baetyl-service-name"
is "$(facts "$B" '[e["valueFrom"]["fieldRef"]["fieldPath"] for e in d[0]["spec"]["template"]["spec"]["containers"][0]["env"] if e["name"] == "KUBE_NODE_NAME"]')" \
	"['spec.nodeName']" "BIE: KUBE_NODE_NAME from spec.nodeName"
is "$(facts "$K/sidecar/triton.yaml" '[x["spec"]["template"]["spec"]["shareProcessNamespace"] for x in d if x["kind"] == "Deployment"]')" \
	"[True]" "sidecar: one pod, a shared process namespace"

# ---- the command line is the image's, and it runs ------------------------------------------------------
cmd_image=$(sed -n 's/^CMD \[\(.*\)\]$/\1/p' "$TOP/deploy/container/Dockerfile" | tr -d '", ')
# The image's CMD, with the port the manifest names "metrics" in place of 8000 (the sidecar's
# accel-prom takes 9400: Triton keeps its 8000).
for m in deploy/kubernetes/daemonset.yaml deploy/kubernetes/bie/deployment.yaml deploy/kubernetes/sidecar/triton.yaml; do
	is "$(facts "$TOP/$m" '"".join("".join(c["command"]).replace("--port" + str(([p["containerPort"] for p in c["ports"] if p["name"] == "metrics"] + [8000])[0]), "--port8000") for x in d if x["kind"] in ("DaemonSet", "Deployment") for c in x["spec"]["template"]["spec"]["containers"] if c["name"] == "accel-monitor")')" \
		"$cmd_image" "$m: the accel-monitor container's command is the image's CMD (on its metrics port)"
done
is "$(facts "$TOP/deploy/kubernetes/sidecar/triton.yaml" '[x["metadata"]["annotations"]["prometheus.io/port"] for x in d if x["kind"] == "Deployment" for x in [x["spec"]["template"]]]')" \
	"['9400']" "sidecar: Prometheus scrapes the metrics port (prometheus.io/port)"

# ---- container attribution, the ConfigMaps' configs ------------------------------------
opts=$(facts "$DS" '[e["value"] for e in d[0]["spec"]["template"]["spec"]["containers"][0]["env"] if e["name"] == "ACCEL_MONITOR_OPTS"][0]')
for f in "--path.procfs /host/proc" "--path.sysfs /host/sys" "--path.run /host/run" "--path.cgroupfs /host/sys/fs/cgroup" \
	"--pod-resources-socket /host/var/lib/kubelet/pod-resources/kubelet.sock" \
	"--kubelet-url https://\$(NODE_IP):10250" "--kubelet-token-file /var/run/secrets/kubernetes.io/serviceaccount/token" \
	"--kubelet-ca-file /var/run/secrets/kubernetes.io/serviceaccount/ca.crt"; do
	ok "DaemonSet: accel-monitor runs with $f" sh -c 'case " $1 " in *" $2 "*) exit 0 ;; esac; exit 1' sh "$opts" "$f"
done
is "$(facts "$DS" 'sorted((e["name"], e["valueFrom"]["fieldRef"]["fieldPath"]) for e in d[0]["spec"]["template"]["spec"]["containers"][0]["env"] if "valueFrom" in e)')" \
	"[('KUBE_NODE_NAME', 'spec.nodeName'), ('NODE_IP', 'status.hostIP'), ('POD_NAME', 'metadata.name'), ('POD_NAMESPACE', 'metadata.namespace')]" \
	"DaemonSet: node name, node IP, pod name and namespace from the downward API"
ok "DaemonSet: NODE_IP is defined before ACCEL_MONITOR_OPTS uses it (the kubelet expands only earlier variables)" $PY3 -c '
import sys, yaml
env = [e["name"] for e in next(yaml.safe_load_all(open(sys.argv[1])))["spec"]["template"]["spec"]["containers"][0]["env"]]
sys.exit(env.index("NODE_IP") > env.index("ACCEL_MONITOR_OPTS"))' "$DS"
R=$K/rbac.yaml
is "$(facts "$DS" '(d[0]["spec"]["template"]["spec"]["serviceAccountName"], d[0]["spec"]["template"]["spec"]["automountServiceAccountToken"])')" \
	"('accel-monitor', True)" "DaemonSet: the accel-monitor service account, its token mounted"
is "$(facts "$R" '[(x["kind"], x["metadata"]["name"]) for x in d]')" \
	"[('ServiceAccount', 'accel-monitor'), ('ClusterRole', 'accel-monitor'), ('ClusterRoleBinding', 'accel-monitor')]" \
	"rbac.yaml: a ServiceAccount, a ClusterRole, a ClusterRoleBinding"
is "$(facts "$R" 'd[1]["rules"]')" "[{'apiGroups': [''], 'resources': ['nodes/proxy', 'nodes/pods'], 'verbs': ['get']}]" \
	"rbac.yaml: get on nodes/proxy and nodes/pods (the kubelet's /pods), nothing else"
is "$(facts "$R" '(d[2]["roleRef"]["name"], d[2]["subjects"])')" \
	"('accel-monitor', [{'kind': 'ServiceAccount', 'name': 'accel-monitor', 'namespace': 'accel-monitor'}])" \
	"rbac.yaml: the binding gives the role to the DaemonSet's account"
ok "kustomization lists rbac.yaml" grep -qx '  - rbac.yaml' "$K/kustomization.yaml"
is "$(facts "$K/sidecar/triton.yaml" '[r["address"] + " " + ",".join(m["type"] for m in r["metrics"]) for x in d if x["kind"] == "ConfigMap" for r in __import__("json").loads(x["data"]["accel-monitor.json"])["runtimes"]]')" \
	"['http://127.0.0.1:8002/metrics execution_stats,runtime_vcpu_usage,memory_used']" \
	"sidecar: accel-monitor scrapes Triton's metrics over localhost (an endpoint runtime with execution_stats)"
O=$K/otlp/daemonset.yaml
is "$(facts "$O" '[(c["name"], c.get("command", c.get("args"))[:2]) for x in d if x["kind"] == "DaemonSet" for c in x["spec"]["template"]["spec"]["containers"]]')" \
	"[('accel-monitor', ['accel-pipeline', 'accel-otlp']), ('otel-collector', ['--config=/etc/otelcol/otel-collector.yaml'])]" \
	"otlp: accel-otlp in the image, an OpenTelemetry Collector as its sidecar"
is "$(facts "$O" '[(e["value"] == "http://" + o["receivers"]["otlp"]["protocols"]["http"]["endpoint"], all(n in o[k] for k in ("receivers", "processors", "exporters") for n in o["service"]["pipelines"]["metrics"].get(k, []))) for x in d if x["kind"] == "ConfigMap" for o in [__import__("yaml").safe_load(x["data"]["otel-collector.yaml"])] for y in d if y["kind"] == "DaemonSet" for e in y["spec"]["template"]["spec"]["containers"][0]["env"] if e["name"] == "OTEL_EXPORTER_OTLP_ENDPOINT"]')" \
	"[(True, True)]" "otlp: accel-otlp sends to the sidecar's otlp receiver over the pod's loopback; the collector's pipeline names only parts it defines"
# Every accel-monitor config in a ConfigMap passes accel-monitor --check-config (the OTLP manifest's ConfigMap also
# holds its collector's otel-collector.yaml, checked above).
for m in $manifests; do
	$PY3 -c '
import os, sys, yaml
for x in yaml.safe_load_all(open(sys.argv[1])):
    if x and x.get("kind") == "ConfigMap":
        for k, v in x.get("data", {}).items():
            if k.startswith("accel-monitor.") and k.endswith((".json", ".yaml", ".yml")):
                p = os.path.join(sys.argv[2], x["metadata"]["name"] + "-" + k)
                open(p, "w").write(v)
                print(p)' "$TOP/$m" "$WORK" >"$WORK/cms"
	while read -r c; do
		ok "$m: $(basename "$c") passes accel-monitor --check-config" "$BIN/accel-monitor" -c "$c" --check-config
	done <"$WORK/cms"
done
SAN=
[ "${ACCEL_SANITIZED:-0}" = 1 ] && SAN=address,undefined
ok "make install DESTDIR (the image's /usr/bin)" sh -c "make --no-print-directory -s -C '$TOP' SANITIZER=$SAN PREFIX=/usr DESTDIR='$WORK/dest' install >'$WORK/make.log' 2>&1"
install -m 755 "$TOP/deploy/container/accel-pipeline" "$WORK/dest/usr/bin/accel-pipeline"
memtotal=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024))
ncpu=$(grep -c '^cpu[0-9]' /proc/stat)
# The kubelet's pod-resources socket, root's and writable by root alone, as the kubelet leaves it.
KPR=$WORK/kubelet-pod-resources
mkdir -p "$KPR"
printf '{"pods": [], "allocatable": []}\n' >"$WORK/podres.json"
spawn SPID $PY3 "$HELP/podres_server.py" --proto "$TOP/monitor/host/podres_api.proto" --dir "$WORK/py" \
	--socket "$KPR/kubelet.sock" --scenario "$WORK/podres.json" --log "$WORK/podres.calls"
ok "the pod-resources server serves" wait_for $((30 * SLOW)) test -e "$KPR/kubelet.sock.ready"
chmod 755 "$KPR/kubelet.sock"
for m in daemonset bie/deployment sidecar/triton; do
	w=$WORK/run-$(echo "$m" | tr / -)
	mkdir -p "$w"
	set --
	if [ "$m" = daemonset ]; then
		set -- /var/lib/kubelet/pod-resources="$KPR"
		export K8S_RUN_UNTIL="grep -q /v1.PodResourcesLister/ '$WORK/podres.calls'"
	fi
	ok "$m: the container runs (mount+network namespace, the manifest's mounts, env, user, capabilities)" \
		"$HELP/k8s_run.sh" "$K/$m.yaml" accel-monitor "$WORK/dest/usr/bin" "$w" node-7 "$@"
	unset K8S_RUN_UNTIL
	ok "$m: /metrics has the host's memory (system_memory_total_bytes)" grep -q "^system_memory_total_bytes{.*} $memtotal\$" "$w/metrics"
	ok "$m: /metrics has the host's CPUs (system_vcpu_count $ncpu)" grep -q "^system_vcpu_count{.*} $ncpu\$" "$w/metrics"
	ok "$m: /v1/collect under the node's name (KUBE_NODE_NAME)" grep -q '^{"node-7":' "$w/collect"
	is "$(cut -d' ' -f1 "$w/stop" 2>/dev/null)" 0 "$m: SIGTERM stops it with status 0"
	is "$(grep -c . "$w/left" 2>/dev/null)" 0 "$m: nothing of it left running"
done
ok "daemonset: accel-monitor (user 0, no capabilities) asked the kubelet's root-owned pod-resources socket" \
	grep -q /v1.PodResourcesLister/ "$WORK/podres.calls"
is "$(grep -c 'podres:' "$WORK/run-daemonset/container.err")" 0 "daemonset: ... and logged no pod-resources failure"
# The same DaemonSet as user 65534 (as it ran before): connect(2) needs write permission on the socket.
sed 's/^        runAsUser: 0$/        runAsUser: 65534/' "$DS" >"$WORK/ds-nobody.yaml"
: >"$WORK/podres.calls"
mkdir -p "$WORK/run-nobody"
export K8S_RUN_UNTIL="grep -q podres: '$WORK/run-nobody/container.err'"
ok "daemonset as user 65534: the container runs" "$HELP/k8s_run.sh" "$WORK/ds-nobody.yaml" accel-monitor \
	"$WORK/dest/usr/bin" "$WORK/run-nobody" node-7 /var/lib/kubelet/pod-resources="$KPR"
unset K8S_RUN_UNTIL
ok "daemonset as user 65534: the socket refuses it, and it says so with the socket's path" \
	grep -q "podres: pod-resources /host/var/lib/kubelet/pod-resources/kubelet.sock .*Permission denied" \
	"$WORK/run-nobody/container.err"
is "$(grep -c /v1.PodResourcesLister/ "$WORK/podres.calls")" 0 "daemonset as user 65534: no call reached the kubelet"
# The ConfigMap's config asks for the nvidia collector alone: without a GPU it says so.
ok "sidecar: accel-monitor read the ConfigMap's config (its devices: nvidia)" \
	grep -q 'devices (nvidia)' "$WORK/run-sidecar-triton/container.err"
done_testing
