/* SPDX-License-Identifier: MIT */
/*
 * The host layer: what collectors share about the machine they run on, in
 * one object the producer owns and hands every collector (struct
 * mon_env.host). It holds its own options (no process globals) and:
 *
 *  - the roots: --path.procfs and --path.sysfs (or the configuration's
 *    "procfs" and "sysfs"), and the host's /, /run and /sys/fs/cgroup
 *    (--path.rootfs, --path.run, --path.cgroupfs, or the configuration's
 *    "host" block, as are the kubelet's, ECS's and the instance metadata's
 *    options): the monitor applies them at each load (host_configure);
 *    USER_HZ, the page size and the online CPUs;
 *  - the process table (proctab.h): one scan of /proc per cycle, shared;
 *  - containers and pods (container.h): identities from cgroup paths,
 *    names from the runtimes' state files and the kubelet (kubelet.h);
 *  - sockets (sockets.h): which process listens on a TCP port;
 *  - instance metadata (instance.h);
 *  - which HPC jobs run on which GPU (jobmap.h), from the scheduler's
 *    files in --hpc-job-mapping-dir, read again at a snapshot when they
 *    changed;
 *  - what collectors hand each other through it, each by an API of its
 *    own: the device memory each process holds on accelerators (device
 *    collectors record it, process runtimes report it), and device facts
 *    (facts.h: an NCS2 stick's temperature that only the application
 *    holding it can read, published by the endpoint runtime that scrapes
 *    the application and read by the ncs2 collector).
 *
 * The cycle's first phase is the host snapshot: the monitor calls
 * host_snapshot() as each collection cycle starts (and before it opens
 * collectors), and every question below is answered as of that snapshot:
 * /proc is scanned at most once in it, by the first reader that needs the
 * whole table (a reader of one process reads only that process's stat
 * file, once), and the record of device memory starts empty.
 *
 * Ownership: the host copies its options' strings; what it returns is
 * borrowed (valid until the next call that says otherwise) unless a
 * function says "new reference". Everything runs on the producer's one
 * thread.
 */
#ifndef ACCEL_HOST_H
#define ACCEL_HOST_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../core/collector.h"
#include "container.h"
#include "facts.h"
#include "proctab.h"
#include "sockets.h"

struct host;
struct loop;
struct http_async;
struct energy_obs;
struct jobmap;

/* What the producer creates its host with; NULL and 0 fields take the defaults. */
struct host_opts {
	const char *procfs;           /* --path.procfs: default "/proc" */
	const char *sysfs;            /* --path.sysfs: default "/sys" */
	struct container_opts ctr;    /* --path.rootfs, --path.run, --path.cgroupfs, --kubelet-* (container.h) */
	struct http_async *http;      /* the producer's HTTP (http_async.h): metadata and kubelet fetches; NULL: none */
	int64_t instance_refresh_ns;  /* how often the metadata is fetched again (ns); 0: once an hour */
	int instance_mode;            /* --instance-metadata: enum instance_mode (instance.h); 0: auto */
	long clk_tck;                 /* USER_HZ; 0: sysconf's */
	long page_size;               /* bytes; 0: sysconf's */
	struct fd_budget *fds;        /* the producer's descriptor budget (fdbudget.h; borrowed); NULL: none */
	const char *pod_resources_socket; /* --pod-resources-socket: NULL, the kubelet's when it exists; "": none */
	const char *hpc_job_mapping_dir; /* --hpc-job-mapping-dir: the scheduler's GPU -> job files; NULL, "": none */
};

/*
 * A host with o's options (strings copied). loop and o->http (borrowed;
 * they must outlive the host) are where the metadata and kubelet fetches
 * wait and are made; either NULL: neither runs (tests, benchmarks). Starts
 * the first metadata fetch. Never fails.
 */
struct host *host_new(const struct host_opts *o, struct loop *loop);
void host_free(struct host *h); /* NULL-safe; stops running fetches */

/*
 * Use procfs and sysfs as the roots from now on (copied; NULL: the
 * defaults). When procfs changes, what was read from the old one (the
 * process table, the listening sockets) is dropped. Returns 1 when either
 * root changed, else 0.
 */
