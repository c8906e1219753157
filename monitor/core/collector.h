/* SPDX-License-Identifier: MIT */
/*
 * The collector interface: one ops table (struct collector_ops) for every
 * collector, registered in one array (collectors.c, one row each). What a
 * collector serves is its scope:
 *
 *  - COLL_SYSTEM: one system metric group (vcpu_usage, memory_info, ...),
 *    opened once per configuration. The group is a C record the collector
 *    keeps: sample() fills it, write() writes its members straight into
 *    the report line; no JSON object is made.
 *  - COLL_RUNTIME: the runtimes whose address has one of its schemes (pid:,
 *    process:, http:, ...). config() parses the rest of the address and the
 *    keys it declares in the runtime's block; collect() appends one
 *    runtime_data entry per runtime instance, with the due groups in its
 *    "report".
 *  - COLL_DEVICE: one kind of accelerator (nvidia, amdgpu, neuron, ncs2,
 *    hwmon), named by the config's device "type". config() checks that
 *    type's "devices" block and parses the keys it declares there
 *    (collectd's per-plugin config: the core never knows those keys);
 *    probe() says whether "auto" finds the kind; collect() fills one device
 *    group with a "devices" object keyed by device index, each device
 *    carrying its identity and error; proc_memory() hands the core the
 *    device memory of each process (an array of struct proc_devmem), which
 *    the core gives the host for process runtimes; energy() the devices'
 *    periods for the energy split; processes() the pids its groups named,
 *    whose identities the core writes once in the report; devices() the
 *    identities of the devices it reported, whose owners the core writes.
 *
 * The monitor (monitor.c) opens one instance per system group, per runtime
 * and per "devices" entry ("auto": per kind found) with the registry's ops,
 * the configuration validator takes the device types and address schemes it
 * accepts from the registry. A new collector is its coll_<name>.c, its
 * rows (common/rows/<name>.c, named by .rows and listed in map_rows[]) and
 * one row there.
 *
 * A collector never takes the process or other groups down: whatever it
 * cannot read becomes an "error" string in the report.
 */
#ifndef ACCEL_COLLECTOR_H
#define ACCEL_COLLECTOR_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../common/rows.h"
#include "../../common/timeutil.h"
#include "config_types.h"

struct buf;
struct host;
struct loop;
struct energy_obs_list;

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

/*
 * Asynchronous sources (a collector with fetch and abandon, below): a
 * collector that waits on something (a socket, as an endpoint's scrape
 * does; worker threads, as NVML's PCIe throughput reads do) without blocking the producer's loop. For each due cycle of each of
 * its groups, the monitor calls fetch() ahead of the due time (by the
 * source's lead(), or without one by its timeout, at most half the group's
 * period); the source starts its request, registers what it waits on with
 * f->loop (loop.h), and calls
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
	int64_t loop_cpu_ns; /* the source's: CPU time (the loop's thread) its loop callbacks took for this
	                        answer, ns; added to the group's cpu_seconds (self-timing) */
};

/* The source has its answer for f (call it from a loop callback, or from fetch() itself). */
void mon_fetch_done(struct mon_fetch *f);

#define MON_FETCH_TIMEOUT_NS (1000 * 1000 * 1000LL) /* the default wait for an answer: 1 s */

/* What a collector serves; see the top of this file. */
enum coll_scope { COLL_SYSTEM, COLL_RUNTIME, COLL_DEVICE };

/* What one instance of a collector is opened for (the members of its scope; the rest NULL or 0). */
struct coll_target {
	const struct cfg_runtime *rt; /* COLL_RUNTIME: the runtime's block (borrowed: it outlives the state) */
	size_t index;                 /* COLL_RUNTIME: the runtime's runtime_index in reports */
	const struct cfg_device *dev; /* COLL_DEVICE: the "devices" entry (borrowed; dev->own: what config kept) */
	const struct cycle *cy;       /* the moment it is opened: a runtime's first baseline */
};

/* One process's device memory, as a device collector reads it (proc_memory). */
struct proc_devmem {
	pid_t pid;
	uint64_t bytes;
};

/* What device collectors hand the core in one cycle: n entries, and whether any process list was read. */
struct proc_devmem_list {
	struct proc_devmem *p;
	size_t n, cap;
	int known;
};

/*
 * The processes a device collector's groups named this cycle (in a
 * device's "processes" or "pids"), in the order named; a pid may come more
 * than once (the processes op).
 */
struct pid_list {
	pid_t *p;
	size_t n, cap;
};

/*
 * A device's identity for the core (the devices op): its key in the groups'
 * "devices" and what the kubelet's device plugins and DRA drivers may call
 * it (monitor/host/owners.c maps their ids with these). The strings are
 * copies ("" when unknown), so a list outlives the collector's cycle.
 */
