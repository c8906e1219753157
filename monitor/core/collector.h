/* SPDX-License-Identifier: MIT */
/*
 * The collector interface. Two kinds of collectors, one ops table each,
 * registered in collectors.c:
 *
 *  - group_ops: one system metric group (vcpu_usage, memory_info, ...).
 *    open() takes the first sample so rate groups have a baseline;
 *    collect() fills one group object; failures go into its "error".
 *  - runtime_ops: one kind of runtime address (pid:, process:, ...).
 *    It names the address scheme it serves and parses the rest of the
 *    address; collect() appends one runtime_data entry per runtime
 *    instance, with the due groups in its "report".
 *
 *  - device_ops: one kind of accelerator (nvidia, amdgpu, neuron, ncs2,
 *    hwmon). It names the config "type" it serves, may declare keys of its
 *    own in that type's "devices" block (nvidia's "library") and parses and
 *    checks its block (collectd's per-plugin config): the core never knows
 *    those keys, only that they belong to the type. What the collector
 *    keeps is cfg_device.own at open(). collect() fills one device group
 *    with a "devices" object keyed by device index, each device carrying
 *    its identity and error.
 *
 * The configuration validator takes the device types and address schemes
 * it accepts from the registry, so a new collector is one file plus one
 * row there.
 *
 * A collector never takes the process or other groups down: whatever it
 * cannot read becomes an "error" string in the report.
 */
#ifndef ACCEL_COLLECTOR_H
#define ACCEL_COLLECTOR_H

#include <jansson.h>
#include <stdint.h>

#include "../../common/timeutil.h"
#include "config.h"

struct host;
struct loop;

/* What every collector may use: the host and the producer's event loop, both the producer's and borrowed. */
struct mon_env {
	/*
	 * The host layer (host.h): the roots and system constants, processes,
	 * containers, sockets, instance metadata, and what collectors hand each
	 * other (per-process device memory, device facts).
	 */
	struct host *host;
	struct loop *loop;  /* the producer's event loop (loop.h): where asynchronous sources wait */
};

/* The moment a collection cycle starts, on every clock it is reported on. */
struct cycle {
	int64_t mono_ns;
	int64_t boot_ns;
	int64_t real_ns;
	char iso[ISO8601_LEN];
};

struct async_ops;

struct group_ops {
	enum group_id id;
	const struct async_ops *async; /* optional: an asynchronous source (below) */
	/* 0 or -errno (then the group reports the error and is retried each period). */
	int (*open)(const struct mon_env *env, void **state);
	/* Fill group (which already has period, timestamp and error ""). */
	void (*collect)(void *state, const struct cycle *cy, json_t *group);
	void (*close)(void *state); /* NULL-safe */
};

struct runtime_ops {
	enum runtime_kind kind;
	const char *scheme; /* the address scheme it serves: "pid" for "pid:N" */
	const char *scheme2; /* optional: a second one ("https" beside "http") */
	/*
	 * Optional: the keys of the runtime's block beyond the ones every
	 * runtime has (address, tag_filter, period, metrics), NULL-terminated,
	 * accepted in a block with this collector's address only. A collector
	 * with keys has config_print and config_free.
	 */
	const char *const *keys;
	/*
	 * Parse arg, the address after "scheme:", into rt (pid, name, ...), and
	 * the block's own keys into rt->own (a new object, or NULL when it keeps
	 * nothing). 0, or -EINVAL after cfg_block_error(b, ...); b is the
	 * runtime's block.
	 */
	int (*config)(const struct cfg_block *b, const char *arg, struct cfg_runtime *rt);
	/* Add what config kept (own, never NULL) to block, as the keys it parsed (--check-config loads back to the same own). */
	void (*config_print)(const void *own, json_t *block);
	void (*config_free)(void *own); /* NULL-safe */
	const struct async_ops *async; /* optional: an asynchronous source (below) */
	int (*open)(const struct mon_env *env, const struct cfg_runtime *rt, size_t index,
		    const struct cycle *cy, void **state);
	/* Append this runtime's entries, with the groups in due[], to runtime_data. */
	void (*collect)(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue,
			json_t *runtime_data);
	void (*close)(void *state);
};

