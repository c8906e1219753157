# SPDX-License-Identifier: MIT
# accel-otlp's integration tests share this, sourced after tests/integration/lib.sh:
#
#   otlp_need                     the prerequisites: accel-otlp and accel-monitor built, node, the test peer
#                                 installed (make runs npm ci in tests/helpers/otlp); a missing one fails
#   otlp_recv NAME [ARG...]       start the test peer (receiver.mjs --dir $WORK/NAME ARG...) on a free port;
#                                 sets RDIR (its directory), RP (its port), RPID; killed at exit
#   otlp_stop                     stop the last receiver started (its port is free again)
#   pts DIR QUESTION [ARG...]     tests/helpers/otlp/points.py: what the receiver took
#   otlp_gen FROM TO              reports FROM..TO of the fixture tree, restamped 100 ms apart from $BASE
#   no_proto_errors DIR           the receiver logged no protocol violation
OTLP_HELP=$HELP/otlp
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED
T=$((30 * SLOW))

otlp_need() {
	need "$BIN/accel-otlp is built" test -x "$BIN/accel-otlp"
	need "$BIN/accel-monitor is built" test -x "$BIN/accel-monitor"
	need "node (scripts/install-deps.sh test installs nodejs)" command -v node
	need "the OTLP test peer's packages (make installs them: npm ci in tests/helpers/otlp)" \
		test -f "$OTLP_HELP/node_modules/.installed"
	need "openssl" command -v openssl
}

otlp_recv() {
	RDIR=$WORK/$1
	shift
	rm -f "$RDIR/port"
	mkdir -p "$RDIR"
	spawn RPID node "$OTLP_HELP/receiver.mjs" --dir "$RDIR" "$@" >"$RDIR.out" 2>"$RDIR.err" 3>&- 4>&-
	if ! wait_for "$T" test -s "$RDIR/port"; then
		echo "# the receiver did not start" >&2
		return 1
	fi
	RP=$(cat "$RDIR/port")
}

otlp_stop() {
	kill "$RPID" 2>/dev/null || true
	wait "$RPID" 2>/dev/null || true
}

pts() { $PY "$OTLP_HELP/points.py" "$@"; }

no_proto_errors() { [ ! -s "$1/errors.log" ]; }

# One report of the fixture tree (AMD GPUs and Neuron devices), made once; otlp_gen restamps it.
printf '{ "period": "1s", "devices": [ { "type": "amdgpu" }, { "type": "neuron" } ] }\n' >"$WORK/mon.json"
"$BIN/accel-monitor" -c "$WORK/mon.json" --path.sysfs "$FIX/sysfs/host" --path.procfs "$FIX/proc-devices" \
	--once >"$WORK/one.json" 2>"$WORK/mon.err" || true
BASE=$(($(date +%s) * 1000 - 120000))
otlp_gen() { $PY "$HELP/restamp.py" "$WORK/one.json" "$BASE" "$1" "$2"; }
# The series every report carries once: AMD GPU 0's power.
S_POWER="hw.power hw.name=0 hw.vendor=amdgpu"
