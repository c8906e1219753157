#!/bin/sh
# SPDX-License-Identifier: MIT
# accel-csv on the three input kinds (accel-monitor, neuron-monitor 2.x and
# 2020): the output is compared byte for byte with golden files, read back
# with Python's csv module and every value compared with the stream's, and
# loaded with the pandas lines from docs/accel-csv.md (when pandas is there).
#
# Regenerate the goldens after an intended change with
#   ACCEL_CSV_REGEN=1 tests/integration/csv_golden.sh
. "$(dirname "$0")/lib.sh"

CSV=$BIN/accel-csv
GOLD=$FIX/csv
NOW_MS=1795239000000 # 2026-11-21T05:30:00Z
export ACCEL_CSV_NOW=2026-11-21T05:30:00Z ACCEL_CSV_NOW_STEP=1s

# golden NAME ARGS...: run accel-csv -o $WORK/NAME.csv ARGS and compare every file it made with $GOLD.
golden() {
	gn=$1
	gi=$2
	shift 2
	mkdir -p "$WORK/$gn"
	rc=0
	"$CSV" --host fixture-host -o "$WORK/$gn/$gn.csv" "$@" <"$gi" 2>"$WORK/$gn.err" || rc=$?
	is "$rc" 0 "$gn: accel-csv exits 0"
	for f in "$WORK/$gn"/*; do
		b=$(basename "$f")
		if [ -n "${ACCEL_CSV_REGEN:-}" ]; then
			cp "$f" "$GOLD/$b"
		fi
		ok "$gn: $b is byte for byte $GOLD/$b" cmp "$f" "$GOLD/$b"
	done
	want=$(cd "$GOLD" && ls "$gn".csv "$gn".[0-9]*.csv 2>/dev/null | sort | tr '\n' ' ')
	got=$(cd "$WORK/$gn" && ls | sort | tr '\n' ' ')
	is "$got" "$want" "$gn: the same files as the goldens"
}

# files NAME: the files of one output, in writing order (NAME.csv, NAME.1.csv, ...).
files() {
	ls "$WORK/$1/$1.csv"
	ls "$WORK/$1" | sed -n 's/^.*\.\([0-9][0-9]*\)\.csv$/\1 &/p' | sort -n | sed "s|^[0-9]* |$WORK/$1/|"
}

check() { # name input format [extra args]
	gn=$1
	gi=$2
	gf=$3
	shift 3
	# shellcheck disable=SC2046
	ok "$gn: every value read back with csv equals the stream's" \
		$PY "$HELP/csv_check.py" --input "$gi" --format "$gf" --host fixture-host --now $NOW_MS --step 1000 \
		"$@" $(files "$gn")
}

for input in "$GOLD/accel-monitor.jsonl" "$FIX/streams/neuron-monitor-2x.jsonl" "$FIX/streams/neuron-monitor-2020.jsonl" \
	"$FIX/streams/endpoint-runtimes.jsonl"; do
	base=$(basename "$input" .jsonl)
	for fmt in long wide; do
		golden "$base.$fmt" "$input" --format "$fmt"
		check "$base.$fmt" "$input" "$fmt"
	done
done

# The wide accel-monitor stream gains a column in its second report: a note, and a second file.
ok "wide: the new column is noted on stderr" grep -q 'has no column "runtime_memory_used_bytes{memory_location=device}" (report at stdin:2); going on in .*accel-monitor.wide.1.csv' "$WORK/accel-monitor.wide.err"

# --columns and --timestamp-format.
golden accel-monitor.columns "$GOLD/accel-monitor.jsonl" --timestamp-format unix_ms --columns timestamp,entity,series,value,unit
check accel-monitor.columns "$GOLD/accel-monitor.jsonl" long --timestamp-format unix_ms --columns timestamp,entity,series,value,unit
for tf in unix unix_ms; do
	mkdir -p "$WORK/ts-$tf"
	"$CSV" --host fixture-host --timestamp-format $tf -o "$WORK/ts-$tf/ts-$tf.csv" <"$FIX/streams/neuron-monitor-2x.jsonl"
	check "ts-$tf" "$FIX/streams/neuron-monitor-2x.jsonl" long --timestamp-format $tf
done

# stdout (a pipe) carries the same bytes as a new file.
"$CSV" --host fixture-host <"$GOLD/accel-monitor.jsonl" | cat >"$WORK/stdout.csv"
ok "stdout gives the same bytes as -o" cmp "$WORK/stdout.csv" "$GOLD/accel-monitor.long.csv"

# neuron-monitor input has no hostname: without --host, the host column is this machine's name.
"$CSV" <"$FIX/streams/neuron-monitor-2020.jsonl" | sed -n 2p | cut -d, -f2 >"$WORK/host"
is "$(cat "$WORK/host")" "$(hostname)" "host defaults to this machine's hostname"

# The pandas lines of docs/accel-csv.md load the long format and pivot every series; the wide format loads
# with one column per series. One Python (pandas takes a second to import) checks every file: a result a line,
# "ok" or "not ok", tab, the test's name, and after a failure a tab and why; "skip" without pandas.
tab=$(printf '\t')
$PY - "$GOLD" "$GOLD/accel-monitor.jsonl" "$FIX/streams/neuron-monitor-2x.jsonl" \
	"$FIX/streams/neuron-monitor-2020.jsonl" "$FIX/streams/endpoint-runtimes.jsonl" >"$WORK/pandas.out" 2>&1 <<'EOF' || true
import csv, os, sys
try:
    import pandas as pd
except ImportError:
    print("skip")
    sys.exit(0)
gold, inputs = sys.argv[1], sys.argv[2:]
def result(name, check, *args):
    try:
        note = check(*args)
        print("ok\t%s" % name)
        if note:
            print("#\t%s" % note)
    except Exception as e:
        print("not ok\t%s\t%r" % (name, e))
def pivot(path):
    df = pd.read_csv(path, parse_dates=["timestamp"], keep_default_na=False, na_values=[""], float_precision="round_trip")
    series = df.pivot_table(index="timestamp", columns="series", values="value", aggfunc="last")
    rows = list(csv.DictReader(open(path, newline="", encoding="utf-8")))
    assert len(df) == len(rows), (len(df), len(rows))
    assert df["value"].dtype.kind == "f", df["value"].dtype
    assert series.shape[1] == len({r["series"] for r in rows}), series.shape
    last = {}
    for r in rows:
        last[(pd.Timestamp(r["timestamp"]), r["series"])] = float(r["value"])
    for (ts, s), v in last.items():
        assert series.loc[ts, s] == v, (ts, s, series.loc[ts, s], v)
    if any("memory_location=None" in r["series"] for r in rows):
        assert "None" in set(df["memory_location"]), "the label value None must stay a string"
    return "%d rows, %d series" % (len(df), series.shape[1])
def wide(path):
    df = pd.read_csv(path, parse_dates=["timestamp"], keep_default_na=False, na_values=[""], float_precision="round_trip")
    assert df["neuroncore_utilization_ratio{neuroncore=0}"].dtype.kind == "f"
    assert (df["entity"] == "my_app_1").sum() == 4, df["entity"].tolist()
for i in inputs:
    base = os.path.basename(i)[:-len(".jsonl")]
    result("%s: pandas read_csv + pivot_table give back every value" % base, pivot, "%s/%s.long.csv" % (gold, base))
result("wide: pandas loads it with one column per series", wide, "%s/neuron-monitor-2x.wide.csv" % gold)
EOF
while IFS="$tab" read -r st what why; do
	case $st in
	ok) _result 0 "$what" ;;
	"not ok") _result 1 "$what"; diag "$why" ;;
	"#") diag "$what" ;;
	skip) echo "ok $((_n + 1)) # skip pandas is not installed (scripts/install-deps.sh test installs python3-pandas)"
		_n=$((_n + 1)) ;;
	*) _result 1 "pandas checks: $st $what" ;;
	esac
done <"$WORK/pandas.out"

done_testing
