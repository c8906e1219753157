#!/bin/sh
# SPDX-License-Identifier: MIT
# accel-csv's files: the header rules (new, empty, matching, mismatching
# files, and stdout appended to a file), files that end in a partial row,
# formula injection, wide-format column changes, daily rotation on a fake
# clock, size rotation that never splits a report, a
# file removed while in use, and command-line errors.
. "$(dirname "$0")/lib.sh"

CSV=$BIN/accel-csv
S2X=$FIX/streams/neuron-monitor-2x.jsonl
ACC=$FIX/csv/accel-monitor.jsonl
export ACCEL_CSV_NOW=2026-11-21T05:30:00Z ACCEL_CSV_NOW_STEP=1s
NOW_MS=1795239000000

headers() { # FILE: how many lines are the long header
	grep -c '^timestamp,host,group,' "$1" || true
}
check() { # checker args...
	$PY "$HELP/csv_check.py" --host fx "$@"
}
# run STATUS [VAR=VALUE...] ARGS...: run accel-csv (stdin from the caller) with those variables set,
# pass when it exits with STATUS; its stderr is left in $WORK/err.
run() {
	want=$1
	shift
	envs=""
	while [ $# -gt 0 ]; do
		case $1 in
		-*) break ;;
		*=*) envs="$envs $1" && shift ;;
		*) break ;;
		esac
	done
	got=0
	# shellcheck disable=SC2086
	env $envs "$CSV" --host fx "$@" 2>"$WORK/err" || got=$?
	[ "$got" -eq "$want" ] || { echo "exit status $got, expected $want"; cat "$WORK/err"; return 1; }
}

# ---- header rules ----------------------------------------------------------------
F=$WORK/new.csv
ok "a new file" run 0 -o "$F" <"$S2X"
is "$(headers "$F")" 1 "a new file gets one header"
ok "a second run appends" run 0 -o "$F" <"$S2X"
is "$(headers "$F")" 1 "appending to a matching header adds none"
cat "$S2X" "$S2X" >"$WORK/twice.jsonl"
ok "both runs' rows read back whole (8 reports)" check --input "$WORK/twice.jsonl" --now $NOW_MS --step 1000 \
	--clock-restart 4 "$F"

F=$WORK/empty.csv
: >"$F"
ok "an empty file" run 0 -o "$F" <"$S2X"
is "$(head -c 21 "$F")" "timestamp,host,group," "an empty file gets the header"

F=$WORK/other.csv
printf 'a,b\n1,2\n' >"$F"
ok "a mismatching header is refused with status 3" run 3 -o "$F" <"$S2X"
is "$(cat "$F")" "$(printf 'a,b\n1,2')" "and the file is left as it was"
ok "the message names the file and the column" grep -q "$F: its header does not match .*column \"a\" where \"timestamp\" belongs.*nothing written" "$WORK/err"

ok "with --rotate, a mismatch goes on in the next file" run 0 -o "$F" --rotate 1M <"$S2X"
ok "a note says so" grep -q "note: .*$F: its header does not match.*going on in $WORK/other.1.csv" "$WORK/err"
is "$(headers "$WORK/other.1.csv")" 1 "other.1.csv has its own header"
ok "and the rows" check --input "$S2X" --now $NOW_MS --step 1000 "$WORK/other.1.csv"

F=$WORK/cols.csv
ok "--columns makes its own header" run 0 -o "$F" --columns timestamp,series,value <"$S2X"
ok "the default columns do not match it" run 3 -o "$F" <"$S2X"
ok "another --timestamp-format is another header" run 3 -o "$F" --columns timestamp,series,value \
	--timestamp-format unix <"$S2X"

# stdout appended to a file (">>") follows the same rules.
F=$WORK/stdout.csv
ok "stdout >> file, first run" sh -c '"$1" --host fx <"$2" >>"$3"' sh "$CSV" "$S2X" "$F"
ok "stdout >> file, second run" sh -c '"$1" --host fx <"$2" >>"$3"' sh "$CSV" "$S2X" "$F"
is "$(headers "$F")" 1 "stdout >> file: one header"
printf 'x\n' >"$WORK/bad-stdout.csv"
rc=0
"$CSV" <"$S2X" >>"$WORK/bad-stdout.csv" 2>"$WORK/err" || rc=$?
is "$rc" 3 "stdout >> a file with another header: status 3"
is "$(cat "$WORK/bad-stdout.csv")" x "and nothing written"

