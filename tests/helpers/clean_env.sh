# SPDX-License-Identifier: MIT
#
# clean_env: what every test starts from, whatever the caller's shell holds. Sourced by run_suite.sh (make
# check and its kin) and by tests/integration/lib.sh (a script run alone); tests/unit/tap.h does the same for a
# unit binary run alone (keep the two lists alike).
#
# It unsets the variables that change what the programs or the test helpers do:
#   AWS_*          the instance metadata switch and endpoint, regions, profiles, keys, container credentials
#                  (instance.c, cloudwatch_creds.c, cloudwatch.c; botocore in ecs_validate.py)
#   ECS_*          the task metadata endpoint (--ecs-metadata)
#   POD_*, KUBE_NODE_NAME, NODE_NAME, KUBERNETES_*   the downward API and the in-cluster service
#   OTEL_*         an OpenTelemetry setup meant for something else
#   ACCEL_NVML_*, ACCEL_CLOUDWATCH_NOW, ACCEL_CSV_NOW*   the programs' test hooks
#   FAKE_NVML_*, FAIL_WRITE_*, CW_CHECK_NOW   the fakes' knobs
#   NO_COLOR, COLUMNS   accel-top's view
# and points the AWS shared files at a path that does not exist, so that a caller's ~/.aws/credentials and
# ~/.aws/config are read by nothing. A test that needs one of these sets it itself.
clean_env() {
	for _ce in $(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/\1/p'); do
		case $_ce in
		AWS_* | ECS_* | POD_* | KUBERNETES_* | OTEL_* | ACCEL_NVML_* | FAKE_NVML_* | FAIL_WRITE_* | ACCEL_CSV_NOW* | \
			KUBE_NODE_NAME | NODE_NAME | ACCEL_CLOUDWATCH_NOW | CW_CHECK_NOW | NO_COLOR | COLUMNS)
			unset "$_ce"
			;;
		esac
	done
	AWS_SHARED_CREDENTIALS_FILE=/nonexistent/accel-test/aws-credentials
	AWS_CONFIG_FILE=/nonexistent/accel-test/aws-config
	export AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE
	unset _ce
}
clean_env
