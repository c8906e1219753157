#!/bin/sh
# SPDX-License-Identifier: MIT
#
# k8s_run.sh MANIFEST CONTAINER BINDIR WORK NODE [HOSTPATH=DIR ...]: run one container of a Kubernetes manifest the
# way the kubelet would, without a container runtime: in a new mount and network namespace
# (unshare -m -n; with -r, a user namespace too, when not run as root), chrooted into WORK/root
# where the host's /usr is mounted read-only (the image's Debian 12 libraries), BINDIR (the
# installed programs and accel-pipeline) is on PATH, each hostPath volume is bind-mounted
# read-only at its mountPath (HOSTPATH=DIR: the hostPath HOSTPATH is DIR here), and each ConfigMap
# volume's files at theirs. The manifest's command, env (spec.nodeName = NODE) and runAsUser are used
# as they are, with no supplementary groups; capabilities drop ALL empties the bounding, inheritable
# and ambient sets (setpriv: user 0 then has no capability either), allowPrivilegeEscalation: false
# sets no_new_privs. Once /health answers (and $K8S_RUN_UNTIL, a shell condition, holds: 10 s at most),
# it saves GET /metrics, /v1/collect and /health (the container's "metrics" port, else 8000, in the namespace's own loopback)
# into WORK/metrics, WORK/collect and WORK/health, then stops the container with SIGTERM and
# writes its exit status and the seconds the stop took into WORK/stop.
set -eu
MANIFEST=$1 CONTAINER=$2 BINDIR=$3 W=$4 NODE=$5
shift 5
H=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 "$H/k8s_container.py" "$MANIFEST" "$CONTAINER" "$W/configmaps" "$@" >"$W/spec"
if [ "$(id -u)" -ne 0 ]; then
	exec unshare -r -m -n sh "$H/k8s_run_inside.sh" "$W" "$BINDIR" "$NODE"
fi
exec unshare -m -n sh "$H/k8s_run_inside.sh" "$W" "$BINDIR" "$NODE"
