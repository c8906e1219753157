/* SPDX-License-Identifier: MIT */
/*
 * The host layer; see host.h. The object ties the host's modules together
 * (proctab.c, container.c, kubelet.c, sockets.c, facts.c, instance.c) and
 * keeps what belongs to no one collector: the snapshot's cycle and the
 * device memory each process holds in it.
 */
#include "host.h"
#include "../core/energy.h"
#include "identities.h"
#include "ledger.h"
#include "../../common/hindex.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"
#include "ecs.h"
#include "instance.h"
#include "jobmap.h"
#include "kubelet.h"
#include "owners.h"
#include "podmeta.h"
#include "podres.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INSTANCE_REFRESH_DEFAULT_NS (3600 * NS_PER_S)

/* Process pid uses bytes of device memory (summed over the device collectors that recorded it). */
struct devmem {
	pid_t pid;
	uint64_t bytes;
};

struct host {
	char *procfs, *sysfs;        /* owned */
	long clk_tck;                /* USER_HZ */
	json_t *last_ids;            /* the last report's "identities" (a reference; NULL: none), for host_owner_pods */
	struct ident_last *ids_last; /* the last report's identities' entries, to be taken over (identities.h) */
	/*
	 * The last identities made (host_identities), to be handed out again
	 * while nothing they were made from changed: the pids they were made
	 * for, in order, and ident_gen then. made: that object, borrowed (it is
	 * last_ids unless owners' pods were added since); made_ok: made is
	 * set (NULL is an answer too).
	 */
	pid_t *made_pids;
	size_t made_n, made_cap;
	uint64_t made_gen;
	const json_t *made;
	int made_ok;
	uint64_t ident_gen;          /* identities worked out that differ from what their memo held (memo_of) */
	long page_size;              /* bytes */
	int ncpu;                    /* online CPUs */
	struct loop *loop;           /* borrowed; NULL: no fetches */
	struct fd_budget *fdb;       /* borrowed: the producer's descriptor budget; NULL: none */
	struct http_async *http;     /* borrowed: the producer's HTTP; NULL: no fetches */
	int64_t snap;                /* the snapshot's number: the process table's cycle */
	struct procfs pf;            /* the procfs root, for the files read outside the process table */
	struct proctab procs;        /* the processes (proctab.h); its root is procfs */
	struct containers *ct;       /* container and pod names from the runtimes' state files */
	struct kubelet *kl;          /* names the state files lack; NULL without --kubelet-url or a loop */
	struct ecs *ecs;             /* ECS names; NULL without --ecs-agent-url or --ecs-metadata, or a loop */
	struct podres *pr;           /* the kubelet's pod-resources client; NULL: none (podres.h) */
	char *pr_sock;               /* its socket (owned); NULL: none */
	int64_t pr_refresh_ns;       /* its List period: the kubelet's refresh */
	struct owners *own;          /* the answer mapped to the devices (owners.h); NULL until first asked */
	struct podmeta *pods;        /* the pods of the report being made (podmeta.h) */
	struct jobmap *jm;           /* the HPC job mapping; NULL: no directory (jobmap.h) */
	int64_t jm_snap;             /* the snapshot it was last refreshed in */
	char *jm_logged;             /* the last error logged (owned); NULL: none since the last good refresh */
	int self_root;               /* 1: the monitor's own cgroup reads "/" (a cgroup namespace); 0: not; -1: unread */
	char self_pod_uid[48];       /* the monitor's own pod (the downward API's POD_UID), "" when not set */
	char self_pod[256], self_ns[64]; /* and its names (POD_NAME, POD_NAMESPACE) */
	struct sock_table socks;     /* the listening sockets and who holds them */
	struct facts facts;          /* device facts one collector hands another */
	struct instance *inst;       /* instance metadata; NULL when none is fetched */
	int inst_mode;               /* enum instance_mode inst was made with */
	int64_t inst_refresh_ns;     /* and its refresh */
	struct devmem *dm;           /* this snapshot's device memory by process */
	size_t ndm, adm;
	int dm_known;                /* a device collector recorded (even nothing) in this snapshot */
	struct energy_ledger *energy; /* energy by process and device so far (energy.h) */
	/*
	 * The identities worked out in this snapshot and the last (memo_of),
	 * small: a snapshot goes over them all, and an identity that holds
	 * is known without its 1.8 kB being looked at.
	 */
	struct ident_memo {
		pid_t pid;
		int have;            /* the process has an identity: d holds it */
		int64_t snap;        /* the snapshot it was last worked out in */
		int64_t until;       /* it holds until then (CLOCK_MONOTONIC) while the process lives and the names'
		                        generation is ct_gen (container_of) */
		uint64_t start;      /* the process's start time then */
		uint64_t ct_gen;     /* containers_gen then */
		json_t *ident;       /* container_json of d (a reference), made when first asked; NULL: not yet */
		struct ident_data {
			struct container_id id;
			struct container_names n;
		} *d;                /* owned */
	} *im;
	size_t nim, aim;
	struct hindex imi;           /* im by pid */
};

