#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Install the Debian packages that building and testing accel-monitor need.
# Idempotent and quiet when nothing is missing. As root it calls apt-get
# (running `apt-get update` first only when a package is not known yet),
# otherwise sudo; without either it prints the exact command and fails.
#
# Usage: scripts/install-deps.sh [build|test|bench]   (default: test; bench adds the
#        servers accel-prom is measured against: wrk, nginx, collectd)
set -eu

build_pkgs="gcc make pkg-config libc6-dev libjansson-dev libmicrohttpd-dev libcurl4-openssl-dev libyaml-dev zlib1g-dev libcrypt-dev libgnutls28-dev libncurses-dev libprotobuf-c-dev libsnappy-dev"
# Test tools, one line per area: prove (perl) and Debian's python3 for the
# helpers and checkers, strace for what the programs connect to (loopback_only.sh);
# each sink's line names the real servers and clients
# its tests run against.
test_pkgs="perl python3 strace"
test_pkgs_prom="prometheus curl openssl clang libclang-rt-dev"
test_pkgs_csv="python3-pandas"
test_pkgs_cloudwatch="python3-botocore"
test_pkgs_top="tmux"
# Install and deploy (docs/deploy.md): scdoc makes the man pages (make install needs it), man-db and
# groff-base check them (man --warnings), systemd is systemd-analyze verify/security for the units,
# prometheus-alertmanager delivers an alert of the shipped rules to a webhook (promtool is in prometheus),
# python3-kubernetes and python3-yaml validate the manifests, iproute2 brings up the loopback of the
# namespace a manifest's container runs in, dpkg-dev, debhelper and lintian build and check the
# Debian package (make deb), podman, buildah and mmdebstrap build the container image on a Debian 12
# base made here (no registry; fuse-overlayfs where the kernel's overlayfs cannot be mounted),
# docker-compose validates the compose stack.
test_pkgs_deploy="docker-compose scdoc man-db groff-base systemd prometheus-alertmanager python3-kubernetes python3-yaml iproute2 dpkg-dev debhelper lintian podman buildah fuse-overlayfs mmdebstrap"
test_pkgs_remote_write="python3-snappy iproute2"
# accel-otlp's test peer (tests/helpers/otlp): Node.js runs OpenTelemetry's own decoder, npm installs it (make
# runs npm ci there). A nodejs that brings its own npm (NodeSource's) needs no npm package, which would conflict.
test_pkgs_otlp="nodejs"
command -v npm >/dev/null 2>&1 || test_pkgs_otlp="$test_pkgs_otlp npm"
# The kubelet pod-resources client: a real gRPC server (tests/helpers/podres_server.py).
test_pkgs_podres="python3-grpcio python3-grpc-tools"
test_pkgs="$test_pkgs $test_pkgs_prom $test_pkgs_csv $test_pkgs_cloudwatch $test_pkgs_top $test_pkgs_remote_write $test_pkgs_otlp $test_pkgs_podres $test_pkgs_deploy"
bench_pkgs="wrk nginx-light collectd-core libprotobuf-c1"

case "${1:-test}" in
build) want="$build_pkgs" ;;
test) want="$build_pkgs $test_pkgs" ;;
bench) want="$build_pkgs $test_pkgs $bench_pkgs" ;;
*) echo "usage: $0 [build|test|bench]" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	sudo="sudo"
else
	echo "install-deps: missing Debian packages:$missing" >&2
	echo "install-deps: run: sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi

echo "install-deps: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# Update the package lists only when apt does not know a missing package yet.
need_update=0
for p in $missing; do
	apt-cache show "$p" >/dev/null 2>&1 || need_update=1
done
[ $need_update -eq 1 ] && $sudo apt-get update -qq >&2
if ! $sudo apt-get install -y -qq --no-install-recommends $missing >&2; then
	# A stale list can name versions the mirror no longer has: refresh once and retry.
	$sudo apt-get update -qq >&2
	$sudo apt-get install -y -qq --no-install-recommends $missing >&2
fi
