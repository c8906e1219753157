#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The Grafana dashboards of accel-monitor, written from one table of panels.

deploy/grafana/dashboards.py [DIR]: write accel-monitor-devices.json,
accel-monitor-runtimes.json and accel-monitor-containers.json (Grafana's JSON
model, schemaVersion 38) into DIR
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

# (title, type, unit, [(expr, legend)], description). Types: timeseries, stat, table; "row" starts a
# row of panels (a title across the dashboard; no query).
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
    ("NVIDIA: MIG, profiling (GPM), NVLink, XID, clock events", "row", "", [], ""),
    ("XID errors", "timeseries", "short",
     [(f'sum by (instance, device, uuid, xid) '
       f'(increase(accelerator_xid_errors_total{{{INST},device_type=~"$device_type"}}[$__rate_interval]))',
       "{{instance}} GPU {{device}} XID {{xid}}")],
     "XID errors by code in each interval, as the driver's events report them (accelerator_xid_errors_total)."),
    ("Clock event reasons holding the clocks", "timeseries", "none",
     [(f'accelerator_clock_event_reasons{{{INST},device_type=~"$device_type"}} == 1',
       "{{instance}} GPU {{device}} {{reason}}")],
     "Each reason that holds the clocks down (formerly throttle reasons): sw_power_cap, sw_thermal_slowdown, "
     "hw_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown; gpu_idle and the clock settings are benign."),
    ("MIG instances: memory used", "timeseries", "percentunit",
     [(f'accelerator_memory_used_bytes{{{INST},mig_profile!=""}} / accelerator_memory_total_bytes{{{INST},mig_profile!=""}}',
       "{{instance}} {{device}} {{mig_profile}} (GI {{gpu_instance}}, CI {{compute_instance}})")],
     "Each MIG device (GPU instance / compute instance) of a GPU in MIG mode, by its profile."),
    ("MIG memory by parent GPU", "timeseries", "bytes",
     [(f'accelerator_mig_memory_used_bytes{{{INST},device_type=~"$device_type"}}',
       "{{instance}} GPU {{device}} MIG {{mig_device}} used"),
      (f'accelerator_mig_memory_total_bytes{{{INST},device_type=~"$device_type"}}',
       "{{instance}} GPU {{device}} MIG {{mig_device}} total")],
     "The MIG devices' memory as the parent GPU lists it."),
    ("Profiling: engine activity (GPM)", "timeseries", "percentunit",
     [(f'accelerator_activity_ratio{{{INST},device_type=~"$device_type",engine=~"graphics|sm|tensor|dram"}}',
       "{{instance}} {{device}} {{engine}}")],
     "Graphics engine, SM, tensor pipe and DRAM activity from the GPU's performance counters (NVIDIA GPM; "
     "DCGM_FI_PROF_GR_ENGINE_ACTIVE, _SM_ACTIVE, _PIPE_TENSOR_ACTIVE, _DRAM_ACTIVE with accel-prom --collectors); "
     "a MIG instance's own."),
    ("Profiling: FP pipes and SM occupancy (GPM)", "timeseries", "percentunit",
     [(f'accelerator_activity_ratio{{{INST},device_type=~"$device_type",engine=~"fp64|fp32|fp16"}}',
       "{{instance}} {{device}} {{engine}}"),
      (f'accelerator_sm_occupancy_ratio{{{INST},device_type=~"$device_type"}}', "{{instance}} {{device}} occupancy")],
     ""),
    ("NVLink throughput per link", "timeseries", "Bps",
     [(f'accelerator_nvlink_throughput_bytes_per_second{{{INST},device_type=~"$device_type"}}',
       "{{instance}} GPU {{device}} link {{link}} {{direction}}")], ""),
    ("NVLink throughput, all links (GPM)", "timeseries", "Bps",
     [(f'accelerator_nvlink_total_throughput_bytes_per_second{{{INST},device_type=~"$device_type"}}',
       "{{instance}} {{device}} {{direction}}")], ""),
    ("NVLink errors", "timeseries", "short",
     [(f'sum by (instance, device, link, type) '
       f'(increase(accelerator_nvlink_errors_total{{{INST},device_type=~"$device_type"}}[$__rate_interval]))',
       "{{instance}} GPU {{device}} link {{link}} {{type}}")], "Replay, recovery and CRC errors per link in each interval."),
    ("NVLink links inactive", "stat", "none",
     [(f'count by (instance, device) (accelerator_nvlink_active{{{INST},device_type=~"$device_type"}} == 0)',
       "{{instance}} GPU {{device}}")], "Links the GPU has that are not active."),
    ("Other devices and the host", "row", "", [], ""),
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
# Per-model series (an inference server's execution_stats.models, docs/report-format.md §6.5): the
# $model and $version variables' "All" is ".+" and ".*", so a per-model panel shows models only.
MODEL = f'{RUNTIME},model=~"$model",version=~"$version"'
BY_MODEL = "instance, runtime_tag, model, version"
MLEG = "{{instance}} {{runtime_tag}} {{model}} {{version}}"