# ---- a file that does not end in a whole row ------------------------------------------------
F=$WORK/cut.csv
ok "partial: a first run" run 0 -o "$F" <"$S2X"
truncate -s -20 "$F"
ok "partial: a run after truncate(1) cut the last row" run 0 -o "$F" <"$S2X"
ok "partial: the warning says how many bytes were cut off" \
	grep -q "csv: $F ended in a partial row .*cut off its last [0-9]* bytes, back to its last whole row" "$WORK/err"
ok "partial: every row has the header's fields" \
	$PY -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1]))); sys.exit(len({len(x) for x in r}) != 1)' "$F"
"$CSV" --host fx <"$S2X" >"$WORK/one.csv"
{ sed '$d' "$WORK/one.csv" && sed 1d "$WORK/one.csv"; } >"$WORK/cut.want"
ok "partial: the first run's rows but the cut one, then the second run's" cmp "$F" "$WORK/cut.want"
F=$WORK/nonl.csv
head -1 "$WORK/new.csv" | tr -d '\n' >"$F"
ok "partial: a header without its newline" run 0 -o "$F" <"$S2X"
is "$(headers "$F")" 1 "partial: the first row is not glued to it, no second header"
ok "partial: every row reads back" check --input "$S2X" --now $NOW_MS --step 1000 "$F"
F=$WORK/quote.csv
head -1 "$WORK/new.csv" >"$F"
printf '2026,"an unterminated quote\n' >>"$F"
$PY -c 'import sys; sys.stdout.write("1,2\n" * 300000)' >>"$F"
cp "$F" "$WORK/quote.orig"
ok "partial: 1.2 MB after an unterminated quote is refused with status 3" run 3 -o "$F" <"$S2X"
ok "partial: the message says where and what" \
	grep -q "csv: $F does not end in a whole row: its last 1200028 bytes (from byte [0-9]*) are an unterminated quoted field" "$WORK/err"
ok "partial: and the file is left as it was" cmp "$F" "$WORK/quote.orig"
ok "partial: with --rotate, it goes on in the next file" run 0 -o "$F" --rotate 10M <"$S2X"
ok "partial: whose rows read back" check --input "$S2X" --now $NOW_MS --step 1000 "$WORK/quote.1.csv"

# ---- formula injection -------------------------------------------------------------------------
# Runtime tags a process chooses, and a --host, that a spreadsheet would run as formulas.
$PY - "$S2X" >"$WORK/hostile.jsonl" <<'PY'
import json, sys
tags = ['=HYPERLINK("http://evil.example/?x","click")', "-5", "@SUM(A1)", "\tcmd"]
for i, line in enumerate(open(sys.argv[1])):
    r = json.loads(line)
    for k, rt in enumerate(r["neuron_runtime_data"]):
        rt["neuron_runtime_tag"] = tags[(i + k) % len(tags)]
    print(json.dumps(r, separators=(",", ":")))
PY
F=$WORK/formula.csv
ok "formula: long" run 0 ACCEL_CSV_NOW_STEP=1s -o "$F" <"$WORK/hostile.jsonl"
ok "formula: the hyperlink is written as text" grep -q "^[^,]*,fx,execution_stats,\"'=HYPERLINK(" "$F"
ok "formula: a tag that is a number (-5) is not touched" grep -q ",execution_stats,-5,execution_errors_total," "$F"
ok "formula: every cell reads back, text escaped" check --input "$WORK/hostile.jsonl" --now $NOW_MS --step 1000 "$F"
"$CSV" --host "+host" <"$WORK/hostile.jsonl" >"$WORK/formula-host.csv"
ok "formula: --host +host is escaped too" grep -q "^[^,]*,'+host,instance_info," "$WORK/formula-host.csv"
ok "formula: wide" run 0 --format wide -o "$WORK/formula-w.csv" <"$WORK/hostile.jsonl"
ok "formula: wide reads back" check --format wide --input "$WORK/hostile.jsonl" --now $NOW_MS --step 1000 \
	"$WORK/formula-w.csv"
ok "formula: --no-formula-escape" run 0 --no-formula-escape -o "$WORK/formula-raw.csv" <"$WORK/hostile.jsonl"
ok "formula: --no-formula-escape writes the cells as they are" \
	grep -q "^[^,]*,fx,execution_stats,\"=HYPERLINK(" "$WORK/formula-raw.csv"
ok "formula: which the checker tells apart" sh -c '! "$@" 2>/dev/null' sh \
	$PY "$HELP/csv_check.py" --host fx --input "$WORK/hostile.jsonl" --now $NOW_MS --step 1000 "$WORK/formula-raw.csv"
ok "formula: and reads back with --no-formula-escape" check --no-formula-escape --input "$WORK/hostile.jsonl" \
	--now $NOW_MS --step 1000 "$WORK/formula-raw.csv"

