#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The Amazon ECS task definitions (deploy/ecs/, docs/deploy.md), offline:
#  - each is valid RegisterTaskDefinition input by botocore's ECS service model (Debian's python3-botocore:
#    tests/helpers/ecs_validate.py), with an unknown field, a wrong type, a missing required field and a
#    value outside an enum shown to fail first;
#  - what each must hold: the daemon with host PID and host networking (the agent's port 51678 on
#    localhost), the host's /proc and /sys read-only, --ecs-agent-url; the sidecar sharing its task's PID
#    namespace and loopback with Triton, --ecs-metadata, the image's command line;
#  - accel-monitor takes each one's options (ACCEL_MONITOR_OPTS) and config (--check-config).
. "$(dirname "$0")/lib.sh"

D=$TOP/deploy/ecs
V="$PY $HELP/ecs_validate.py"
need "python3-botocore" $PY -c 'import botocore.session, botocore.validate'
need "$BIN/accel-monitor is built" test -x "$BIN/accel-monitor"

# ---- the validator can fail -------------------------------------------------------------------------------
bad() { # NAME SED-EXPR GREP: the daemon's definition changed by SED-EXPR fails, saying GREP
	sed "$2" "$D/daemon-task-definition.json" >"$WORK/bad.json"
	ok "validator: $1 fails" sh -c '! $1 "$2" 2>"$3" && grep -q "$4" "$3"' sh "$V" "$WORK/bad.json" "$WORK/v.err" "$3"
}
bad "an unknown field" 's/"essential": true/"essential": true, "privilegedx": true/' 'Unknown parameter.*privilegedx'
bad "a wrong type" 's/"hostPort": 8000/"hostPort": "8000"/' 'Invalid type.*hostPort'
bad "a missing required field" 's/"family": "accel-monitor",//' 'Missing required parameter.*family'
bad "a value outside an enum" 's/"pidMode": "host"/"pidMode": "hosts"/' "pidMode: 'hosts' is not one of"

# ---- each definition ----------------------------------------------------------------------------------------
for f in "$D"/*.json; do
	ok "$(basename "$f"): valid RegisterTaskDefinition input" $V "$f"
done

# q FILE EXPR: a Python expression over the task definition t; c is its accel-monitor container, o its options
tq() {
	$PY - "$1" "$2" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1], encoding="utf-8"))
c = [x for x in t["containerDefinitions"] if x["name"] == "accel-monitor"][0]
env = {e["name"]: e["value"] for e in c.get("environment", [])}
o = env.get("ACCEL_MONITOR_OPTS", "")
print(eval(sys.argv[2]))
EOF
}
DT=$D/daemon-task-definition.json
is "$(tq "$DT" 't["pidMode"], t["networkMode"], t["requiresCompatibilities"]')" "('host', 'host', ['EC2'])" \
	"daemon: host PID and host networking (the agent's introspection API on localhost), EC2"
is "$(tq "$DT" 'sorted((m["containerPath"], m["readOnly"], [v["host"]["sourcePath"] for v in t["volumes"] if v["name"] == m["sourceVolume"]][0]) for m in c["mountPoints"])')" \
	"[('/host/proc', True, '/proc'), ('/host/sys', True, '/sys')]" "daemon: the host's /proc and /sys, read-only"
ok "daemon: asks the ECS agent on localhost:51678" sh -c 'case "$1" in *"--ecs-agent-url http://localhost:51678"*) ;; *) exit 1 ;; esac' \
	sh "$(tq "$DT" o)"
is "$(tq "$DT" 'c["command"]')" "['accel-pipeline', 'accel-prom', '--port', '8000']" "daemon: the image's command line"
# shellcheck disable=SC2046 # the options are a word list, as accel-pipeline passes them
ok "daemon: accel-monitor takes its options" "$BIN/accel-monitor" --check-config $(tq "$DT" o)

ST=$D/sidecar-triton-task-definition.json
is "$(tq "$ST" 't["pidMode"], t["networkMode"]')" "('task', 'awsvpc')" \
	"sidecar: the task's PID namespace and loopback, shared with Triton"
is "$(tq "$ST" '[x["name"] for x in t["containerDefinitions"]]')" "['tritonserver', 'accel-monitor']" \
	"sidecar: beside tritonserver"
tq "$ST" 'env["ACCEL_MONITOR_CONFIG"]' >"$WORK/sidecar.json"
ok "sidecar: its config is valid (--check-config)" sh -c '"$1" --check-config -c "$2" >/dev/null' sh "$BIN/accel-monitor" \
	"$WORK/sidecar.json"
is "$(tq "$ST" 'o')" "-c /tmp/accel-monitor.json --ecs-metadata" "sidecar: the config written at start, the metadata endpoint asked"
ok "sidecar: accel-monitor takes its options (the endpoint's variable set as ECS sets it)" sh -c \
	'ECS_CONTAINER_METADATA_URI_V4=http://169.254.170.2/v4/x "$1" --check-config -c "$2" --ecs-metadata >/dev/null' \
	sh "$BIN/accel-monitor" "$WORK/sidecar.json"
ok "sidecar: the shell writes the config and runs the pipeline" sh -c \
	'case "$1" in *"exec accel-pipeline accel-prom --port 9400"*) ;; *) exit 1 ;; esac' sh "$(tq "$ST" 'c["command"][0]')"

done_testing
