#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The container image (deploy/container/Dockerfile, docs/deploy.md), built here with no registry:
# mmdebstrap makes a Debian 12 minbase tree from the configured Debian mirror, podman imports it
# as the base, podman build (chroot isolation, overlay storage under the work directory: the
# kernel's overlayfs where this machine lets us mount one, else fuse-overlayfs) builds the
# multi-stage image. Checked: it runs as 65534, exposes 8000, has a HEALTHCHECK on
# /health and the CMD the Kubernetes manifests use. `podman run` cannot start a container in
# this machine (crun: the cgroup setup fails; the exact error is printed as a diagnostic), so
# the image's CMD runs through buildah's chroot isolation in a network namespace of its own,
# with the host's trees mounted read-only as the manifests mount them
# (tests/helpers/container_run.sh): /metrics shows the host's memory, /v1/collect the node's
# name, and the HEALTHCHECK command, run inside the image, passes.
. "$(dirname "$0")/lib.sh"

need "podman" command -v podman
need "buildah" command -v buildah
need "mmdebstrap" command -v mmdebstrap
need "curl" command -v curl
need "ip (iproute2)" command -v ip
C=$WORK/containers
STORE="--root $C/root --runroot $C/run --storage-driver overlay"
# The kernel's overlayfs (a mount here shows whether we may); else fuse-overlayfs, several times slower.
O=$WORK/ovl
mkdir -p "$O/l" "$O/u" "$O/w" "$O/m"
if mount -t overlay overlay -o "lowerdir=$O/l,upperdir=$O/u,workdir=$O/w" "$O/m" 2>/dev/null; then
	umount "$O/m"
else
	need "fuse-overlayfs" command -v fuse-overlayfs
	STORE="$STORE --storage-opt overlay.mount_program=/usr/bin/fuse-overlayfs"
fi
diag "storage: $STORE"
BUILDAH=$STORE
export BUILDAH
# Layers and working containers are mounted: take them down before lib.sh removes the work
# directory.
trap 'buildah $STORE rm --all >/dev/null 2>&1 || true; podman $STORE rmi -a -f >/dev/null 2>&1 || true
	grep " $C/" /proc/mounts | cut -d" " -f2 | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
	cleanup' EXIT
# The mirror apt uses here (deb822 or one-line sources), else Debian's.
MIRROR=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p; s/^deb \(\[[^]]*\] \)\{0,1\}\(http[^ ]*\) bookworm .*/\2/p' \
	/etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | grep -v security | head -1)
: "${MIRROR:=http://deb.debian.org/debian}"

ok "mmdebstrap --variant=minbase bookworm (the base, from $MIRROR)" sh -c \
	"mmdebstrap --variant=minbase bookworm '$WORK/base.tar' '$MIRROR' >'$WORK/mmdebstrap.log' 2>&1 || { tail -20 '$WORK/mmdebstrap.log'; exit 1; }"
ok "podman import the tree as localhost/debian:12-slim" sh -c \
	"podman $STORE import '$WORK/base.tar' localhost/debian:12-slim >'$WORK/import.log' 2>&1 || { cat '$WORK/import.log'; exit 1; }"
rm -f "$WORK/base.tar"
t0=$(date +%s)
ok "podman build (multi-stage, debian 12 base)" sh -c "cd '$TOP' && podman $STORE build --format docker --isolation=chroot --network=host \
	--build-arg BASE=localhost/debian:12-slim -f deploy/container/Dockerfile -t localhost/accel-monitor:test . \
	>'$WORK/build.log' 2>&1 || { tail -30 '$WORK/build.log'; exit 1; }"
diag "podman build took $(($(date +%s) - t0)) s; image size $(podman $STORE image inspect --format '{{.Size}}' localhost/accel-monitor:test 2>/dev/null) bytes"
podman $STORE image inspect localhost/accel-monitor:test >"$WORK/inspect.json" 2>"$WORK/inspect.err" || true
# ins EXPR: a Python expression over the image's config (c) and its health check (h; podman
# inspect shows a docker-format image's HEALTHCHECK at the top level).
ins() { $PY -c '
import json, sys
i = json.load(open(sys.argv[1]))[0]
c = i["Config"]
h = i.get("Healthcheck") or c.get("Healthcheck") or {}
print(eval(sys.argv[2]))' "$WORK/inspect.json" "$1" 2>&1; }
is "$(ins 'c.get("User")')" "65534:65534" "runs as 65534 (nobody)"
is "$(ins 'sorted(c.get("ExposedPorts", {}))')" "['8000/tcp']" "exposes 8000"
is "$(ins 'c.get("Cmd")')" "['accel-pipeline', 'accel-prom', '--port', '8000']" "CMD: accel-pipeline accel-prom --port 8000 (the manifests' command)"
is "$(ins '"/health" in " ".join(h.get("Test", []))')" True "HEALTHCHECK on /health"
ins '(h.get("Test") or ["", "false"])[-1]' >"$WORK/healthcheck.cmd" || true
diag "HEALTHCHECK: $(cat "$WORK/healthcheck.cmd")"

# ---- run it -----------------------------------------------------------------------------------------
podman $STORE run --rm --network=host localhost/accel-monitor:test accel-prom --version >"$WORK/prun.out" 2>&1 || true
diag "podman run here: $(tail -1 "$WORK/prun.out")"
ctr=$(buildah $STORE from localhost/accel-monitor:test 2>"$WORK/from.err") || true
ok "buildah from the image" test -n "$ctr"
ok "the image's CMD runs (chroot isolation, host trees read-only at /host)" \
	"$HELP/container_run.sh" "$WORK" "$ctr" $(ins '" ".join(c["Cmd"])')
memtotal=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024))
ok "/metrics has the host's memory from /host/proc" grep -q "^system_memory_total_bytes{.*} $memtotal\$" "$WORK/metrics"
ok "/v1/collect under the node's name" grep -q '^{"node-7":' "$WORK/collect"
is "$(cat "$WORK/health.rc" 2>/dev/null)" 0 "the HEALTHCHECK command passes inside the image"
done_testing
