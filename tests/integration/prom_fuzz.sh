#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A short libFuzzer run (about 10 s) of tests/fuzz/fuzz_prom_line.c: stream
# lines -> samples -> exposition, under ASan and UBSan, with the exposition
# checked after every input. The long run is tests/fuzz/run.sh (make fuzz).
# Skips without a clang that supports -fsanitize=fuzzer, and in the
# sanitized pass of the suite (the fuzz build is sanitized already).
. "$(dirname "$0")/lib.sh"

skip_all() {
	echo "ok 1 # skip $*"
	echo "1..1"
	exit 0
}
[ "${ACCEL_SANITIZED:-0}" = 1 ] && skip_all "run once, in the plain pass"
command -v "${CLANG:-clang}" >/dev/null 2>&1 || skip_all "needs clang"
if ! "$TOP/tests/fuzz/build.sh" "$WORK/fuzz" prom_line >"$WORK/build.log" 2>&1; then
	grep -q -e 'fsanitize=fuzzer' -e 'libclang_rt.fuzzer' -e 'cannot find' "$WORK/build.log" &&
		skip_all "this clang cannot build libFuzzer targets"
	sed 's/^/# /' "$WORK/build.log" | tail -20
fi
ok "fuzz_prom_line builds" test -x "$WORK/fuzz/fuzz_prom_line"
"$TOP/tests/fuzz/seed.sh" "$WORK/corpus"
cd "$WORK"
ok "10 s of fuzzing find nothing" "$WORK/fuzz/fuzz_prom_line" -max_total_time=10 -max_len=65536 -timeout=10 \
	-dict="$TOP/tests/fuzz/prom_line.dict" -artifact_prefix="$WORK/" -print_final_stats=1 "$WORK/corpus"
grep -h -e '^stat::number_of_executed_units' -e '^Done' "$WORK/.out" 2>/dev/null | sed 's/^/# /' || true
done_testing
