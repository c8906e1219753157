#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accel-top's interactive view under tmux, as a person sees it: reports fed
# through a fifo, keys sent with `tmux send-keys`, the screen read with
# `capture-pane`. At 80x24 and 200x50: the panels and the bars' widths for
# known values, sorting by each key, the filter, the help overlay, the device
# detail, a resize, the stale header after the input stops; the terminal
# restored (no alternate screen, echo on) after q, after SIGTERM, at the end
# of the input (with its message) and after SIGSEGV (from its handler). At
# 300x80 over a stream with pods, endpoint models and MIG instances: the
# pod column, the model rows, the MIG lines, sorting by pod, the filter on a
# namespace and on a model.
. "$(dirname "$0")/lib.sh"

TOP=$BIN/accel-top
TF=$FIX/top
need tmux command -v tmux
SOCK=accel-top-test-$$
T="tmux -L $SOCK -f /dev/null"
stop_tmux() { $T kill-server 2>/dev/null || true; }
trap 'stop_tmux; cleanup' EXIT

# start NAME W H ARGS...: accel-top in a tmux window NAME of W x H, reading $WORK/NAME.fifo;
# when it exits, the window records its exit status and the terminal's modes, then waits.
start() {
	name=$1 w=$2 h=$3
	shift 3
	mkfifo "$WORK/$name.fifo"
	cmd="sh -c 'echo \$\$ >$WORK/$name.pid; LC_ALL=C.UTF-8 exec $TOP $* <$WORK/$name.fifo 2>$WORK/$name.err';"
	cmd="$cmd echo \$? >$WORK/$name.status; stty -a >$WORK/$name.stty; sleep 600"
	if $T has-session 2>/dev/null; then
		$T new-window -d -n "$name" "$cmd"
	else
		$T new-session -d -s top -n "$name" -x "$w" -y "$h" "$cmd"
	fi
	$T resize-window -t "top:$name" -x "$w" -y "$h" 2>/dev/null || true
}
screen() { $T capture-pane -p -t "top:$1"; }
# shows NAME TEXT: wait until the screen of NAME has TEXT.
shows() { wait_for $((5 * SLOW)) sh -c "$T capture-pane -p -t 'top:$1' | grep -qF -- '$2'"; }
check() { # NAME TEXT TESTNAME
	if shows "$1" "$2"; then _result 0 "$3"; else
		_result 1 "$3"
		screen "$1" | sed 's/^/#   /' >&2
	fi
}
keys() { $T send-keys -t "top:$1" "$2"; }
alt() { $T display -p -t "top:$1" '#{alternate_on}'; }
# restored NAME HOW: accel-top exited, the pane left the alternate screen, echo is on.
restored() { # NAME HOW [STATUS]
	wait_for $((5 * SLOW)) test -s "$WORK/$1.stty" || true
	is "$(cat "$WORK/$1.status" 2>/dev/null)" "${3:-0}" "$2: exit status ${3:-0}"
	is "$(alt "$1")" 0 "$2: no alternate screen left"
	is "$(grep -o '[ -]echo ' "$WORK/$1.stty" | head -1)" " echo " "$2: echo is on"
}

# --- 80x24 -------------------------------------------------------------------------------------
start a 80 24 --stale 3s
exec 3>"$WORK/a.fifo"
cat "$TF/runtimes.jsonl" >&3
check a "Processes: 42" "80x24: the process table"
is "$(alt a)" 1 "80x24: on the alternate screen"
s=$(screen a)
is "$(echo "$s" | sed -n 's/^ util \(\[[^]]*\]\) 37%.*/\1/p' | tr -cd '|' | wc -c | tr -d ' ')" 4 \
	"80x24: 37% fills 4 of an 11-cell bar"
