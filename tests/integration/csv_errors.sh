#!/bin/sh
# SPDX-License-Identifier: MIT
# accel-csv when things go wrong: a full disk (/dev/full, and an LD_PRELOAD
# shim that fails write(2) after N bytes), a read error, a reader of stdout
# that goes away, and bad lines in the stream (skipped with their line number).
. "$(dirname "$0")/lib.sh"

CSV=$BIN/accel-csv
S2X=$FIX/streams/neuron-monitor-2x.jsonl
GOLD=$FIX/csv/neuron-monitor-2x.long.csv
export ACCEL_CSV_NOW=2026-11-21T05:30:00Z ACCEL_CSV_NOW_STEP=1s

# status WANT CMD...: pass when CMD exits with WANT; its stderr is left in $WORK/err.
status() {
	want=$1
	shift
	got=0
	"$@" 2>"$WORK/err" || got=$?
	[ "$got" -eq "$want" ] || { echo "exit status $got, expected $want"; cat "$WORK/err"; return 1; }
}

# The bytes of the header and the first report in the golden file (rows up to the second instance_info).
first=$(LC_ALL=C awk -F, '$3 == "instance_info" { n++ } n < 2 { b += length($0) + 1 } END { print b }' "$GOLD")
rows1=$(($(LC_ALL=C awk -F, '$3 == "instance_info" { n++ } n < 2' "$GOLD" | wc -l) - 1))
rows2=$(LC_ALL=C awk -F, '$3 == "instance_info" { n++ } n == 2' "$GOLD" | wc -l)

# ---- /dev/full -------------------------------------------------------------------------
ok "-o /dev/full: status 1" status 1 "$CSV" --host fixture-host -o /dev/full <"$S2X"
ok "-o /dev/full: the file, the error and the rows written" \
	grep -q "error: csv: /dev/full: write failed: No space left on device; the $rows1 rows of the report at stdin:1 were not written; 0 rows written to /dev/full by this run" "$WORK/err"
ok "stdout on /dev/full: status 1" status 1 sh -c '"$1" <"$2" >/dev/full' sh "$CSV" "$S2X"
ok "stdout on /dev/full: said so" grep -q "error: csv: stdout: write failed: No space left on device" "$WORK/err"

# ---- write fails after N bytes ------------------------------------------------------------
SHIM=$WORK/fail_write.so
if cc -shared -fPIC -o "$SHIM" "$HELP/fail_write.c" -ldl 2>"$WORK/cc.err"; then
	# An ASan build checks that its runtime is loaded first; the shim comes before it here.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
	export ASAN_OPTIONS
	F=$WORK/short.csv
	ok "write fails 100 bytes into the second report: status 1" status 1 \
		env LD_PRELOAD="$SHIM" FAIL_WRITE_AFTER=$((first + 100)) "$CSV" --host fixture-host -o "$F" <"$S2X"
	ok "the message: file, error, rows lost, rows written, file cut back" grep -q \
		"error: csv: $F: write failed: No space left on device; the $rows2 rows of the report at stdin:2 were not written (the file was cut back to its last whole row); $rows1 rows written to $F by this run ($rows1 in all)" \
		"$WORK/err"
	head -c "$first" "$GOLD" >"$WORK/first.csv"
	ok "the file holds the header and the first report, whole" cmp "$F" "$WORK/first.csv"
	ok "a later run appends to it normally" status 0 env ACCEL_CSV_NOW_STEP=0 "$CSV" --host fixture-host -o "$F" <"$S2X"
	{ sed -n 1p "$S2X"; cat "$S2X"; } >"$WORK/first-then-all.jsonl"
	ok "and every row reads back (1 + 4 reports)" $PY "$HELP/csv_check.py" --input "$WORK/first-then-all.jsonl" \
		--host fixture-host --now 1795239000000 --step 0 "$F"

	F=$WORK/header.csv
	ok "write fails inside the header: status 1" status 1 \
		env LD_PRELOAD="$SHIM" FAIL_WRITE_AFTER=10 "$CSV" -o "$F" <"$S2X"
	is "$(wc -c <"$F")" 0 "the partial header is cut away"
	ok "0 rows written" grep -q "0 rows written to $F by this run" "$WORK/err"

	F=$WORK/eio.csv
	ok "EIO on the first write: status 1" status 1 \
		env LD_PRELOAD="$SHIM" FAIL_WRITE_AFTER=0 FAIL_WRITE_ERRNO=5 "$CSV" -o "$F" <"$S2X"
	ok "the message says Input/output error" grep -q "$F: write failed: Input/output error" "$WORK/err"

	sh -c 'LD_PRELOAD="$1" FAIL_WRITE_AFTER=5000 "$2" <"$3" 2>"$4"; echo $? >"$5"' \
		sh "$SHIM" "$CSV" "$S2X" "$WORK/err" "$WORK/rc" | cat >/dev/null
	is "$(cat "$WORK/rc")" 1 "stdout (a pipe) fails after 5000 bytes: status 1"
	ok "stdout: part of the rows may have gone out, said so" grep -q \
		"stdout: write failed: No space left on device; the $rows1 rows of the report at stdin:1 were not written (part of them may have gone out); 0 rows written" \
		"$WORK/err"
