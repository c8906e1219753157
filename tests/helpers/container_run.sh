#!/bin/sh
# SPDX-License-Identifier: MIT
#
# container_run.sh WORK CONTAINER CMD...: inside a new network namespace (its own loopback, so
# the image's port 8000 is free), run CMD in the buildah working container CONTAINER (chroot
# isolation; the host's /proc, /sys and /run mounted read-only under /host as the manifests mount
# them; ACCEL_MONITOR_OPTS and KUBE_NODE_NAME=node-7 as the DaemonSet sets them). Once /health
# answers, save /metrics and /v1/collect into WORK, run the image's HEALTHCHECK command
# (WORK/healthcheck.cmd, a shell line) in the same container and save its status in WORK/health.rc,
# then stop CMD with SIGTERM. $BUILDAH holds buildah's storage options. Whatever still runs in the
# namespace at the end (buildah run leaves its command's children running) is stopped
# (tests/helpers/reap_netns.py). ACCEL_SUITE, the suite's mark (tests/helpers/run_suite.sh), is
# passed into the container.
set -eu
W=$1 CTR=$2
shift 2
if [ "${1:-}" != --inside ]; then
	exec unshare -n sh "$0" "$W" "$CTR" --inside "$@"
fi
shift
trap '/usr/bin/python3 "$(dirname "$0")/reap_netns.py" $$' EXIT
ip link set lo up
# shellcheck disable=SC2086 # BUILDAH is a word list of options
buildah $BUILDAH run --isolation chroot --network host \
	-v /proc:/host/proc:ro -v /sys:/host/sys:ro -v /run:/host/run:ro \
	--env "ACCEL_MONITOR_OPTS=--path.procfs /host/proc --path.sysfs /host/sys" --env KUBE_NODE_NAME=node-7 \
	${ACCEL_SUITE:+--env "ACCEL_SUITE=$ACCEL_SUITE"} "$CTR" -- "$@" >"$W/ctr.out" 2>"$W/ctr.err" &
pid=$!
i=0
until curl -sf -o /dev/null http://127.0.0.1:8000/health; do
	i=$((i + 1))
	[ $i -lt 600 ] || { echo "container_run: /health did not answer in 60 s" >&2; cat "$W/ctr.err" >&2; kill "$pid"; exit 1; }
	sleep 0.1
done
curl -sf -o "$W/metrics" http://127.0.0.1:8000/metrics
curl -sf -o "$W/collect" http://127.0.0.1:8000/v1/collect
st=0
# shellcheck disable=SC2086
buildah $BUILDAH run --isolation chroot --network host "$CTR" -- sh -c "$(cat "$W/healthcheck.cmd")" || st=$?
echo "$st" >"$W/health.rc"
kill -TERM "$pid" 2>/dev/null || true
wait "$pid" || true