int host_set_roots(struct host *h, const char *procfs, const char *sysfs);
/*
 * Apply a configuration to the host: its roots (host_set_roots) and its
 * "host" block (config_types.h's cfg_host, the command line's overrides
 * already in it). When the container options (roots, kubelet, ECS)
 * changed, the name resolver and the kubelet's and ECS's clients start
 * afresh and the identities worked out so far are forgotten; when the
 * instance metadata mode or sysfs changed, the metadata is fetched afresh.
 * Returns 1 when a root or a container option changed (what collectors
 * read from them must be read again), else 0.
 */
int host_configure(struct host *h, const struct cfg *cfg);
/* A configuration's "host" block as container options (strings borrowed from hc; 0 and NULL: defaults). */
struct container_opts host_cfg_ctr(const struct cfg_host *hc);
const char *host_procfs(const struct host *h);
const char *host_sysfs(const struct host *h);
/* The container options with their defaults filled in (run, cgroupfs, the kubelet's refresh). */
const struct container_opts *host_container_opts(const struct host *h);
long host_clk_tck(const struct host *h);
long host_page_size(const struct host *h);
int host_ncpu(const struct host *h); /* online CPUs when the host was created */

/* ---- the snapshot ------------------------------------------------------------------------------------ */

/*
 * Start a snapshot for the cycle cy (the monitor's: at each cycle's start
 * and before opening collectors). Every call starts a new one.
 */
void host_snapshot(struct host *h, const struct cycle *cy);

/* ---- processes --------------------------------------------------------------------------------------- */

/*
 * Open the host's handle on the procfs root if it is not open yet: 0, or
 * -errno when the root cannot be opened (then nothing about processes can
 * be read; a later call tries again).
 */
int host_procfs_open(struct host *h);

/*
 * Every process of the snapshot (sorted by pid; one scan of /proc per
 * snapshot, whoever asks first): 0 with *procs and *n (valid until the
 * next host call about processes), or -errno when /proc cannot be read.
 */
int host_processes(struct host *h, struct proc_info **procs, size_t *n);
/*
 * Process pid in the snapshot: from the scan when one was made, else from
 * its own stat file, read once per snapshot. 0 with *out (NULL when there
 * is no such process; valid until the next host call about processes), or
 * -errno when /proc cannot be read.
 */
int host_process(struct host *h, pid_t pid, struct proc_info **out);
/*
 * The same for a caller that needs only the process's identity (pid, start
 * time, comm, cgroup) and whether it is alive, not its CPU times or parent
 * as of this snapshot: on the host's own /proc one poll a cycle stands for
 * its stat file (proctab.h, proctab_get_live).
 */
int host_process_live(struct host *h, pid_t pid, struct proc_info **out);
/*
 * Is ancestor a parent, grandparent, ... of pid in the snapshot? Follows
 * the parents' links at most HOST_DESCENT_MAX steps up (a deeper tree, a
 * loop in a fixture, an exited process: 0).
 */
#define HOST_DESCENT_MAX 32
int host_process_descends(struct host *h, pid_t pid, pid_t ancestor);
/* argv[0] of p, read the first time someone asks ("" for a kernel thread). Borrowed. NULL: proctab_argv0. */
const char *host_process_argv0(struct host *h, struct proc_info *p);

/*
 * The report's "container" object of process pid in the snapshot (identity
 * from its cgroup file, read once while the process lives; names as
 * host_container_names gives them), a new reference, or NULL when it is on
 * the host or has exited. From inside a cgroup namespace, a process in the
 * monitor's own cgroup ("/") gets the monitor's identity (the ECS metadata
 * endpoint's container, else the downward API's POD_UID), one in a sibling
 * cgroup ("/../<id>") its task or pod. What runtime entries of every kind call to say
 * whose process they are about. Worked out once per process and snapshot:
 * the reference is to the snapshot's object, which no caller may change.
 */
json_t *host_container_json(struct host *h, pid_t pid);
/*
 * The container identity of process pid in the snapshot, the one
 * host_container_json writes (borrowed, valid until the next host call
 * about containers), or NULL when it is on the host or has exited.
 */
const struct container_id *host_container_id(struct host *h, pid_t pid);
/*
 * The names of container or pod id at now (CLOCK_MONOTONIC ns): the
 * runtimes' state files (container.h), then the kubelet for what they do
 * not say, and ECS. *out is always filled ("" where unknown). Returns until
 * when the same id gets the same names while host_names_gen stays the same
 * (containers_names; INT64_MIN when the kubelet or ECS was asked: their
 * answers change by themselves).
 */