def per_request(family):
    """Seconds per completed request of a phase: its accumulated duration over the completed count."""
    return (f'sum by ({BY_MODEL}) (rate({family}{{{MODEL}}}[$__rate_interval]))'
            f' / sum by ({BY_MODEL}) (rate(execution_status_total{{{MODEL},status_type="completed"}}[$__rate_interval]))')


RUNTIMES = [
    ("Models: inference time per request (the Triton recipe)", "row", "", [], ""),
    ("Inference time per request", "timeseries", "s",
     [(per_request("inference_request_duration_seconds_total"), MLEG)],
     "Mean end-to-end time of a completed request over the interval, by model and version "
     "(inference_request_duration_seconds_total / completed requests)."),
    ("Queue time per request", "timeseries", "s",
     [(per_request("inference_queue_duration_seconds_total"), MLEG)],
     "Mean time a request waited for an instance of the model."),
    ("Compute time per request: input, infer, output", "timeseries", "s",
     [(per_request("inference_compute_input_duration_seconds_total"), MLEG + " input"),
      (per_request("inference_compute_infer_duration_seconds_total"), MLEG + " infer"),
      (per_request("inference_compute_output_duration_seconds_total"), MLEG + " output")],
     "Input (copying tensors in), inference, output (copying tensors out) per completed request."),
    ("Success ratio by model", "timeseries", "percentunit",
     [(f'sum by ({BY_MODEL}) (rate(execution_status_total{{{MODEL},status_type="completed"}}[$__rate_interval]))'
       f' / sum by ({BY_MODEL}) (rate(execution_status_total{{{MODEL},status_type=~"completed|failed"}}[$__rate_interval]))',
       MLEG)], "Completed requests over completed and failed ones."),
    ("Requests per second by model", "timeseries", "reqps",
     [(f'sum by ({BY_MODEL}, status_type) (rate(execution_status_total{{{MODEL}}}[$__rate_interval]))',
       MLEG + " {{status_type}}")], ""),
    ("Request latency percentiles by model", "timeseries", "s",
     [(f'execution_latency_seconds{{{MODEL}}}', MLEG + " {{percentile}}")],
     "The server's own percentiles of the total request latency."),
    ("Requests in flight and pending", "timeseries", "short",
     [(f'inference_requests_in_flight{{{MODEL}}}', MLEG + " in flight"),
      (f'inference_requests_pending{{{MODEL}}}', MLEG + " pending")], ""),
    ("Batch size", "timeseries", "short",
     [(f'inference_batch_size{{{MODEL}}}', MLEG)], "Mean batch size the server ran the model with over the period."),
    ("Tokens per second", "timeseries", "short",
     [(f'sum by ({BY_MODEL}, kind) (rate(inference_tokens_total{{{MODEL}}}[$__rate_interval]))',
       MLEG + " {{kind}}")], "Prompt and generated tokens (LLM servers)."),
    ("Time to first token and per output token (p50)", "timeseries", "s",
     [(f'inference_time_to_first_token_seconds{{{MODEL},percentile="p50"}}', MLEG + " first token"),
      (f'inference_time_per_output_token_seconds{{{MODEL},percentile="p50"}}', MLEG + " per output token")], ""),
    ("KV cache usage", "timeseries", "percentunit",
     [(f'inference_kv_cache_usage_ratio{{{MODEL}}}', MLEG)], ""),
    ("Energy per request by model", "timeseries", "joule",
     [(per_request("inference_energy_joules_total"), MLEG)],
     "Accelerator energy per completed request over the interval, by model and version: the server's energy "
     "(its processes' shares above idle, or its GPUs') split among its models by compute time "
     "(docs/energy.md)."),
    ("The server's GPUs", "row", "", [], ""),
    ("GPU memory (the server's view)", "timeseries", "bytes",
     [(f'inference_server_device_memory_used_bytes{{{RUNTIME}}}', "{{instance}} {{runtime_tag}} {{device}} used"),
      (f'inference_server_device_memory_total_bytes{{{RUNTIME}}}', "{{instance}} {{runtime_tag}} {{device}} total")],
     "GPU memory as the inference server reports it (Triton's nv_gpu_memory_*)."),
    ("GPU utilization (the server's view)", "timeseries", "percentunit",
     [(f'inference_server_device_utilization_ratio{{{RUNTIME}}}', "{{instance}} {{runtime_tag}} {{device}}")],
     "GPU utilization as the inference server reports it (Triton's nv_gpu_utilization); accel-monitor's own "
     "figures for every device are on the devices dashboard."),
    ("GPU power (the server's view)", "timeseries", "watt",
     [(f'inference_server_device_power_watts{{{RUNTIME}}}', "{{instance}} {{runtime_tag}} {{device}}")], ""),
    ("Runtimes (neuron-monitor, processes)", "row", "", [], ""),
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


CT = f'{INST},namespace=~"$namespace",pod=~"$pod"'
CLEG = "{{instance}} {{namespace}}/{{pod}} {{container}} {{name}}"
CONTAINERS = [
    ("Containers (container_usage: cAdvisor's families)", "row", "", [], ""),
    ("CPU by container", "timeseries", "percentunit",
     [(f'sum by (instance, namespace, pod, container, name) '
       f'(rate(container_cpu_usage_seconds_total{{{CT},name!=""}}[$__rate_interval]))', CLEG)],
     "CPU seconds per second of each container (cgroups with a container id; pods and slices are their sums)."),
    ("CPU by pod", "timeseries", "percentunit",
     [(f'sum by (instance, namespace, pod) '
       f'(rate(container_cpu_usage_seconds_total{{{CT},name!=""}}[$__rate_interval]))',
       "{{instance}} {{namespace}}/{{pod}}")], ""),
    ("CPU throttled", "timeseries", "percentunit",
     [(f'sum by (instance, namespace, pod, container, name) '
       f'(rate(container_cpu_cfs_throttled_periods_total{{{CT},name!=""}}[$__rate_interval]))'
       f' / sum by (instance, namespace, pod, container, name) '
       f'(rate(container_cpu_cfs_periods_total{{{CT},name!=""}}[$__rate_interval]))', CLEG)],
     "Share of CFS periods in which the container was throttled (it hit its CPU limit)."),
    ("Memory working set", "timeseries", "bytes",
     [(f'container_memory_working_set_bytes{{{CT},name!=""}}', CLEG)],
     "What the kubelet compares with the memory limit to evict or OOM-kill."),
    ("Memory RSS and page cache", "timeseries", "bytes",
     [(f'container_memory_rss{{{CT},name!=""}}', CLEG + " rss"),
      (f'container_memory_cache{{{CT},name!=""}}', CLEG + " cache")], ""),
    ("OOM kills", "timeseries", "short",
     [(f'sum by (instance, namespace, pod, container, id) '
       f'(increase(container_oom_events_total{{{CT}}}[$__rate_interval]))', "{{instance}} {{namespace}}/{{pod}} {{container}} {{id}}")],
     "OOM-killer runs in the cgroup in each interval."),
    ("Accelerators by pod and container", "row", "", [], ""),
    ("Device memory by pod", "timeseries", "bytes",
     [(f'accelerator_pod_memory_used_bytes{{{CT}}}', "{{instance}} {{namespace}}/{{pod}} {{device_type}} {{device}}")],
     "Device memory the pod's processes hold on each accelerator (the processes' cgroups give the pod)."),
    ("Device memory by container", "timeseries", "bytes",
     [(f'accelerator_container_memory_used_bytes{{{CT}}}',
       "{{instance}} {{namespace}}/{{pod}} {{container}} {{device_type}} {{device}}")], ""),
    ("Device utilization by pod", "timeseries", "percentunit",
     [(f'accelerator_pod_utilization_ratio{{{CT}}}',
       "{{instance}} {{namespace}}/{{pod}} {{device_type}} {{device}} {{engine}}")],
     "Engine busy time of the pod's processes over the period (amdgpu's DRM fdinfo; NVIDIA's per-process "
     "utilization)."),
    ("Device utilization by container", "timeseries", "percentunit",
     [(f'accelerator_container_utilization_ratio{{{CT}}}',
       "{{instance}} {{namespace}}/{{pod}} {{container}} {{device_type}} {{device}} {{engine}}")], ""),
    ("Device memory by process", "table", "bytes",
     [(f'accelerator_process_memory_used_bytes{{{CT},pod!=""}}', "")],
     "Each accelerator process in a pod: pid, pod, container, device."),
    ("Energy by pod", "timeseries", "watt",
     [(f'sum by (instance, namespace, pod) '
       f'(rate(accelerator_pod_energy_joules_total{{{CT}}}[$__rate_interval]))',
       "{{instance}} {{namespace}}/{{pod}}")],
     "Accelerator energy above idle that the pod's processes used, per second (watts): each device's energy "
     "shared by its processes' activity (docs/energy.md); the devices' idle energy is nobody's."),
]

# Device ownership: accelerator_allocation_info, one series per device and owner (a pod from the kubelet's
# pod-resources socket; an HPC job). The device's own families are joined to it on (job, instance,
# device_type, device) with the allocation on the "many" side (a GPU shared by time-slicing has one series
# per pod), the device side made one series per device; the alert rules do the same (docs/deploy.md).
ALLOC = f'accelerator_allocation_info{{{CT},pod!=""}}'


def alloc_join(device_expr, by):
    """The device figure device_expr once per (by) of the pods' allocations."""
    return (f'max by ({by}) ({ALLOC} * on(job, instance, device_type, device) group_left() '
            f'max by (job, instance, device_type, device) ({device_expr}))')


CORE = f'accelerator_utilization_ratio{{{INST},engine="core"}}'
POD_DEVICE = "instance, namespace, pod, device_type, device"
CONTAINERS += [
    ("Allocations (the kubelet's pod-resources: which pod holds which device)", "row", "", [], ""),
    ("Allocated devices by namespace", "timeseries", "none",
     [(f'count by (namespace) (count by (namespace, job, instance, device_type, device) ({ALLOC}))', "{{namespace}}")],
     "Devices a device plugin or DRA claim gave the namespace's pods, busy or idle (a device two of its pods "
     "share by time-slicing counts once)."),
    ("Allocated devices by pod", "table", "none",
     [(f'count by (instance, namespace, pod) (count by ({POD_DEVICE}) ({ALLOC}))', "")],
     "How many devices each pod holds, and on which node."),
    ("Allocated but idle devices (30 min under 5 %)", "table", "percentunit",
     [(alloc_join(f'avg_over_time({CORE}[30m])', "instance, namespace, pod, container, device_type, device, uuid")
       + " < 0.05", "")],
     "Devices a pod holds whose core utilization averaged under 5 % over the last 30 minutes (the value); "
     "AcceleratorAllocatedIdle fires once the device was allocated 30 minutes and stays so 5 more."),
    ("Allocated but idle devices by namespace", "timeseries", "none",
     [('count by (namespace) ('
       + alloc_join(f'avg_over_time({CORE}[30m])', "namespace, job, instance, device_type, device") + ' < 0.05)',
       "{{namespace}}")], "The table's devices counted per namespace."),
    ("Device utilization spread by pod (min, mean, max)", "timeseries", "percentunit",
     [(f'min by (instance, namespace, pod) ({alloc_join(CORE, POD_DEVICE)})', "{{instance}} {{namespace}}/{{pod}} min"),
      (f'avg by (instance, namespace, pod) ({alloc_join(CORE, POD_DEVICE)})', "{{instance}} {{namespace}}/{{pod}} mean"),
      (f'max by (instance, namespace, pod) ({alloc_join(CORE, POD_DEVICE)})', "{{instance}} {{namespace}}/{{pod}} max")],
     "Core utilization across the devices of each pod: a minimum far below the mean is a straggler the others "
     "wait for (AcceleratorStraggler)."),
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
    """Lay the panels out two to a line (tables and rows across); a "row" entry starts a row.
    The variables are the data source's, $instance's (every dashboard's first), then these."""
    panels = []
    x = y = 0
    for i, (ptitle, ptype, unit, targets, desc) in enumerate(rows, 1):
        if ptype == "row":
            if x:
                x, y = 0, y + 8
            panels.append({"id": i, "type": "row", "title": ptitle, "collapsed": False, "panels": [],
                           "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}})
            y += 1
            continue
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
            variable("instance", "Instance", "label_values(accel_prom_build_info, instance)"),
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
            [variable("device_type", "Device type", 'label_values(accelerator_info{instance=~"$instance"}, device_type)')]),
        "accel-monitor-runtimes.json": dashboard(
            "accel-monitor-runtimes", "accel-monitor: inference runtimes",
            "Inference runtimes: an inference server's models by model and version (time per request, queue "
            "time, compute input/infer/output, success ratio, the server's GPU memory and utilization), and "
            "neuron-monitor runtimes by runtime tag.",
            RUNTIMES,
            [variable("runtime", "Runtime", 'label_values(execution_status_total{instance=~"$instance"}, runtime_tag)'),
             variable("model", "Model",
                      'label_values(execution_status_total{instance=~"$instance",runtime_tag=~"$runtime"}, model)', ".+"),
             variable("version", "Version",
                      'label_values(execution_status_total{instance=~"$instance",runtime_tag=~"$runtime",model=~"$model"}, version)')]),
        "accel-monitor-containers.json": dashboard(
            "accel-monitor-containers", "accel-monitor: containers and pods",
            "Containers' CPU and memory (container_usage, cAdvisor's families), the accelerator memory of "
            "pods, containers and their processes, and which pod holds which device (allocations).",
            CONTAINERS,
            [variable("namespace", "Namespace", 'label_values(container_cpu_usage_seconds_total{instance=~"$instance"}, namespace)'),
             variable("pod", "Pod",
                      'label_values(container_cpu_usage_seconds_total{instance=~"$instance",namespace=~"$namespace"}, pod)')]),
    }
    for name, doc in docs.items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, ensure_ascii=False)
            f.write("\n")


if __name__ == "__main__":
    main()
