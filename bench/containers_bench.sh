#!/bin/sh
# SPDX-License-Identifier: MIT
#
# container_usage's cost, as a report: the CPU time of one cycle of
# monitor/system/coll_containers.c (scan, reads, entries, the group serialized)
# against its floor, plain reads of the same files (bench/containers_bench.c),
# as a ratio measured in the same run:
#   1. on a fixture cgroup v2 tree of CONTAINERS containers (three to a pod) and ten services;
#   2. when run as root with a writable /sys/fs/cgroup: on the live tree, after creating CONTAINERS
#      container cgroups (cgroupfs driver layout) under a parent of its own in every hierarchy it reads,
#      removed at the end; the floor is then the kernel generating the files.
# Target: cycle <= 2 x floor. A missed target still exits 0; exit 1 only when something could not be built
# or measured.
#
# Environment (defaults in brackets):
#   BUILD       where libmonitor.a and libcommon.a are [build/release]
#   MAKE        make, which builds the benchmark program [make]
#   CONTAINERS  containers in each tree [200]
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build/release}
CONTAINERS=${CONTAINERS:-200}
CG=/sys/fs/cgroup
PARENT=accel-bench-$$
dirs=""

cleanup() {
	for d in $dirs; do
		# Deepest first: containers, pods, then the parent's levels.
		find "$d/$PARENT" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

for f in "$BUILD/libmonitor.a" "$BUILD/libcommon.a"; do
	if [ ! -e "$f" ]; then
		echo "containers_bench: $f is missing; run make first (or set BUILD)" >&2
		exit 1
	fi
done
BENCH=$BUILD/bench/containers_bench
${MAKE:-make} -s --no-print-directory BUILD="$BUILD" "$BENCH"

echo "== container_usage: a fixture cgroup v2 tree with $CONTAINERS containers (bench/containers_bench.c)"
"$BENCH" -c "$CONTAINERS" | sed 's/^/  /'

if [ -f $CG/cgroup.controllers ]; then
	dirs=$CG
else
	for h in cpu cpuacct memory "cpu,cpuacct"; do
		[ -d "$CG/$h" ] && [ ! -L "$CG/$h" ] && dirs="$dirs $CG/$h"
	done
fi
if [ "$(id -u)" != 0 ] || [ -z "$dirs" ] || ! mkdir "$(echo $dirs | cut -d' ' -f1)/$PARENT" 2>/dev/null; then
	echo "== container_usage on the live $CG: skipped (needs root and a writable cgroup tree)"
	exit 0
fi
for d in $dirs; do
	i=0
	while [ $i -lt "$CONTAINERS" ]; do
		pod=$(printf '%s/%s/kubepods/burstable/pod%08x-1a2b-4c3d-8e5f-%012x' "$d" "$PARENT" $((i / 3)) $((i / 3)))
		mkdir -p "$pod/$(printf '%064x' $((i + 1)))"
		i=$((i + 1))
	done
done
echo "== container_usage on the live $CG with $CONTAINERS more containers (v$([ -f $CG/cgroup.controllers ] && echo 2 || echo 1))"
"$BENCH" --root $CG | sed 's/^/  /'
