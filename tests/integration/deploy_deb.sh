#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The Debian package (debian/, docs/deploy.md): make deb builds accel-monitor_<version>_<arch>.deb
# with debhelper; lintian reports no error and no warning; the package holds the programs, their
# man pages, the units and the conffile /etc/accel-monitor/accel-monitor.env; and in a throwaway
# overlay copy of this system (tests/helpers/deb_chroot.sh, nothing reaches the real one):
# dpkg -i installs it, makes the system user, enables accel-monitor-prom.service without
# starting anything and leaves the other units disabled; the installed pipeline runs; dpkg -r
# removes the programs and keeps the conffile; dpkg -P leaves no file, no user, no group.
. "$(dirname "$0")/lib.sh"

need "dpkg-buildpackage (Debian package dpkg-dev)" command -v dpkg-buildpackage
need "dh (Debian package debhelper)" command -v dh
need "lintian" command -v lintian
need "scdoc" command -v scdoc
need "unshare, chroot (util-linux, coreutils)" sh -c 'command -v unshare && command -v chroot'
ARCH=$(dpkg --print-architecture)
VER=$(sed -n 's/^VERSION := //p' "$TOP/Makefile")
D=$WORK/deb

# The package's make runs on every core, as a builder's would (DEB_BUILD_OPTIONS parallel).
ok "make deb (dpkg-buildpackage -us -uc -b on a copy of the tree)" \
	sh -c "DEB_BUILD_OPTIONS=parallel=$(nproc) make --no-print-directory -C '$TOP' deb DEB_DIR='$D' >'$WORK/build.log' 2>&1 ||
		{ tail -30 '$WORK/build.log'; exit 1; }"
DEB=$D/accel-monitor_${VER}_$ARCH.deb
ok "accel-monitor_${VER}_$ARCH.deb built" test -s "$DEB"
is "$(dpkg-deb -f "$DEB" Package Version Architecture | tr '\n' ' ')" "Package: accel-monitor Version: $VER Architecture: $ARCH " "control: package, version, architecture"
# lintian as root says so on stderr; its tags are on stdout.
lintian --pedantic -I -E "$D"/*.changes >"$WORK/lintian.txt" 2>"$WORK/lintian.err" || true
ok "lintian: no error, no warning" sh -c "! grep -E '^[EW]: ' '$WORK/lintian.txt'"
diag "lintian: $(grep -c '^[IPX]: ' "$WORK/lintian.txt") info/pedantic tags: $(sed -n 's/^[IPX]: [^ ]* \([^ ]*\).*/\1/p' "$WORK/lintian.txt" | sort -u | tr '\n' ' ')"
ok "lintian ran (it reports a broken package)" sh -c "dpkg-deb -R '$DEB' '$WORK/broken' && rm '$WORK/broken/usr/share/doc/accel-monitor/copyright' && dpkg-deb -b '$WORK/broken' '$WORK/broken.deb' >/dev/null 2>&1 && lintian '$WORK/broken.deb' 2>/dev/null | grep -q '^E: .*no-copyright-file'"
dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's|^\.||' >"$WORK/contents"
for p in $(cd "$BIN" && ls); do
	ok "the package has /usr/bin/$p and its man page" sh -c "grep -qx /usr/bin/$p '$WORK/contents' && grep -qx /usr/share/man/man1/$p.1.gz '$WORK/contents'"
done
for u in accel-monitor-prom.service accel-monitor-cloudwatch.service accel-monitor-csv.service accel-monitor-csv.timer; do
	ok "the package has /lib/systemd/system/$u" grep -qx "/lib/systemd/system/$u" "$WORK/contents"
done
is "$(dpkg-deb -I "$DEB" conffiles)" /etc/accel-monitor/accel-monitor.env "conffile: /etc/accel-monitor/accel-monitor.env"
dpkg-deb -e "$DEB" "$WORK/ctl"
ok "postinst starts no unit (enabled, not started)" sh -c "! grep -q 'deb-systemd-invoke.*start' '$WORK/ctl/postinst'"

# ---- install, run, remove, purge in an overlay copy of this system -------------------------------------
cat >"$WORK/inchroot.sh" <<EOF2
set -e
dpkg -i /pkg/$(basename "$DEB") >/tmp/dpkg-i.log 2>&1 || { cat /tmp/dpkg-i.log; exit 1; }
echo "user \$(getent passwd accel-monitor | cut -d: -f1,7)"
echo "enabled \$(ls /etc/systemd/system/*.wants/ | grep accel | tr '\n' ' ')"
echo "running \$(ps -eo args | grep -c '^/usr/bin/accel-' || true)"
AWS_EC2_METADATA_DISABLED=true accel-monitor --once -c /usr/share/doc/accel-monitor/examples/default.json | accel-csv | head -1
echo "man \$(man -w accel-prom)"
dpkg -r accel-monitor >/dev/null 2>&1
echo "after-r bin:\$(ls /usr/bin | grep -c '^accel-' || true) conffile:\$(ls /etc/accel-monitor)"
dpkg -P accel-monitor >/dev/null 2>&1
echo "after-P user:\$(getent passwd accel-monitor | wc -l) group:\$(getent group accel-monitor | wc -l) etc:\$(ls -d /etc/accel-monitor 2>/dev/null | wc -l)"
EOF2
ok "dpkg -i, run, dpkg -r, dpkg -P in an overlay of this system" sh -c "'$HELP/deb_chroot.sh' '$WORK' '$D' '$WORK/inchroot.sh' >'$WORK/chroot.out' 2>'$WORK/chroot.err' || { cat '$WORK/chroot.out' '$WORK/chroot.err'; exit 1; }"
is "$(sed -n 's/^user //p' "$WORK/chroot.out")" "accel-monitor:/usr/sbin/nologin" "dpkg -i: the system user accel-monitor (no login)"
is "$(sed -n 's/^enabled //p' "$WORK/chroot.out")" "accel-monitor-prom.service " "dpkg -i: accel-monitor-prom.service enabled, the others not"
is "$(sed -n 's/^running //p' "$WORK/chroot.out")" 0 "dpkg -i: nothing started"
ok "the installed accel-monitor | accel-csv runs" grep -q '^timestamp,' "$WORK/chroot.out"
is "$(sed -n 's/^man //p' "$WORK/chroot.out")" /usr/share/man/man1/accel-prom.1.gz "man finds the installed page"
is "$(sed -n 's/^after-r //p' "$WORK/chroot.out")" "bin:0 conffile:accel-monitor.env" "dpkg -r: programs gone, the conffile kept"
is "$(sed -n 's/^after-P //p' "$WORK/chroot.out")" "user:0 group:0 etc:0" "dpkg -P: no user, no group, no /etc/accel-monitor"
is "$(grep -i accel "$WORK/upper.txt" | tr '\n' ' ')" "" "dpkg -P: no file or directory named accel* left anywhere"
done_testing
