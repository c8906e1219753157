#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Write deploy/kubernetes/prometheusrule.yaml from deploy/prometheus/accel-monitor.rules.yml.

Run it after changing the rule file; tests/integration/deploy_kubernetes.sh checks the two agree.
"""
import os

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))


def block(dumper, s):
    """Multi-line strings (the rules' expressions) as YAML literal blocks."""
    return dumper.represent_scalar("tag:yaml.org,2002:str", s, style="|" if "\n" in s else None)


def main():
    yaml.SafeDumper.add_representer(str, block)
    with open(os.path.join(HERE, "..", "prometheus", "accel-monitor.rules.yml"), encoding="utf-8") as f:
        rules = yaml.safe_load(f)
    doc = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
           "metadata": {"name": "accel-monitor", "namespace": "accel-monitor",
                        "labels": {"app.kubernetes.io/name": "accel-monitor"}},
           "spec": rules}
    with open(os.path.join(HERE, "prometheusrule.yaml"), "w", encoding="utf-8") as f:
        f.write("# SPDX-License-Identifier: MIT\n"
                "# The groups of deploy/prometheus/accel-monitor.rules.yml for the Prometheus Operator\n"
                "# (deploy_kubernetes.sh checks they are the same; promtool tests them there).\n")
        yaml.safe_dump(doc, f, sort_keys=False, allow_unicode=True, width=200)


if __name__ == "__main__":
    main()