else
	diag "cannot build the shim: $(cat "$WORK/cc.err")"
	ok "a C compiler builds tests/helpers/fail_write.c" false
fi

# ---- reading ---------------------------------------------------------------------------------
ok "stdin a directory: status 1" status 1 "$CSV" <"$WORK"
ok "a read error names the line" grep -q "stdin:1: read error: Is a directory" "$WORK/err"

for i in 1 2 3 4 5 6 7 8; do cat "$S2X"; done >"$WORK/s32.jsonl"
sh -c '"$1" <"$2" 2>"$3"; echo $? >"$4"' sh "$CSV" "$WORK/s32.jsonl" "$WORK/pipe.err" "$WORK/pipe.rc" | head -c 100 >/dev/null
is "$(cat "$WORK/pipe.rc")" 0 "the reader of stdout goes away: status 0"
is "$(cat "$WORK/pipe.err")" "" "and quietly"

# ---- bad lines -----------------------------------------------------------------------------
{
	sed -n 1p "$S2X"
	echo 'not json'
	echo '[1,2]'
	echo ''
	echo '{"system_data":{"memory_info":{"error":"","memory_total_bytes":"big","memory_used_bytes":7}}}'
	echo '{"a":NaN}'
	sed -n 1p "$FIX/streams/neuron-monitor-2020.jsonl"
	echo '{"a":1,"a":2}'
	printf '%s' "$(sed -n 2p "$S2X")" # the last line has no newline
} >"$WORK/bad.jsonl"
ok "bad lines: status 0" status 0 "$CSV" --host fixture-host -o "$WORK/bad.csv" <"$WORK/bad.jsonl"
ok "line 2 (not JSON) skipped with its number" grep -q "warning: csv: stdin:2: column 3: '\\[' or '{' expected near 'not'; skipped" "$WORK/err"
ok "line 3 (not an object) skipped" grep -q "warning: csv: stdin:3: a report must be a JSON object; skipped" "$WORK/err"
ok "line 5: a bad value named by its path" grep -q \
	"warning: csv: stdin:5: system_data.memory_info.memory_total_bytes: expected a number, got a string; skipped" "$WORK/err"
ok "line 6 (NaN) skipped" grep -q "warning: csv: stdin:6: .*; skipped" "$WORK/err"
ok "line 8 (a duplicate key) skipped" grep -q "warning: csv: stdin:8: .*; skipped" "$WORK/err"
is "$(grep -c 'warning' "$WORK/err")" 5 "five warnings, no more"
is "$(grep -c ',fixture-host,instance_info,' "$WORK/bad.csv")" 4 "four good reports (line 5 has a good value too)"
ok "every value of the good lines reads back" $PY "$HELP/csv_check.py" --input "$WORK/bad.jsonl" \
	--host fixture-host --now 1795239000000 --step 1000 "$WORK/bad.csv"

done_testing