is "$(echo "$s" | sed -n 's/^ util \(\[[^]]*\]\) 37%.*/\1/p')" "[||||       ]" "80x24: the bar is 13 cells"
is "$(echo "$s" | wc -l | tr -d ' ')" 24 "80x24: 24 rows"
is "$(echo "$s" | $PY -c 'import sys; print(sum(len(l.rstrip("\n")) > 80 for l in sys.stdin))')" 0 \
	"80x24: no row wider than 80"
echo "$s" | tail -1 | grep -q '^q quit  h help  s sort:devmem' && r=0 || r=1
is "$r" 0 "80x24: the key line is the last row"

# colours: the bars are green; NO_COLOR (window f, below) has none
$T capture-pane -e -p -t top:a | grep -q "$(printf '\033')\[32m|" && r=0 || r=1
is "$r" 0 "80x24: the bars are drawn in green"

# sorting: the first process row for each key
first() { screen a | awk '/^ +PID NAME/ { getline; print $1; exit }'; }
for want in "cpu 4343" "rss 4242" "pid 4242" "name 4242" "pod 4242" "req/s 4242" "p99 4242" "devmem 4242"; do
	keys a s
	check a "sort: ${want% *}" "sort key s: by ${want% *}"
	is "$(first)" "${want#* }" "sort by ${want% *}: pid ${want#* } first"
done
keys a r
check a "(reversed)" "r reverses the sort"
is "$(first)" 10039 "reversed devmem (ties by pid): pid 10039 first"
keys a r

# filter
keys a /
keys a pyth
check a "filter: pyth_" "/: the filter prompt"
keys a Enter
check a 'Processes: 2 of 42' "the filter keeps the matching processes"
keys a /
keys a Escape
check a 'Processes: 42  sort' "Esc clears the filter"

# help, detail
keys a h
check a "Keys" "h: the help overlay"
keys a x
check a "Processes: 42" "any key closes the help"
keys a d
check a "Device 1 of 3: nvidia 0" "d: the first device's detail"
check a "accelerator_utilization_ratio{engine=core}       0.37" "the detail lists its values"
keys a Escape
check a "Devices: 3" "Esc leaves the detail"

# scrolling
keys a NPage
check a "  10028 " "PgDn scrolls the body"
keys a Home

# stale: nothing for more than 3 s
check a "STALE" "the header says STALE when no report came for --stale"

# resize to 200x50
$T resize-window -t top:a -x 200 -y 50
check a "mem 2619MHz" "200x50: redrawn after the resize"
wait_for $((5 * SLOW)) sh -c "[ \"\$($T capture-pane -p -t top:a | wc -l)\" -eq 50 ]" || true
s=$(screen a)
is "$(echo "$s" | wc -l | tr -d ' ')" 50 "200x50: 50 rows"
is "$(echo "$s" | sed -n 's/^ util \(\[[^]]*\]\) 37%.*/\1/p' | tr -cd '|' | wc -c | tr -d ' ')" 11 \
	"200x50: 37% fills 11 of a 31-cell bar"
echo "$s" | tail -1 | grep -q '^q quit' && r=0 || r=1
is "$r" 0 "200x50: the key line is the last row"

keys a q
restored a "q"

# --- 300x80: pods, endpoint models, MIG ------------------------------------------------------------
start g 300 80
exec 8>"$WORK/g.fifo"
cat "$TF/pods-mig.jsonl" >&8
check g "MIG instances: 4" "300x80: the GPU and its MIG instances"
s=$(screen g)
is "$(echo "$s" | wc -l | tr -d ' ')" 80 "300x80: 80 rows"
is "$(echo "$s" | $PY -c 'import sys; print(sum(len(l.rstrip("\n")) > 300 for l in sys.stdin))')" 0 \
	"300x80: no row wider than 300"
