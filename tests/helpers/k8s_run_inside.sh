#!/bin/sh
# SPDX-License-Identifier: MIT
# The inside of tests/helpers/k8s_run.sh (already in the new namespaces): WORK BINDIR NODE. At the end,
# whatever still runs in the network namespace is stopped (tests/helpers/reap_netns.py); the suite's
# mark ACCEL_SUITE (tests/helpers/run_suite.sh) is passed into the container's clean environment.
set -eu
W=$1 BINDIR=$2 NODE=$3
trap '/usr/bin/python3 "$(dirname "$0")/reap_netns.py" $$' EXIT
R=$W/root
mount --make-rprivate /
ip link set lo up
mkdir -p "$R/usr" "$R/etc" "$R/tmp" "$R/proc" "$R/dev" "$R/opt/accel/bin"
for l in bin lib lib64 sbin; do [ -L "$R/$l" ] || ln -s "usr/$l" "$R/$l"; done
mount --rbind /usr "$R/usr" && mount -o remount,bind,ro "$R/usr"
for f in ld.so.cache hosts nsswitch.conf passwd group; do [ -e "/etc/$f" ] && cp "/etc/$f" "$R/etc/"; done
mount --rbind /dev "$R/dev"
mount --rbind /proc "$R/proc"
mount --bind "$BINDIR" "$R/opt/accel/bin" && mount -o remount,bind,ro "$R/opt/accel/bin"
chmod 1777 "$R/tmp"
envs="PATH=/opt/accel/bin:/usr/bin:/bin HOME=/${ACCEL_SUITE:+ ACCEL_SUITE=$ACCEL_SUITE}"
cmd= uid=0 port=8000 privs=
tab=$(printf '\t')
while IFS="$tab" read -r kind a b c; do
	case $kind in
	cmd) cmd=$a ;;
	env) [ "$b" = '$NODE' ] && b=$NODE
		envs="$envs $(printf '%s=%s' "$a" "$b" | sed "s/'/'\\\\''/g; s/^/'/; s/\$/'/")" ;;
	host) mkdir -p "$R$b"; mount --rbind "$a" "$R$b"
		[ "$c" = ro ] && mount -o remount,bind,ro "$R$b" ;;
	config) mkdir -p "$R$b"; mount --bind "$a" "$R$b" && mount -o remount,bind,ro "$R$b" ;;
	user) uid=$a ;;
	caps) privs="$privs --bounding-set=-all --inh-caps=-all --ambient-caps=-all" ;;
	nnp) privs="$privs --no-new-privs" ;;
	port) port=$a ;;
	esac
done <"$W/spec"
# The container's first process leads its own session, as in a container.
eval "exec setsid chroot '$R' setpriv --reuid=$uid --regid=$uid --clear-groups $privs env -i $envs $cmd" \
	>"$W/container.out" 2>"$W/container.err" &
pid=$!
i=0
until curl -sf -o "$W/health" http://127.0.0.1:$port/health; do
	i=$((i + 1))
	[ $i -lt 300 ] || { echo "k8s_run: /health did not answer 200 in 30 s" >&2; kill -TERM -"$pid" 2>/dev/null; exit 1; }
	sleep 0.1
done
# K8S_RUN_UNTIL: a shell condition (run here, outside the chroot) waited for, 10 s at most, before the stop.
i=0
while [ -n "${K8S_RUN_UNTIL:-}" ] && ! sh -c "$K8S_RUN_UNTIL" && [ $i -lt 100 ]; do
	i=$((i + 1))
	sleep 0.1
done
curl -sf -o "$W/metrics" http://127.0.0.1:$port/metrics
curl -sf -o "$W/collect" http://127.0.0.1:$port/v1/collect
t0=$(date +%s%N)
# SIGTERM to the first process only, as the kubelet's runtime does.
kill -TERM "$pid"
st=0
wait "$pid" || st=$?
echo "$st $(( ($(date +%s%N) - t0) / 1000000 ))" >"$W/stop"
# Anything of the container still alive is a failure the test sees in WORK/left; stop it.
ps -o pid= -s "$pid" >"$W/left" 2>/dev/null || true
kill -KILL -"$pid" 2>/dev/null || true