/*
 * The monitor's own pod from the downward API's variables (POD_UID from
 * metadata.uid, POD_NAME, POD_NAMESPACE), as instance.c reads POD_NAME for
 * instance_info: a UID that is not one (lowercase hex and dashes) is ignored.
 */
static void self_pod(struct host *h)
{
	const char *uid = getenv("POD_UID"), *pod = getenv("POD_NAME"), *ns = getenv("POD_NAMESPACE");
	size_t n = uid ? strlen(uid) : 0;

	if (n < 16 || n >= sizeof(h->self_pod_uid) || strspn(uid, "0123456789abcdef-") != n)
		return;
	memcpy(h->self_pod_uid, uid, n + 1);
	snprintf(h->self_pod, sizeof(h->self_pod), "%s", pod ? pod : "");
	snprintf(h->self_ns, sizeof(h->self_ns), "%s", ns ? ns : "");
	utf8_sanitize(h->self_pod);
	utf8_sanitize(h->self_ns);
}

/* An owned copy of s, or of def when s is NULL. */
static char *root_dup(const char *s, const char *def)
{
	return xstrdup(s ? s : def);
}

/*
 * Take ct (the runtimes' state files under its roots) as the host's name
 * resolver, and ask the kubelet and ECS as its options say (when the host
 * has a loop and HTTP).
 */
static void host_names_start(struct host *h, struct containers *ct)
{
	const struct container_opts *co = containers_opts(ct);

	h->ct = ct;
	if (co->kubelet_url && h->loop && h->http)
		h->kl = kubelet_new(h->http, co);
	if ((co->ecs_agent_url || co->ecs_metadata_url) && h->loop && h->http)
		h->ecs = ecs_new(h->http, co->ecs_agent_url, co->ecs_metadata_url, co->ecs_refresh_ns);
}

/* Stop asking for names, and forget the identities worked out with them. */
static void host_names_stop(struct host *h)
{
	kubelet_free(h->kl);
	ecs_free(h->ecs);
	containers_free(h->ct);
	h->kl = NULL;
	h->ecs = NULL;
	h->ct = NULL;
	for (size_t i = 0; i < h->nim; i++) {
		json_decref(h->im[i].ident);
		free(h->im[i].d);
	}
	h->nim = 0;
	hindex_clear(&h->imi);
	h->made_ok = 0; /* the next identities are made afresh */
}

/*
 * The pod-resources client as opt (the option: NULL, the kubelet's socket
 * under the host's root when it exists; "": none) and the kubelet's
 * refresh say: made again only when its socket or period changed.
 */
static void host_podres_apply(struct host *h, const char *opt, int64_t refresh_ns)
{
	char *sock = podres_socket_resolve(opt, containers_opts(h->ct)->rootfs);

	if (!refresh_ns)
		refresh_ns = CONTAINER_REFRESH_DEFAULT_NS;
	if ((sock || h->pr_sock) && (!sock || !h->pr_sock || strcmp(sock, h->pr_sock) || refresh_ns != h->pr_refresh_ns)) {
		podres_free(h->pr);
		h->pr = NULL;
		free(h->pr_sock);
		h->pr_sock = sock;
		sock = NULL;
		h->pr_refresh_ns = refresh_ns;
		if (h->pr_sock && h->loop && h->http)
			h->pr = podres_new(h->http, &(struct podres_opts){ .socket = h->pr_sock, .refresh_ns = refresh_ns });
	}
	free(sock);
}

/* The HPC job mapping of directory dir (NULL or "": none), made again only when dir changed. */
static void host_jobmap_apply(struct host *h, const char *dir)
{
	if (dir && !*dir)
		dir = NULL;
	if (h->jm && dir && !strcmp(dir, jobmap_dir(h->jm)))
		return;
	jobmap_free(h->jm);
	h->jm = dir ? jobmap_new(dir) : NULL;
	h->jm_snap = -1; /* refreshed at the next snapshot, or when first asked for */
	free(h->jm_logged);
	h->jm_logged = NULL;
}

struct host *host_new(const struct host_opts *o, struct loop *loop)
{
	struct host *h = xcalloc(1, sizeof(*h));
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	h->pods = podmeta_new();
	h->ids_last = ident_last_new();
	h->procfs = root_dup(o->procfs, "/proc");
	h->sysfs = root_dup(o->sysfs, "/sys");
	h->clk_tck = o->clk_tck > 0 ? o->clk_tck : sysconf(_SC_CLK_TCK);
	if (h->clk_tck <= 0)
		h->clk_tck = 100;
	h->page_size = o->page_size > 0 ? o->page_size : sysconf(_SC_PAGESIZE);
	h->ncpu = n > 0 ? (int)n : 1;
	h->loop = loop;
	h->http = o->http;
	h->pf.dirfd = -1;
	h->fdb = o->fds;
	proctab_init(&h->procs, h->procfs);
	h->procs.fdb = h->fdb;
	host_names_start(h, containers_new(&o->ctr));
	host_podres_apply(h, o->pod_resources_socket, o->ctr.kubelet_refresh_ns);
	host_jobmap_apply(h, o->hpc_job_mapping_dir);
	h->self_root = -1;
	self_pod(h);
	facts_init(&h->facts);
	h->inst_mode = o->instance_mode;
	h->inst_refresh_ns = o->instance_refresh_ns > 0 ? o->instance_refresh_ns : INSTANCE_REFRESH_DEFAULT_NS;
	if (o->http && loop)
		h->inst = instance_new(loop, o->http, h->inst_refresh_ns, (enum instance_mode)h->inst_mode, h->sysfs);
	/* A new host is a snapshot as of now. */
	host_snapshot(h, &(struct cycle){ .mono_ns = clock_mono_ns() });
	return h;
}