int64_t host_container_names(struct host *h, const struct container_id *id, int64_t now, struct container_names *out);
/* The generation of those names (containers_gen of the state files' resolver). */
uint64_t host_names_gen(const struct host *h);
/*
 * The report's "identities" of processes pids[0..n) (the pids this cycle's
 * device groups named: identities.h, containers_identities), from the
 * snapshot's processes' identities as host_container_id and
 * host_container_names work them out: a new reference, or NULL. The host
 * keeps the report's entries with their values (a struct ident_last) as
 * the next report's starting point: an unchanged container's or process's
 * entry is the same object again, not made again. While the same pids, in
 * the same order, have the same identities as for the last call (and no
 * pod labels are asked for: --kubelet-pod-labels), the answer is the last
 * call's object again, which must not be changed.
 */
json_t *host_identities(struct host *h, const pid_t *pids, size_t n);
/*
 * The report's "allocations" of devs[0..n) (the devices this cycle's
 * device groups reported): who the kubelet's pod-resources API and the HPC
 * job mapping say each is allocated to (owners.h; an owner's pod's UID from
 * the report's processes, else the kubelet's list), a new reference; NULL
 * when there is neither a pod-resources client nor a mapping directory. A
 * device not seen before asks the kubelet again.
 */
json_t *host_allocations(struct host *h, const struct dev_ident *devs, size_t n);
/*
 * After host_identities and host_allocations: with --kubelet-pod-labels,
 * the pods the allocations' owners name that no process of the report is
 * in get entries of their own, with their labels, in the identities
 * (podmeta.h). Returns a new identities object (a new reference) for the
 * report when host_identities gave none and a pod was added; else NULL.
 */
json_t *host_owner_pods(struct host *h);

/*
 * Measuring one process over time: what runtime_vcpu_usage and
 * memory_used are measured from. A reader (a process or endpoint
 * runtime) keeps one per process it reports on; the process is the same
 * while pid and start time are.
 */
struct proc_meter {
	pid_t pid;                /* 0: none yet */
	uint64_t starttime;       /* ticks since boot: with pid, the process's identity */
	uint64_t utime, stime;    /* ticks: the process's CPU time in the snapshot it was last sampled in */
	uint64_t base_utime, base_stime; /* ticks: runtime_vcpu_usage's baseline */
	int64_t base_vcpu_ns;     /* CLOCK_BOOTTIME ns of that baseline */
	int64_t base_mem_ns;      /* CLOCK_BOOTTIME ns of the last memory_used */
};

/*
 * Start measuring p in m, at cy: from its CPU time now (prime: a process
 * there when the reader opened) or from its start (one that appeared since:
 * the whole of its life so far is in its first period).
 */
void host_meter_start(const struct host *h, struct proc_meter *m, const struct proc_info *p, const struct cycle *cy,
		      int prime);
/* Take p's CPU time as the snapshot's sample of m's process. */
void host_meter_sample(struct proc_meter *m, const struct proc_info *p);
/*
 * Fill group g (from group_new) for id, GROUP_RUNTIME_VCPU_USAGE or
 * GROUP_MEMORY_USED, from m's last sample at cy, and move that group's
 * baseline to cy: "period" (seconds since the group's previous
 * collection), "vcpu_usage" {user, system} in percent of the host's CPU
 * capacity, or "runtime_used_bytes" {host: resident bytes, device: what
 * device collectors recorded (null when none did)}; a failure is the
 * group's "error". Any other id: an error saying so.
 */
void host_meter_group(struct host *h, struct proc_meter *m, enum group_id id, const struct cycle *cy, json_t *g);

/*
 * The process groups among due[] (runtime_vcpu_usage, memory_used) of
 * process pid in the snapshot, measured with m (started afresh, from the
 * process's start, when m was about another process), added to report as
 * host_meter_group fills them. 0; -ESRCH when there is no such process (or
 * it has exited); -errno when /proc cannot be read: then nothing is added,
 * the caller says why.
 */
int host_process_sample(struct host *h, struct proc_meter *m, pid_t pid, const struct cycle *cy,
			const enum group_id *due, size_t ndue, json_t *report);

/* ---- sockets ----------------------------------------------------------------------------------------- */

