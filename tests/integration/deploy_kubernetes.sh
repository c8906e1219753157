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
#    the sidecar's shared process namespace;
#  - the container command line is the image's CMD (deploy/container/Dockerfile), and the test
#    runs it: the DaemonSet's, the BIE Deployment's and the sidecar's accel-monitor container,
#    each in a mount+network namespace with the manifest's mounts, env and user
#    (tests/helpers/k8s_run.sh), serve /metrics from the host's mounted trees, /v1/collect under
#    the node's name, and stop on SIGTERM with status 0.
. "$(dirname "$0")/lib.sh"

PY3=/usr/bin/python3
K=$TOP/deploy/kubernetes
need "python3-kubernetes and python3-yaml" $PY3 -c 'import kubernetes.client, yaml'
need "unshare, chroot, setsid, ip (util-linux, coreutils, iproute2)" sh -c 'command -v unshare && command -v chroot && command -v setsid && command -v ip'
need "scdoc (make install)" command -v scdoc
need "curl" command -v curl
manifests=$(cd "$TOP" && ls deploy/kubernetes/*.yaml deploy/kubernetes/*/*.yaml)

# ---- the validator can fail ---------------------------------------------------------------------
sed 's/^      automountServiceAccountToken: false$/      automountServiceAccountToken: false\n      hostPIDx: true/' "$K/daemonset.yaml" >"$WORK/unknown.yaml"
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
is "$(facts "$DS" 'sorted((v["hostPath"]["path"], m["readOnly"]) for v in d[0]["spec"]["template"]["spec"]["volumes"] for m in d[0]["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] if m["name"] == v["name"])')" \
	"[('/proc', True), ('/run', True), ('/sys', True)]" "DaemonSet: host /proc, /sys, /run mounted read-only"
is "$(facts "$DS" 'd[0]["spec"]["template"]["spec"].get("hostPID", False)')" False "DaemonSet: no hostPID"
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
for m in deploy/kubernetes/daemonset.yaml deploy/kubernetes/bie/deployment.yaml deploy/kubernetes/sidecar/triton.yaml; do
	is "$(facts "$TOP/$m" '"".join("".join(c["command"]) for x in d if x["kind"] in ("DaemonSet", "Deployment") for c in x["spec"]["template"]["spec"]["containers"] if c["name"] == "accel-monitor")')" \
		"$cmd_image" "$m: the accel-monitor container's command is the image's CMD"
done
SAN=
[ "${ACCEL_SANITIZED:-0}" = 1 ] && SAN=address,undefined
ok "make install DESTDIR (the image's /usr/bin)" sh -c "make --no-print-directory -s -C '$TOP' SANITIZER=$SAN PREFIX=/usr DESTDIR='$WORK/dest' install >'$WORK/make.log' 2>&1"
install -m 755 "$TOP/deploy/container/accel-pipeline" "$WORK/dest/usr/bin/accel-pipeline"
memtotal=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024))
ncpu=$(grep -c '^cpu[0-9]' /proc/stat)
for m in daemonset bie/deployment sidecar/triton; do
	w=$WORK/run-$(echo "$m" | tr / -)
	mkdir -p "$w"
	ok "$m: the container runs (mount+network namespace, the manifest's mounts, env, user)" \
		"$HELP/k8s_run.sh" "$K/$m.yaml" accel-monitor "$WORK/dest/usr/bin" "$w" node-7
	ok "$m: /metrics has the host's memory (system_memory_total_bytes)" grep -q "^system_memory_total_bytes{.*} $memtotal\$" "$w/metrics"
	ok "$m: /metrics has the host's CPUs (system_vcpu_count $ncpu)" grep -q "^system_vcpu_count{.*} $ncpu\$" "$w/metrics"
	ok "$m: /v1/collect under the node's name (KUBE_NODE_NAME)" grep -q '^{"node-7":' "$w/collect"
	is "$(cut -d' ' -f1 "$w/stop" 2>/dev/null)" 0 "$m: SIGTERM stops it with status 0"
	is "$(grep -c . "$w/left" 2>/dev/null)" 0 "$m: nothing of it left running"
done
# The ConfigMap's config asks for the nvidia collector alone: without a GPU it says so.
ok "sidecar: accel-monitor read the ConfigMap's config (its devices: nvidia)" \
	grep -q 'devices (nvidia)' "$WORK/run-sidecar-triton/container.err"
done_testing