void host_free(struct host *h)
{
	if (!h)
		return;
	instance_free(h->inst);
	podres_free(h->pr);
	free(h->pr_sock);
	owners_free(h->own);
	podmeta_free(h->pods);
	jobmap_free(h->jm);
	free(h->jm_logged);
	host_names_stop(h);
	proctab_free(&h->procs);
	procfs_close(&h->pf);
	sock_table_free(&h->socks);
	facts_free(&h->facts);
	free(h->dm);
	free(h->im);
	free(h->made_pids);
	hindex_free(&h->imi);
	energy_ledger_free(h->energy);
	json_decref(h->last_ids);
	ident_last_free(h->ids_last);
	free(h->procfs);
	free(h->sysfs);
	free(h);
}

int host_set_roots(struct host *h, const char *procfs, const char *sysfs)
{
	int changed = 0;

	if (!procfs)
		procfs = "/proc";
	if (!sysfs)
		sysfs = "/sys";
	if (strcmp(h->sysfs, sysfs)) {
		free(h->sysfs);
		h->sysfs = xstrdup(sysfs);
		changed = 1;
	}
	if (strcmp(h->procfs, procfs)) {
		/* Everything read from the old root goes with it. */
		proctab_free(&h->procs);
		procfs_close(&h->pf);
		sock_table_free(&h->socks);
		free(h->procfs);
		h->procfs = xstrdup(procfs);
		proctab_init(&h->procs, h->procfs);
		h->procs.fdb = h->fdb;
		h->self_root = -1;
		changed = 1;
	}
	return changed;
}

struct container_opts host_cfg_ctr(const struct cfg_host *hc)
{
	return (struct container_opts){
		.rootfs = hc->rootfs,
		.run = hc->run,
		.cgroupfs = hc->cgroupfs,
		.kubelet_url = hc->kubelet_url,
		.kubelet_token_file = hc->kubelet_token_file,
		.kubelet_ca_file = hc->kubelet_ca_file,
		.kubelet_refresh_ns = hc->kubelet_refresh_ms * NS_PER_MS,
		.kubelet_pod_labels = hc->kubelet_pod_labels,
		.ecs_agent_url = hc->ecs_agent_url,
		.ecs_metadata_url = hc->ecs_metadata_url,
		.ecs_refresh_ns = hc->ecs_refresh_ms * NS_PER_MS,
	};
}

/* Do a and b (both with their defaults filled in) say the same? */
static int ctr_opts_same(const struct container_opts *a, const struct container_opts *b)
{
	const char *const sa[] = { a->rootfs, a->run, a->cgroupfs, a->kubelet_url, a->kubelet_token_file,
				   a->kubelet_ca_file, a->ecs_agent_url, a->ecs_metadata_url };
	const char *const sb[] = { b->rootfs, b->run, b->cgroupfs, b->kubelet_url, b->kubelet_token_file,
				   b->kubelet_ca_file, b->ecs_agent_url, b->ecs_metadata_url };

	for (size_t i = 0; i < ARRAY_SIZE(sa); i++)
		if ((sa[i] || sb[i]) && (!sa[i] || !sb[i] || strcmp(sa[i], sb[i])))
			return 0;
	return a->kubelet_refresh_ns == b->kubelet_refresh_ns && a->ecs_refresh_ns == b->ecs_refresh_ns &&
	       a->kubelet_pod_labels == b->kubelet_pod_labels;
}

int host_configure(struct host *h, const struct cfg *cfg)
{
	const struct container_opts want = host_cfg_ctr(&cfg->host);
	struct containers *next = containers_new(&want); /* want with its defaults filled in */
	int sysfs_moved = strcmp(h->sysfs, cfg->sysfs ? cfg->sysfs : "/sys") != 0;
	int changed = host_set_roots(h, cfg->procfs, cfg->sysfs);

	if (ctr_opts_same(containers_opts(next), containers_opts(h->ct))) {
		containers_free(next);
	} else {
		host_names_stop(h);
		host_names_start(h, next);
		changed = 1;
	}
	host_podres_apply(h, cfg->host.pod_resources_socket, want.kubelet_refresh_ns);
	host_jobmap_apply(h, cfg->host.hpc_job_mapping_dir);
	/* The metadata service: asked afresh when its mode or the facts it is decided on (sysfs) changed. */
	if (h->inst && (sysfs_moved || cfg->host.instance_mode != h->inst_mode)) {
		instance_free(h->inst);
		h->inst_mode = cfg->host.instance_mode;
		h->inst = instance_new(h->loop, h->http, h->inst_refresh_ns, (enum instance_mode)h->inst_mode, h->sysfs);
	}
	return changed;
}