struct dev_ident {
	const char *type;       /* the kind: the collector's name ("nvidia", static) */
	char key[48];           /* its key in the groups' "devices": "0", a MIG instance's "0/9/0" */
	char uuid[96];          /* "GPU-...", "MIG-..."; "" when none */
	char pci_bus_id[32];    /* "0000:01:00.0"; "" when none */
	char parent[48];        /* a MIG instance: its GPU's key; "" */
	int index;              /* the device's index (a MIG instance: its GPU's); -1 when none */
	int sub;                /* a MIG instance: its index among its GPU's MIG devices (NVML's handle index); -1 */
	int gi;                 /* a MIG instance: its GPU instance id; -1 */
	unsigned core_base;     /* Neuron: the global index of the device's first NeuronCore */
	unsigned cores;         /* Neuron: how many NeuronCores it has (0: none, or not a Neuron device) */
};

/* The devices of one cycle (the devices op), in the order listed. */
struct dev_list {
	struct dev_ident *d;
	size_t n, cap;
};

struct collector_ops {
	const char *name;     /* unique within its scope; a device collector's is the config "type" and "device_type" */
	enum coll_scope scope;
	enum group_id group;  /* COLL_SYSTEM: the group it fills */
	/*
	 * Its rows (common/rows/<name>.c): the fields it writes and how the
	 * sinks map them; the same block is in map_rows[] (common/rows.h).
	 */
	const struct map_rows *rows;
	/* COLL_RUNTIME: the address schemes it polls, NULL-terminated ("pid" for "pid:N"). */
	const char *const *schemes;

	/*
	 * Optional (runtime and device collectors): the keys of its block
	 * beyond the ones every block of its scope has (a runtime's address,
	 * tag_filter, period, metrics; a devices block's type, select, period,
	 * metrics), NULL-terminated. The validator accepts them in a block of
	 * this collector only; config parses them. A collector with keys has
	 * config, config_print and config_free.
	 */
	const char *const *keys;
	/*
	 * Optional (runtime and device collectors): check and parse its block b
	 * (b->arg, b->rt or b->dev say what the core parsed already). What it
	 * keeps from its own keys goes to *b->own, a new object that open()
	 * finds in rt->own or dev->own and config_free releases; it keeps
	 * nothing (NULL) when none of its keys is there. 0, or -EINVAL after
	 * cfg_block_error(b, ...) (an object already in *b->own is still
	 * freed). Not called for "auto".
	 */
	int (*config)(const struct cfg_block *b);
	/*
	 * Add what config kept (own, never NULL) to block, the block's entry in
	 * the effective configuration (--check-config), as the keys config
	 * parsed: the output must load back to the same own.
	 */
	void (*config_print)(const void *own, json_t *block);
	void (*config_free)(void *own); /* NULL-safe */
	/* COLL_DEVICE, optional: 1 when this host has at least one such device ("auto" skips a kind without it). */
	int (*probe)(const struct mon_env *env);

	/*
	 * Open one instance for t: take the first sample (a rate group's
	 * baseline), discover the selected devices. *state is set whatever
	 * happens. 0 or -errno: then collect() or sample() reports why (a
	 * system group is retried each period).
	 */
	int (*open)(const struct mon_env *env, const struct coll_target *t, void **state);
	/*
	 * Runtime and device collectors: fill what is due in this cycle cy,
	 * due[0..ndue). A device collector gets one group (ndue 1) and out is
	 * that group's object, which already has period, timestamp and error
	 * "" (a device field the hardware does not support is absent, never
	 * 0). A runtime collector gets every due group of its runtime and out
	 * is runtime_data, to which it appends its entries. Returns 0, or -1
	 * when it gave the group an error (a runtime collector: an entry it
	 * appended): the self-timing's "success", which the monitor does not
	 * read back out of the JSON.
	 */
	int (*collect)(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue, json_t *out);
	/*
	 * COLL_SYSTEM (instead of collect()): the group as the collector's own
	 * record. sample() reads this cycle's values into it: 0 when it has
	 * members to write (err, "" on entry, may still say what it missed:
	 * the group's "error"), or -1 with why in err (the group then has no
	 * members). write() appends the members of the last sample that
	 * returned 0 to the group's object in the line, after its envelope,
	 * each as ",\"key\":value" (common/jsonw.h's writers, so numbers read
	 * as collect()'s would): 0, or -ENOSPC once b's cap is reached.
	 */
	int (*sample)(void *state, const struct cycle *cy, char *err, size_t errsz);
	int (*write)(void *state, struct buf *b);
	void (*close)(void *state); /* NULL-safe */

