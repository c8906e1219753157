#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A short libFuzzer run (about 10 s) of tests/fuzz/fuzz_otlp.c, what accel-otlp
# reads: stream lines -> the OTLP encoder -> requests read back (protobuf
# unpacked, JSON parsed), and arbitrary bodies -> otlp_response_parse and
# otlp_status_parse, under ASan and UBSan. The long run is tests/fuzz/run.sh
# otlp (make fuzz). What it does and needs: fuzz_short in lib.sh.
. "$(dirname "$0")/lib.sh"
fuzz_short otlp
