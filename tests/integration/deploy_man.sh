#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The man pages (docs/man/*.scd, docs/deploy.md): scdoc turns each into roff,
# man --warnings renders each with no groff warning, every program in the
# bin directory has a section 1 page holding every option of its --help
# (tests/helpers/man_sync.sh; a new program without a page fails here), the
# report format has its section 5 page, and every accel-* page a SEE ALSO
# names exists. The checker is first shown to fail on a program with an
# option its page lacks, on a program with no page and on a page with a
# groff warning.
. "$(dirname "$0")/lib.sh"

need "scdoc (Debian package scdoc)" command -v scdoc
need "man (Debian package man-db)" command -v man
M=$WORK/man
mkdir -p "$M"
for src in "$TOP"/docs/man/*.scd; do
	page=$(basename "$src" .scd)
	ok "scdoc $page" sh -c "scdoc <'$src' >'$M/$page'"
done

# ---- the checker can fail ---------------------------------------------------------------
mkdir -p "$WORK/fake"
printf '#!/bin/sh\nprintf "Usage: accel-fake\\n  -x, --extra     an option\\n"\n' >"$WORK/fake/accel-fake"
chmod +x "$WORK/fake/accel-fake"
ok "checker fails: a program with no man page" sh -c "! '$HELP/man_sync.sh' '$WORK/fake/accel-fake' '$M' 2>/dev/null"
printf '.TH ACCEL-FAKE 1\n.SH NAME\naccel-fake \\- x\n.SH OPTIONS\n\\-x only\n' >"$M/accel-fake.1"
ok "checker fails: an option of --help missing from the page" sh -c "'$HELP/man_sync.sh' '$WORK/fake/accel-fake' '$M' 2>&1 | grep -q 'option --extra'"
printf '.TH ACCEL-FAKE 1\n.SH NAME\naccel-fake \\- x\n.nosuchmacro\n\\-x, \\-\\-extra\n' >"$M/accel-fake.1"
ok "checker fails: a page with a groff warning" sh -c "'$HELP/man_sync.sh' '$WORK/fake/accel-fake' '$M' 2>&1 | grep -q 'man --warnings'"
rm -f "$M/accel-fake.1"

# ---- every program, every page ------------------------------------------------------------
n=0
for prog in "$BIN"/*; do
	[ -x "$prog" ] || continue
	n=$((n + 1))
	ok "$(basename "$prog"): man page, no groff warning, every --help option in it" "$HELP/man_sync.sh" "$prog" "$M"
done
ok "programs found in $BIN" test "$n" -ge 4
for page in "$M"/*.5; do
	ok "$(basename "$page"): no groff warning" sh -c "LC_ALL=C MANWIDTH=1000 man --warnings -l '$page' 2>&1 >/dev/null | grep -c . | grep -qx 0"
done
ok "the report format page exists (section 5)" test -s "$M/accel-monitor-report.5"
for ref in $(cat "$TOP"/docs/man/*.scd | grep -o -E '\*accel-[a-z-]+\*\([15]\)' | tr -d '*()' | sort -u); do
	# accel-prom1 -> accel-prom.1
	p=$(printf '%s' "$ref" | sed -E 's/([15])$/.\1/')
	ok "SEE ALSO target $p exists" test -s "$M/$p"
done
done_testing
