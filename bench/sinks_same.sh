#!/bin/sh
# SPDX-License-Identifier: MIT
#
# sinks_same.sh STREAM: whether every sink gives the same output for a report stream of format 3 and for
# the same reports written as format 2 (tests/helpers/report_v2.py) and format 1 (report_v1.py):
# accel-prom's exposition (plain and with dcgm-exporter's default collectors file; its own accel_prom_*
# series aside), accel-csv's rows and accel-cloudwatch's datums (--dry-run). bench/node_bench.py runs it on
# its stream (docs/report-format.md, "Format versions"); tests/integration/ident_format.sh does the same on a
# small one. Prints one line per output with its size and "same" or "DIFFERENT"; exits 0 when all are the
# same, 1 when one differs or could not be made. BIN (default bin) names the programs.
set -u
stream=${1:?usage: $0 STREAM}
top=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$top/bin}
PY=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/accel-sinks-same.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cp "$stream" "$work/v3.jsonl"
$PY "$top/tests/helpers/report_v2.py" <"$work/v3.jsonl" >"$work/v2.jsonl" || exit 1
$PY "$top/tests/helpers/report_v1.py" <"$work/v3.jsonl" >"$work/v1.jsonl" || exit 1

free_port() {
	$PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

scrape() { # INPUT OUTPUT [accel-prom options]: serve INPUT to its end, write the exposition to OUTPUT
	input=$1 output=$2
	shift 2
	port=$(free_port)
	"$BIN/accel-prom" --listen-address "127.0.0.1:$port" "$@" <"$input" 2>/dev/null &
	pid=$!
	i=0
	until curl -s "http://127.0.0.1:$port/metrics" | grep -qx "accel_prom_input_open 0"; do
		i=$((i + 1))
		[ $i -lt 300 ] || { kill "$pid"; return 1; }
		sleep 0.1
	done
	curl -s "http://127.0.0.1:$port/metrics" | grep -v -e '^accel_prom_' -e '^# [A-Z]* accel_prom_' >"$output"
	kill "$pid"
	wait "$pid" 2>/dev/null
	return 0
}

now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
for v in v1 v2 v3; do
	scrape "$work/$v.jsonl" "$work/$v.prom" || exit 1
	scrape "$work/$v.jsonl" "$work/$v.dcgm" --collectors "$top/tests/fixtures/dcgm/default-counters.csv" || exit 1
	"$BIN/accel-csv" <"$work/$v.jsonl" >"$work/$v.csv" 2>/dev/null || exit 1
	ACCEL_CLOUDWATCH_NOW=$now "$BIN/accel-cloudwatch" --namespace T --dry-run <"$work/$v.jsonl" >"$work/$v.cw" \
		2>/dev/null || exit 1
done
rc=0
printf '  stream: %s bytes as format 3, %s as format 2, %s as format 1\n' "$(wc -c <"$work/v3.jsonl")" \
	"$(wc -c <"$work/v2.jsonl")" "$(wc -c <"$work/v1.jsonl")"
for o in prom:accel-prom dcgm:"accel-prom --collectors" csv:accel-csv cw:"accel-cloudwatch --dry-run"; do
	ext=${o%%:*} name=${o#*:}
	if cmp -s "$work/v1.$ext" "$work/v2.$ext" && cmp -s "$work/v2.$ext" "$work/v3.$ext"; then
		verdict=same
	else
		verdict=DIFFERENT
		rc=1
	fi
	printf '  %-28s %8s lines  formats 1, 2, 3: %s\n' "$name" "$(wc -l <"$work/v3.$ext")" "$verdict"
done
exit $rc