# ---- wide column changes ----------------------------------------------------------
mkdir -p "$WORK/w"
ok "wide: first run" run 0 --format wide -o "$WORK/w/acc.csv" <"$ACC"
ok "wide: a second run" run 0 --format wide -o "$WORK/w/acc.csv" <"$ACC"
is "$(ls "$WORK/w" | tr '\n' ' ')" "acc.1.csv acc.csv " "wide: the second run went on in the newest file, no third"
is "$(grep -c '^timestamp,host,entity,' "$WORK/w/acc.1.csv")" 1 "wide: acc.1.csv has one header"
cat "$ACC" "$ACC" >"$WORK/acc2.jsonl"
ok "wide: both runs read back" check --format wide --input "$WORK/acc2.jsonl" --now $NOW_MS --step 1000 \
	--clock-restart 3 "$WORK/w/acc.csv" "$WORK/w/acc.1.csv"

"$CSV" --host fx --format wide <"$ACC" 2>"$WORK/err" | cat >"$WORK/wide-stdout.csv"
ok "wide on a pipe: an empty line and a new header" grep -q '^$' "$WORK/wide-stdout.csv"
is "$(grep -c '^timestamp,host,entity,' "$WORK/wide-stdout.csv")" 2 "wide on a pipe: two headers"
ok "wide on a pipe: noted on stderr" grep -q 'note: csv: stdout: new column' "$WORK/err"
ok "wide on a pipe: every value reads back" check --format wide --input "$ACC" --now $NOW_MS --step 1000 \
	"$WORK/wide-stdout.csv"

mkdir -p "$WORK/wc"
ok "wide --columns" run 0 --format wide --columns neuroncore_utilization_ratio,system_vcpu_count -o "$WORK/wc/w.csv" <"$S2X"
is "$(head -1 "$WORK/wc/w.csv" | tr ',' '\n' | sed -n '16,$p' | tr '\n' ' ')" \
	"neuroncore_utilization_ratio{neuroncore=0} neuroncore_utilization_ratio{neuroncore=1} neuroncore_utilization_ratio{neuroncore=2} neuroncore_utilization_ratio{neuroncore=3} system_vcpu_count " \
	"wide --columns: only those families' columns after the key"
ok "wide --columns: the kept values read back" check --format wide --columns neuroncore_utilization_ratio,system_vcpu_count \
	--input "$S2X" --now $NOW_MS --step 1000 "$WORK/wc/w.csv"

# ---- daily rotation ------------------------------------------------------------------
mkdir -p "$WORK/d"
ok "daily: four reports across midnight" run 0 ACCEL_CSV_NOW=2026-11-21T23:59:58Z -o "$WORK/d/day.csv" --rotate daily <"$S2X"
is "$(ls "$WORK/d" | tr '\n' ' ')" "day.2026-11-21.csv day.2026-11-22.csv " "daily: one file per UTC day"
is "$(grep -c '^[^,]*,fx,instance_info,' "$WORK/d/day.2026-11-21.csv")" 2 "daily: two reports before midnight"
is "$(grep -c '^[^,]*,fx,instance_info,' "$WORK/d/day.2026-11-22.csv")" 2 "daily: two after"
ok "daily: every value reads back" check --input "$S2X" --now 1795305598000 --step 1000 \
	"$WORK/d/day.2026-11-21.csv" "$WORK/d/day.2026-11-22.csv"
mkdir -p "$WORK/d2"
ok "daily: accel-monitor reports" run 0 ACCEL_CSV_NOW=2030-01-01T00:00:00Z -o "$WORK/d2/day.csv" --rotate daily <"$ACC"
is "$(ls "$WORK/d2" | tr '\n' ' ')" "day.2026-11-21.csv " "daily: a report's own timestamp dates it, not the clock"

# ---- size rotation ----------------------------------------------------------------------
mkdir -p "$WORK/s"
for i in 1 2 3 4 5; do cat "$S2X"; done >"$WORK/s20.jsonl"
ok "size: 20 reports with --rotate 40K" run 0 -o "$WORK/s/big.csv" --rotate 40K <"$WORK/s20.jsonl"
ls "$WORK/s" | sed -n 's/^big\.\([0-9][0-9]*\)\.csv$/\1 &/p' | sort -n | cut -d' ' -f2 >"$WORK/order"
set -- "$WORK/s/big.csv"
while read -r f; do set -- "$@" "$WORK/s/$f"; done <"$WORK/order"
ok "size: more than one file" test "$#" -gt 2
sizes_ok=1
for f in "$@"; do
	n=$(wc -c <"$f")
	reports=$(grep -c '^[^,]*,fx,instance_info,' "$f")
	[ "$n" -le 40960 ] || [ "$reports" -eq 1 ] || sizes_ok=0
	[ "$(headers "$f")" -eq 1 ] || sizes_ok=0
	sed -n 2p "$f" | grep -q '^[^,]*,fx,instance_info,' || sizes_ok=0
