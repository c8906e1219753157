#!/bin/sh
# SPDX-License-Identifier: MIT
# The suite does not depend on the caller's environment (tests/helpers/clean_env.sh): with AWS_*, OTEL_*,
# KUBERNETES_*, POD_*, ECS_* and the like set in the caller's shell (AWS_EC2_METADATA_DISABLED=true and an
# AWS_PROFILE the machine lacks are common among AWS users),
#  - a test that run_suite.sh runs (make check) sees none of them, nor the caller's ~/.aws;
#  - so does a script run alone (tests/integration/lib.sh);
#  - so does a unit binary run alone (tests/unit/tap.h): test_cloudwatch_creds, whose credential chain reads
#    the environment, passes.
. "$(dirname "$0")/lib.sh"

DIRTY="AWS_EC2_METADATA_DISABLED=true AWS_REGION=eu-west-1 AWS_PROFILE=nosuchprofile AWS_ACCESS_KEY_ID=AKIDCALLER
AWS_CONTAINER_CREDENTIALS_FULL_URI=http://127.0.0.1:9/c AWS_SHARED_CREDENTIALS_FILE=$WORK/caller-creds
OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9 KUBERNETES_SERVICE_HOST=127.0.0.1 POD_UID=0b5f6e1a-1111-2222-3333-444455556666
POD_NAME=caller ECS_CONTAINER_METADATA_URI_V4=http://127.0.0.1:9/v4/x KUBE_NODE_NAME=callernode NODE_NAME=callernode
ACCEL_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 FAKE_NVML_SCRIPT=/nonexistent NO_COLOR=1 COLUMNS=7"

# The probe: one TAP test that passes when its environment holds none of the caller's values.
cat >"$WORK/probe.sh" <<'PROBE'
#!/bin/sh
left=$(env | grep -E '^(AWS_|OTEL_|KUBERNETES_|POD_|ECS_|KUBE_NODE_NAME=|NODE_NAME=|ACCEL_NVML_|FAKE_NVML_|NO_COLOR=|COLUMNS=)' |
	grep -v -x -e 'AWS_SHARED_CREDENTIALS_FILE=/nonexistent/accel-test/aws-credentials' \
		-e 'AWS_CONFIG_FILE=/nonexistent/accel-test/aws-config')
[ -z "$left" ] && echo "ok 1 - a clean environment" || { echo "not ok 1 - left: $left"; }
echo 1..1
PROBE
chmod +x "$WORK/probe.sh"

# shellcheck disable=SC2086 # DIRTY is a list of words
ok "run_suite.sh: its tests see none of the caller's variables" env $DIRTY "$HELP/run_suite.sh" "$WORK/probe.sh"

# A script run alone: lib.sh cleans its environment ($0 names a script in tests/integration for lib.sh's TOP).
# shellcheck disable=SC2086
env $DIRTY sh -c '. "$(dirname "$0")/lib.sh"; "$1"' "$TOP/tests/integration/probe" "$WORK/probe.sh" >"$WORK/alone.out" 2>&1 || true
ok "lib.sh: a script run alone sees none of them" grep -qx "ok 1 - a clean environment" "$WORK/alone.out"

# A unit binary run alone: the binaries of this build sit in build/san/tests beside build/san/bin, else in
# build/release/tests.
case $BIN in
*/build/san/bin) UNIT=$TOP/build/san/tests ;;
*) UNIT=$TOP/build/release/tests ;;
esac
need "$UNIT/test_cloudwatch_creds is built" test -x "$UNIT/test_cloudwatch_creds"
# shellcheck disable=SC2086
ok "tap.h: test_cloudwatch_creds run alone passes in the caller's environment" env $DIRTY "$UNIT/test_cloudwatch_creds"
done_testing
