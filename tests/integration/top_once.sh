#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-top --once: one plain-text frame per fixture stream, compared with the
# golden text in tests/fixtures/top/ (NVIDIA through the fake NVML with MIG and
# 40 processes, amdgpu/Neuron/NCS2/hwmon from the sysfs fixture tree, process
# runtimes holding GPU memory, neuron-monitor 2.x and 2020 with their
# execution stats), in a UTF-8 locale and in the C locale (ASCII sparklines),
# at several widths; the same frame from a child command after "--"; the
# command line's errors. TOP_GOLDEN_UPDATE=1 rewrites the golden files.
. "$(dirname "$0")/lib.sh"

TOP=$BIN/accel-top
TF=$FIX/top

# frame NAME STREAM WIDTH LOCALE [ARGS...]: compare accel-top's frame with NAME.txt.
frame() {
	name=$1 stream=$2 width=$3 loc=$4
	shift 4
	rc=0
	LC_ALL=$loc "$TOP" --once --width "$width" "$@" <"$stream" >"$WORK/$name.txt" 2>"$WORK/$name.err" || rc=$?
	is "$rc" 0 "$name: exits 0"
	if [ "${TOP_GOLDEN_UPDATE:-0}" = 1 ]; then
		cp "$WORK/$name.txt" "$TF/$name.txt"
		_result 0 "$name: golden file rewritten"
	elif diff -u "$TF/$name.txt" "$WORK/$name.txt" >"$WORK/.diff" 2>&1; then
		_result 0 "$name: frame matches $name.txt"
	else
		_result 1 "$name: frame matches $name.txt"
		sed 's/^/#   /' "$WORK/.diff" | head -60 >&2
		sed 's/^/#   stderr: /' "$WORK/$name.err" | head -10 >&2
	fi
}

# has FILE PATTERN NAME: a test that FILE has a line matching PATTERN (grep -E).
has() {
	if grep -Eq -- "$2" "$1"; then _result 0 "$3"; else
		_result 1 "$3"
		sed 's/^/#   /' "$1" | head -20 >&2
	fi
}

frame host-100 "$TF/host.jsonl" 100 C.UTF-8
frame host-80-ascii "$TF/host.jsonl" 80 C
frame nvidia-80 "$TF/nvidia.jsonl" 80 C.UTF-8
frame nvidia-200 "$TF/nvidia.jsonl" 200 C.UTF-8
frame runtimes-120 "$TF/runtimes.jsonl" 120 C.UTF-8
frame neuron-2x-100 "$FIX/streams/neuron-monitor-2x.jsonl" 100 C.UTF-8
frame neuron-2020-100 "$FIX/streams/neuron-monitor-2020.jsonl" 100 C.UTF-8
frame pods-mig-80x24 "$TF/pods-mig.jsonl" 80 C.UTF-8 --height 24
frame pods-mig-300x80 "$TF/pods-mig.jsonl" 300 C.UTF-8 --height 80

# What the frames say, checked apart from the golden text (a rewritten golden file cannot hide these).
is "$(grep -c '^nvidia [0-9]' "$TF/nvidia-80.txt")" 3 "nvidia: three GPU panels"
is "$(grep -c '^ *1[0-9][0-9][0-9][0-9] ' "$TF/nvidia-80.txt")" 40 "nvidia: the 40 processes of GPU 2"
has "$TF/nvidia-80.txt" 'MIG 2' "nvidia: GPU 2 shows its MIG devices"
is "$(grep -c '^amdgpu [01] \|^neuron [01] \|^ncs2 [0-2] ' "$TF/host-100.txt")" 7 "host: amdgpu, Neuron and NCS2 devices"
is "$(sed -n 's/^ util \(\[[^]]*\]\) 37%.*/\1/p' "$TF/host-100.txt" | tr -cd '|' | wc -c | tr -d ' ')" 5 \
	"host: 37% fills 5 of a 14-cell bar"
is "$(awk '$1 == 4242 { print $2, $3, $4, $5 }' "$TF/runtimes-120.txt")" "python3 23% 2.0G 1.0G" \
	"runtimes: pid 4242 with its tag, CPU, RSS and GPU memory"
is "$(awk '$1 == 4242 { print $5, $6, $7, $8, $9 }' "$TF/neuron-2x-100.txt")" "139M 126 4 3.53ms 5.01ms" \
	"neuron-monitor 2.x: executions per second, failures, p50 and p99"