const char *host_procfs(const struct host *h)
{
	return h->procfs;
}

const char *host_sysfs(const struct host *h)
{
	return h->sysfs;
}

const struct container_opts *host_container_opts(const struct host *h)
{
	return containers_opts(h->ct);
}

long host_clk_tck(const struct host *h)
{
	return h->clk_tck;
}

long host_page_size(const struct host *h)
{
	return h->page_size;
}

int host_ncpu(const struct host *h)
{
	return h->ncpu;
}

/* ---- the snapshot ------------------------------------------------------------------------------------ */

static int energy_alive(void *ud, uint32_t pid, uint64_t start);

void host_snapshot(struct host *h, const struct cycle *cy)
{
	size_t keep = 0;

	(void)cy; /* what is read in the snapshot is read when first asked for, not at cy */
	h->snap++;
	h->ndm = 0;
	h->dm_known = 0;
	/* Identities not asked for in the last snapshot are let go; the others are checked when asked. */
	for (size_t i = 0; i < h->nim; i++) {
		if (h->im[i].snap == h->snap - 1) {
			h->im[keep++] = h->im[i];
		} else {
			json_decref(h->im[i].ident);
			free(h->im[i].d);
		}
	}
	if (keep != h->nim) {
		h->nim = keep;
		hindex_clear(&h->imi);
		for (size_t i = 0; i < h->nim; i++)
			hindex_put(&h->imi, hash_bytes(0, &h->im[i].pid, sizeof(pid_t)), (uint32_t)i);
	}
	if (h->energy) /* the processes that exited leave the energy ledger */
		energy_ledger_forget(h->energy, energy_alive, h);
	host_jobmap(h); /* the scheduler's files as of this cycle, their errors logged when they come */
}

/* ---- processes --------------------------------------------------------------------------------------- */

int host_procfs_open(struct host *h)
{
	if (h->pf.dirfd >= 0)
		return 0;
	return procfs_open(&h->pf, h->procfs);
}

int host_processes(struct host *h, struct proc_info **procs, size_t *n)
{
	int rc = proctab_refresh(&h->procs, h->snap);

	*procs = h->procs.p;
	*n = h->procs.n;
	return rc;
}

int host_process(struct host *h, pid_t pid, struct proc_info **out)
{
	return proctab_get(&h->procs, h->snap, pid, out);
}

int host_process_live(struct host *h, pid_t pid, struct proc_info **out)
{
	return proctab_get_live(&h->procs, h->snap, pid, out);
}

int host_process_descends(struct host *h, pid_t pid, pid_t ancestor)
{
	struct proc_info *p;

	if (ancestor <= 0 || pid == ancestor)
		return 0;
	for (int depth = 0; depth < HOST_DESCENT_MAX && pid > 1; depth++) {
		if (host_process(h, pid, &p) || !p || p->ppid <= 0)
			return 0;
		if (p->ppid == ancestor)
			return 1;
		pid = p->ppid;
	}
	return 0;
}

const char *host_process_argv0(struct host *h, struct proc_info *p)
{
	return proctab_argv0(&h->procs, p);
}

int64_t host_container_names(struct host *h, const struct container_id *id, int64_t now, struct container_names *out)
{
	int64_t until = containers_names(h->ct, id, now, out);

	/* What the files did not say, the kubelet may: a pod's names, a container's name in it. */
	if (h->kl && id->pod_uid[0] && (!out->pod[0] || !out->ns[0] || (id->id[0] && !out->name[0]))) {
		kubelet_names(h->kl, id->pod_uid, id->id, now, out);
		until = INT64_MIN; /* the kubelet's answer changes by itself */
	}
	/* An ECS task's, or a container outside Kubernetes that the agent may have started. */
	if (h->ecs && !id->pod_uid[0] && (id->ecs_task[0] || id->id[0])) {
		ecs_names(h->ecs, id, now, out);
		until = INT64_MIN;
	}
	return until;
}

uint64_t host_names_gen(const struct host *h)
{
	return containers_gen(h->ct);
}

/* Does the monitor see its own cgroup as "/" (it runs in a cgroup namespace)? Read once. */
static int self_in_root(struct host *h)
{
	if (h->self_root < 0) {
		const char *text = host_procfs_open(h) == 0 ? procfs_read(&h->pf, "self/cgroup") : NULL;
		struct container_id id;

		container_from_proc_cgroup(text, &id); /* no text: -ENOENT, and ns_root 0 */
		h->self_root = id.ns_root;
	}
	return h->self_root;
}

/*
 * What a process's identity says once the monitor's own is known (the ECS
 * metadata endpoint's container, else the downward API's pod), when the
 * monitor runs in a cgroup namespace: a process seen as "/" shares the
 * monitor's cgroup, one a level above it ("/../<id>") is in the monitor's
 * task or pod. false when id is the host's.
 */
