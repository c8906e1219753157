/* SPDX-License-Identifier: MIT */
/*
 * The collector interface. Two kinds of collectors, one ops table each,
 * registered in collectors.c:
 *
 *  - group_ops: one system metric group (vcpu_usage, memory_info, ...).
 *    open() takes the first sample so rate groups have a baseline;
 *    collect() fills one group object; failures go into its "error".
 *  - runtime_ops: one kind of runtime address (pid:, process:, ...).
 *    collect() appends one runtime_data entry per runtime instance, with
 *    the due groups in its "report".
 *
 * A collector never takes the process or other groups down: whatever it
 * cannot read becomes an "error" string in the report.
 */
#ifndef ACCEL_COLLECTOR_H
#define ACCEL_COLLECTOR_H

#include <jansson.h>
#include <stdint.h>

#include "../common/timeutil.h"
#include "config.h"

/* What every collector may read: the roots and a few system constants. */
struct mon_env {
	const char *procfs; /* --path.procfs */
	const char *sysfs;  /* --path.sysfs */
	long clk_tck;       /* USER_HZ */
	long page_size;     /* bytes */
};

/* The moment a collection cycle starts, on every clock it is reported on. */
struct cycle {
	int64_t mono_ns;
	int64_t boot_ns;
	int64_t real_ns;
	char iso[ISO8601_LEN];
};

struct group_ops {
	enum group_id id;
	/* 0 or -errno (then the group reports the error and is retried each period). */
	int (*open)(const struct mon_env *env, void **state);
	/* Fill group (which already has period, timestamp and error ""). */
	void (*collect)(void *state, const struct cycle *cy, json_t *group);
	void (*close)(void *state); /* NULL-safe */
};

struct runtime_ops {
	enum runtime_kind kind;
	int (*open)(const struct mon_env *env, const struct cfg_runtime *rt, size_t index,
		    const struct cycle *cy, void **state);
	/* Append this runtime's entries, with the groups in due[], to runtime_data. */
	void (*collect)(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue,
			json_t *runtime_data);
	void (*close)(void *state);
};

/* The registries (collectors.c): NULL when nothing in this build serves it. */
const struct group_ops *group_ops_find(enum group_id id);
const struct runtime_ops *runtime_ops_find(enum runtime_kind kind);

extern const struct group_ops coll_cpu_ops;
extern const struct group_ops coll_mem_ops;
extern const struct runtime_ops coll_pid_ops;
extern const struct runtime_ops coll_process_ops;

/*
 * A new group object {"period": s, "timestamp": iso, "error": ""}: every
 * group in a report starts from this (report.c).
 */
json_t *group_new(double period_s, const char *iso);
/* Set a group's or entry's "error" (printf-style). */
void set_error(json_t *obj, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
