#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A short libFuzzer run (about 10 s) of tests/fuzz/fuzz_csv.c, the path
# of accel-csv's input: stream lines -> samples -> CSV cells, rows and a file that starts with
# fuzzed bytes (sinks/csv_format.c, csv_out.c), every cell read back,
# under ASan and UBSan. The long run is tests/fuzz/run.sh csv (make fuzz).
# Needs clang with libFuzzer (scripts/install-deps.sh test); runs once, in
# the plain pass of the suite (the fuzz build is sanitized already).
. "$(dirname "$0")/lib.sh"

skip_all() {
	echo "ok 1 # skip $*"
	echo "1..1"
	exit 0
}
[ "${ACCEL_SANITIZED:-0}" = 1 ] && skip_all "run once, in the plain pass"
# clang and libclang-rt-dev come with scripts/install-deps.sh test: without them this fails, it does not skip.
if ! "$TOP/tests/fuzz/build.sh" "$WORK/fuzz" csv >"$WORK/build.log" 2>&1; then
	sed 's/^/# /' "$WORK/build.log" | tail -20 >&2
fi
ok "fuzz_csv builds" test -x "$WORK/fuzz/fuzz_csv"
"$TOP/tests/fuzz/seed.sh" "$WORK/corpus"
cd "$WORK"
ok "10 s of fuzzing find nothing" sh -c 'log=$1 && shift && "$@" >"$log" 2>&1 || { tail -40 "$log" >&2; exit 1; }' sh "$WORK/fuzz.log" \
	"$WORK/fuzz/fuzz_csv" -max_total_time=10 -max_len=65536 -timeout=10 -dict="$TOP/tests/fuzz/prom_line.dict" \
	-artifact_prefix="$WORK/" -print_final_stats=1 "$WORK/corpus"
grep -h -e '^stat::number_of_executed_units' "$WORK/fuzz.log" | sed 's/^/# /' >&2 || true
done_testing
