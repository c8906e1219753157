#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run_suite.sh TEST...: how make check, check-deploy and check-sanitize run tests. prove runs each
# test (a unit binary or an integration script, each its own process, TAP) on $TEST_JOBS jobs
# (default 4) and times it; then tests/helpers/leftovers.py fails the run if any process a test
# started is still running (and stops it). Each run marks its tests' environment with its own
# ACCEL_SUITE, which every process they start inherits: the helpers that start programs with a
# clean environment (a container, a Kubernetes container's env -i) pass it on. The tests start from
# clean_env.sh's environment: nothing the caller's shell holds (AWS_*, OTEL_*, KUBERNETES_*, ...) changes
# what they see.
#
# The caller sets ACCEL_BIN and ACCEL_SANITIZED (tests/integration/lib.sh) and the sanitizers'
# options. Exits 0 when prove passed and nothing was left running.
set -u
. "$(dirname "$0")/clean_env.sh"
ACCEL_SUITE=$$.$(date +%s%N)
export ACCEL_SUITE
rc=0
prove -j"${TEST_JOBS:-4}" --timer --exec '' "$@" || rc=$?
/usr/bin/python3 "$(dirname "$0")/leftovers.py" "$ACCEL_SUITE" || rc=1
exit "$rc"