static bool identity(struct host *h, const struct container_id *id, int64_t now, struct container_id *out)
{
	struct container_id self;
	bool have_self = false;

	*out = *id;
	if (!id->ns_root && id->ns_up != 1)
		return true;
	if (self_in_root(h)) {
		if (h->ecs && ecs_self(h->ecs, now, &self) == 0) {
			have_self = true;
		} else if (h->self_pod_uid[0]) {
			memset(&self, 0, sizeof(self));
			memcpy(self.pod_uid, h->self_pod_uid, sizeof(self.pod_uid));
			have_self = true;
		}
	}
	if (id->ns_root) {
		if (!have_self)
			return false;
		*out = self;
	} else if (have_self) {
		if (!out->ecs_task[0])
			memcpy(out->ecs_task, self.ecs_task, sizeof(out->ecs_task));
		if (!out->pod_uid[0])
			memcpy(out->pod_uid, self.pod_uid, sizeof(out->pod_uid));
	}
	return true;
}

/*
 * Process pid's identity and names into *id and *n (zeroed first) at now.
 * 1, or 0 when it has none (host, gone). *start: its start time (0: gone);
 * *until: until when the same process keeps the same identity while
 * host_names_gen stays the same (its cgroup is read once; its names as
 * host_container_names says; an id seen from a cgroup namespace as the
 * monitor's own asks every time).
 */
static int container_of(struct host *h, pid_t pid, int64_t now, struct container_id *id, struct container_names *n,
			uint64_t *start, int64_t *until)
{
	struct proc_info *p = NULL;
	const struct container_id *pid_id;

	memset(id, 0, sizeof(*id));
	memset(n, 0, sizeof(*n));
	*start = 0;
	*until = INT64_MIN;
	if (host_process_live(h, pid, &p) || !p)
		return 0;
	*start = p->starttime;
	pid_id = proctab_container(&h->procs, p);
	if (!pid_id) {
		if (!errno) /* none: the process is the host's, for as long as it lives */
			*until = INT64_MAX;
		return 0;
	}
	if (!identity(h, pid_id, now, id))
		return 0;
	*until = host_container_names(h, id, now, n);
	if (pid_id->ns_root || pid_id->ns_up == 1) /* identity() asked for the monitor's own */
		*until = INT64_MIN;
	if (h->self_pod_uid[0] && !strcmp(id->pod_uid, h->self_pod_uid)) {
		if (!n->pod[0])
			memcpy(n->pod, h->self_pod, sizeof(h->self_pod));
		if (!n->ns[0])
			memcpy(n->ns, h->self_ns, sizeof(h->self_ns));
	}
	return 1;
}

/*
 * Process pid's identity in the snapshot (always an entry; have 0 when it
 * has none), worked out once per process and snapshot: every device group
 * with processes, and each runtime's energy join, asks again for the same
 * processes. From one snapshot to the next an identity holds while the
 * process is the same (its start time), until the time container_of gave
 * and while the names' generation is the same; then it is worked out again
 * (the process read again, its names asked for), and the entry's object
 * kept while it says the same. The entry is borrowed: it moves when another
 * process's is added.
 */
static struct ident_memo *memo_of(struct host *h, pid_t pid)
{
	uint64_t hv = hash_bytes(0, &pid, sizeof(pid));
	struct hindex_iter it;
	struct ident_memo *m = NULL;
	struct ident_data cur;
	struct proc_info *p;
	uint64_t start;
	int64_t now, until;
	int have;

	for (uint32_t i = hindex_first(&h->imi, hv, &it); i != HINDEX_NONE && !m; i = hindex_next(&h->imi, hv, &it))
		if (h->im[i].pid == pid)
			m = &h->im[i];
	if (m && m->snap == h->snap)
		return m;
	now = clock_mono_ns();
	if (m && now < m->until && m->ct_gen == host_names_gen(h) && host_process_live(h, pid, &p) == 0 && p &&
	    p->starttime == m->start) {
		m->snap = h->snap;
		return m;
	}
	have = container_of(h, pid, now, &cur.id, &cur.n, &start, &until);
	if (!m) {
		if (h->nim == h->aim) {
			h->aim = h->aim ? h->aim * 2 : 64;
			h->im = xrealloc(h->im, h->aim * sizeof(*h->im));
		}
		m = &h->im[h->nim];
		memset(m, 0, sizeof(*m));
		m->pid = pid;
		m->have = -1; /* nothing to compare with */
		hindex_put(&h->imi, hv, (uint32_t)h->nim++);
	}
	m->snap = h->snap;
	m->start = start;
	m->until = until;
	m->ct_gen = host_names_gen(h);
	if (m->have == have && (!have || !memcmp(m->d, &cur, sizeof(cur))))
		return m;
	h->ident_gen++;
	json_decref(m->ident);
	m->ident = NULL;
	m->have = have;
	if (have) {
		if (!m->d)
			m->d = xmalloc(sizeof(*m->d));
		*m->d = cur;
	}
	return m;
}