struct device_ops {
	const char *type; /* the config's device "type" it serves, and the report's "device_type" */
	const struct async_ops *async; /* optional: an asynchronous source (below) */
	/*
	 * Optional: the keys of this kind's "devices" block beyond the ones
	 * every block has (type, select, period, metrics), NULL-terminated. The
	 * validator accepts them in a block of this type only; config parses
	 * them. A collector with keys has config, config_print and config_free.
	 */
	const char *const *keys;
	/*
	 * Optional: check and parse this kind's "devices" block (type, select,
	 * period and metrics are parsed into dev already). What it keeps from
	 * its own keys goes to *b->own, a new object that open() finds in
	 * dev->own and config_free releases; it keeps nothing (NULL) when none
	 * of its keys is there. 0, or -EINVAL after cfg_block_error(b, ...) (an
	 * object already in *b->own is still freed). Not called for "auto".
	 */
	int (*config)(const struct cfg_block *b, const struct cfg_device *dev);
	/*
	 * Add what config kept (own, never NULL) to block, the block's entry in
	 * the effective configuration (--check-config), as the keys config
	 * parsed: the output must load back to the same own.
	 */
	void (*config_print)(const void *own, json_t *block);
	void (*config_free)(void *own); /* NULL-safe */
	/* 1 when this host has at least one such device (for type "auto"). */
	int (*probe)(const struct mon_env *env);
	/* Discover the selected devices (dev->own: what config kept). 0 or -errno; failures are reported by collect. */
	int (*open)(const struct mon_env *env, const struct cfg_device *dev, void **state);
	/*
	 * Fill group (which already has period, timestamp and error "") for the
	 * group id: "devices": {"<index>": {identity..., "error": "", fields...}}.
	 * A field the hardware does not support is absent, never 0.
	 */
	void (*collect)(void *state, enum group_id id, const struct cycle *cy, json_t *group);
	/* Optional: why the whole kind cannot be read (no library, no driver), or NULL when fine. */
	const char *(*error)(void *state);
	/*
	 * Optional: record into the host (host_devmem_add, or host_devmem_known
	 * when no process uses the devices) the device memory each process holds
	 * on the selected devices, for process runtimes' memory_used. Called once
	 * per cycle in which a runtime's memory_used is due, after the device groups.
	 */
	void (*proc_memory)(void *state, const struct cycle *cy, struct host *host);
	void (*close)(void *state);
};

/*
 * Asynchronous sources: a collector that waits on something (a socket, a
 * helper process, an event set) without blocking the producer's one
 * thread. For each due cycle of each of its groups, the monitor calls
 * fetch() ahead of the due time (by the source's lead(), or without one by
 * its timeout, at most half the group's period); the source starts its
 * request, registers what it waits on with f->loop (loop.h), and calls
 * mon_fetch_done(f) from its callback once the answer is in (or failed:
 * then collect() reports why). At the due time the report is written on
 * time whatever the state: an answered group is filled by the ordinary
 * collect(); one still waiting is overdue: a source with overdue() stops
 * waiting and says why in its own collect() (an endpoint: "<URL>: timeout
 * after X s"); otherwise it is abandoned (abandon() stops its watches and
 * timers and drops the request) and reported with "error": "no answer
 * within X s". The next cycle fetches afresh. fetch(), abandon() and
 * overdue() never block.
 */
struct mon_fetch {
	struct loop *loop;   /* borrowed: register the request's watches and timers here */
	enum group_id id;    /* the group this answer is for */
	int64_t started;     /* CLOCK_MONOTONIC ns */
	int64_t deadline;    /* CLOCK_MONOTONIC ns: the report it goes into is written then */
	int state;           /* the monitor's: idle, waiting or answered */
};