is "$(echo "$s" | grep -c '^  MIG 0/[0-9]*/0  ')" 4 "300x80: each MIG instance an indented line under its GPU"
is "$(echo "$s" | grep -c '^nvidia ')" 1 "300x80: one device panel"
is "$(echo "$s" | awk '$1 == 5202 { print $3 }')" "vllm-7d9f6c5b4-x2k8p/vllm" "300x80: the pod/container column"
is "$(echo "$s" | awk '$1 == "resnet50:2" { print $2 }')" 20 "300x80: a model version's row under its runtime"
firstg() { screen g | awk '/^ +PID NAME/ { getline; print $1; exit }'; }
for k in 1 2 3 4 5; do keys g s; done
check g "sort: pod" "300x80: s five times sorts by pod"
is "$(firstg)" 5203 "sort by pod: the Docker container jupyter first"
keys g /
keys g llm
keys g Enter
check g 'Processes: 1 of 7' "300x80: the filter matches a namespace (llm)"
is "$(firstg)" 5202 "300x80: the vLLM pod's process"
keys g /
keys g Escape
keys g /
keys g resnet
keys g Enter
check g 'Processes: 1 of 7' "300x80: the filter matches a model name"
is "$(firstg)" 3100 "300x80: Triton's runtime, with its models"
keys g q
restored g "300x80, q"
exec 8>&-

# --- SIGTERM ----------------------------------------------------------------------------------
start b 200 50
exec 4>"$WORK/b.fifo"
cat "$TF/host.jsonl" >&4
check b "hwmon 8" "200x50: the sysfs fixture's devices"
kill -TERM "$(cat "$WORK/b.pid")"
restored b "SIGTERM"

# --- end of input -------------------------------------------------------------------------------
start c 80 24
exec 5>"$WORK/c.fifo"
cat "$TF/nvidia.jsonl" >&5
check c "Devices: 3" "end of input: the view is up"
exec 5>&-
restored c "end of input"
grep -q 'end of input after 2 reports' "$WORK/c.err" && r=0 || r=1
is "$r" 0 "end of input: the message after the terminal is restored"

# --- a child command after "--": its stderr on the key line, replayed after the view ------------
$T new-window -d -n e "sh -c 'LC_ALL=C.UTF-8 exec $TOP -- sh -c \"cat $TF/nvidia.jsonl; echo note-from-child >&2; echo \\\$\\\$ >$WORK/e.child; exec sleep 600\" 2>$WORK/e.err'; echo \$? >$WORK/e.status; stty -a >$WORK/e.stty; sleep 600"
$T resize-window -t top:e -x 80 -y 24 2>/dev/null || true
check e "Devices: 3" "-- COMMAND: the child's reports"
check e "note-from-child" "-- COMMAND: its stderr on the key line"
keys e q
restored e "-- COMMAND, q"
grep -q 'note-from-child' "$WORK/e.err" && r=0 || r=1
is "$r" 0 "-- COMMAND: its stderr written out after the view"
kill -0 "$(cat "$WORK/e.child")" 2>/dev/null && r=1 || r=0
is "$r" 0 "-- COMMAND: the child is stopped at q"

# --- NO_COLOR -----------------------------------------------------------------------------------
mkfifo "$WORK/f.fifo"
$T new-window -d -n f "sh -c 'NO_COLOR=1 LC_ALL=C.UTF-8 exec $TOP <$WORK/f.fifo 2>/dev/null'; sleep 600"
$T resize-window -t top:f -x 80 -y 24 2>/dev/null || true
exec 7>"$WORK/f.fifo"
cat "$TF/nvidia.jsonl" >&7
check f "Devices: 3" "NO_COLOR: the view is up"
$T capture-pane -e -p -t top:f | grep -q "$(printf '\033')\[3[0-7]m" && r=1 || r=0
is "$r" 0 "NO_COLOR: no colour in the view"

# --- a crash signal -----------------------------------------------------------------------------
start d 80 24
exec 6>"$WORK/d.fifo"
cat "$TF/nvidia.jsonl" >&6
check d "Devices: 3" "crash: the view is up"
kill -SEGV "$(cat "$WORK/d.pid")"
restored d "SIGSEGV" 139
exec 3>&- 4>&- 6>&- 7>&-

done_testing
