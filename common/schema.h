/* SPDX-License-Identifier: MIT */
/*
 * The report schema's vocabulary, as data: the metric groups (their names,
 * neuron-monitor's aliases and their scope), the config keys neuron-monitor
 * spells differently, and the label names a sample can carry and where each
 * comes from. The config validator (monitor/core/config.c), the rows and the
 * mapping (common/rows.h, common/samples.c), the sinks' column and dimension
 * choices and the stream checkers (tests/helpers/, through map_schema_json()
 * and the generated tests/fixtures/schema.json) read it rather than restate it.
 *
 * Adding a group is one SCHEMA_GROUPS row (plus the rows of the collector
 * that fills it); adding a label is one SCHEMA_LABELS row. What goes in a
 * group, field by field, is each collector's rows (common/rows.h).
 */
#ifndef ACCEL_SCHEMA_H
#define ACCEL_SCHEMA_H

#include <jansson.h>
#include <stddef.h>

enum group_scope { SCOPE_SYSTEM, SCOPE_RUNTIME, SCOPE_DEVICE };

/*
 * X(ID, name, alias, scope): every metric group. name is what a config
 * lists and a report holds; alias is neuron-monitor's name for it, accepted
 * in a config (NULL: none). The order is enum group_id's.
 */
#define SCHEMA_GROUPS(X)                                                                  \
	X(VCPU_USAGE, "vcpu_usage", NULL, SCOPE_SYSTEM)                                   \
	X(MEMORY_INFO, "memory_info", NULL, SCOPE_SYSTEM)                                 \
	X(NEURON_HW_COUNTERS, "neuron_hw_counters", NULL, SCOPE_SYSTEM)                   \
	X(CONTAINER_USAGE, "container_usage", NULL, SCOPE_SYSTEM)                         \
	X(RUNTIME_VCPU_USAGE, "runtime_vcpu_usage", "neuron_runtime_vcpu_usage", SCOPE_RUNTIME) \
	X(MEMORY_USED, "memory_used", NULL, SCOPE_RUNTIME)                                \
	X(EXECUTION_STATS, "execution_stats", "inference_stats", SCOPE_RUNTIME)           \
	X(NEURONCORE_COUNTERS, "neuroncore_counters", NULL, SCOPE_RUNTIME)                \
	X(HW_COUNTERS, "hw_counters", NULL, SCOPE_RUNTIME)                                \
	X(DEVICE_INFO, "device_info", NULL, SCOPE_DEVICE)                                 \
	X(DEVICE_UTILIZATION, "device_utilization", NULL, SCOPE_DEVICE)                   \
	X(DEVICE_MEMORY, "device_memory", NULL, SCOPE_DEVICE)                             \
	X(DEVICE_THERMAL, "device_thermal", NULL, SCOPE_DEVICE)                           \
	X(DEVICE_POWER, "device_power", NULL, SCOPE_DEVICE)                               \
	X(DEVICE_CLOCKS, "device_clocks", NULL, SCOPE_DEVICE)                             \
	X(DEVICE_ERRORS, "device_errors", NULL, SCOPE_DEVICE)

#define SCHEMA_GROUP_ENUM_(id, name, alias, scope) GROUP_##id,
/* Every metric group the config knows; canonical names are in group_name(). */
enum group_id { SCHEMA_GROUPS(SCHEMA_GROUP_ENUM_) GROUP_COUNT };

const char *group_name(enum group_id id);
const char *group_alias(enum group_id id); /* NULL: none */
enum group_scope group_scope(enum group_id id);
const char *scope_name(enum group_scope scope); /* "system", "runtime", "device" */
/* A group by name (canonical or alias) within a scope; -1 if unknown there. */
int schema_group_lookup(const char *name, enum group_scope scope);

/* Top-level config keys neuron-monitor spells differently: {alias, canonical}, NULL-terminated. */
extern const char *const schema_config_aliases[][2];

