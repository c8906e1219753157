#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Print how a manifest runs one container, for tests/helpers/k8s_run.sh.

k8s_container.py FILE CONTAINER CMDIR [HOSTPATH=DIR ...]: the first pod template (or pod) in FILE
that has a container named CONTAINER (a hostPath volume of path HOSTPATH is DIR instead); prints,
one per line, tab-separated:
    cmd     the command and args, shell-quoted
    env     NAME  VALUE  (a fieldRef spec.nodeName reads "$NODE", status.hostIP and
                         status.podIP 127.0.0.1, metadata.name/namespace the pod's; $(NAME)
                         of an earlier variable expanded, $$ kept as $, as the kubelet does)
    host    HOSTPATH  MOUNTPATH  ro|rw
    config  DIR  MOUNTPATH  (the ConfigMap's data, written by this script into CMDIR/NAME/)
    user    UID  (runAsUser of the container, else of the pod)
    caps    drop-all  (the container's securityContext drops ALL capabilities)
    nnp     1    (allowPrivilegeEscalation: false, no_new_privs)
    port    N    (the container's port named "metrics", else 8000)
"""
import os
import re
import shlex
import sys

import yaml


def main():
    path, cname, cmdir = sys.argv[1:4]
    remap = dict(a.split("=", 1) for a in sys.argv[4:])
    docs = [d for d in yaml.safe_load_all(open(path, encoding="utf-8")) if d]
    cms = {d["metadata"]["name"]: d.get("data", {}) for d in docs if d.get("kind") == "ConfigMap"}
    for d in docs:
        pod = d["spec"] if d.get("kind") == "Pod" else (d.get("spec") or {}).get("template", {}).get("spec")
        if not pod:
            continue
        for c in pod.get("containers", []):
            if c["name"] != cname:
                continue
            print("cmd\t" + " ".join(shlex.quote(x) for x in c.get("command", []) + c.get("args", [])))
            fields = {"spec.nodeName": "$NODE", "status.hostIP": "127.0.0.1", "status.podIP": "127.0.0.1",
                      "metadata.name": (d.get("metadata") or {}).get("name", "pod") + "-test",
                      "metadata.namespace": (d.get("metadata") or {}).get("namespace", "default")}
            seen = {}
            for e in c.get("env", []):
                if "value" in e:
                    v = re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                               lambda m: "$" if m.group(0) == "$$" else seen.get(m.group(1), m.group(0)), e["value"])
                elif e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") in fields:
                    v = fields[e["valueFrom"]["fieldRef"]["fieldPath"]]
                else:
                    continue
                seen[e["name"]] = v
                print(f"env\t{e['name']}\t{v}")
            vols = {v["name"]: v for v in pod.get("volumes", [])}
            for m in c.get("volumeMounts", []):
                v = vols[m["name"]]
                if "hostPath" in v:
                    src = remap.get(v["hostPath"]["path"], v["hostPath"]["path"])
                    print(f"host\t{src}\t{m['mountPath']}\t{'ro' if m.get('readOnly') else 'rw'}")
                elif "configMap" in v:
                    name = v["configMap"]["name"]
                    out = os.path.join(cmdir, name)
                    os.makedirs(out, exist_ok=True)
                    for k, val in cms[name].items():
                        with open(os.path.join(out, k), "w", encoding="utf-8") as f:
                            f.write(val)
                    print(f"config\t{out}\t{m['mountPath']}")
            csc = c.get("securityContext") or {}
            uid = csc.get("runAsUser", (pod.get("securityContext") or {}).get("runAsUser"))
            print(f"user\t{uid if uid is not None else 0}")
            if "ALL" in (csc.get("capabilities") or {}).get("drop", []):
                print("caps\tdrop-all")
            if csc.get("allowPrivilegeEscalation") is False:
                print("nnp\t1")
            port = [p["containerPort"] for p in c.get("ports", []) if p.get("name") == "metrics"]
            print(f"port\t{port[0] if port else 8000}")
            return 0
    sys.stderr.write(f"{path}: no container {cname}\n")
    return 1


if __name__ == "__main__":
    sys.exit(main())
