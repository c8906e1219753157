#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A short libFuzzer run (about 10 s) of tests/fuzz/fuzz_csv.c, the path
# of accel-csv's input: stream lines -> samples -> CSV cells, rows and a file that starts with
# fuzzed bytes (sinks/csv/csv_format.c, csv_out.c), every cell read back,
# under ASan and UBSan. The long run is tests/fuzz/run.sh csv (make fuzz).
# What it does and needs: fuzz_short in lib.sh.
. "$(dirname "$0")/lib.sh"
fuzz_short csv
