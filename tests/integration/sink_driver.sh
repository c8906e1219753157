#!/bin/sh
# SPDX-License-Identifier: MIT
#
# What every sink does the same way through the sink driver (common/sink.c),
# checked on accel-prom, accel-csv and accel-cloudwatch alike:
#   - a closed stdin is refused at once: exit 1 and "stdin is closed" (not a
#     listening socket read as input, not "Is a directory", not exit 0);
#   - a closed stdout is refused when the product goes there (accel-csv
#     without -o, accel-cloudwatch --dry-run), and not otherwise;
#   - --help and --version: exit 0, and exit 1 with a message when stdout is
#     full or closed;
#   - a bad option and a stray argument: exit 2;
#   - integers past 2^63 (2^63, 2^64-1, 1e19) and 1e308 go through as numbers
#     instead of costing the whole report.
. "$(dirname "$0")/lib.sh"

export AWS_EC2_METADATA_DISABLED=true AWS_REGION=us-west-2
T=$((10 * SLOW))

# st WANT CMD...: CMD (with its redirections done by sh -c) exits WANT; stderr kept in $WORK/err.
st() {
	want=$1
	shift
	got=0
	timeout "$T" sh -c "$*" 2>"$WORK/err" || got=$?
	[ "$got" -eq "$want" ] || { echo "exit status $got, expected $want" >&2; cat "$WORK/err" >&2; return 1; }
}

for s in prom csv cloudwatch; do
	P=$BIN/accel-$s
	args=""
	[ "$s" = cloudwatch ] && args="--namespace T --dry-run"
	[ "$s" = prom ] && args="--listen-address 127.0.0.1:0"
	ok "accel-$s <&-: exit 1" st 1 "'$P' $args <&-"
	ok "accel-$s <&-: says stdin is closed" grep -q "^accel-$s: stdin is closed" "$WORK/err"
	ok "accel-$s --help: exit 0" st 0 "'$P' --help >/dev/null"
	ok "accel-$s --help >/dev/full: exit 1" st 1 "'$P' --help >/dev/full"
	ok "accel-$s --help >/dev/full: a message" grep -q "^accel-$s: cannot write to stdout: No space left on device" "$WORK/err"
	ok "accel-$s --help >&-: exit 1" st 1 "'$P' --help >&-"
	ok "accel-$s --version >/dev/full: exit 1" st 1 "'$P' --version >/dev/full"
	ok "accel-$s --version >/dev/full: a message" grep -q "^accel-$s: cannot write to stdout" "$WORK/err"
	is "$("$P" --version)" "accel-$s $("$BIN/accel-csv" --version | cut -d' ' -f2)" "accel-$s --version"
	ok "accel-$s --no-such-option: exit 2" st 2 "'$P' --no-such-option </dev/null"
	ok "accel-$s: points to --help" grep -q "Try 'accel-$s --help'" "$WORK/err"
	ok "accel-$s stray: exit 2" st 2 "'$P' stray </dev/null"
	ok "accel-$s stray: says so" grep -q "^accel-$s: unexpected argument \"stray\"" "$WORK/err"
done

# ---- stdout ---------------------------------------------------------------------------
echo '{}' >"$WORK/empty.jsonl"
ok "accel-csv >&-: exit 1 (its rows go to stdout)" st 1 "'$BIN/accel-csv' <'$WORK/empty.jsonl' >&-"
ok "accel-csv >&-: says so" grep -q "^accel-csv: cannot write to stdout: it was closed" "$WORK/err"
ok "accel-csv -o FILE >&-: exit 0 (stdout is not its product)" st 0 "'$BIN/accel-csv' -o '$WORK/o.csv' <'$WORK/empty.jsonl' >&-"
ok "accel-cloudwatch --dry-run >&-: exit 1" st 1 "'$BIN/accel-cloudwatch' --namespace T --dry-run <'$WORK/empty.jsonl' >&-"

# ---- numbers at the edges ------------------------------------------------------------
cat >"$WORK/big.jsonl" <<'EOF'
{"system_data":{"memory_info":{"period":1.0,"error":"","memory_total_bytes":18446744073709551615,"memory_used_bytes":9223372036854775808,"swap_total_bytes":10000000000000000000,"swap_used_bytes":1e308}}}
EOF
"$BIN/accel-csv" --columns metric,value <"$WORK/big.jsonl" >"$WORK/big.csv" 2>"$WORK/csv.err" || true
ok "accel-csv: 2^64-1" grep -qx 'system_memory_total_bytes,1.8446744073709552e+19' "$WORK/big.csv"
ok "accel-csv: 2^63" grep -qx 'system_memory_used_bytes,9.223372036854776e+18' "$WORK/big.csv"
ok "accel-csv: 1e19" grep -qx 'system_swap_total_bytes,1e+19' "$WORK/big.csv"
ok "accel-csv: 1e308" grep -qx 'system_swap_used_bytes,1e+308' "$WORK/big.csv"
"$BIN/accel-cloudwatch" --namespace T --dry-run --dimensions none <"$WORK/big.jsonl" 2>"$WORK/cw.err" |
	tr '&' '\n' >"$WORK/big.cw" || true
ok "accel-cloudwatch: 2^64-1, 2^63 and 1e19 sent" sh -c "grep -c 'Value=\\(1.8446744073709552e%2B19\\|1.8446744073709552e+19\\|9.223372036854776e+18\\|9.223372036854776e%2B18\\|1e+19\\|1e%2B19\\)\$' '$WORK/big.cw' | grep -qx 3"
ok "accel-cloudwatch: 1e308 refused by name (past CloudWatch's 2^360)" grep -q "SystemSwapUsed.*1e+308.*magnitude past 2^360" "$WORK/cw.err"
PORT=$(free_port)
"$BIN/accel-prom" --listen-address "127.0.0.1:$PORT" <"$WORK/big.jsonl" 2>"$WORK/prom.err" &
_pids="$_pids $!"
read_all() { curl -s --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$WORK/big.prom" && grep -qx 'accel_prom_input_open 0' "$WORK/big.prom"; }
ok "accel-prom reads the report" wait_for "$T" read_all
ok "accel-prom: 2^64-1" grep -q '^system_memory_total_bytes{.*} 1.8446744073709552e+19$' "$WORK/big.prom"
ok "accel-prom: 2^63" grep -q '^system_memory_used_bytes{.*} 9.223372036854776e+18$' "$WORK/big.prom"
ok "accel-prom: 1e308" grep -q '^system_swap_used_bytes{.*} 1e+308$' "$WORK/big.prom"
ok "accel-prom: no bad line" grep -qx 'accel_prom_bad_lines_total{reason="json"} 0' "$WORK/big.prom"

done_testing
