#!/bin/sh
# SPDX-License-Identifier: MIT
#
# man_sync.sh PROGRAM MANDIR: check that PROGRAM has a man page in MANDIR
# (a roff file NAME.1 made by scdoc from docs/man/NAME.1.scd), that
# man --warnings renders it with no warning, and that every option in
# `PROGRAM --help` (the lines of the help that start with a dash) appears in
# the rendered page as a word. Prints what is wrong on stderr; exit 0 when
# nothing is.
set -eu
prog=$1
mandir=$2
name=$(basename "$prog")
page=$mandir/$name.1
if [ ! -s "$page" ]; then
	echo "$name: no man page (docs/man/$name.1.scd)" >&2
	exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/man-sync.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# ASCII hyphens (LC_ALL=C) and lines long enough that groff neither breaks nor hyphenates an option.
LC_ALL=C MANWIDTH=1000 man --warnings -l "$page" >"$tmp/text" 2>"$tmp/warn" || true
if [ -s "$tmp/warn" ]; then
	echo "$name: man --warnings:" >&2
	cat "$tmp/warn" >&2
	exit 1
fi
[ -s "$tmp/text" ] || { echo "$name: man -l printed nothing" >&2; exit 1; }
# Keep off the network whatever a program does with --help.
AWS_EC2_METADATA_DISABLED=true "$prog" --help >"$tmp/help" 2>&1 </dev/null || true
status=0
for opt in $(grep -E '^[[:space:]]+-' "$tmp/help" | grep -o -E '(^|[[:space:],])--?[a-zA-Z][a-zA-Z0-9.-]*' |
	tr -d ' ,\t' | sort -u); do
	re=$(printf '%s' "$opt" | sed 's/\./\\./g')
	if ! grep -q -E -- "(^|[^a-zA-Z0-9-])$re([^a-zA-Z0-9.-]|\$)" "$tmp/text"; then
		echo "$name: option $opt of --help is not in its man page" >&2
		status=1
	fi
done
exit $status
