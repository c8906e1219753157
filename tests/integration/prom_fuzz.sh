#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A short libFuzzer run (about 10 s) of tests/fuzz/fuzz_prom_line.c: stream
# lines -> samples -> exposition, under ASan and UBSan, with the exposition
# checked after every input. The long run is tests/fuzz/run.sh (make fuzz).
# What it does and needs: fuzz_short in lib.sh.
. "$(dirname "$0")/lib.sh"
fuzz_short prom_line
