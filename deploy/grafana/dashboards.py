#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The Grafana dashboards of accel-monitor, written from one table of panels.

deploy/grafana/dashboards.py [DIR]: write accel-monitor-devices.json and
accel-monitor-runtimes.json (Grafana's JSON model, schemaVersion 38) into DIR
(default: this file's directory). The JSON files are committed; the test
deploy_dashboards.sh checks that they are what this script writes, and runs
every panel's query against a real Prometheus scraping accel-prom.

Every query selects instances with the $instance variable (no instance is
written in), and every panel reads the data source of the $datasource
variable, so the dashboards import into any Grafana with a Prometheus.
"""
import json
import os
import sys

DS = {"type": "prometheus", "uid": "${datasource}"}
INST = 'instance=~"$instance"'

# (title, type, unit, [(expr, legend)], description). Types: timeseries, stat, table.
DEVICES = [
    ("Devices by type", "stat", "none",
     [(f'count by (device_type) (accelerator_info{{{INST}}})', "{{device_type}}")],
     "How many devices of each kind accel-monitor found (accelerator_info)."),
    ("Devices", "table", "none",
     [(f'accelerator_info{{{INST}}}', "")],
     "Every device: type, index, model, UUID, PCI bus id."),
    ("Utilization", "timeseries", "percentunit",
     [(f'accelerator_utilization_ratio{{{INST},device_type=~"$device_type"}}',
       "{{instance}} {{device_type}} {{device}} {{engine}}")],
     "Busy time per engine, 0-1."),
    ("NeuronCore utilization", "timeseries", "percentunit",
     [(f'neuroncore_utilization_ratio{{{INST}}}', "{{instance}} core {{neuroncore}}")], ""),
    ("Device memory used", "timeseries", "percentunit",
     [(f'accelerator_memory_used_bytes{{{INST},device_type=~"$device_type"}}'
       f' / accelerator_memory_total_bytes{{{INST},device_type=~"$device_type"}}',
       "{{instance}} {{device_type}} {{device}}")],
     "Used over total device memory."),
    ("Device memory", "timeseries", "bytes",
     [(f'accelerator_memory_used_bytes{{{INST},device_type=~"$device_type"}}',
       "{{instance}} {{device_type}} {{device}} used"),
      (f'accelerator_memory_total_bytes{{{INST},device_type=~"$device_type"}}',
       "{{instance}} {{device_type}} {{device}} total")], ""),
    ("Temperature", "timeseries", "celsius",
     [(f'accelerator_temperature_celsius{{{INST},device_type=~"$device_type"}}',
       "{{instance}} {{device_type}} {{device}} {{sensor}}")], ""),
    ("Temperature headroom to the critical limit", "timeseries", "celsius",
     [(f'accelerator_temperature_critical_celsius{{{INST},device_type=~"$device_type"}}'
       f' - accelerator_temperature_celsius{{{INST},device_type=~"$device_type"}}',
       "{{instance}} {{device_type}} {{device}} {{sensor}}")],
     "Where the device states a critical temperature (hwmon, amdgpu)."),
    ("Power", "timeseries", "watt",
     [(f'accelerator_power_watts{{{INST},device_type=~"$device_type"}}',
       "{{instance}} {{device_type}} {{device}} {{sensor}}"),
      (f'accelerator_power_limit_watts{{{INST},device_type=~"$device_type"}}',
       "{{instance}} {{device_type}} {{device}} limit")], ""),
    ("Clocks", "timeseries", "hertz",
     [(f'accelerator_clock_hertz{{{INST},device_type=~"$device_type"}}',
       "{{instance}} {{device_type}} {{device}} {{clock}}")], ""),
    ("Fan speed", "timeseries", "percentunit",
     [(f'accelerator_fan_speed_ratio{{{INST},device_type=~"$device_type"}}',
       "{{instance}} {{device_type}} {{device}}")], ""),
    ("ECC errors", "timeseries", "short",
     [(f'sum by (instance, device_type, device, type) '
       f'(increase(accelerator_ecc_errors_total{{{INST},device_type=~"$device_type"}}[$__rate_interval]))',
       "{{instance}} {{device_type}} {{device}} {{type}}")], "ECC events in each interval."),
    ("PCIe throughput", "timeseries", "Bps",
     [(f'accelerator_pcie_throughput_bytes_per_second{{{INST},device_type=~"$device_type"}}',
       "{{instance}} {{device_type}} {{device}} {{direction}}")], ""),
    ("Last XID", "stat", "none",
     [(f'accelerator_last_xid{{{INST}}}', "{{instance}} GPU {{device}}")],
     "The last XID error code an NVIDIA GPU reported since accel-monitor started."),
    ("NCS2 sticks available", "stat", "none",
     [(f'ncs2_num_available_devices{{{INST}}}', "{{instance}} available"),
      (f'ncs2_num_devices{{{INST}}}', "{{instance}} present")], ""),
    ("Host CPU", "timeseries", "percentunit",
     [(f'system_vcpu_usage_ratio{{{INST}}}', "{{instance}} {{usage_type}}")], ""),
    ("Host memory used", "timeseries", "percentunit",
     [(f'system_memory_used_bytes{{{INST}}} / system_memory_total_bytes{{{INST}}}', "{{instance}}")], ""),
    ("Exporter: last report age", "timeseries", "s",
     [(f'accel_prom_last_report_age_seconds{{{INST}}}', "{{instance}}")],
     "Seconds since accel-prom read its last report; accel_prom_input_open is 0 once its input ended."),
    ("Exporter: input open", "stat", "none",
     [(f'accel_prom_input_open{{{INST}}}', "{{instance}}")], ""),
]

RUNTIME = f'{INST},runtime_tag=~"$runtime"'
RUNTIMES = [
    ("Inference time per request (p50)", "timeseries", "s",
     [(f'execution_latency_seconds{{{RUNTIME},percentile="p50"}}', "{{instance}} {{runtime_tag}}")],
     "Median end-to-end time of one execution (the runtime's latency_stats.total_latency)."),
    ("Inference time per request (p99)", "timeseries", "s",
     [(f'execution_latency_seconds{{{RUNTIME},percentile="p99"}}', "{{instance}} {{runtime_tag}}")], ""),
    ("Success ratio", "timeseries", "percentunit",
     [(f'sum by (instance, runtime_tag) (rate(execution_status_total{{{RUNTIME},status_type="completed"}}[$__rate_interval]))'
       f' / sum by (instance, runtime_tag) (rate(execution_status_total{{{RUNTIME}}}[$__rate_interval]))',
       "{{instance}} {{runtime_tag}}")], "Completed executions over all executions."),
    ("Executions per second by status", "timeseries", "ops",
     [(f'sum by (instance, runtime_tag, status_type) (rate(execution_status_total{{{RUNTIME}}}[$__rate_interval]))',
       "{{instance}} {{runtime_tag}} {{status_type}}")], ""),
    ("Errors per second", "timeseries", "ops",
     [(f'sum by (instance, runtime_tag, error_type) (rate(execution_errors_total{{{RUNTIME}}}[$__rate_interval]))',
       "{{instance}} {{runtime_tag}} {{error_type}}")], ""),
    ("Accelerator memory of the runtime", "timeseries", "bytes",
     [(f'neuron_runtime_memory_used_bytes{{{RUNTIME},memory_location="neuron_device"}}'
       f' or runtime_memory_used_bytes{{{RUNTIME},memory_location="device"}}', "{{instance}} {{runtime_tag}}")],
     "Device memory the runtime holds (GPU memory; Neuron device memory)."),
    ("Host memory of the runtime", "timeseries", "bytes",
     [(f'neuron_runtime_memory_used_bytes{{{RUNTIME},memory_location="host"}}'
       f' or runtime_memory_used_bytes{{{RUNTIME},memory_location="host"}}', "{{instance}} {{runtime_tag}}")], ""),
    ("Accelerator utilization of the runtime", "timeseries", "percentunit",
     [(f'avg by (instance, runtime_tag) (neuroncore_utilization_ratio{{{RUNTIME}}})', "{{instance}} {{runtime_tag}}")],
     "Mean utilization of the cores the runtime uses (GPU utilization: the devices dashboard)."),
    ("Runtime CPU", "timeseries", "percentunit",
     [(f'sum by (instance, runtime_tag) (neuron_runtime_vcpu_usage_ratio{{{RUNTIME}}}'
       f' or runtime_vcpu_usage_ratio{{{RUNTIME}}})', "{{instance}} {{runtime_tag}}")],
     "The runtime process's CPU time, as a share of the host."),
]


def variable(name, label, query, regex_all=".*"):
    """A Prometheus query variable: multi-select, All = regex_all."""
    return {
        "name": name, "label": label, "type": "query", "datasource": DS,
        "query": {"query": query, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
        "definition": query, "refresh": 2, "multi": True, "includeAll": True,
        "allValue": regex_all, "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "sort": 1, "hide": 0,
    }


def dashboard(uid, title, description, rows, variables):
    panels = []
    x = y = 0
    for i, (ptitle, ptype, unit, targets, desc) in enumerate(rows, 1):
        w = 24 if ptype == "table" else 12
        if x + w > 24:
            x, y = 0, y + 8
        panel = {
            "id": i, "type": ptype, "title": ptitle, "description": desc, "datasource": DS,
            "gridPos": {"h": 8, "w": w, "x": x, "y": y},
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "options": {},
            "targets": [
                {"refId": chr(ord("A") + j), "datasource": DS, "expr": expr, "legendFormat": legend,
                 "range": ptype != "table", "instant": ptype == "table"}
                for j, (expr, legend) in enumerate(targets)
            ],
        }
        panels.append(panel)
        x += w
        if x >= 24:
            x, y = 0, y + 8
    return {
        "uid": uid, "title": title, "description": description, "tags": ["accel-monitor"],
        "editable": True, "graphTooltip": 1, "schemaVersion": 38, "version": 1,
        "time": {"from": "now-1h", "to": "now"}, "refresh": "30s", "timezone": "",
        "annotations": {"list": []}, "links": [],
        "templating": {"list": [
            {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
             "current": {}, "hide": 0, "refresh": 1, "regex": "", "options": []},
        ] + variables},
        "panels": panels,
    }


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    docs = {
        "accel-monitor-devices.json": dashboard(
            "accel-monitor-devices", "accel-monitor: accelerators and host",
            "Accelerators of every vendor (NVIDIA, AMD, Neuron, NCS2, hwmon) and the host, from accel-prom.",
            DEVICES,
            [variable("instance", "Instance", "label_values(accel_prom_build_info, instance)"),
             variable("device_type", "Device type", 'label_values(accelerator_info{instance=~"$instance"}, device_type)')]),
        "accel-monitor-runtimes.json": dashboard(
            "accel-monitor-runtimes", "accel-monitor: inference runtimes",
            "Inference runtimes by runtime tag: time per request, success ratio, memory, utilization.",
            RUNTIMES,
            [variable("instance", "Instance", "label_values(accel_prom_build_info, instance)"),
             variable("runtime", "Runtime", 'label_values(execution_status_total{instance=~"$instance"}, runtime_tag)')]),
    }
    for name, doc in docs.items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, ensure_ascii=False)
            f.write("\n")


if __name__ == "__main__":
    main()
