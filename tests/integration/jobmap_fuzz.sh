#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A short libFuzzer run (about 10 s) of tests/fuzz/fuzz_jobmap.c, an HPC job mapping file's name and
# text through monitor/host/jobmap.c (jobmap_name, jobmap_parse, and a jobmap reading the text as GPU 0's
# file), under ASan and UBSan, seeded by tests/fuzz/seed.sh. The long run is tests/fuzz/run.sh jobmap
# (make fuzz). What it does and needs: fuzz_short in lib.sh.
. "$(dirname "$0")/lib.sh"
fuzz_short jobmap
