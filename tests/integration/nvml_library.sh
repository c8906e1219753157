#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The "nvidia" devices block's own key "library" (the NVML library to
# dlopen), against the fake libnvidia-ml built here from
# tests/helpers/fake_nvml.c under a name that is not the default: a config
# that names it collects from it with no ACCEL_NVML_LIBRARY set; the key wins
# over the environment variable; a path that does not exist is the nvidia
# entry's error, naming the path; --check-config prints the key back, as a
# valid configuration and a fixed point; the key is refused for another type.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
CHECK="$PY $HELP/check_report.py"
NV=$FIX/nvml
export AWS_EC2_METADATA_DISABLED=true
unset ACCEL_NVML_LIBRARY

mkdir -p "$WORK/lib"
LIB=$WORK/lib/libfake-nvml.so
MISSING=$WORK/missing/libnvidia-ml.so.1
ok "the fake NVML library builds (as $LIB)" fake_nvml_build "$LIB"

# config FILE LIBRARY: a config collecting every nvidia group from LIBRARY every 100 ms.
config() {
	cat >"$1" <<EOF
{ "period": "100ms", "system_metrics": [], "devices": [ { "type": "nvidia", "library": "$2" } ] }
EOF
}

# mon NAME CONFIG [ENV...]: accel-monitor -n 1 into $WORK/NAME.out (.err); the exit status in RC.
mon() {
	name=$1 cfg=$2
	shift 2
	RC=0
	env FAKE_NVML_SCRIPT="$NV/multi.nvml" "$@" "$MON" -c "$cfg" -n 1 >"$WORK/$name.out" 2>"$WORK/$name.err" || RC=$?
	if [ "$RC" -ne 0 ]; then
		sed 's/^/#   /' "$WORK/$name.err" | head -30 >&2
	fi
}

# entry FILE: the nvidia entry's error and the GPUs device_info reports.
entry() {
	$PY - "$1" <<'EOF'
import json, sys
e = json.loads(open(sys.argv[1], encoding="utf-8").readline())["device_data"][0]
print(e["device_type"], repr(e["error"]), sorted(k for k in e["report"]["device_info"].get("devices", {}) if "/" not in k))  # GPUs, not MIG instances
EOF
}

# --- the key alone: no environment variable ----------------------------------------------
config "$WORK/lib.json" "$LIB"
mon lib "$WORK/lib.json"
is "$RC" 0 "library key: accel-monitor exits 0"
ok "library key: the report passes the checker (--config)" $CHECK --config "$WORK/lib.json" --count 1 "$WORK/lib.out"
is "$(entry "$WORK/lib.out")" "nvidia '' ['0', '1', '2']" \
	"library key, no ACCEL_NVML_LIBRARY: collected from the named library (3 GPUs)"

# --- the key wins over the environment variable ------------------------------------------
mon libenv "$WORK/lib.json" ACCEL_NVML_LIBRARY="$MISSING"
is "$(entry "$WORK/libenv.out")" "nvidia '' ['0', '1', '2']" "library key over ACCEL_NVML_LIBRARY: the key's library"

# --- a path that does not exist: the entry's error names it --------------------------------
config "$WORK/missing.json" "$MISSING"
mon missing "$WORK/missing.json" ACCEL_NVML_LIBRARY="$LIB"
is "$RC" 0 "missing library: accel-monitor exits 0"
ok "missing library: the report passes the checker" $CHECK --count 1 "$WORK/missing.out"
is "$(entry "$WORK/missing.out")" \
	"nvidia 'NVML not found: $MISSING: cannot open shared object file: No such file or directory' []" \
	"missing library: the nvidia entry's error names the configured path (the environment's is not used)"
ok "missing library: logged with the path" grep -qF "nvidia: NVML not found: $MISSING" "$WORK/missing.err"

# --- --check-config prints the key back: valid, and a fixed point ---------------------------
RC=0
"$MON" -c "$WORK/lib.json" --check-config >"$WORK/eff.json" 2>"$WORK/eff.err" || RC=$?
is "$RC" 0 "--check-config with a library key exits 0"
is "$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][0].get("library"))' "$WORK/eff.json")" \
	"$LIB" "--check-config prints the library key back"
RC=0
"$MON" -c "$WORK/eff.json" --check-config >"$WORK/eff2.json" 2>"$WORK/eff2.err" || RC=$?
is "$RC" 0 "the effective configuration passes --check-config"
ok "... and is a fixed point" cmp "$WORK/eff.json" "$WORK/eff2.json"
mon eff "$WORK/eff.json"
is "$(entry "$WORK/eff.out")" "nvidia '' ['0', '1', '2']" "the effective configuration collects from the same library"

# --- refused for another type, and when empty ----------------------------------------------
printf '{"devices": [\n  {"type": "amdgpu", "library": "%s"}]}\n' "$LIB" >"$WORK/amd.json"
RC=0
"$MON" -c "$WORK/amd.json" --check-config >"$WORK/amd.out" 2>"$WORK/amd.err" || RC=$?
is "$RC" 3 "library key for type amdgpu: exit 3 (config)"
is "$(cat "$WORK/amd.err")" \
	"accel-monitor: error: $WORK/amd.json:2:22: devices[0].library: unknown key \"library\" for type \"amdgpu\"; known: type, select, period, metrics, idle_power_watts (\"library\" is a key of type \"nvidia\")" \
	"library key for type amdgpu: unknown key, with file:line:col and the type's keys"
printf 'devices:\n  - type: nvidia\n    library: ""\n' >"$WORK/empty.yaml"
RC=0
"$MON" -c "$WORK/empty.yaml" --check-config >"$WORK/empty.out" 2>"$WORK/empty.err" || RC=$?
is "$RC" 3 "an empty library: exit 3 (config)"
is "$(cat "$WORK/empty.err")" \
	"accel-monitor: error: $WORK/empty.yaml:3:14: devices[0].library: expected the NVML library's path or file name (a non-empty string), got an empty string" \
	"an empty library: the error and its position"

done_testing