/* Where a label's value comes from. */
enum label_kind {
	LK_INSTANCE, /* the report's instance_info (source: its key), on every sample */
	LK_RUNTIME,  /* a runtime entry's identity, on its samples */
	LK_DEVICE,   /* a device's identity (source: the device object's key), on its samples; a runtime
		      * rule may capture model and device too (an endpoint's models and server devices) */
	LK_VALUE,    /* a rule's capture or fixed label (common/rows.h) */
};

/* Label flags. */
#define LABEL_CSV_COLUMN 1u /* accel-csv's long format has a column of this name (fixed: the header never changes) */
#define LABEL_OPTIONAL 2u   /* instance labels: only when instance_info has the key (else left out, not "");
			     * device labels: only when the device object has the key (its value a string or a number) */

/*
 * X(ID, name, kind, source, flags, CloudWatch dimension): every label a
 * sample can carry. Instance labels come first in a sample, in this order;
 * device labels follow the entry's in this order. Rows with LABEL_CSV_COLUMN
 * are accel-csv's label columns, in this order; a new label goes without it
 * (to other_labels) so the header of existing files does not change.
 */
#define SCHEMA_LABELS(X)                                                                              \
	X(RUNTIME_TAG, "runtime_tag", LK_RUNTIME, NULL, LABEL_CSV_COLUMN, "RuntimeTag")            \
	X(PID, "pid", LK_RUNTIME, "pid", LABEL_CSV_COLUMN, "Pid")                                  \
	X(NEURONCORE, "neuroncore", LK_VALUE, NULL, LABEL_CSV_COLUMN, "NeuronCore")                \
	X(NEURON_DEVICE, "neuron_device_index", LK_VALUE, NULL, LABEL_CSV_COLUMN, "NeuronDevice")  \
	X(DEVICE_TYPE, "device_type", LK_DEVICE, "device_type", LABEL_CSV_COLUMN, "DeviceType")   \
	X(DEVICE, "device", LK_DEVICE, NULL, LABEL_CSV_COLUMN, "Device")                           \
	X(UUID, "uuid", LK_DEVICE, "uuid", LABEL_CSV_COLUMN, "DeviceUUID")                         \
	X(MODEL, "model", LK_DEVICE, "model", LABEL_CSV_COLUMN, "Model")                           \
	X(PCI_BUS_ID, "pci_bus_id", LK_DEVICE, "pci_bus_id", LABEL_CSV_COLUMN, "PciBusId")         \
	X(USAGE_TYPE, "usage_type", LK_VALUE, NULL, LABEL_CSV_COLUMN, "UsageType")                 \
	X(MEMORY_LOCATION, "memory_location", LK_VALUE, NULL, LABEL_CSV_COLUMN, "MemoryLocation")  \
	X(ERROR_TYPE, "error_type", LK_VALUE, NULL, LABEL_CSV_COLUMN, "ErrorType")                 \
	X(STATUS_TYPE, "status_type", LK_VALUE, NULL, LABEL_CSV_COLUMN, "StatusType")              \
	X(PERCENTILE, "percentile", LK_VALUE, NULL, LABEL_CSV_COLUMN, "Percentile")                \
	X(EVENT_TYPE, "event_type", LK_VALUE, NULL, LABEL_CSV_COLUMN, "EventType")                 \
	X(ENGINE, "engine", LK_VALUE, NULL, LABEL_CSV_COLUMN, "Engine")                            \
	X(SENSOR, "sensor", LK_VALUE, NULL, LABEL_CSV_COLUMN, "Sensor")                            \
	X(CLOCK, "clock", LK_VALUE, NULL, LABEL_CSV_COLUMN, "Clock")                               \
	X(TYPE, "type", LK_VALUE, NULL, LABEL_CSV_COLUMN, "Type")                                  \
	X(STATUS, "status", LK_VALUE, NULL, LABEL_CSV_COLUMN, "Status")                            \
	X(FAN, "fan", LK_VALUE, NULL, LABEL_CSV_COLUMN, "Fan")                                     \
	X(CATEGORY, "category", LK_VALUE, NULL, LABEL_CSV_COLUMN, "Category")                      \
	X(NAME, "name", LK_VALUE, NULL, LABEL_CSV_COLUMN, "Name")                                  \
	X(DEVICE_COUNT, "neuron_device_count", LK_VALUE, NULL, LABEL_CSV_COLUMN, "NeuronDeviceCount") \
	X(CORES_PER_DEVICE, "neuroncore_per_device_count", LK_VALUE, NULL, LABEL_CSV_COLUMN,       \
	  "NeuronCorePerDeviceCount")                                                                 \
	X(INSTANCE_NAME, "instance_name", LK_INSTANCE, "instance_name", LABEL_CSV_COLUMN, "InstanceName") \
	X(INSTANCE_ID, "instance_id", LK_INSTANCE, "instance_id", LABEL_CSV_COLUMN, "InstanceId")  \
	X(INSTANCE_TYPE, "instance_type", LK_INSTANCE, "instance_type", LABEL_CSV_COLUMN, "InstanceType") \
	X(AZ, "availability_zone", LK_INSTANCE, "instance_availability_zone", LABEL_CSV_COLUMN,    \
	  "AvailabilityZone")                                                                         \
	X(REGION, "region", LK_INSTANCE, "instance_region", LABEL_CSV_COLUMN, "Region")            \
	X(SUBNET, "subnet_id", LK_INSTANCE, "subnet_id", LABEL_CSV_COLUMN, "SubnetId")             \
	X(ULTRASERVER_ID, "ultraserver_id", LK_INSTANCE, "ultraserver_id", LABEL_OPTIONAL, "UltraserverId") \
	/* NVIDIA events and clock-event reasons */                                   \
	X(XID, "xid", LK_VALUE, NULL, 0, "Xid")                                                     \
	X(REASON, "reason", LK_VALUE, NULL, 0, "Reason")                                            \
	/* container_usage: cAdvisor's "id" (the cgroup path) and "cpu" ("total") */            \
	X(CGROUP_ID, "id", LK_VALUE, NULL, 0, "Cgroup")                                             \
	X(CPU, "cpu", LK_VALUE, NULL, 0, "Cpu")                                                     \
	/* NVIDIA MIG instances: device labels on a MIG instance's samples only */       \
	X(GPU_INSTANCE, "gpu_instance", LK_DEVICE, "gpu_instance_id", LABEL_OPTIONAL, "GpuInstance") \
	X(COMPUTE_INSTANCE, "compute_instance", LK_DEVICE, "compute_instance_id", LABEL_OPTIONAL,   \
	  "ComputeInstance")                                                                          \
	X(MIG_PROFILE, "mig_profile", LK_DEVICE, "mig_profile", LABEL_OPTIONAL, "MigProfile")       \
	X(PARENT_UUID, "parent_uuid", LK_DEVICE, "parent_uuid", LABEL_OPTIONAL, "ParentUUID")       \
	X(DIRECTION, "direction", LK_VALUE, NULL, 0, "Direction")                                   \
	X(MIG_DEVICE, "mig_device", LK_VALUE, NULL, 0, "MigDevice")                                 \
	X(LINK, "link", LK_VALUE, NULL, 0, "Link")                                                  \
	/* self-timing: the producer's collector and the group it collected */                 \
	X(COLLECTOR, "collector", LK_VALUE, NULL, 0, "Collector")                                   \
	X(GROUP, "group", LK_VALUE, NULL, 0, "Group")                                               \
	X(SEVERITY, "severity", LK_VALUE, NULL, 0, "Severity")                                      \
	X(ALARM, "alarm", LK_VALUE, NULL, 0, "Alarm")                                              \
	X(POD, "pod", LK_VALUE, NULL, 0, "PodName")                                                 \
	X(NAMESPACE, "namespace", LK_VALUE, NULL, 0, "Namespace")                                   \
	X(CONTAINER, "container", LK_VALUE, NULL, 0, "ContainerName")                               \
	/* Amazon ECS: a container's task, under Container Insights' dimension names */              \
	X(ECS_CLUSTER, "ecs_cluster", LK_VALUE, NULL, 0, "ClusterName")                             \
	X(ECS_TASK_FAMILY, "ecs_task_family", LK_VALUE, NULL, 0, "TaskDefinitionFamily")            \
	X(ECS_TASK_ID, "ecs_task_id", LK_VALUE, NULL, 0, "TaskId")                                  \
	/* Slurm: a job's process (dcgm-exporter's hpc_job), its step and user id */                  \
	X(HPC_JOB, "hpc_job", LK_VALUE, NULL, 0, "HpcJob")                                          \
	X(HPC_STEP, "hpc_step", LK_VALUE, NULL, 0, "HpcStep")                                       \
	X(HPC_UID, "hpc_uid", LK_VALUE, NULL, 0, "HpcUid")                                          \
	/* a device's owner (the kubelet's pod-resources API): a device plugin's resource, a DRA claim */ \
	X(RESOURCE, "resource", LK_VALUE, NULL, 0, "Resource")                                      \
	X(DRA_CLAIM_NAME, "dra_claim_name", LK_VALUE, NULL, 0, "DraClaimName")                      \
	X(DRA_CLAIM_NAMESPACE, "dra_claim_namespace", LK_VALUE, NULL, 0, "DraClaimNamespace")       \
	X(DRA_DRIVER_NAME, "dra_driver_name", LK_VALUE, NULL, 0, "DraDriverName")                   \
	X(DRA_POOL_NAME, "dra_pool_name", LK_VALUE, NULL, 0, "DraPoolName")                         \
	X(DRA_DEVICE_NAME, "dra_device_name", LK_VALUE, NULL, 0, "DraDeviceName")                   \
	/* endpoint runtimes: a model's version (model is the row above, captured on runtime \
	 * series too) and a token count's kind (prompt, generation) */                               \
	X(VERSION, "version", LK_VALUE, NULL, 0, "ModelVersion")                                    \
	X(KIND, "kind", LK_VALUE, NULL, 0, "Kind")