/* The source has its answer for f (call it from a loop callback, or from fetch() itself). */
void mon_fetch_done(struct mon_fetch *f);

#define MON_FETCH_TIMEOUT_NS (1000 * 1000 * 1000LL) /* the default wait for an answer: 1 s */

struct async_ops {
	int64_t timeout_ns; /* the longest wait for an answer; 0: MON_FETCH_TIMEOUT_NS */
	/* Start a request for f->id. 0, or -errno (then collect() says why, as for any failed read). */
	int (*fetch)(void *state, struct mon_fetch *f);
	/* No answer by f->deadline: stop waiting and drop the request. */
	void (*abandon)(void *state, struct mon_fetch *f);
	/*
	 * Optional: how far ahead of its due time (ns) the fetch for group id,
	 * on a period of period_ns, starts; the monitor keeps it within 0 and
	 * period_ns (a fetch starts no earlier than the previous report). NULL:
	 * timeout_ns, at most half the period.
	 */
	int64_t (*lead)(void *state, enum group_id id, int64_t period_ns);
	/*
	 * Optional: f has no answer at its due time. The source stops waiting
	 * for f (as abandon() does) and returns 0 when its collect() will give
	 * the group its own error for this cycle (the monitor then collects it
	 * as answered), or -1 for the monitor's "no answer within X s". NULL:
	 * abandon() and the monitor's message.
	 */
	int (*overdue)(void *state, struct mon_fetch *f);
};

/* The registries (collectors.c): NULL when nothing in this build serves it. */
const struct group_ops *group_ops_find(enum group_id id);
const struct runtime_ops *runtime_ops_find(enum runtime_kind kind);
/* The runtime collector serving an address scheme ("pid", without the colon). */
const struct runtime_ops *runtime_ops_scheme(const char *scheme);
/* Every runtime collector, NULL-terminated. */
const struct runtime_ops *const *runtime_ops_all(void);
/*
 * The address schemes the configuration accepts although no collector of
 * this build polls them (neuron-monitor's "unix"), NULL-terminated: such a
 * runtime is RT_UNSUPPORTED and its report entry says why.
 */
const char *const *runtime_schemes_unpolled(void);
const struct device_ops *device_ops_find(const char *type);
/* Every device collector, NULL-terminated (what "auto" probes). */
const struct device_ops *const *device_ops_all(void);

/* For tests and benchmarks that drive one collector; the registry does not need these. */
extern const struct group_ops coll_cpu_ops;
extern const struct group_ops coll_mem_ops;
extern const struct group_ops coll_neuron_hw_ops;
extern const struct group_ops coll_containers_ops;
extern const struct runtime_ops coll_pid_ops;
extern const struct runtime_ops coll_process_ops;
extern const struct runtime_ops coll_endpoint_ops;
extern const struct device_ops coll_amdgpu_ops;
extern const struct device_ops coll_neuron_ops;
extern const struct device_ops coll_ncs2_ops;
extern const struct device_ops coll_hwmon_ops;
extern const struct device_ops coll_nvidia_ops;

/*
 * A new group object {"period": s, "timestamp": iso, "error": ""}: every
 * group in a report starts from this (monitor.c).
 */
json_t *group_new(double period_s, const char *iso);
/*
 * Add device index to group's "devices" object (created on first use) with
 * its identity, the same in every device group: {"index": i, "uuid": ...,
 * "pci_bus_id": ..., "model": ..., "error": ""} (uuid, pci_bus_id and model
 * only when not NULL). Returns the device object (borrowed).
 */
json_t *device_entry(json_t *group, unsigned index, const char *uuid, const char *pci_bus_id, const char *model);

/* Set a group's or entry's "error" (printf-style). */
void set_error(json_t *obj, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
