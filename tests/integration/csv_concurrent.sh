#!/bin/sh
# SPDX-License-Identifier: MIT
# Twenty concurrent "accel-monitor --once | accel-csv -o same.csv" runs (a
# cron minute on a slow disk) give one header and twenty whole snapshots,
# in the long and wide formats and with size rotation, also when the file
# ends in a partial row or a header without its newline.
. "$(dirname "$0")/lib.sh"

export AWS_EC2_METADATA_DISABLED=true
N=20

# twenty OUT ARGS...: N pipelines started together, all appending to OUT.
twenty() {
	out=$1
	shift
	i=0
	pids=""
	while [ $i -lt $N ]; do
		sh -c 'b=$1 o=$2 && shift 2 && "$b/accel-monitor" --once | "$b/accel-csv" -o "$o" "$@" 2>>"$o.err"' \
			sh "$BIN" "$out" "$@" </dev/null &
		pids="$pids $!"
		i=$((i + 1))
	done
	st=0
	for p in $pids; do wait "$p" || st=1; done
	return $st
}

# whole FORMAT N FILE...: one header per file, N snapshots in all, each one whole.
whole() {
	$PY - "$@" <<'EOF'
import csv, sys
fmt, want, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
snaps = []
for name in files:
    raw = open(name, "rb").read()
    assert raw.endswith(b"\n"), f"{name}: does not end with a newline"
    rows = list(csv.reader(open(name, newline="", encoding="utf-8"), strict=True))
    header, body = rows[0], rows[1:]
    assert header[0] == "timestamp", f"{name}: no header first: {header[:3]}"
    assert header not in body, f"{name}: a second header"
    for r in body:
        assert len(r) == len(header), f"{name}: a row of {len(r)} fields, header {len(header)}: {r}"
        rec = dict(zip(header, r))
        first = rec.get("metric", rec["entity"]) in ("instance_info", "instance")
        if first:
            snaps.append([])
        assert snaps, f"{name}: rows before the first snapshot"
        snaps[-1].append(rec)
assert len(snaps) == want, f"{len(snaps)} snapshots, want {want}"
shape = None
for s in snaps:
    keys = sorted((r.get("series") or r["entity"]) for r in s)
    if fmt == "long":
        assert {r["group"] for r in s} == {"instance_info", "vcpu_usage", "memory_info", "monitor"}, keys
        assert len({r["timestamp"] for r in s}) == 1, "a snapshot's rows share their time"
    shape = shape or keys
    assert keys == shape, f"snapshots differ: {keys} vs {shape}"
print(f"# {len(snaps)} snapshots of {len(shape)} rows in {len(files)} files")
EOF
}

ok "long: $N concurrent runs exit 0" twenty "$WORK/same.csv"
ok "long: one header, $N whole snapshots" whole long $N "$WORK/same.csv"
is "$(cat "$WORK/same.csv.err")" "" "long: nothing on stderr"

# A file that ends in a partial row (a crash) or a header without its newline: one run repairs it, under the
# lock, before anyone appends; every snapshot reads back whole.
head -1 "$WORK/same.csv" | tr -d '\n' >"$WORK/nonl.csv"
ok "header without its newline: $N concurrent runs exit 0" twenty "$WORK/nonl.csv"
ok "header without its newline: one header, $N whole snapshots" whole long $N "$WORK/nonl.csv"
is "$(grep -c 'had no newline at its end; added one' "$WORK/nonl.csv.err")" 1 "header without its newline: repaired once"
head -1 "$WORK/same.csv" >"$WORK/part.csv"
printf '2026-11-21T05:30:00.000Z,host,vcpu_us' >>"$WORK/part.csv"
ok "partial last row: $N concurrent runs exit 0" twenty "$WORK/part.csv"
ok "partial last row: one header, $N whole snapshots" whole long $N "$WORK/part.csv"
is "$(grep -c 'cut off its last 37 bytes' "$WORK/part.csv.err")" 1 "partial last row: cut off once, the message says how many bytes"

ok "wide: $N concurrent runs exit 0" twenty "$WORK/wide.csv" --format wide
ok "wide: one header, $N whole snapshots" whole wide $N "$WORK/wide.csv"

mkdir -p "$WORK/rot"
ok "--rotate 3K: $N concurrent runs exit 0" twenty "$WORK/rot/r.csv" --rotate 3K
set -- "$WORK/rot/r.csv"
for f in $(ls "$WORK/rot" | sed -n 's/^r\.\([0-9][0-9]*\)\.csv$/\1/p' | sort -n); do set -- "$@" "$WORK/rot/r.$f.csv"; done
ok "--rotate 3K: several files" test $# -gt 2
ok "--rotate 3K: each file one header, $N whole snapshots in all" whole long $N "$@"

done_testing