json_t *host_container_json(struct host *h, pid_t pid)
{
	struct ident_memo *m = memo_of(h, pid);

	if (m->have > 0 && !m->ident)
		m->ident = container_json(&m->d->id, &m->d->n);
	return json_incref(m->ident);
}

const struct container_id *host_container_id(struct host *h, pid_t pid)
{
	struct ident_memo *m = memo_of(h, pid);

	return m->have > 0 ? &m->d->id : NULL;
}

/* struct ident_cb's lookup over the host: the snapshot's memo, which no other lookup moves before it is used. */
static int lookup(void *ud, pid_t pid, const struct container_id **id, const struct container_names **n)
{
	static const struct ident_data none;
	struct ident_memo *m = memo_of(ud, pid);
	const struct ident_data *d = m->have > 0 ? m->d : &none;

	*id = &d->id;
	*n = &d->n;
	return m->have > 0;
}

/* struct ident_cb's pod over the host: a pod entry of the identities, entered and with its labels. */
static void pod_entry(void *ud, const char *uid, const char *ns, const char *pod, json_t *entry)
{
	struct host *h = ud;

	podmeta_add(h->pods, uid, ns, pod);
	podmeta_labels(h->kl, uid, entry, clock_mono_ns());
}

/*
 * Whether the identities of pids[0..n) are the last ones made: the same
 * pids in the same order, no identity among this snapshot's that differs
 * from its memo (each pid's was worked out before), and no pod labels
 * (the kubelet's answer, and the owners' pods added to the last object,
 * change without a process changing).
 */
static int made_holds(const struct host *h, const pid_t *pids, size_t n)
{
	return h->made_ok && h->made == h->last_ids && h->made_gen == h->ident_gen && n == h->made_n &&
	       (!h->kl || kubelet_labels_max(h->kl) <= 0) && (!n || !memcmp(pids, h->made_pids, n * sizeof(*pids)));
}

json_t *host_identities(struct host *h, const pid_t *pids, size_t n)
{
	struct ident_cb cb = { .lookup = lookup, .pod = pod_entry, .ud = h };
	json_t *ids;

	for (size_t i = 0; i < n; i++) /* each identity as of this snapshot: one that changed counts in ident_gen */
		if (pids[i] > 0 && pids[i] <= IDENT_PID_MAX)
			memo_of(h, pids[i]);
	if (made_holds(h, pids, n))
		return json_incref(h->last_ids); /* written by the last report and not changed since */
	podmeta_reset(h->pods);
	ids = containers_identities(pids, n, &cb, h->ids_last);
	/* A container new on a device may hold devices the last List did not list: ask again. */
	if (cb.new_containers)
		podres_kick(h->pr);
	json_decref(h->last_ids);
	h->last_ids = json_incref(ids);
	if (n > h->made_cap) {
		h->made_cap = n;
		h->made_pids = xrealloc(h->made_pids, n * sizeof(*pids));
	}
	if (n)
		memcpy(h->made_pids, pids, n * sizeof(*pids));
	h->made_n = n;
	h->made_gen = h->ident_gen;
	h->made = ids;
	h->made_ok = 1;
	return ids;
}

/* struct owner_pods' uid over the host: the report's processes' pods, then the kubelet's list. */
static const char *owner_uid(void *ud, const char *ns, const char *pod)
{
	struct host *h = ud;

	return podmeta_uid(h->pods, h->kl, ns, pod, clock_mono_ns());
}

json_t *host_allocations(struct host *h, const struct dev_ident *devs, size_t n)
{
	const struct owner_pods pods = { owner_uid, h };
	const struct jobmap *jm = host_jobmap(h);
	const char *pe = podres_error(h->pr), *je = jm ? jobmap_error(jm) : NULL;
	char err[1024];
	json_t *a;
	int fresh;

	if (!h->pr && !jm)
		return NULL;
	if (!h->own)
		h->own = owners_new();
	/* Each source's error, the pod-resources client's first. */
	snprintf(err, sizeof(err), "%s%s%s", pe, *pe && je ? "; " : "", je ? je : "");
	owners_check_allocatable(h->own, devs, n, podres_allocatable(h->pr));
	a = owners_report(h->own, devs, n, podres_current(h->pr), podres_updates(h->pr), jm, &pods, err, &fresh);
	if (fresh)
		podres_kick(h->pr);
	return a;
}

json_t *host_owner_pods(struct host *h)
{
	size_t n;
	const struct owner_pod *op = owners_pods(h->own, &n);
	json_t *made = podmeta_owner_pods(h->pods, h->kl, op, n, h->last_ids, clock_mono_ns());

	if (made)
		h->last_ids = json_incref(made);
	return made;
}

/* ---- measuring a process ----------------------------------------------------------------------------- */

