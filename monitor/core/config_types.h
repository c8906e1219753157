/* SPDX-License-Identifier: MIT */
/*
 * The configuration's types: what the loader (config.h) fills and what the
 * collectors (collector.h) are handed, a runtime's block, a "devices" entry,
 * a group and its period, and the block a collector parses its own keys
 * from. Data only: the collector interface and the loader both include it,
 * and neither includes the other's header through it.
 */
#ifndef ACCEL_CONFIG_TYPES_H
#define ACCEL_CONFIG_TYPES_H

#include "../../common/schema.h"

#include <jansson.h>
#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CFG_DEFAULT_PERIOD_MS 5000
#define CFG_MIN_PERIOD_MS 100
#define CFG_MAX_PERIOD_MS (24 * 3600 * 1000LL)

/* Groups, their scope and names: common/schema.h (SCHEMA_GROUPS). */

struct cfg_group {
	enum group_id id;
	int64_t period_ms; /* resolved */
};

struct cfg_runtime {
	char *address;    /* as written; "" without one (Neuron runtime discovery, neuron-monitor 2.x) */
	/*
	 * The registry name of the runtime collector that polls it, the one
	 * serving the address's scheme (collectors.c; "pid" for "pid:N"), which
	 * parsed the rest of the address. NULL: no collector of this build
	 * polls it (no address, or a scheme such as "unix:"); its report entry
	 * says why.
	 */
	const char *collector;
	pid_t pid;        /* "pid:N" */
	char *name;       /* "process:NAME": comm or argv[0] basename to match */
	char *tag_filter; /* NULL when absent */
	regex_t tag_re;   /* compiled tag_filter (REG_EXTENDED | REG_NOSUB) */
	int64_t period_ms;
	struct cfg_group *groups;
	size_t ngroups;
	/*
	 * What the address's collector kept from its own keys of the block
	 * (collector_ops.keys and .config in collector.h), opaque to the core and
	 * freed through its config_free; NULL when it keeps nothing.
	 */
	void *own;
};

/* A "devices" entry: one kind of device (or every kind found, "auto"). */
struct cfg_device {
	char *type;         /* a device collector's type (collectors.c's registry) or "auto" */
	int select_all;     /* "select": "all" (the default) */
	long *indices;      /* "select": [0, 2, ...] */
	size_t nindices;
	char **ids;         /* "select": ["GPU-...", serial, ...] */
	size_t nids;
	int64_t period_ms;
	struct cfg_group *groups; /* every device group when "metrics" is absent */
	size_t ngroups;
	/*
	 * What the type's collector kept from its own keys (collector_ops.config
	 * and .keys in collector.h), opaque to the core: owned by the collector,
	 * freed by cfg_free through its config_free, read by its open().
	 * NULL when it keeps nothing, and always for "auto" (which has no
	 * collector keys).
	 */
	void *own;
};

/*
 * The "host" block: how the host layer (monitor/host/host.h) finds the
 * host's files and the services that name containers and the instance.
 * Each is also a command-line option, which wins over the file. Strings
 * owned; NULL and 0 mean the default (container.h's container_opts says
 * which).
 */
struct cfg_host {
	char *rootfs;             /* the host's / (--path.rootfs) */
	char *run;                /* the host's /run (--path.run) */
	char *cgroupfs;           /* the host's /sys/fs/cgroup (--path.cgroupfs) */
	char *kubelet_url;        /* --kubelet-url: an http:// or https:// URL */
	char *kubelet_token_file; /* --kubelet-token-file */
	char *kubelet_ca_file;    /* --kubelet-ca-file */
	int64_t kubelet_refresh_ms; /* --kubelet-refresh: at least 1000 */
	int kubelet_pod_labels;   /* --kubelet-pod-labels: the most labels per pod in the report, 0 to 64 (0: none;
	                             on the command line, -1: not given) */
	char *pod_resources_socket; /* --pod-resources-socket: the kubelet's pod-resources socket; NULL: its default
	                               path when that exists; "": none */
	char *hpc_job_mapping_dir; /* --hpc-job-mapping-dir: the scheduler's GPU -> job files (jobmap.h); NULL, "": none */
	char *ecs_agent_url;      /* --ecs-agent-url */
	char *ecs_metadata_url;   /* --ecs-metadata-url, or --ecs-metadata's $ECS_CONTAINER_METADATA_URI_V4 */
	int64_t ecs_refresh_ms;   /* --ecs-refresh: at least 1000 */
	int instance_mode;        /* --instance-metadata: enum instance_mode (monitor/host/instance.h); 0: auto */
};

struct cfg {
	int64_t period_ms;
	char *procfs, *sysfs;
	struct cfg_host host;
	struct cfg_runtime *runtimes;
	size_t nruntimes;
	struct cfg_group *system;
	size_t nsystem;
	struct cfg_device *devices;
	size_t ndevices;
};

/*
 * A collector's own block while the configuration is validated: what the
 * config callbacks of collector.h get, so that a collector parses its
 * block (collectd's per-plugin config) and the core never knows its rules.
 */
struct doc;
struct cfg_block {
	const struct doc *doc;
	const char *path; /* the block's JSON path, e.g. "devices[1]" */
	json_t *obj;      /* the block (borrowed) */
	char **err;       /* where cfg_block_error puts the error */
	void **own;       /* where its collector puts what it keeps (&rt->own, &dev->own); NULL in a nested block */
	const char *arg;  /* a runtime's block: its address after "scheme:"; else NULL */
	struct cfg_runtime *rt;       /* a runtime's block: what the address parses into (pid, name); else NULL */
	const struct cfg_device *dev; /* a devices block: what the core parsed (type, select, groups); else NULL */
};

#endif
