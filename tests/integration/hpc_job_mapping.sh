#!/bin/sh
# SPDX-License-Identifier: MIT
#
# --hpc-job-mapping-dir DIR (and the host block's "hpc_job_mapping_dir") on accel-monitor, against
# the fake libnvidia-ml.so.1:
#   - the option and the key are accepted, --check-config prints the directory, the command line
#     wins over the file, "" turns the file's off;
#   - a directory that is missing gives its error on stderr once, while reports keep coming;
#   - SIGHUP to a config naming another directory: read from then on (its bad file's error, with the
#     file's name, once; its FIFO read without a hang); fixed, the monitor says so and goes on.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
CC=${CC:-cc}
export AWS_EC2_METADATA_DISABLED=true
need "$MON is built" test -x "$MON"
need "a C compiler ($CC) for the fake libnvidia-ml.so.1" command -v "$CC"
cd "$WORK"

mkdir -p lib
ok "the fake libnvidia-ml.so.1 builds" fake_nvml_build "$WORK/lib/libnvidia-ml.so.1"
cat >gpu.nvml <<'EOF'
gpu
name NVIDIA H100 80GB HBM3
uuid GPU-5e0a7c2d-91b4-4f3a-8d6e-0c1f2a3b4c5d
memory 85520809984 1048576 85175828480 343932928
EOF
export FAKE_NVML_SCRIPT="$WORK/gpu.nvml" ACCEL_NVML_LIBRARY="$WORK/lib/libnvidia-ml.so.1"

# the host block's hpc_job_mapping_dir in --check-config's output ("(absent)" when it is not there)
dir_of() { $PY -c 'import json, sys; print(json.load(sys.stdin)["host"].get("hpc_job_mapping_dir", "(absent)"))'; }
# config FILE DIR: a 200 ms config with the NVIDIA collector, the host block naming DIR
config() {
	cat >"$1" <<EOF
{"period": "200ms", "system_metrics": [], "devices": [{"type": "nvidia"}], "host": {"hpc_job_mapping_dir": "$2"}}
EOF
}

# ---- the option, the key, --check-config ------------------------------------------------------------
mkdir jobs
printf 'job-1\n' >jobs/0
config file.json "$WORK/from-file"
is "$($MON --hpc-job-mapping-dir "$WORK/jobs" --check-config | dir_of)" "$WORK/jobs" \
	"--check-config prints --hpc-job-mapping-dir"
is "$($MON -c file.json --check-config | dir_of)" "$WORK/from-file" "--check-config: the file's directory"
is "$($MON -c file.json --hpc-job-mapping-dir "$WORK/jobs" --check-config | dir_of)" "$WORK/jobs" \
	"--check-config: the option wins over the file"
is "$($MON -c file.json --hpc-job-mapping-dir "" --check-config | dir_of)" "" \
	"--check-config: \"\" turns the file's off"
is "$($MON --check-config | dir_of)" "(absent)" "--check-config: none by default"
rc=0
$MON --hpc-job-mapping-dir >/dev/null 2>usage.err || rc=$?
is "$rc" 2 "--hpc-job-mapping-dir without its DIR: a usage error"
printf '{"host": {"hpc_job_mapping_dir": 7}}\n' >bad.json
rc=0
$MON -c bad.json --check-config >/dev/null 2>bad.err || rc=$?
is "$rc" 3 "hpc_job_mapping_dir not a string: a configuration error"
ok "... that says where and what" grep -q 'bad.json:1:34: host.hpc_job_mapping_dir: expected a directory' bad.err

# ---- a good directory: accepted, nothing logged ---------------------------------------------------
config good.json "$WORK/jobs"
rc=0
$MON -c good.json -n 5 >good.out 2>good.err || rc=$?
is "$rc" 0 "a good directory: accel-monitor runs"
is "$(nlines good.out)" 5 "... and writes its reports"
is "$(grep -c 'hpc:' good.err || true)" 0 "... with nothing to say about the directory"

# ---- a missing directory: its error once, reports keep coming; SIGHUP to another -------------------
config run.json "$WORK/missing"
"$MON" -c run.json -v >run.out 2>run.err &
MPID=$!
_pids="$_pids $MPID"
ok "a missing directory: its error on stderr" wait_for $((10 * SLOW)) grep -q "hpc: $WORK/missing: No such file or directory" run.err
N=$(nlines run.out)
ok "... reports keep coming (10 more)" wait_for $((20 * SLOW)) has_lines run.out $((N + 10))
is "$(grep -c 'warning: hpc:' run.err)" 1 "... and the error was logged once"

mkdir jobs2
printf 'job-7\n' >jobs2/0
printf 'ok\n\001bad\n' >jobs2/1
mkfifo jobs2/2
config run.json "$WORK/jobs2"
kill -HUP "$MPID"
ok "SIGHUP: the reloaded config's directory is read (its bad file's error, DIR/FILE:LINE:COLUMN)" \
	wait_for $((20 * SLOW)) grep -q "hpc: $WORK/jobs2/1:2:1: a control character (U+0001) in a job id (and 1 more file)" run.err
N=$(nlines run.out)
ok "... reports keep coming (10 more; the FIFO blocks nothing)" wait_for $((20 * SLOW)) has_lines run.out $((N + 10))
is "$(grep -c "hpc: $WORK/jobs2" run.err)" 1 "... and the error was logged once"
is "$(grep -c 'warning: hpc:' run.err)" 2 "... the missing directory's not again"

printf 'ok\nfixed\n' >jobs2/1
rm jobs2/2
printf '#' >>jobs2/0 # a change after the fix is read too
ok "fixed: the monitor says so" wait_for $((20 * SLOW)) grep -q "info: hpc: $WORK/jobs2 read without errors again" run.err
N=$(nlines run.out)
ok "... reports keep coming (5 more)" wait_for $((20 * SLOW)) has_lines run.out $((N + 5))
is "$(grep -c 'warning: hpc:' run.err)" 2 "... and no new error"
kill -TERM "$MPID"
rc=0
wait "$MPID" || rc=$?
is "$rc" 0 "accel-monitor stops cleanly"
ok "stdout holds reports only (every line JSON)" $PY -c '
import json, sys
for l in open(sys.argv[1]): json.loads(l)' run.out
done_testing