void host_meter_start(const struct host *h, struct proc_meter *m, const struct proc_info *p, const struct cycle *cy,
		      int prime)
{
	memset(m, 0, sizeof(*m));
	m->pid = p->pid;
	m->starttime = p->starttime;
	m->utime = p->utime;
	m->stime = p->stime;
	if (prime) {
		m->base_utime = p->utime;
		m->base_stime = p->stime;
		m->base_vcpu_ns = m->base_mem_ns = cy->boot_ns;
	} else {
		/* Born (or renamed) since the last look: measured from its start, CPU time from 0. */
		int64_t start = (int64_t)(p->starttime * (uint64_t)(NS_PER_S / h->clk_tck));

		m->base_vcpu_ns = m->base_mem_ns = start < cy->boot_ns ? start : cy->boot_ns;
	}
}

void host_meter_sample(struct proc_meter *m, const struct proc_info *p)
{
	m->utime = p->utime;
	m->stime = p->stime;
}

static void meter_vcpu(const struct host *h, struct proc_meter *m, const struct cycle *cy, json_t *g)
{
	double elapsed = (double)(cy->boot_ns - m->base_vcpu_ns) / 1e9;
	double cap = elapsed * (double)h->clk_tck * h->ncpu / 100.0;
	double user, sys;

	json_object_set_new(g, "period", json_real(elapsed));
	if (cap <= 0 || m->utime < m->base_utime || m->stime < m->base_stime) {
		set_error(g, "no CPU time interval yet");
	} else {
		/*
		 * CPU time is accounted in whole ticks, so a process busy on every
		 * CPU can read a hair over 100 % of a short period: clamp the sum.
		 */
		user = (double)(m->utime - m->base_utime) / cap;
		sys = (double)(m->stime - m->base_stime) / cap;
		if (user + sys > 100.0) {
			double k = 100.0 / (user + sys);

			user *= k;
			sys *= k;
		}
		json_object_set_new(g, "vcpu_usage", json_pack("{s:f, s:f}", "user", user, "system", sys));
	}
	m->base_utime = m->utime;
	m->base_stime = m->stime;
	m->base_vcpu_ns = cy->boot_ns;
}

static void meter_mem(struct host *h, struct proc_meter *m, const struct cycle *cy, json_t *g)
{
	char path[32];
	const char *text;
	uint64_t pages, dev;
	int have_dev;

	json_object_set_new(g, "period", json_real((double)(cy->boot_ns - m->base_mem_ns) / 1e9));
	m->base_mem_ns = cy->boot_ns;
	snprintf(path, sizeof(path), "%d/statm", (int)m->pid);
	text = host_procfs_open(h) == 0 ? procfs_read(&h->pf, path) : NULL;
	if (!text || procfs_parse_statm_rss(text, &pages)) {
		set_error(g, "cannot read %s: %s", path, text ? "unexpected format" : strerror(errno));
		return;
	}
	have_dev = host_devmem(h, m->pid, &dev) == 0;
	json_object_set_new(g, "runtime_used_bytes",
			    json_pack("{s:I, s:o}", "host", (json_int_t)(pages * (uint64_t)h->page_size), "device",
				      have_dev ? json_integer((json_int_t)dev) : json_null()));
}

void host_meter_group(struct host *h, struct proc_meter *m, enum group_id id, const struct cycle *cy, json_t *g)
{
	if (id == GROUP_RUNTIME_VCPU_USAGE)
		meter_vcpu(h, m, cy, g);
	else if (id == GROUP_MEMORY_USED)
		meter_mem(h, m, cy, g);
	else
		set_error(g, "%s is not available for process runtimes", group_name(id));
}

static int is_process_group(enum group_id id)
{
	return id == GROUP_RUNTIME_VCPU_USAGE || id == GROUP_MEMORY_USED;
}

int host_process_sample(struct host *h, struct proc_meter *m, pid_t pid, const struct cycle *cy,
			const enum group_id *due, size_t ndue, json_t *report)
{
	struct proc_info *p = NULL;
	size_t np = 0;
	int rc;

	for (size_t k = 0; k < ndue; k++)
		np += is_process_group(due[k]);
	if (!np)
		return 0;
	rc = host_process(h, pid, &p);
	if (rc)
		return rc;
	if (!p || p->state == 'Z' || p->state == 'X') /* an exited process is gone */
		return -ESRCH;
	if (m->pid != p->pid || m->starttime != p->starttime)
		host_meter_start(h, m, p, cy, 0);
	host_meter_sample(m, p);
	for (size_t k = 0; k < ndue; k++) {
		json_t *g;

		if (!is_process_group(due[k]))
			continue;
		g = group_new(0, cy->iso);
		host_meter_group(h, m, due[k], cy, g);
		json_object_set_new(report, group_name(due[k]), g);
	}
	return 0;
}

/* ---- sockets ----------------------------------------------------------------------------------------- */

pid_t host_listener(struct host *h, struct sock_owner *o, int64_t now_ns)
{
	if (!o->local || host_procfs_open(h))
		return 0;
	return sock_owner_find(o, &h->socks, &h->pf, now_ns);
}

/* ---- device memory by process ------------------------------------------------------------------------ */

