#!/bin/sh
# SPDX-License-Identifier: MIT
#
# What a scraped server serves must never take the node offline: a fake
# endpoint (tests/helpers/fake_endpoint.py) serves, one after the other,
# lines that Prometheus refuses (a label name with ':', a label twice, le and
# quantile twice, a label runtime_tag next to exported_runtime_tag, a
# __name__ label, a counter named _total); accel-monitor scrapes it with
# "passthrough": true, accel-prom --passthrough republishes it, and a real
# Prometheus scrapes accel-prom every second. For each case: a scrape with
# that body lands (the body's marker value reaches Prometheus), the target
# is up, the node's own series are there and the server's good families
# too; each bad family is warned about once, naming the runtime and the
# line; promtool finds no error in the exposition holding them all.
. "$(dirname "$0")/lib.sh"

need "$BIN/accel-monitor and $BIN/accel-prom are built" test -x "$BIN/accel-monitor" -a -x "$BIN/accel-prom"
need "prometheus (Debian package prometheus)" command -v prometheus
need "promtool (Debian package prometheus)" command -v promtool
need "curl" command -v curl
T=$((20 * SLOW))
AWS_EC2_METADATA_DISABLED=true
export AWS_EC2_METADATA_DISABLED

# body CASE LINES: the endpoint's exposition: a marker gauge (pt_case CASE), a good family, then LINES.
body() {
	printf '# HELP pt_case The case being served.\n# TYPE pt_case gauge\npt_case %s\n' "$1" >"$WORK/body.new"
	printf '# TYPE pt_good_total counter\npt_good_total{model="m"} 7\n%b' "$2" >>"$WORK/body.new"
	mv "$WORK/body.new" "$WORK/body.prom"
}
body 0 ''
spawn SRV $PY "$HELP/fake_endpoint.py" --file "$WORK/body.prom" --port-file "$WORK/port"
ok "the fake endpoint listens" wait_for $((10 * SLOW)) test -s "$WORK/port"
cat >"$WORK/monitor.json" <<EOF
{
  "period": "1s",
  "system_metrics": [ { "type": "memory_info" } ],
  "runtimes": [ { "address": "http://127.0.0.1:$(cat "$WORK/port")/metrics", "passthrough": true,
      "metrics": [ { "type": "runtime_vcpu_usage" } ] } ]
}
EOF

AP=$(free_port)
mkfifo "$WORK/in"
"$BIN/accel-prom" --passthrough --listen-address "127.0.0.1:$AP" <"$WORK/in" 2>"$WORK/accel-prom.err" &
_pids="$_pids $!"
"$BIN/accel-monitor" -c "$WORK/monitor.json" >"$WORK/in" 2>"$WORK/monitor.err" &
_pids="$_pids $!"
prometheus_start "127.0.0.1:$AP"

q_is() { [ "$(prom_values "$1")" = "$2" ]; }

ok "Prometheus is ready" wait_for "$T" curl -sf -o /dev/null "$PURL/-/ready"
ok "case 0 (good lines only) reaches Prometheus" wait_for "$T" q_is 'pt_case{job="accel"}' 0

n=0
while IFS='|' read -r name lines; do
	n=$((n + 1))
	body "$n" "$lines"
	if wait_for "$T" q_is 'pt_case{job="accel"}' "$n"; then
		_result 0 "$name: a scrape with it lands"
	else
		_result 1 "$name: a scrape with it lands"
		curl -s "$PURL/api/v1/targets" | $PY -c 'import json,sys; t=json.load(sys.stdin)["data"]["activeTargets"][0]; print("#  ", t["health"], t["lastError"])' >&2 || true
	fi
	is "$(prom_values 'up{job="accel"}')" 1 "$name: the target is up"
	is "$(prom_values 'count(count_over_time(system_memory_total_bytes{job="accel"}[10s]))')" 1 \
		"$name: the node's own series are there, scraped within 10 s"
	is "$(prom_values 'pt_good_total{job="accel"}')" 7 "$name: the server's good family is there"
done <<'EOF'
a label name with ':'|bad_colon{a:b="1"} 1\n
a label twice|bad_twice{a="1",a="2"} 1\n
le twice|# TYPE bad_h histogram\nbad_h_bucket{le="1",le="2"} 1\nbad_h_bucket{le="+Inf"} 1\nbad_h_sum 1\nbad_h_count 1\n
quantile twice|# TYPE bad_s summary\nbad_s{quantile="0.5",quantile="0.9"} 1\nbad_s_sum 1\nbad_s_count 1\n
runtime_tag next to exported_runtime_tag|bad_clash{runtime_tag="a",exported_runtime_tag="b"} 1\n
a __name__ label|bad_name{__name__="x"} 1\n
a counter named _total|# TYPE _total counter\n_total 1\n
all of them|bad_colon{a:b="1"} 1\nbad_twice{a="1",a="2"} 1\n# TYPE bad_h histogram\nbad_h_bucket{le="1",le="2"} 1\n# TYPE bad_s summary\nbad_s{quantile="0.5",quantile="0.9"} 1\nbad_clash{runtime_tag="a",exported_runtime_tag="b"} 1\nbad_name{__name__="x"} 1\n# TYPE _total counter\n_total 1\n
EOF

is "$(prom_values 'bad_clash{job="accel",exported_exported_runtime_tag="a",exported_runtime_tag="b"}')" 1 \
	"the server's runtime_tag is exported_exported_runtime_tag next to its exported_runtime_tag"
curl -s --max-time 10 -o "$WORK/all.prom" "http://127.0.0.1:$AP/metrics"
ok "promtool check metrics: no error in the exposition (lints of names aside)" \
	sh -c "! promtool check metrics <'$WORK/all.prom' 2>&1 | grep -i 'error'"
for fam in bad_colon bad_twice bad_h bad_s bad_name; do
	is "$(grep -c "runtime \".*\": line [0-9]*: family \"$fam\": label name .*; sample not served" "$WORK/accel-prom.err")" 1 \
		"$fam: one warning naming the runtime and the line, however many reports served it"
done
is "$(grep -c 'family "_total" is a counter whose OpenMetrics family name would be empty; not served' \
	"$WORK/accel-prom.err")" 1 "the counter named _total: one warning"
done_testing