#define SCHEMA_LABEL_ENUM_(id, name, kind, source, flags, dim) LBL_##id,
enum label_id { SCHEMA_LABELS(SCHEMA_LABEL_ENUM_) LBL_COUNT };
/* How many labels of each kind (constant expressions: array sizes). */
#define SCHEMA_LABEL_KIND_(id, name, kind, source, flags, dim) +((kind) == SCHEMA_COUNTED_KIND_)
#define SCHEMA_COUNTED_KIND_ LK_INSTANCE
enum { SCHEMA_INSTANCE_LABELS = 0 SCHEMA_LABELS(SCHEMA_LABEL_KIND_) };
#undef SCHEMA_COUNTED_KIND_
#define SCHEMA_COUNTED_KIND_ LK_RUNTIME
enum { SCHEMA_RUNTIME_LABELS = 0 SCHEMA_LABELS(SCHEMA_LABEL_KIND_) };
#undef SCHEMA_COUNTED_KIND_
#define SCHEMA_COUNTED_KIND_ LK_DEVICE
enum { SCHEMA_DEVICE_LABELS = 0 SCHEMA_LABELS(SCHEMA_LABEL_KIND_) };
#undef SCHEMA_COUNTED_KIND_

struct schema_label {
	const char *name;
	enum label_kind kind;
	const char *source; /* instance: the instance_info key; device: the device object's key; else NULL */
	unsigned flags;     /* LABEL_CSV_COLUMN, LABEL_OPTIONAL */
	const char *cw_dim; /* the CloudWatch dimension it becomes */
};
extern const struct schema_label schema_labels[LBL_COUNT];

/* A label by name; NULL if the schema has none of that name. */
const struct schema_label *schema_label(const char *name);

/*
 * Groups, config aliases and labels as one JSON object (new reference):
 * {"groups", "config_aliases", "labels"}. map_schema_json() adds every
 * block's rows to them for tests/fixtures/schema.json.
 */
json_t *schema_json(void);

#endif
