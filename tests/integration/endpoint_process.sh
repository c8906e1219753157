#!/bin/sh
# SPDX-License-Identifier: MIT
# The process behind an endpoint runtime: for a URL on this host,
# the process listening on its port (socket inode -> /proc/PID/fd) is the
# entry's pid and runtime_tag, and runtime_vcpu_usage and memory_used are
# measured for it as for a pid: runtime; a restarted server is followed to
# its new pid; tag_filter applies; a URL on another host has no process.
# With "passthrough", the entry carries the body as scraped.
. "$(dirname "$0")/lib.sh"

MON=$BIN/accel-monitor
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED

printf '# HELP demo_requests_total Requests.\n# TYPE demo_requests_total counter\ndemo_requests_total{model="m",version="1"} 7\ndemo_label{v="caf\303\251 \\"q\\""} 1\n' \
	>"$WORK/metrics.txt"
spawn SRV $PY "$HELP/fake_endpoint.py" --file "$WORK/metrics.txt" --port-file "$WORK/port"
ok "the fake endpoint listens" wait_for $((10 * SLOW)) test -s "$WORK/port"
PORT=$(cat "$WORK/port")
P='"metrics": [{"type": "runtime_vcpu_usage"}, {"type": "memory_used"}]'
cat >"$WORK/proc.json" <<EOF
{
  "period": "500ms",
  "runtimes": [
    { "address": "http://localhost:$PORT/metrics", "passthrough": true, $P },
    { "address": "http://127.0.0.1:$PORT/metrics", "tag_filter": "^python", $P },
    { "address": "http://127.0.0.1:$PORT/metrics", "tag_filter": "^no-such-tag", $P },
    { "address": "http://192.0.2.1:9/metrics", "timeout": "100ms", $P },
    { "address": "pid:$SRV", $P }
  ]
}
EOF

# Once the monitor has written 5 reports (about 2.5 s in), the server is restarted on the same port: a new pid.
# (By reports, not seconds: a loaded machine may start the monitor late.)
N=20
(
	wait_for $((30 * SLOW)) has_lines "$WORK/out" 5
	kill "$SRV"
	rm -f "$WORK/port2"
	exec $PY "$HELP/fake_endpoint.py" --file "$WORK/metrics.txt" --port-file "$WORK/port2" --port "$PORT"
) &
RESTART=$!
_pids="$_pids $RESTART"
RC=0
timeout -k 5 $((40 * SLOW)) "$MON" -c "$WORK/proc.json" -n $N >"$WORK/out" 2>"$WORK/err" || RC=$?
is "$RC" 0 "-n $N: exit status 0"
ok "the restarted server listened on the same port" test -s "$WORK/port2"
ok "the stream passes check_report.py" $PY "$HELP/check_report.py" --config "$WORK/proc.json" --count $N "$WORK/out"

first='[e for e in L[1]["runtime_data"] if e["runtime_index"] == A[1]][0]'
last='[e for e in L[-1]["runtime_data"] if e["runtime_index"] == A[1]][0]'
ok "localhost URL: the entry's pid is the server's ($SRV), runtime_tag python3" \
	q "$WORK/out" "$first[\"pid\"] == A[0] and $first[\"runtime_tag\"] == 'python3' and $first[\"error\"] == ''" "$SRV" 0
ok "runtime_vcpu_usage of the server: user and system, no error" \
	q "$WORK/out" "$first[\"report\"][\"runtime_vcpu_usage\"][\"error\"] == '' and set($first[\"report\"][\"runtime_vcpu_usage\"][\"vcpu_usage\"]) == {'user', 'system'}" "$SRV" 0
ok "memory_used of the server: host RSS > 1 MB, device null (no device collector)" \
	q "$WORK/out" "$first[\"report\"][\"memory_used\"][\"runtime_used_bytes\"][\"host\"] > 1 << 20 and $first[\"report\"][\"memory_used\"][\"runtime_used_bytes\"][\"device\"] is None" "$SRV" 0
ok "the restarted server: the last entry's pid is the new one" \
	q "$WORK/out" "$last[\"pid\"] == A[0] and $last[\"runtime_tag\"] == 'python3' and $last[\"report\"][\"memory_used\"][\"error\"] == ''" "$RESTART" 0
ok "memory_used of the restarted server: within 8 MB of its /proc/PID/statm RSS" \
	q "$WORK/out" "abs($last[\"report\"][\"memory_used\"][\"runtime_used_bytes\"][\"host\"] - A[2] * 4096) < 8 << 20" \
	"$RESTART" 0 "$(awk '{print $2}' "/proc/$RESTART/statm")"
ok "passthrough: the entry's exposition is the body as served" \
	q "$WORK/out" "$first[\"exposition\"] == open(A[2], encoding='utf-8').read()" 0 0 "$WORK/metrics.txt"
