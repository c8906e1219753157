#!/bin/sh
# SPDX-License-Identifier: MIT
#
# deb_chroot.sh WORK DEBDIR SCRIPT: run SCRIPT (sh) as root in a throwaway copy of this system: in
# a new mount namespace, an overlay whose lower layer is / and whose upper layer is a tmpfs, with
# /proc, /sys and /dev mounted and DEBDIR at /pkg, chrooted. Nothing reaches the real system. Once
# SCRIPT has run, WORK/upper.txt lists every path the upper layer holds (what SCRIPT left
# changed, relative to /), one a line. Exits with SCRIPT's status.
set -eu
W=$1 DEBDIR=$2 SCRIPT=$3
if [ "${4:-}" != --inside ]; then
	if [ "$(id -u)" -eq 0 ]; then
		exec unshare -m sh "$0" "$W" "$DEBDIR" "$SCRIPT" --inside
	fi
	exec unshare -r -m sh "$0" "$W" "$DEBDIR" "$SCRIPT" --inside
fi
O=$W/overlay
mkdir -p "$O"
mount --make-rprivate /
mount -t tmpfs tmpfs "$O"
mkdir -p "$O/upper" "$O/work" "$O/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$O/upper,workdir=$O/work" "$O/root"
mount --rbind /proc "$O/root/proc"
mount --rbind /sys "$O/root/sys"
mount --rbind /dev "$O/root/dev"
mkdir -p "$O/root/pkg"
mount --bind "$DEBDIR" "$O/root/pkg"
st=0
chroot "$O/root" /bin/sh -s <"$SCRIPT" || st=$?
umount -l "$O/root/pkg" "$O/root/proc" "$O/root/sys" "$O/root/dev" 2>/dev/null || true
rmdir "$O/upper/pkg" 2>/dev/null || true
(cd "$O/upper" && find . -mindepth 1 | sed 's|^\.||' | sort) >"$W/upper.txt"
exit "$st"
