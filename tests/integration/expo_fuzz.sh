#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A short libFuzzer run (about 10 s) of tests/fuzz/fuzz_expo.c, the path of
# what an endpoint runtime serves: exposition bytes -> common/expo_parse.c
# (every sample written back and read again) -> monitor/endpoint/infer.c
# (execution_stats checked), under ASan and UBSan, seeded with the fixture
# expositions. The long run is tests/fuzz/run.sh expo (make fuzz).
# What it does and needs: fuzz_short in lib.sh.
. "$(dirname "$0")/lib.sh"
fuzz_short expo
