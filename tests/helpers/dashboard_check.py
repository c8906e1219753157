#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks of a Grafana dashboard (deploy/grafana/*.json) for deploy_dashboards.sh.

dashboard_check.py lint FILE
    The JSON model is sound: a "datasource" variable of type datasource; every panel and
    every target reads ${datasource}; panel ids unique; every panel inside the 24-column
    grid; every target has a refId and an expr; every metric selector of every expr (and
    of every query variable) selects the instance by $instance, so no instance is written
    in. Prints what is wrong on stderr; exit 1 if anything is.
dashboard_check.py queries FILE
    One line per query, "panel title<TAB>PromQL", the variables replaced as Grafana does
    with "All" selected (each query variable by its allValue: ".*" or, for $model, ".+")
    and $__rate_interval -> 1m. Row panels (a title across the dashboard) have no query.
dashboard_check.py variables FILE
    One line per query variable, "name<TAB>label<TAB>match[] selector", for label_values().
"""
import json
import re
import sys

DS_UID = "${datasource}"
SUBST = {"$__rate_interval": "1m"}  # and each query variable's allValue (main)
# A metric selector: a metric name and its braces (functions are followed by "(", not "{").
SELECTOR = re.compile(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}")


def subst(expr):
    # longest names first, so that $pod is not replaced inside $podname
    for k, v in sorted(SUBST.items(), key=lambda kv: -len(kv[0])):
        expr = expr.replace(k, v)
    return expr


def lint(d):
    errs = []
    tl = d.get("templating", {}).get("list", [])
    if not any(v.get("name") == "datasource" and v.get("type") == "datasource" and v.get("query") == "prometheus"
               for v in tl):
        errs.append("no datasource variable of type datasource (query prometheus)")
    ids = set()
    for p in d.get("panels", []):
        t = p.get("title", "?")
        if p.get("id") in ids:
            errs.append(f"{t}: panel id {p.get('id')} twice")
        ids.add(p.get("id"))
        if p.get("type") == "row":
            if p.get("targets") or p.get("panels"):
                errs.append(f"{t}: a row with targets or nested panels (rows here are open, empty headers)")
            continue
        if (p.get("datasource") or {}).get("uid") != DS_UID:
            errs.append(f"{t}: panel datasource is not ${{datasource}}")
        g = p.get("gridPos", {})
        if not (0 <= g.get("x", -1) and g.get("x", 0) + g.get("w", 99) <= 24 and g.get("h", 0) > 0):
            errs.append(f"{t}: gridPos {g} outside the 24-column grid")
        if not p.get("targets"):
            errs.append(f"{t}: no targets")
        for tg in p.get("targets", []):
            if not tg.get("refId") or not tg.get("expr"):
                errs.append(f"{t}: a target without refId or expr")
                continue
            if (tg.get("datasource") or {}).get("uid") != DS_UID:
                errs.append(f"{t}: target {tg['refId']} datasource is not ${{datasource}}")
            sels = SELECTOR.findall(tg["expr"])
            if not sels:
                errs.append(f"{t}: {tg['expr']}: no metric selector")
            for name, body in sels:
                if 'instance=~"$instance"' not in body:
                    errs.append(f"{t}: {name} does not select instance=~\"$instance\"")
            if re.search(r'instance\s*=\s*"[^$]', tg["expr"]):
                errs.append(f"{t}: an instance written in")
    for v in tl:
        if v.get("type") == "query" and (v.get("datasource") or {}).get("uid") != DS_UID:
            errs.append(f"variable {v.get('name')}: datasource is not ${{datasource}}")
    for e in errs:
        sys.stderr.write(e + "\n")
    return 1 if errs else 0


def main():
    mode, path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    for v in d.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            SUBST["$" + v["name"]] = v.get("allValue") or ".*"
    if mode == "lint":
        return lint(d)
    if mode == "queries":
        for p in d["panels"]:
            for tg in p.get("targets", []):
                print(f"{p['title']}\t{subst(tg['expr'])}")
        return 0
    if mode == "variables":
        for v in d["templating"]["list"]:
            if v.get("type") != "query":
                continue
            q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
            m = re.fullmatch(r"label_values\((.*),\s*([a-zA-Z_]+)\)", q)
            if not m:
                sys.stderr.write(f"variable {v['name']}: not label_values(selector, label): {q}\n")
                return 1
            print(f"{v['name']}\t{m.group(2)}\t{subst(m.group(1))}")
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
