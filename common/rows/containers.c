/* SPDX-License-Identifier: MIT */
/*
 * The rows of the containers collector (monitor/system/coll_containers.c): the fields it writes, the
 * families it adds and the rules that map them (common/rows.h says what
 * rows are). Data only: the mapping library and the collector both read it.
 */
#include "../rows.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const struct family containers_families[] = {
	COUNTER("container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds.", "seconds"),
	COUNTER("container_cpu_user_seconds_total", "Cumulative user cpu time consumed in seconds.", "seconds"),
	COUNTER("container_cpu_system_seconds_total", "Cumulative system cpu time consumed in seconds.", "seconds"),
	COUNTER("container_cpu_cfs_periods_total", "Number of elapsed enforcement period intervals.", "count"),
	COUNTER("container_cpu_cfs_throttled_periods_total", "Number of throttled period intervals.", "count"),
	COUNTER("container_cpu_cfs_throttled_seconds_total",
	        "Total time duration the container has been throttled.", "seconds"),
	GAUGE("container_memory_usage_bytes",
	      "Current memory usage in bytes, including all memory regardless of when it was accessed", "bytes"),
	GAUGE("container_memory_working_set_bytes", "Current working set in bytes.", "bytes"),
	GAUGE("container_memory_rss", "Size of RSS in bytes.", "bytes"),
	GAUGE("container_memory_cache", "Number of bytes of page cache memory.", "bytes"),
	COUNTER("container_oom_events_total", "Count of out of memory events observed for the container", "count"),
};

/* One entry per cgroup, labelled as cAdvisor labels it (its key is "id"), and an ECS container with its task. */
#define CT_RULE(field, family, fixed)                                                                     \
	{ SC_SYSTEM, "container_usage",                                                                   \
	  "containers.*[name,pod,namespace,container,ecs_cluster,ecs_task_family,ecs_task_id]." field, family, \
	  "id,name,pod,namespace,container,ecs_cluster,ecs_task_family,ecs_task_id", fixed, 0, 0 }

static const struct map_rule containers_rules[] = {
	CT_RULE("cpu_usage_seconds", "container_cpu_usage_seconds_total", "cpu=total"),
	CT_RULE("cpu_user_seconds", "container_cpu_user_seconds_total", NULL),
	CT_RULE("cpu_system_seconds", "container_cpu_system_seconds_total", NULL),
	CT_RULE("cpu_periods", "container_cpu_cfs_periods_total", NULL),
	CT_RULE("cpu_throttled_periods", "container_cpu_cfs_throttled_periods_total", NULL),
	CT_RULE("cpu_throttled_seconds", "container_cpu_cfs_throttled_seconds_total", NULL),
	CT_RULE("memory_usage_bytes", "container_memory_usage_bytes", NULL),
	CT_RULE("memory_working_set_bytes", "container_memory_working_set_bytes", NULL),
	CT_RULE("memory_rss_bytes", "container_memory_rss", NULL),
	CT_RULE("memory_cache_bytes", "container_memory_cache", NULL),
	CT_RULE("oom_kills", "container_oom_events_total", NULL),
};
#undef CT_RULE

const struct map_rows containers_rows = {
	"containers", __FILE__, ROWS_FAMILIES(containers_families), ROWS_RULES(containers_rules),
};