	/* Optional: why the whole source cannot be read (no library, no driver), or NULL when fine: a device entry's error. */
	const char *(*error)(void *state);
	/*
	 * Optional, together: an asynchronous source (mon_fetch above). fetch
	 * starts a request for f->id: 0, or -errno (then collect() says why, as
	 * for any failed read). abandon: no answer by f->deadline, stop waiting
	 * and drop the request. fetch_timeout_ns: the longest wait for an
	 * answer (0: MON_FETCH_TIMEOUT_NS).
	 */
	int (*fetch)(void *state, struct mon_fetch *f);
	void (*abandon)(void *state, struct mon_fetch *f);
	int64_t fetch_timeout_ns;
	/*
	 * Optional for an asynchronous source: how far ahead of its due time
	 * (ns) the fetch for group id, on a period of period_ns, starts; the
	 * monitor keeps it within 0 and period_ns (a fetch starts no earlier
	 * than the previous report). NULL: fetch_timeout_ns, at most half the
	 * period.
	 */
	int64_t (*lead)(void *state, enum group_id id, int64_t period_ns);
	/*
	 * Optional for an asynchronous source: f has no answer at its due
	 * time. The source stops waiting for f (as abandon() does) and returns
	 * 0 when its collect() will give the group its own error for this cycle
	 * (the monitor then collects it as answered), or -1 for the monitor's
	 * "no answer within X s". NULL: abandon() and the monitor's message.
	 */
	int (*overdue)(void *state, struct mon_fetch *f);
	/*
	 * Optional (COLL_DEVICE): the device memory each process holds on the
	 * selected devices, added to out (proc_devmem_add; out->known set when
	 * the process lists were read, even with no process on them), for
	 * process runtimes' memory_used. Called once per cycle in which a
	 * runtime's memory_used is due, after the device groups.
	 */
	void (*proc_memory)(void *state, const struct cycle *cy, struct proc_devmem_list *out);
	/*
	 * Optional (COLL_DEVICE): move this cycle's energy observations to out
	 * (energy.h: one per device whose device_power collect() filled, with
	 * the period's energy, idle power and the processes' weights). The
	 * core's attribution phase, after the device groups, splits each the
	 * same way for every kind, writes the split into the device's object
	 * and adds it to the host's ledger.
	 */
	void (*energy)(void *state, struct energy_obs_list *out);
	/*
	 * Optional (COLL_DEVICE; required of one whose groups name processes):
	 * move the pids this cycle's collect() calls named (pid_list_add as a
	 * device's "processes" or "pids" are written) to the end of out. The
	 * core's phase after the attribution gives each its identity, once in
	 * the report's "identities" (host_identities), without reading the
	 * groups back.
	 */
	void (*processes)(void *state, struct pid_list *out);
	/*
	 * Optional (COLL_DEVICE): append the identity of each device the last
	 * collect() reported (each selected device, and each NVIDIA MIG
	 * instance) to out (dev_list_add). The core's owners phase asks who
	 * each is allocated to (the kubelet's pod-resources, an HPC job
	 * mapping) without reading the groups back.
	 */
	void (*devices)(void *state, struct dev_list *out);
};


/*
 * The registry (collectors.c): every collector of this build, one row each,
 * NULL-terminated; device collectors in the order "auto" probes them.
 */
const struct collector_ops *const *collectors(void);
/* reg's (NULL: the registry's) collector of scope named name; NULL when none. */
const struct collector_ops *collector_find(const struct collector_ops *const *reg, enum coll_scope scope,
					   const char *name);
/* reg's (NULL: the registry's) system collector filling group id; NULL when none. */
const struct collector_ops *collector_group(const struct collector_ops *const *reg, enum group_id id);
/* The registry's runtime collector polling an address scheme ("pid", without the colon); NULL when none. */
const struct collector_ops *collector_scheme(const char *scheme);
/*
 * The address schemes the configuration accepts although no collector of
 * this build polls them (neuron-monitor's "unix"), NULL-terminated: such a
 * runtime has no collector and its report entry says why.
 */
const char *const *collector_schemes_unpolled(void);
/*
 * The registry's runtime address schemes as text, "pid:, process:, http:,
 * https:", in dst (what fits, always terminated when size > 0). Returns its
 * length, snprintf-style.
 */
size_t collector_schemes_list(char *dst, size_t size);

/*
 * A new group object {"period": s, "timestamp": iso, "error": ""}: every
 * device and runtime group starts from this (monitor.c; a system group is
 * written with the same envelope by report_group_write).
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
/* Add to it: after the error it has and "; ", or alone when it has none (the same 511 bytes at most). */
void add_error(json_t *obj, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Add pid's bytes to l (its array grows; free l->p when done). */
void proc_devmem_add(struct proc_devmem_list *l, pid_t pid, uint64_t bytes);
/* Add pid to l (its array grows). */
void pid_list_add(struct pid_list *l, pid_t pid);
/* Append every pid of from to to; from is left empty (its room kept). */
void pid_list_move(struct pid_list *from, struct pid_list *to);
void pid_list_free(struct pid_list *l); /* its room; NULL-safe */
/*
 * A new record at the end of l (its array grows) of kind type (static) and
 * key (copied, cut to fit): index, sub and gi -1, every string "", no cores.
 * Returns it (borrowed until l next grows).
 */
struct dev_ident *dev_list_add(struct dev_list *l, const char *type, const char *key);
void dev_list_free(struct dev_list *l); /* its room; NULL-safe */

#endif
