#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Validate Kubernetes manifests offline against the API types of python3-kubernetes.

k8s_validate.py FILE...: every YAML document of every FILE is walked against the model class of
its kind (kubernetes.client.V1DaemonSet, ...) through the classes' openapi_types and
attribute_map: a field the type does not have is an error (kubectl's strict field validation),
as is a value of the wrong shape; then the document is deserialized into the model, which also
refuses a required field left out. The Prometheus Operator's kinds are not in python3-kubernetes:
their metadata is checked as V1ObjectMeta, ServiceMonitor's spec against the fields its CRD
(monitoring.coreos.com/v1) has that a manifest here may use, and PrometheusRule's spec as rule
groups. Prints "FILE: kind/name" per valid document on stdout and each error on stderr; exit 1
if there is any.
"""
import re
import sys

import kubernetes.client as kc
import yaml

KINDS = {
    ("v1", "Namespace"): "V1Namespace",
    ("v1", "Service"): "V1Service",
    ("v1", "ConfigMap"): "V1ConfigMap",
    ("v1", "ServiceAccount"): "V1ServiceAccount",
    ("v1", "Pod"): "V1Pod",
    ("apps/v1", "DaemonSet"): "V1DaemonSet",
    ("apps/v1", "Deployment"): "V1Deployment",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "V1ClusterRole",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "V1ClusterRoleBinding",
}
SCALARS = {"str": str, "int": int, "bool": bool, "float": (int, float)}

# The ServiceMonitor and PrometheusRule fields (monitoring.coreos.com/v1 CRDs) allowed here:
# name -> schema; a schema is a type name, a dict of fields, or [schema] for a list.
RELABEL = {"sourceLabels": ["str"], "separator": "str", "targetLabel": "str", "regex": "str",
           "modulus": "int", "replacement": "str", "action": "str"}
ENDPOINT = {"port": "str", "targetPort": "object", "path": "str", "scheme": "str", "interval": "str",
            "scrapeTimeout": "str", "honorLabels": "bool", "relabelings": [RELABEL],
            "metricRelabelings": [RELABEL], "params": "object", "bearerTokenSecret": "object",
            "tlsConfig": "object", "basicAuth": "object"}
SERVICEMONITOR_SPEC = {"selector": "V1LabelSelector", "namespaceSelector": {"any": "bool", "matchNames": ["str"]},
                       "endpoints": [ENDPOINT], "jobLabel": "str", "targetLabels": ["str"],
                       "podTargetLabels": ["str"], "sampleLimit": "int"}
RULE = {"alert": "str", "record": "str", "expr": "str", "for": "str", "labels": {"*": "str"},
        "annotations": {"*": "str"}}
PROMETHEUSRULE_SPEC = {"groups": [{"name": "str", "interval": "str", "rules": [RULE]}]}


def walk(obj, typ, path, errs):
    """Check obj against an openapi type name of python3-kubernetes (or a CRD schema)."""
    if isinstance(typ, list):
        if not isinstance(obj, list):
            errs.append(f"{path}: a list expected")
            return
        for i, x in enumerate(obj):
            walk(x, typ[0], f"{path}[{i}]", errs)
        return
    if isinstance(typ, dict):
        if not isinstance(obj, dict):
            errs.append(f"{path}: an object expected")
            return
        for k, v in obj.items():
            if k in typ:
                walk(v, typ[k], f"{path}.{k}", errs)
            elif "*" in typ:
                walk(v, typ["*"], f"{path}.{k}", errs)
            else:
                errs.append(f"{path}: unknown field {k!r}")
        return
    if typ == "object":
        return
    if typ in SCALARS:
        if not isinstance(obj, SCALARS[typ]) or (typ != "bool" and isinstance(obj, bool)):
            errs.append(f"{path}: {typ} expected, got {type(obj).__name__} {obj!r}")
        return
    m = re.fullmatch(r"list\[(.*)\]", typ)
    if m:
        walk(obj, [m.group(1)], path, errs)
        return
    m = re.fullmatch(r"dict\(str, (.*)\)", typ)
    if m:
        walk(obj, {"*": m.group(1)}, path, errs)
        return
    cls = getattr(kc, typ, None)
    if cls is None:
        errs.append(f"{path}: no type {typ} in python3-kubernetes")
        return
    if not isinstance(obj, dict):
        errs.append(f"{path}: a {typ} object expected")
        return
    by_json = {j: a for a, j in cls.attribute_map.items()}
    for k, v in obj.items():
        if k not in by_json:
            errs.append(f"{path}: unknown field {k!r} in {typ}")
            continue
        walk(v, cls.openapi_types[by_json[k]], f"{path}.{k}", errs)


def check(doc, where, errs):
    api, kind = doc.get("apiVersion"), doc.get("kind")
    name = (doc.get("metadata") or {}).get("name", "?")
    n0 = len(errs)
    if (api, kind) in KINDS:
        typ = KINDS[(api, kind)]
        walk(doc, typ, f"{where} {kind}/{name}", errs)
        if len(errs) == n0:
            try:
                kc.ApiClient()._ApiClient__deserialize(doc, typ)
            except (ValueError, TypeError) as e:
                errs.append(f"{where} {kind}/{name}: {e}")
    elif api == "monitoring.coreos.com/v1" and kind in ("ServiceMonitor", "PrometheusRule"):
        spec = SERVICEMONITOR_SPEC if kind == "ServiceMonitor" else PROMETHEUSRULE_SPEC
        walk(doc, {"apiVersion": "str", "kind": "str", "metadata": "V1ObjectMeta", "spec": spec},
             f"{where} {kind}/{name}", errs)
        if kind == "ServiceMonitor" and not (doc.get("spec") or {}).get("endpoints"):
            errs.append(f"{where} {kind}/{name}: no endpoints")
    elif api == "kustomize.config.k8s.io/v1beta1" and kind == "Kustomization":
        walk(doc, {"apiVersion": "str", "kind": "str", "resources": ["str"], "namespace": "str"},
             f"{where} Kustomization", errs)
    else:
        errs.append(f"{where}: unknown apiVersion/kind {api}/{kind}")
    return len(errs) == n0, f"{kind}/{name}"


def main():
    errs = []
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            try:
                docs = [d for d in yaml.safe_load_all(f) if d is not None]
            except yaml.YAMLError as e:
                errs.append(f"{path}: {e}")
                continue
        for d in docs:
            good, what = check(d, path, errs)
            if good:
                print(f"{path}: {what}")
    for e in errs:
        sys.stderr.write(e + "\n")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