# pods, models and MIG
P80=$TF/pods-mig-80x24.txt P300=$TF/pods-mig-300x80.txt
is "$(wc -l <"$P80" | tr -d ' ')" 24 "pods-mig --height 24: 24 rows"
is "$(awk 'length > 80' "$P80" | wc -l | tr -d ' ')" 0 "pods-mig 80x24: no row wider than 80"
is "$(tail -n 1 "$P80" | cut -c1-6)" "q quit" "pods-mig 80x24: the key line last"
is "$(wc -l <"$P300" | tr -d ' ')" 80 "pods-mig --height 80: 80 rows"
is "$(grep -c '^nvidia ' "$P300")" 1 "MIG: one GPU panel, no panel per instance"
is "$(grep -c '^  MIG 0/[0-9]*/0  [1-7]g\.[0-9]*gb' "$P300")" 4 "MIG: the four instances as indented lines"
has "$P300" '^  MIG 0/2/0  3g\.40gb  sm 95% .* 37\.0M/39\.5G' "MIG: an instance's profile, SM activity, memory"
has "$P300" '^Devices: 1  MIG instances: 4' "MIG: the count of GPUs and instances"
has "$P300" 'POD/CONTAINER' "pods: the POD/CONTAINER column"
is "$(awk '$1 == 5101 { print $3 }' "$P300")" "triton-0/triton" "pods: pod/container of pid 5101"
is "$(awk '$1 == 5203 { print $3 }' "$P300")" "jupyter" "pods: a Docker container's name without a pod"
has "$P80" '^ +PID NAME +POD/CONTAINER +CPU% +DEVMEM +REQ/s +P50 +P99' \
	"80 columns: RSS and FAIL dropped, the pod column narrowed"
has "$P300" '^ +PID NAME +POD/CONTAINER +CPU% +RSS +DEVMEM +REQ/s +FAIL +P50 +P99 DEVICES' "300 columns: every column"
is "$(awk '$1 == "resnet50:1" { print $2, $3, $4 }' "$P300")" "300 4 ~5.00ms" \
	"models: resnet50:1's requests per second, failures, ~mean"
is "$(awk '$1 == "meta-llama/Llama-3.1-8B" { print $2, $4, $5 }' "$P300")" "24 1.00s 2.50s" \
	"models: vLLM's model with p50 and p99"
is "$(awk '$1 == 3100 { print $7 }' "$P300")" "350" "models: the runtime's row sums its models' rates"
grep -q '[▁▂▃▄▅▆▇█]' "$TF/host-80-ascii.txt" && r=1 || r=0
is "$r" 0 "C locale: no block characters"

# The same frame from a child command.
LC_ALL=C.UTF-8 "$TOP" --once --width 80 -- cat "$TF/nvidia.jsonl" >"$WORK/child.txt" 2>"$WORK/child.err" || true
ok "-- COMMAND: the child's output gives the same frame" cmp "$TF/nvidia-80.txt" "$WORK/child.txt"
rc=0
"$TOP" --once -- /nonexistent/accel-monitor </dev/null >"$WORK/nx.txt" 2>"$WORK/nx.err" || rc=$?
is "$rc" 0 "-- COMMAND that cannot run: the frame is printed (exit 0)"
has "$WORK/nx.err" 'cannot run /nonexistent/accel-monitor' "-- COMMAND that cannot run: says so"
has "$WORK/nx.err" 'exited with status 127' "-- COMMAND that cannot run: its exit status is reported"

# The command line.
rc=0
"$TOP" --once -- </dev/null >/dev/null 2>"$WORK/e" || rc=$?
is "$rc" 2 "\"--\" without a command: usage error"
rc=0
"$TOP" --width 5 --once </dev/null >/dev/null 2>"$WORK/e" || rc=$?
is "$rc" 2 "--width 5: usage error"
rc=0
"$TOP" --help >"$WORK/help" 2>&1 || rc=$?
is "$rc" 0 "--help exits 0"
has "$WORK/help" '-- COMMAND' "--help names -- COMMAND"
rc=0
"$TOP" stray </dev/null >/dev/null 2>"$WORK/e" || rc=$?
is "$rc" 2 "a stray argument (not after --): usage error"
rc=0
"$TOP" --once <&- >/dev/null 2>"$WORK/e" || rc=$?
is "$rc" 1 "stdin closed: exit 1"
has "$WORK/e" '^accel-top: stdin is closed' "stdin closed: says so (the sink driver's message)"
rc=0
"$TOP" --once <"$TF/nvidia.jsonl" >&- 2>"$WORK/e" || rc=$?
is "$rc" 1 "--once with stdout closed: exit 1"
rc=0
"$TOP" --once <"$TF/nvidia.jsonl" >/dev/full 2>"$WORK/e" || rc=$?
is "$rc" 1 "--once with stdout full: exit 1"
has "$WORK/e" 'No space left on device' "--once with stdout full: says so"
rc=0
# setsid: no controlling terminal even when the suite runs in one
setsid -w "$TOP" </dev/null >/dev/null 2>"$WORK/e" || rc=$?
is "$rc" 1 "the view without a terminal: exit 1"
has "$WORK/e" 'cannot open the terminal|cannot start the terminal' "the view without a terminal: says so"
rc=0
printf 'not json\n' | "$TOP" --once >/dev/null 2>"$WORK/bad.err" || rc=$?
is "$rc" 0 "a bad line is skipped with a message"
has "$WORK/bad.err" 'skipped' "the bad line's message"

done_testing
