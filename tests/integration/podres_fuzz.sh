#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A short libFuzzer run (about 10 s) of tests/fuzz/fuzz_podres.c, the path of what the kubelet's
# pod-resources socket answers: a gRPC frame -> grpc_unframe -> podres_table.c's protobuf decode and
# index, under ASan and UBSan, seeded with whole answers the test server makes from our .proto
# (tests/helpers/podres_server.py --seeds). The long run is tests/fuzz/run.sh podres (make fuzz).
# What it does and needs: fuzz_short in lib.sh.
. "$(dirname "$0")/lib.sh"
need "python3-grpcio and python3-grpc-tools (scripts/install-deps.sh)" $PY -c 'import grpc_tools'
fuzz_short podres