/* Process pid uses bytes on the devices (summed). */
static void devmem_add(struct host *h, pid_t pid, uint64_t bytes)
{
	h->dm_known = 1;
	for (size_t i = 0; i < h->ndm; i++)
		if (h->dm[i].pid == pid) {
			h->dm[i].bytes += bytes;
			return;
		}
	if (h->ndm == h->adm) {
		h->adm = h->adm ? h->adm * 2 : 16;
		h->dm = xrealloc(h->dm, h->adm * sizeof(*h->dm));
	}
	h->dm[h->ndm].pid = pid;
	h->dm[h->ndm++].bytes = bytes;
}

void host_devmem_take(struct host *h, struct proc_devmem_list *l)
{
	if (l->known)
		h->dm_known = 1;
	for (size_t i = 0; i < l->n; i++)
		devmem_add(h, l->p[i].pid, l->p[i].bytes);
	l->n = 0;
	l->known = 0;
}

int host_devmem(const struct host *h, pid_t pid, uint64_t *bytes)
{
	*bytes = 0;
	if (!h->dm_known)
		return -ENOENT;
	for (size_t i = 0; i < h->ndm; i++)
		if (h->dm[i].pid == pid)
			*bytes = h->dm[i].bytes;
	return 0;
}

/* ---- device facts ------------------------------------------------------------------------------------ */

void host_facts_want(struct host *h, const char *device_type, int delta)
{
	facts_want(&h->facts, device_type, delta);
}

int host_facts_wanted(const struct host *h, const char *device_type)
{
	return facts_wanted(&h->facts, device_type);
}

void host_facts_publish(struct host *h, const void *owner, const struct fact *f, size_t n)
{
	facts_set(&h->facts, owner, f, n);
}

const struct fact *host_facts_next(const struct host *h, const char *device_type, int64_t now, size_t *pos)
{
	return facts_next(&h->facts, device_type, now, pos);
}

/* ---- HPC jobs --------------------------------------------------------------------------------------- */

const struct jobmap *host_jobmap(struct host *h)
{
	const char *e;

	if (!h->jm || h->jm_snap == h->snap)
		return h->jm;
	h->jm_snap = h->snap;
	jobmap_refresh(h->jm);
	e = jobmap_error(h->jm);
	if (e && (!h->jm_logged || strcmp(e, h->jm_logged))) {
		log_warn("hpc: %s", e);
		free(h->jm_logged);
		h->jm_logged = xstrdup(e);
	} else if (!e && h->jm_logged) {
		log_info("hpc: %s read without errors again", jobmap_dir(h->jm));
		free(h->jm_logged);
		h->jm_logged = NULL;
	}
	return h->jm;
}

/* ---- instance metadata ------------------------------------------------------------------------------- */

struct http_async *host_http(const struct host *h)
{
	return h->http;
}

struct fd_budget *host_fd_budget(const struct host *h)
{
	return h->fdb;
}

int host_instance_ready(const struct host *h)
{
	return !h->inst || instance_ready(h->inst);
}

const char *host_instance_text(const struct host *h)
{
	return h->inst ? instance_text(h->inst) : "{}";
}

struct energy_ledger *host_energy(struct host *h)
{
	if (!h->energy)
		h->energy = energy_ledger_new();
	return h->energy;
}

/* pid's start time in the snapshot: 0 when it cannot be known (not in this procfs, no procfs). */
static uint64_t pid_start(struct host *h, pid_t pid)
{
	struct proc_info *p = NULL;

	return host_process_live(h, pid, &p) == 0 && p ? p->starttime : 0;
}

void host_energy_add(struct host *h, pid_t pid, double j, int64_t now_ns)
{
	energy_ledger_add_process(host_energy(h), (uint32_t)pid, pid_start(h, pid), j, now_ns);
}

/* One observation's attribution (host_energy_attribute). */
static void attribute(struct host *h, struct energy_obs *o)
{
	static const char *const keys[] = { "idle_power_watts", "idle_energy_joules", "active_energy_joules",
					    "energy_attribution", "processes" };
	struct energy_split sp;

	if (!o->have) {
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			json_object_del(o->d, keys[i]);
		return;
	}
	sp = energy_split(o->energy_j, o->period_s, o->idle_w, o->shares, o->n);
	energy_split_json(&sp, o->idle_w, o->shares, o->n, o->d);
	if (!h)
		return;
	if (o->uuid && o->uuid[0]) /* for the endpoint runtimes: their servers' energy over their own periods */
		energy_ledger_add_device(host_energy(h), o->uuid, o->energy_j);
	for (size_t i = 0; i < o->n; i++)
		host_energy_add(h, (pid_t)o->shares[i].pid, o->shares[i].joules, o->now_ns);
}

void host_energy_attribute(struct host *h, struct energy_obs_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		attribute(h, &l->o[i]);
	l->n = 0;
}

/* energy_ledger_forget's question: is the process pid started at start still there? Yes when /proc cannot say. */
static int energy_alive(void *ud, uint32_t pid, uint64_t start)
{
	struct host *h = ud;
	struct proc_info *p = NULL;

	if (host_process_live(h, (pid_t)pid, &p) != 0)
		return 1;
	return p && (!start || p->starttime == start);
}