done
is "$sizes_ok" 1 "size: each file within 40K, one header, starting with a whole report"
ok "size: all 20 reports read back across the files" check --input "$WORK/s20.jsonl" --now $NOW_MS --step 1000 "$@"

# ---- a file removed while in use ---------------------------------------------------------
mkfifo "$WORK/in"
exec 3<>"$WORK/in" # read-write: opening it does not wait for the other end
# Not spawn(): an asynchronous command's stdin is /dev/null unless it redirects it itself.
"$CSV" --host fx -o "$WORK/gone.csv" <"$WORK/in" 2>"$WORK/gone.err" 3>&- &
pid=$!
_pids="$_pids $pid"
sed -n 1p "$S2X" >&3
ok "removed: the first report is written" wait_for $((5 * SLOW)) grep -q ',fx,instance_info,' "$WORK/gone.csv"
rm "$WORK/gone.csv"
sed -n 2p "$S2X" >&3
exec 3>&-
wait "$pid" || true
is "$(headers "$WORK/gone.csv")" 1 "removed: a new file with its header"
is "$(grep -c ',fx,instance_info,' "$WORK/gone.csv")" 1 "removed: the next report is in it"
ok "removed: a warning says so" grep -q "gone.csv was removed or replaced while open" "$WORK/gone.err"

# ---- symbolic links in the rotation chain ----------------------------------------------------
mkdir -p "$WORK/l"
ln -s "$WORK/l/elsewhere.csv" "$WORK/l/x.9.csv"
ok "links: a dangling x.9.csv link is refused with status 1" run 1 -o "$WORK/l/x.csv" --rotate 1M <"$S2X"
ok "links: its target is not created" test ! -e "$WORK/l/elsewhere.csv"
ok "links: the message names the link" grep -q "csv: $WORK/l/x.9.csv is a symbolic link" "$WORK/err"
ln -s "$WORK/l/other.csv" "$WORK/l/y.csv"
ok "links: -o naming a link is refused too" run 1 -o "$WORK/l/y.csv" <"$S2X"
ok "links: and its target is not created" test ! -e "$WORK/l/other.csv"
cp "$WORK/empty.csv" "$WORK/l/real.csv"
ln -s "$WORK/l/real.csv" "$WORK/l/z.csv"
ok "links: a link to an existing file is refused" run 1 -o "$WORK/l/z.csv" <"$S2X"
ok "links: and that file is left as it was" cmp "$WORK/l/real.csv" "$WORK/empty.csv"

# ---- --fsync ---------------------------------------------------------------------------------
ok "--fsync" run 0 --fsync -o "$WORK/sync.csv" <"$S2X"
ok "--fsync writes the same bytes" cmp "$WORK/sync.csv" "$WORK/empty.csv"

# ---- command-line errors -------------------------------------------------------------------
ok "--format bogus: status 2" run 2 --format bogus </dev/null
ok "--rotate bogus: status 2" run 2 -o "$WORK/x.csv" --rotate 10Q </dev/null
ok "--rotate without -o: status 2" run 2 --rotate daily </dev/null
ok "--columns with an unknown column: status 2" run 2 --columns timestamp,nope </dev/null
ok "the message lists the known columns" grep -q 'unknown column "nope"; known: timestamp,host,group' "$WORK/err"
ok "wide --columns with an unknown family: status 2" run 2 --format wide --columns nope_total </dev/null
ok "--timestamp-format bogus: status 2" run 2 --timestamp-format local </dev/null
ok "an argument: status 2" run 2 input.jsonl </dev/null
ok "a bad ACCEL_CSV_NOW: status 2" run 2 ACCEL_CSV_NOW=yesterday </dev/null
ok "a bad ACCEL_CSV_NOW_STEP: status 2" run 2 ACCEL_CSV_NOW_STEP=soon </dev/null
ok "an output directory that does not exist: status 1" run 1 -o "$WORK/no/such/dir/x.csv" <"$S2X"
ok "the message names it" grep -q "$WORK/no/such/dir/: cannot open the directory" "$WORK/err"
ok "--help" "$CSV" --help
ok "--version" "$CSV" --version

done_testing
