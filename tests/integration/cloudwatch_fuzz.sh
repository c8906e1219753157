#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A short libFuzzer run (about 10 s) of tests/fuzz/fuzz_cloudwatch.c, the path
# of accel-cloudwatch's input: stream lines -> samples -> CloudWatch datums -> PutMetricData bodies
# and EMF events, each parsed back and compared with its datums,
# under ASan and UBSan. The long run is tests/fuzz/run.sh cloudwatch (make fuzz).
# What it does and needs: fuzz_short in lib.sh.
. "$(dirname "$0")/lib.sh"
fuzz_short cloudwatch