/*
 * The process listening on o's port now (sockets.h; o is the caller's,
 * from sock_owner_init), 0 when none is found (o->why says why) or the
 * procfs root cannot be opened. The listening sockets and who holds them
 * are read once for every caller within a short while.
 */
pid_t host_listener(struct host *h, struct sock_owner *o, int64_t now_ns);

/* ---- device memory by process ------------------------------------------------------------------------ */

/*
 * The device collectors' process memory in this snapshot (l, from their
 * proc_memory ops): each process's bytes summed over l; known when l says
 * a process list was read, whether or not any process uses the devices.
 * l is emptied for the next cycle (its array kept).
 */
void host_devmem_take(struct host *h, struct proc_devmem_list *l);
/*
 * The device memory pid uses in this snapshot: 0 and *bytes (0 when a
 * collector recorded and pid was not among its processes), or -ENOENT when
 * no device collector recorded anything.
 */
int host_devmem(const struct host *h, pid_t pid, uint64_t *bytes);

/* ---- energy ------------------------------------------------------------------------------------------ */

/*
 * The host's energy ledger (ledger.h), borrowed: device
 * collectors add each period's per-process shares and device energy,
 * endpoint runtimes read their servers' over their own periods.
 */
struct energy_ledger *host_energy(struct host *h);
/*
 * Add j joules to process pid's share in the ledger at now (CLOCK_MONOTONIC
 * ns): the process is pid with its start time in the snapshot, so a reused
 * pid starts from 0. Processes that exited are forgotten at the next
 * snapshot (host_snapshot).
 */
void host_energy_add(struct host *h, pid_t pid, double j, int64_t now_ns);
/*
 * The energy attribution of devices' periods, for every device kind (the
 * core's attribution phase): for each observation of l, split its energy
 * among its processes (energy_split), write the split into its device
 * object (energy_split_json; without a period's energy its fields are
 * removed) and add the device's energy and the processes' shares to h's
 * ledger at the observation's time. h may be NULL: no ledger. l is left
 * empty.
 */
void host_energy_attribute(struct host *h, struct energy_obs_list *l);

/* ---- device facts ------------------------------------------------------------------------------------ */

/* A reader of device_type's facts opens (delta 1) or closes (delta -1): publishers look only for wanted types. */
void host_facts_want(struct host *h, const char *device_type, int delta);
/* Does an open reader want device_type's facts? */
int host_facts_wanted(const struct host *h, const char *device_type);
/* Replace every fact owner (the publisher) published by the n facts in f (copied; n = 0 withdraws them). */
void host_facts_publish(struct host *h, const void *owner, const struct fact *f, size_t n);
/*
 * The facts for device_type still good at now (CLOCK_MONOTONIC ns), one per
 * call: start with *pos = 0; NULL when there are no more. Borrowed, valid
 * until the next host_facts_publish.
 */
const struct fact *host_facts_next(const struct host *h, const char *device_type, int64_t now, size_t *pos);

/* ---- HPC jobs --------------------------------------------------------------------------------------- */

/*
 * The HPC job mapping of --hpc-job-mapping-dir (the "host" block's
 * "hpc_job_mapping_dir"; jobmap.h), borrowed: the map until the next
 * host_configure, the jobs it gives until the next snapshot; NULL when no
 * directory is configured. Refreshed at most
 * once per snapshot (host_snapshot refreshes it: a directory that did not
 * change costs one read of its inotify descriptor). When the refresh
 * fails, jobmap_error says why (the coordinator's report carries it) and
 * the table holds the last good jobs; each distinct error is also logged
 * once to stderr.
 */
const struct jobmap *host_jobmap(struct host *h);

/* ---- HTTP -------------------------------------------------------------------------------------------- */

/* The producer's HTTP (http_async.h), borrowed; NULL when the host was made without one. */
struct http_async *host_http(const struct host *h);

/* The producer's descriptor budget (fdbudget.h), for the caches that keep files open; NULL: none. */
struct fd_budget *host_fd_budget(const struct host *h);

/* ---- instance metadata ------------------------------------------------------------------------------- */

/* Has the first metadata fetch finished (answered, failed or timed out)? 1 when none was asked for. */
int host_instance_ready(const struct host *h);
/*
 * The report's instance_info as JSON text, made once per change
 * (instance_text; borrowed); "{}" when no metadata is fetched.
 */
const char *host_instance_text(const struct host *h);

#endif
