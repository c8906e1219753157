#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The docker-compose stack (deploy/compose/, docs/deploy.md) and the OTLP example beside it
# (docker-compose.otlp.yml, otel-collector.yaml): Debian's docker-compose validates them
# against the compose schema (`docker-compose config`; an unknown option is shown to fail first);
# its Prometheus configuration passes promtool check config with the shipped rule file; the
# accel-monitor config it mounts passes accel-monitor --check-config; the Grafana provisioning
# files parse and point at the shipped dashboards; the accel-monitor service runs the image's
# CMD with the host mounts of the manifests.
. "$(dirname "$0")/lib.sh"

need "docker-compose (Debian package docker-compose)" command -v docker-compose
need "promtool (Debian package prometheus)" command -v promtool
need "$BIN/accel-monitor is built" test -x "$BIN/accel-monitor"
S=$TOP/deploy/compose
cp -r "$S" "$WORK/compose"
sed 's/^  triton:$/  triton:\n    bogus_key: 1/' "$S/docker-compose.yml" >"$WORK/compose/bad.yml"
ok "docker-compose config fails on an unknown option" sh -c "cd '$WORK/compose' && ! docker-compose -f bad.yml config >/dev/null 2>&1"
ok "docker-compose config: the stack is valid" sh -c "cd '$S' && docker-compose -f docker-compose.yml config >'$WORK/config.out' 2>&1 || { cat '$WORK/config.out'; exit 1; }"
is "$($PY -c 'import sys, yaml; print(" ".join(sorted(yaml.safe_load(open(sys.argv[1]))["services"])))' "$WORK/config.out")" \
	"accel-monitor grafana prometheus triton" "services: Triton, accel-monitor (in place of cAdvisor), Prometheus, Grafana"
sed "s|/etc/prometheus/rules/accel-monitor.rules.yml|$TOP/deploy/prometheus/accel-monitor.rules.yml|" "$S/prometheus.yml" >"$WORK/prometheus.yml"
ok "promtool check config (with the shipped rules)" promtool check config "$WORK/prometheus.yml"
ok "accel-monitor --check-config on the stack's config" "$BIN/accel-monitor" --check-config -c "$S/accel-monitor.json"
is "$($PY -c '
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))["services"]["accel-monitor"]
print(c.get("command"), c["pid"], sorted(v.split(":")[1] for v in c["volumes"] if v.startswith("/")))' "$S/docker-compose.yml")" \
	"None host ['/host/proc', '/host/run', '/host/sys']" "accel-monitor: the image's CMD, pid host, the host trees at /host"
ok "Grafana provisioning parses; the dashboards it loads exist" $PY -c '
import os, sys, yaml
d = yaml.safe_load(open(sys.argv[1] + "/grafana/provisioning/datasources/prometheus.yml"))
assert d["datasources"][0]["type"] == "prometheus"
p = yaml.safe_load(open(sys.argv[1] + "/grafana/provisioning/dashboards/accel-monitor.yml"))
assert p["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"
c = yaml.safe_load(open(sys.argv[1] + "/docker-compose.yml"))
src = [v.split(":")[0] for v in c["services"]["grafana"]["volumes"] if v.endswith(":/var/lib/grafana/dashboards:ro")][0]
assert any(f.endswith(".json") for f in os.listdir(os.path.join(sys.argv[1], src)))' "$S"

# The OTLP example beside the stack: accel-otlp in the same image sends to an OpenTelemetry Collector.
ok "docker-compose config: the OTLP example is valid" sh -c "cd '$S' && docker-compose -f docker-compose.otlp.yml config >'$WORK/otlp.out' 2>&1 || { cat '$WORK/otlp.out'; exit 1; }"
is "$($PY -c 'import sys, yaml; print(" ".join(sorted(yaml.safe_load(open(sys.argv[1]))["services"])))' "$WORK/otlp.out")" \
	"accel-monitor otel-collector" "OTLP example: services accel-monitor and otel-collector"
is "$($PY -c '
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
a, o = c["services"]["accel-monitor"], yaml.safe_load(open(sys.argv[2]))
p = o["service"]["pipelines"]["metrics"]
for kind in ("receivers", "processors", "exporters"):
    for name in p.get(kind, []):
        assert name in o[kind], (kind, name)
port = o["receivers"]["otlp"]["protocols"]["http"]["endpoint"].rsplit(":", 1)[1]
print(a["command"][:2], a["environment"]["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel-collector:" + port,
      sorted(p["exporters"]), a["healthcheck"])' "$S/docker-compose.otlp.yml" "$S/otel-collector.yaml")" \
	"['accel-pipeline', 'accel-otlp'] True ['debug', 'prometheus'] {'disable': True}" \
	"OTLP example: accel-otlp sends to the collector's otlp receiver, whose pipeline's parts are all defined; the image's /health check (accel-prom's) is off"
OTLP_ENV=$($PY -c '
import sys, yaml
e = yaml.safe_load(open(sys.argv[1]))["services"]["accel-monitor"]["environment"]
print(" ".join(k + "=" + v for k, v in e.items() if k.startswith("OTEL_")))' "$S/docker-compose.otlp.yml")
# shellcheck disable=SC2086 # a word list of NAME=VALUE
ok "OTLP example: accel-otlp takes the example's variables and options ($OTLP_ENV)" sh -c '"$@" </dev/null' sh \
	env $OTLP_ENV "$BIN/accel-otlp" --queue-dir "$WORK/otlpq" --drain-timeout 0
done_testing