ok "without passthrough: no exposition" q "$WORK/out" "'exposition' not in $first" 0 1
ok "tag_filter ^python: the server" q "$WORK/out" "$first[\"pid\"] == A[0]" "$SRV" 1
ok "tag_filter that does not match: pid null, runtime_tag \"\", the groups say why" \
	q "$WORK/out" "$first[\"pid\"] is None and $first[\"runtime_tag\"] == '' and all(g['error'] == 'no process: its process (python3) does not match tag_filter' for g in $first[\"report\"].values())" 0 2
ok "another host: pid null, runtime_tag \"\"" \
	q "$WORK/out" "$first[\"pid\"] is None and $first[\"runtime_tag\"] == '' and $first[\"error\"].startswith('http://192.0.2.1:9/metrics: ')" 0 3
ok "the entry's container (container.h) is the one a pid: runtime of the same process gets" \
	q "$WORK/out" "$first.get('container') == [e for e in L[1]['runtime_data'] if e['runtime_index'] == 4][0].get('container')" 0 0
# --- libcurl is loaded at the first request, never before: RSS <= 4 MB without endpoints ---------------
# Linking libcurl maps it and ~30 libraries into a process (about 9 MB RSS against 2.5 MB measured): the
# producer loads it (dlopen) when it makes its first request, and one that makes none never maps it.
echo '{ "period": "100ms", "system_metrics": [ { "type": "vcpu_usage" }, { "type": "memory_info" } ] }' \
	>"$WORK/bare.json"
sed 's/"period": "500ms",/"period": "100ms",/' "$WORK/proc.json" >"$WORK/with.json"
for c in bare with; do
	"$MON" -c "$WORK/$c.json" >/dev/null 2>"$WORK/$c.err" &
	pid=$!
	_pids="$_pids $pid"
	sleep $((2 * SLOW))
	cp "/proc/$pid/maps" "$WORK/$c.maps" 2>/dev/null || :
	awk '$1 == "VmRSS:" { print $2 }' "/proc/$pid/status" >"$WORK/$c.rss" 2>/dev/null || :
	cat /proc/$pid/task/*/children >"$WORK/$c.children" 2>/dev/null || :
	kill "$pid"
	wait "$pid" 2>/dev/null || :
done
ok "no endpoint: libcurl is not mapped" sh -c "test -s '$WORK/bare.maps' && ! grep -q libcurl '$WORK/bare.maps'"
ok "with endpoints: libcurl is loaded (its first scrape)" grep -q libcurl "$WORK/with.maps"
ok "with endpoints: no child process (the requests run in the producer)" test ! -s "$WORK/with.children"
if [ "${ACCEL_SANITIZED:-0}" = 1 ]; then
	diag "sanitized build: RSS is ASan's shadow memory, not the producer's; the bound is checked in the plain pass"
else
	ok "no endpoint: VmRSS $(cat "$WORK/bare.rss") kB <= 4096 kB" test "$(cat "$WORK/bare.rss")" -le 4096
	diag "with endpoints: VmRSS $(cat "$WORK/with.rss") kB (libcurl and its TLS libraries mapped)"
fi
# --- a reload (SIGHUP) that changes an endpoint's own key reopens it; an unchanged one carries on ----
cp "$WORK/with.json" "$WORK/reload.json"
"$MON" -c "$WORK/reload.json" >"$WORK/reload.out" 2>"$WORK/reload.err" &
MPID=$!
_pids="$_pids $MPID"
# Until a scrape with its body has been reported (its 50 ms timeout can miss on a loaded machine).
wait_for $((10 * SLOW)) grep -q '"exposition"' "$WORK/reload.out" || diag "no passthrough report before the reload"
sed 's/"passthrough": true, //' "$WORK/with.json" >"$WORK/reload.json"
npre=$(nlines "$WORK/reload.out")
kill -HUP "$MPID"
sleep 1
n0=$(nlines "$WORK/reload.out")
wait_for $((10 * SLOW)) sh -c "test \$(wc -l <'$WORK/reload.out') -ge $((n0 + 5))" || diag "no reports after the reload"
kill -TERM "$MPID"
RC=0
wait "$MPID" || RC=$?
is "$RC" 0 "reload: SIGTERM after it, exit status 0"
ok "reload: passthrough on before, off after (the changed runtime was reopened)" \
	q "$WORK/reload.out" 'any("exposition" in e for l in L[:A[0]] for e in l["runtime_data"] if e["runtime_index"] == 0) and "exposition" not in [e for l in L if l.get("runtime_data") for e in l["runtime_data"] if e["runtime_index"] == 0][-1]' "$npre"
ok "reload: the unchanged runtimes kept reporting without error" \
	q "$WORK/reload.out" 'all([e for l in L if l.get("runtime_data") for e in l["runtime_data"] if e["runtime_index"] == i][-1]["error"] == "" for i in (0, 1))'

ok "stderr holds no sanitizer report" sh -c "! cat '$WORK'/*.err | grep -q Sanitizer"
done_testing
