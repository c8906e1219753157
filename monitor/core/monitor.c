/* SPDX-License-Identifier: MIT */
/*
 * Jobs, cycles and the report line; see monitor.h and docs/report-format.md
 * for what a report holds.
 */
#include "monitor.h"
#include "../../common/jsonw.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"
#include "collector.h"
#include "loop.h"
#include "../host/host.h"
#include "sched.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One metric group on its own period: a system group, one runtime's or one device block's group. */
/*
 * JOB_HEARTBEAT exists only when nothing else is scheduled (e.g. "auto" found
 * no devices): it writes a report with instance_info every root period, so
 * sinks still see a live producer and --count still ends.
 */
enum job_kind { JOB_SYSTEM, JOB_RUNTIME, JOB_DEVICE, JOB_HEARTBEAT };

/* A mon_fetch's state. */
enum { FETCH_IDLE, FETCH_WAITING, FETCH_ANSWERED };

/*
 * A configuration and the environment the collectors opened under it see.
 * Collectors borrow both, and a reload hands unchanged collectors on to the
 * next monitor, so a generation lives as long as any collector opened
 * under it (counted in refs), not as long as the monitor that loaded it.
 */
struct gen {
	struct cfg cfg;
	struct mon_env env;
	unsigned refs;
};

struct job {
	struct sched_job sj;
	struct monitor *m;
	struct gen *gen;    /* a system group's collector: the generation it was opened in */
	enum group_id id;
	enum job_kind kind;
	size_t owner;       /* runtime or device block index */
	int64_t last_ns;    /* monotonic time of the previous collection */
	const struct group_ops *ops; /* system groups; NULL when not in this build */
	void *state;
	/* An asynchronous source's group: its ops and state (the runtime's or device block's for those). */
	const struct async_ops *async;
	void *astate;
	struct loop_timer fetch_timer; /* starts the fetch for the next due cycle */
	struct mon_fetch fetch;
	int64_t wait;                  /* ns the fetch was meant to have */
	int carried;                   /* taken over from the monitor before a reload */
	char late[64];                 /* this cycle: "no answer within X s", or "" */
};

struct runtime {
	struct gen *gen;               /* the generation its collector was opened in */
	const struct cfg_runtime *cfg; /* in gen */
	const struct runtime_ops *ops; /* NULL: this build cannot poll the address */
	void *state;
	enum group_id due[GROUP_COUNT];
	struct job *due_job[GROUP_COUNT];
	double due_period[GROUP_COUNT]; /* seconds since each due group's previous collection */
	size_t ndue;
};

/* One kind of device from a "devices" entry ("auto" becomes one block per kind found). */
struct devblock {
	struct gen *gen;               /* the generation its collector was opened in */
	size_t entry;                  /* index of its "devices" entry */
	const struct cfg_device *cfg;  /* in gen */
	const struct device_ops *ops;
	const char *type;
	void *state;
	size_t old;                    /* its index in the monitor before a reload, or SIZE_MAX */
	struct job *due[GROUP_COUNT];
	size_t ndue;
};

struct monitor {
	struct gen *gen;               /* this monitor's configuration */
	const struct cfg *cfg;         /* &gen->cfg */
	struct loop *loop;
	struct host *host;             /* the producer's host layer (host.h), borrowed */
	struct job *jobs;
	size_t njobs;
	struct runtime *rts;
	struct devblock *devs;
	size_t ndevs;
	struct sched sched;
	struct sched_job **taken;
	uint64_t seq;
	struct buf line;
};

static void cycle_now(struct cycle *cy)
{
	cy->mono_ns = clock_mono_ns();
	cy->boot_ns = clock_boot_ns();
	cy->real_ns = clock_real_ns();
	iso8601_format(cy->real_ns, cy->iso);
}

/* monitor_test_group_ops: system groups served by a test's ops instead of the registry's. */
static const struct group_ops *test_group_ops[GROUP_COUNT];

void monitor_test_group_ops(enum group_id id, const struct group_ops *ops)
{
	if ((unsigned)id < GROUP_COUNT)
		test_group_ops[id] = ops;
}

static const struct group_ops *system_ops(enum group_id id)
{
	return test_group_ops[id] ? test_group_ops[id] : group_ops_find(id);
}

/* monitor_test_runtime_ops: runtimes served by a test's ops instead of the registry's. */
static const struct runtime_ops *test_runtime_ops[RT_UNSUPPORTED + 1];

void monitor_test_runtime_ops(enum runtime_kind kind, const struct runtime_ops *ops)
{
	if ((unsigned)kind <= RT_UNSUPPORTED)
		test_runtime_ops[kind] = ops;
}

static const struct runtime_ops *runtime_ops_of(enum runtime_kind kind)
{
	return (unsigned)kind <= RT_UNSUPPORTED && test_runtime_ops[kind] ? test_runtime_ops[kind]
									   : runtime_ops_find(kind);
}

void mon_fetch_done(struct mon_fetch *f)
{
	if (f->state == FETCH_WAITING)
		f->state = FETCH_ANSWERED;
}

/*
 * Ask j's source for the answer that goes into the report written at
 * deadline; wait (ns) is how long it was meant to have (the loop may start
 * it a little late), for the message when it does not answer.
 */
static void fetch_start(struct job *j, int64_t deadline, int64_t wait)
{
	struct mon_fetch *f = &j->fetch;

	loop_timer_stop(j->m->loop, &j->fetch_timer);
	if (f->state == FETCH_WAITING) /* one request at a time: a newer one replaces it */
		j->async->abandon(j->astate, f);
	j->wait = wait;
	*f = (struct mon_fetch){ .loop = j->m->loop, .id = j->id, .started = clock_mono_ns(), .deadline = deadline,
				 .state = FETCH_WAITING };
	if (j->async->fetch(j->astate, f))
		f->state = FETCH_ANSWERED; /* failed at once: collect() reports why */
}

/*
 * How long ahead of its due time j's fetch starts: what the source asks
 * (lead()), at most the period, so it starts no earlier than the previous
 * report; without lead(), the source's timeout, at most half the period.
 */
static int64_t fetch_lead(const struct job *j)
{
	int64_t lead;

	if (j->async->lead) {
		lead = j->async->lead(j->astate, j->id, j->sj.period);
		return lead < 0 ? 0 : lead < j->sj.period ? lead : j->sj.period;
	}
	lead = j->async->timeout_ns > 0 ? j->async->timeout_ns : MON_FETCH_TIMEOUT_NS;
	return lead < j->sj.period / 2 ? lead : j->sj.period / 2;
}

static void on_fetch_timer(struct loop_timer *t)
{
	struct job *j = t->data;

	fetch_start(j, j->sj.next_due, fetch_lead(j));
}


/* Arm j's fetch for its next due cycle. */
static void fetch_arm(struct job *j)
{
	j->fetch.state = FETCH_IDLE;
	if (j->async)
		loop_timer_start(j->m->loop, &j->fetch_timer, j->sj.next_due - fetch_lead(j), on_fetch_timer, j);
}

/*
 * At the due time: is j's answer in? A fetch still waiting is overdue: the
 * source's overdue() may take it (its collect() says why), else it is
 * abandoned and j->late says so; one never started (the loop did not get
 * to it) starts now and gets no time. Returns 1 when j is to be collected.
 */
static int fetch_settle(struct job *j, const struct cycle *cy)
{
	j->late[0] = '\0';
	if (!j->async)
		return 1;
	if (j->fetch.state == FETCH_IDLE)
		fetch_start(j, cy->mono_ns, 0);
	if (j->fetch.state == FETCH_ANSWERED)
		return 1;
	if (j->async->overdue && j->async->overdue(j->astate, &j->fetch) == 0) {
		j->fetch.state = FETCH_IDLE;
		return 1;
	}
	j->async->abandon(j->astate, &j->fetch);
	j->fetch.state = FETCH_IDLE;
	snprintf(j->late, sizeof(j->late), "no answer within %.3g s", (double)((j->wait + NS_PER_MS / 2) / NS_PER_MS) / 1e3);
	return 0;
}

void monitor_fetch_all(struct monitor *m, int64_t deadline, int64_t window)
{
	for (size_t i = 0; i < m->njobs; i++)
		if (m->jobs[i].async)
			fetch_start(&m->jobs[i], deadline, window);
}

static struct gen *gen_ref(struct gen *g)
{
	g->refs++;
	return g;
}

static void gen_unref(struct gen *g)
{
	if (g && --g->refs == 0) {
		cfg_free(&g->cfg);
		free(g);
	}
}

static int str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int groups_eq(const struct cfg_group *a, size_t na, const struct cfg_group *b, size_t nb)
{
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (a[i].id != b[i].id || a[i].period_ms != b[i].period_ms)
			return 0;
	return 1;
}

/* The collector's own keys of two runtimes of one kind are the same: compared as --check-config prints them. */
static int runtime_own_eq(const struct cfg_runtime *a, const struct cfg_runtime *b)
{
	const struct runtime_ops *ops = runtime_ops_find(a->kind);
	json_t *ja = json_object(), *jb = json_object();
	int eq;

	if (a->own && b->own && ops && ops->config_print) {
		ops->config_print(a->own, ja);
		ops->config_print(b->own, jb);
	}
	eq = !a->own == !b->own && json_equal(ja, jb);
	json_decref(ja);
	json_decref(jb);
	return eq;
}

/* Does a reload leave this runtime as it was (same address, filter, groups and own keys)? */
static int runtime_eq(const struct cfg_runtime *a, const struct cfg_runtime *b)
{
	return a->kind == b->kind && a->pid == b->pid && str_eq(a->address, b->address) && str_eq(a->name, b->name) &&
	       str_eq(a->tag_filter, b->tag_filter) && a->period_ms == b->period_ms &&
	       groups_eq(a->groups, a->ngroups, b->groups, b->ngroups) && runtime_own_eq(a, b);
}

/* Does a reload leave this "devices" entry as it was? */
static int own_eq(const struct cfg_device *a, const struct cfg_device *b);

static int device_eq(const struct cfg_device *a, const struct cfg_device *b)
{
	if (!str_eq(a->type, b->type) || a->select_all != b->select_all || a->nindices != b->nindices ||
	    a->nids != b->nids || a->period_ms != b->period_ms ||
	    !groups_eq(a->groups, a->ngroups, b->groups, b->ngroups))
		return 0;
	for (size_t i = 0; i < a->nindices; i++)
		if (a->indices[i] != b->indices[i])
			return 0;
	for (size_t i = 0; i < a->nids; i++)
		if (!str_eq(a->ids[i], b->ids[i]))
			return 0;
	return own_eq(a, b);
}

/* The collector's own keys of two blocks of one type (dev->own) are the same: compared as --check-config prints them. */
static int own_eq(const struct cfg_device *a, const struct cfg_device *b)
{
	const struct device_ops *ops = device_ops_find(a->type);
	json_t *ja, *jb;
	int eq;

	if (!a->own && !b->own)
		return 1;
	if (!a->own || !b->own || !ops || !ops->config_print)
		return 0;
	ja = json_object();
	jb = json_object();
	ops->config_print(a->own, ja);
	ops->config_print(b->own, jb);
	eq = json_equal(ja, jb);
	json_decref(ja);
	json_decref(jb);
	return eq;
}

/* "auto" expands to the same kinds under both configurations: every kind is named explicitly in both or in neither. */
static int auto_same(const struct cfg *a, const struct cfg *b)
{
	const struct device_ops *const *all = device_ops_all();

	for (size_t t = 0; all[t]; t++)
		if (!cfg_device_named(a, all[t]->type) != !cfg_device_named(b, all[t]->type))
			return 0;
	return 1;
}

/* old's job of this kind, owner and group, not yet handed on; NULL if none. */
static struct job *old_job(struct monitor *old, enum job_kind kind, size_t owner, enum group_id id)
{
	for (size_t i = 0; old && i < old->njobs; i++) {
		struct job *j = &old->jobs[i];

		if (j->kind == kind && j->owner == owner && j->id == id && j->m == old)
			return j;
	}
	return NULL;
}

/* Take over old job o's schedule (and its collector, for a system group) in j. */
static void job_carry(struct job *j, struct job *o, struct monitor *m)
{
	j->last_ns = o->last_ns;
	j->sj.next_due = o->sj.next_due;
	j->carried = 1;
	if (o->kind == JOB_SYSTEM) {
		j->state = o->state;
		j->gen = o->gen;
		o->gen = NULL;
	}
	o->m = m; /* handed on: old's free leaves it alone */
}

struct monitor *monitor_new(struct cfg *cfg, struct loop *loop, struct host *host, struct monitor *old)
{
	struct monitor *m = xcalloc(1, sizeof(*m));
	struct gen *gen = xcalloc(1, sizeof(*gen));
	size_t n, k = 0, adevs = 0;
	const struct device_ops *const *all = device_ops_all();
	struct mon_env *env = &gen->env;
	struct monitor *prev = old; /* freed at the end, whatever carries over */
	int same_roots;
	struct cycle cy;

	gen->cfg = *cfg; /* steals */
	memset(cfg, 0, sizeof(*cfg));
	cfg = &gen->cfg;
	m->gen = gen_ref(gen);
	m->cfg = cfg;
	m->loop = loop;
	m->host = host;
	m->seq = old ? old->seq : 0;
	env->host = host;
	env->loop = loop;
	/* The configuration's roots are the host's from now on; the collectors opened below see the host now. */
	same_roots = !host_set_roots(host, cfg->procfs, cfg->sysfs);
	if (!same_roots)
		old = NULL; /* everything reads from the roots: nothing carries over */
	/* A request in flight belongs to the old monitor's job; the next fetch starts afresh. */
	for (size_t i = 0; old && i < old->njobs; i++) {
		struct job *o = &old->jobs[i];

		loop_timer_stop(loop, &o->fetch_timer);
		if (o->async && o->fetch.state == FETCH_WAITING)
			o->async->abandon(o->astate, &o->fetch);
		o->fetch.state = FETCH_IDLE;
	}
	buf_init(&m->line, 64 << 20);
	sched_init(&m->sched);
	n = cfg->nsystem;
	for (size_t i = 0; i < cfg->nruntimes; i++)
		n += cfg->runtimes[i].ngroups;
	/* Device blocks: "auto" becomes one block per kind of device this host has. */
	for (size_t i = 0; i < cfg->ndevices; i++)
		adevs += strcmp(cfg->devices[i].type, "auto") ? 1 : 8;
	for (size_t i = 0; old && i < old->ndevs; i++)
		adevs++; /* an unchanged entry keeps the blocks it had */
	m->devs = xcalloc(adevs, sizeof(*m->devs));
	for (size_t i = 0; i < cfg->ndevices; i++) {
		const struct cfg_device *d = &cfg->devices[i];
		int carried = 0;

		if (old && i < old->cfg->ndevices && device_eq(d, &old->cfg->devices[i]) &&
		    (strcmp(d->type, "auto") || auto_same(cfg, old->cfg)))
			for (size_t b = 0; b < old->ndevs; b++)
				if (old->devs[b].entry == i && old->devs[b].gen) {
					m->devs[m->ndevs] = old->devs[b];
					m->devs[m->ndevs++].old = b;
					old->devs[b].gen = NULL; /* handed on */
					carried = 1;
				}
		if (carried)
			continue;
		if (strcmp(d->type, "auto")) {
			m->devs[m->ndevs++] = (struct devblock){ .entry = i, .cfg = d, .ops = device_ops_find(d->type),
								 .type = d->type, .old = SIZE_MAX };
			continue;
		}
		for (size_t t = 0; all[t] && m->ndevs < adevs; t++)
			if (!cfg_device_named(cfg, all[t]->type) && all[t]->probe(env)) /* explicit wins */
				m->devs[m->ndevs++] = (struct devblock){ .entry = i, .cfg = d, .ops = all[t],
									 .type = all[t]->type, .old = SIZE_MAX };
	}
	for (size_t i = 0; i < m->ndevs; i++)
		n += m->devs[i].cfg->ngroups;
	m->jobs = xcalloc(n + 1, sizeof(*m->jobs)); /* + 1: room for a heartbeat */
	m->taken = xcalloc(n + 1, sizeof(*m->taken));
	m->rts = xcalloc(cfg->nruntimes, sizeof(*m->rts));
	cycle_now(&cy);
	host_snapshot(host, &cy); /* what the collectors opened below take as their first sample */

	for (size_t i = 0; i < cfg->nsystem; i++, k++) {
		struct job *j = &m->jobs[k], *o;

		j->id = cfg->system[i].id;
		j->kind = JOB_SYSTEM;
		j->sj.period = cfg->system[i].period_ms * NS_PER_MS;
		j->ops = system_ops(j->id);
		o = old_job(old, JOB_SYSTEM, 0, j->id);
		if (o && o->ops == j->ops && o->sj.period == j->sj.period) {
			job_carry(j, o, m);
		} else {
			j->gen = gen_ref(gen);
			if (j->ops && j->ops->open(env, &j->state))
				log_warn("%s: cannot open its source; it will report the error and retry",
					 group_name(j->id));
		}
		if (j->ops && j->ops->async) {
			j->async = j->ops->async;
			j->astate = j->state;
		}
	}
	for (size_t r = 0; r < cfg->nruntimes; r++) {
		struct runtime *rt = &m->rts[r];
		int carry = old && r < old->cfg->nruntimes && old->rts[r].gen &&
			    runtime_eq(&cfg->runtimes[r], old->rts[r].cfg);

		if (carry) {
			*rt = old->rts[r];
			old->rts[r].gen = NULL; /* handed on */
		} else {
			rt->gen = gen_ref(gen);
			rt->cfg = &cfg->runtimes[r];
			rt->ops = runtime_ops_of(rt->cfg->kind);
			if (rt->ops && rt->ops->open(env, rt->cfg, r, &cy, &rt->state))
				log_warn("runtime %zu (%s): cannot open its source; it will report the error", r,
					 rt->cfg->address);
		}
		for (size_t g = 0; g < rt->cfg->ngroups; g++, k++) {
			struct job *j = &m->jobs[k], *o;

			j->id = rt->cfg->groups[g].id;
			j->kind = JOB_RUNTIME;
			j->owner = r;
			j->sj.period = rt->cfg->groups[g].period_ms * NS_PER_MS;
			if (carry && (o = old_job(old, JOB_RUNTIME, r, j->id)))
				job_carry(j, o, m);
			if (rt->ops && rt->ops->async) {
				j->async = rt->ops->async;
				j->astate = rt->state;
			}
		}
	}
	for (size_t d = 0; d < m->ndevs; d++) {
		struct devblock *db = &m->devs[d];

		if (db->old == SIZE_MAX) {
			db->gen = gen_ref(gen);
			if (db->ops && db->ops->open(env, db->cfg, &db->state))
				log_warn("devices (%s): cannot open; each report will say why", db->type);
		}
		for (size_t g = 0; g < db->cfg->ngroups; g++, k++) {
			struct job *j = &m->jobs[k], *o;

			j->id = db->cfg->groups[g].id;
			j->kind = JOB_DEVICE;
			j->owner = d;
			j->sj.period = db->cfg->groups[g].period_ms * NS_PER_MS;
			if (db->old != SIZE_MAX && (o = old_job(old, JOB_DEVICE, db->old, j->id)))
				job_carry(j, o, m);
			if (db->ops && db->ops->async) {
				j->async = db->ops->async;
				j->astate = db->state;
			}
		}
	}
	if (k == 0) {
		struct job *o = old_job(old, JOB_HEARTBEAT, 0, 0);

		m->jobs[k].kind = JOB_HEARTBEAT;
		m->jobs[k].sj.period = cfg->period_ms * NS_PER_MS;
		if (o && o->sj.period == m->jobs[k].sj.period)
			job_carry(&m->jobs[k], o, m);
		k++;
		log_info("monitor: nothing to collect; writing an instance-only report every %.3f s",
			 (double)cfg->period_ms / 1e3);
	}
	m->njobs = k;
	/*
	 * New groups are first due one period after their baseline, taken after
	 * opening, so the first period is the real window; groups handed on keep
	 * their schedule and baseline, as if there had been no reload.
	 */
	cycle_now(&cy);
	for (size_t i = 0; i < m->njobs; i++) {
		struct job *j = &m->jobs[i];

		j->m = m;
		j->sj.data = j;
		if (!j->carried) {
			j->last_ns = cy.mono_ns;
			j->sj.next_due = cy.mono_ns + j->sj.period;
		}
		sched_add(&m->sched, &j->sj, j->sj.next_due);
		fetch_arm(j);
	}
	monitor_free(prev);
	return m;
}

int64_t monitor_period(const struct monitor *m)
{
	return m->cfg->period_ms * NS_PER_MS;
}

int64_t monitor_next_due(const struct monitor *m)
{
	return sched_next_due(&m->sched);
}

uint64_t monitor_seq(const struct monitor *m)
{
	return m->seq;
}

static const char *runtime_unsupported_reason(const struct cfg_runtime *rt, char *dst, size_t size)
{
	if (rt->kind == RT_NEURON)
		snprintf(dst, size, "Neuron runtime discovery is not supported by this build");
	else {
		/* The schemes the registry serves, so the message stays true when a collector is added. */
		int n = snprintf(dst, size, "cannot poll \"%s\": this build polls", rt->address);
		const struct runtime_ops *const *all = runtime_ops_all();
		for (size_t i = 0; all[i] && n >= 0 && (size_t)n < size; i++) {
			n += snprintf(dst + n, size - (size_t)n, "%s %s:", i ? "," : "", all[i]->scheme);
			if (all[i]->scheme2 && (size_t)n < size)
				n += snprintf(dst + n, size - (size_t)n, ", %s:", all[i]->scheme2);
		}
		if (n >= 0 && (size_t)n < size)
			snprintf(dst + n, size - (size_t)n, " runtimes");
	}
	return dst;
}

/* A runtime entry that says why (no data): on the entry and each due group. */
static void runtime_error_entry(const struct monitor *m, size_t r, const struct cycle *cy, const char *why,
				json_t *out)
{
	const struct runtime *rt = &m->rts[r];
	json_t *rep = json_object();

	for (size_t k = 0; k < rt->ndue; k++) {
		json_t *g = group_new(rt->due_period[k], cy->iso);

		set_error(g, "%s", why);
		json_object_set_new(rep, group_name(rt->due[k]), g);
	}
	json_array_append_new(out, json_pack("{s:I, s:s, s:n, s:s, s:s, s:o}", "runtime_index", (json_int_t)r,
					     "address", rt->cfg->address, "pid", "runtime_tag", "", "error", why,
					     "report", rep));
}

/* The entry of a runtime this build cannot poll: the reason, on the entry and each due group. */
static void runtime_unsupported(const struct monitor *m, size_t r, const struct cycle *cy, json_t *out)
{
	char why[256];

	runtime_error_entry(m, r, cy, runtime_unsupported_reason(m->rts[r].cfg, why, sizeof(why)), out);
}

/*
 * Collect a runtime's due groups. Those of an asynchronous source with no
 * answer (late[k] set) say so: in each entry the source wrote, or in an
 * entry of the monitor's when no group answered.
 */
static void collect_runtime(struct monitor *m, size_t r, const struct cycle *cy, const char *const *late,
			    json_t *out)
{
	struct runtime *rt = &m->rts[r];
	size_t nlate = 0, first = json_array_size(out);

	for (size_t k = 0; k < rt->ndue; k++)
		nlate += late[k] != NULL;
	if (!rt->ops) {
		runtime_unsupported(m, r, cy, out);
		return;
	}
	if (nlate && nlate == rt->ndue) {
		runtime_error_entry(m, r, cy, late[0], out);
		return;
	}
	rt->ops->collect(rt->state, cy, rt->due, rt->ndue, out);
	for (size_t e = first; nlate && e < json_array_size(out); e++) {
		json_t *rep = json_object_get(json_array_get(out, e), "report");

		for (size_t k = 0; k < rt->ndue && json_is_object(rep); k++) {
			json_t *g;

			if (!late[k])
				continue;
			g = group_new(rt->due_period[k], cy->iso);
			set_error(g, "%s", late[k]);
			json_object_set_new(rep, group_name(rt->due[k]), g);
		}
	}
}

static void collect_system(struct job *j, const struct cycle *cy, json_t *system_data)
{
	json_t *g = group_new((double)(cy->mono_ns - j->last_ns) / 1e9, cy->iso);
	int64_t t0 = clock_mono_ns(), took;

	if (!fetch_settle(j, cy))
		set_error(g, "%s", j->late);
	else if (j->ops)
		j->ops->collect(j->state, cy, g);
	else
		set_error(g, "%s needs the Neuron device collector, which this build does not have",
			  group_name(j->id));
	took = clock_mono_ns() - t0;
	if (took > j->sj.period)
		log_warn("%s: collection took %.3f s, longer than its period of %.3f s", group_name(j->id),
			 (double)took / 1e9, (double)j->sj.period / 1e9);
	json_object_set_new(system_data, group_name(j->id), g);
}

/* One device_data entry: the block's due groups. */
static void collect_devices(struct devblock *db, const struct cycle *cy, int64_t started, json_t *out)
{
	json_t *rep = json_object(), *ent;

	ent = json_pack("{s:s, s:s, s:o}", "device_type", db->type, "error", "", "report", rep);
	if (!db->ops)
		set_error(ent, "%s devices are not supported by this build", db->type);
	else if (db->ops->error && db->ops->error(db->state))
		set_error(ent, "%s", db->ops->error(db->state));
	for (size_t k = 0; k < db->ndue; k++) {
		struct job *j = db->due[k];
		json_t *g = group_new((double)(started - j->last_ns) / 1e9, cy->iso);

		if (!fetch_settle(j, cy))
			set_error(g, "%s", j->late);
		else if (db->ops)
			db->ops->collect(db->state, j->id, cy, g);
		else
			set_error(g, "%s devices are not supported by this build", db->type);
		json_object_set_new(rep, group_name(j->id), g);
	}
	json_array_append_new(out, ent);
}

/*
 * When a runtime's memory_used is due: have every device collector record
 * the device memory of each process into the host.
 */
static void record_device_memory(struct monitor *m, const struct cycle *cy)
{
	int need = 0;

	for (size_t r = 0; r < m->cfg->nruntimes && !need; r++)
		for (size_t k = 0; k < m->rts[r].ndue; k++)
			need |= m->rts[r].due[k] == GROUP_MEMORY_USED;
	if (!need)
		return;
	for (size_t d = 0; d < m->ndevs; d++)
		if (m->devs[d].ops && m->devs[d].ops->proc_memory && m->devs[d].state)
			m->devs[d].ops->proc_memory(m->devs[d].state, cy, m->host);
}

int monitor_cycle(struct monitor *m, int fd, int all)
{
	struct cycle cy;
	size_t n;
	json_t *report, *rdata, *sdata, *ddata;
	int64_t started, now;
	int rc;

	cycle_now(&cy);
	started = cy.mono_ns;
	host_snapshot(m->host, &cy); /* the host as of this cycle: processes scanned once, device memory afresh */
	n = sched_take(&m->sched, all ? INT64_MAX / 2 : cy.mono_ns, COALESCE_NS, m->taken, m->njobs);
	rdata = json_array();
	sdata = json_object();
	ddata = json_array();
	report = json_pack("{s:s, s:{s:s, s:I}, s:o, s:o, s:o, s:o}", "timestamp", cy.iso, "monitor", "version",
			   ACCEL_VERSION, "seq", (json_int_t)m->seq, "runtime_data", rdata, "device_data", ddata,
			   "system_data", sdata, "instance_info", host_instance_json(m->host));

	for (size_t r = 0; r < m->cfg->nruntimes; r++)
		m->rts[r].ndue = 0;
	for (size_t d = 0; d < m->ndevs; d++)
		m->devs[d].ndue = 0;
	for (size_t i = 0; i < n; i++) {
		struct job *j = m->taken[i]->data;

		if (j->kind == JOB_HEARTBEAT) {
			continue;
		} else if (j->kind == JOB_SYSTEM) {
			collect_system(j, &cy, sdata);
		} else if (j->kind == JOB_RUNTIME) {
			struct runtime *rt = &m->rts[j->owner];

			rt->due_period[rt->ndue] = (double)(started - j->last_ns) / 1e9;
			rt->due_job[rt->ndue] = j;
			rt->due[rt->ndue++] = j->id;
		} else {
			struct devblock *db = &m->devs[j->owner];

			db->due[db->ndue++] = j;
		}
	}
	/* Devices before runtimes, so a process's device memory is this cycle's. */
	for (size_t d = 0; d < m->ndevs; d++)
		if (m->devs[d].ndue)
			collect_devices(&m->devs[d], &cy, started, ddata);
	host_annotate_devices(m->host, ddata); /* per-process figures by container and pod */
	record_device_memory(m, &cy);
	for (size_t r = 0; r < m->cfg->nruntimes; r++) {
		struct runtime *rt = &m->rts[r];

		const char *late[GROUP_COUNT];

		if (!rt->ndue)
			continue;
		for (size_t k = 0; k < rt->ndue; k++)
			late[k] = fetch_settle(rt->due_job[k], &cy) ? NULL : rt->due_job[k]->late;
		collect_runtime(m, r, &cy, late, rdata);
	}

	buf_reset(&m->line);
	rc = json_write(report, &m->line);
	json_decref(report);
	if (rc || buf_add(&m->line, "\n", 1)) {
		log_err("report %llu is larger than %zu bytes; dropped", (unsigned long long)m->seq, m->line.cap);
		rc = 0;
	} else {
		rc = write_all(fd, m->line.data, m->line.len);
	}
	m->seq++;

	/* Requeue after the write: a slot that passed meanwhile is skipped, not replayed. */
	now = clock_mono_ns();
	for (size_t i = 0; i < n; i++) {
		struct job *j = m->taken[i]->data;
		unsigned skipped;

		j->last_ns = started;
		skipped = sched_requeue(&m->sched, &j->sj, now);
		fetch_arm(j);
		if (skipped && !all) /* --once: there is no next slot to be behind */
			log_warn("%s: behind schedule; skipped %u slot(s) of %.3f s", group_name(j->id), skipped,
				 (double)j->sj.period / 1e9);
	}
	return rc;
}

void monitor_free(struct monitor *m)
{
	if (!m)
		return;
	/* Jobs and collectors handed on to a newer monitor (o->m != m, gen NULL) are left alone. */
	for (size_t i = 0; i < m->njobs; i++) {
		struct job *j = &m->jobs[i];

		if (j->m != m)
			continue;
		loop_timer_stop(m->loop, &j->fetch_timer);
		if (j->async && j->fetch.state == FETCH_WAITING)
			j->async->abandon(j->astate, &j->fetch);
	}
	for (size_t i = 0; i < m->njobs; i++)
		if (m->jobs[i].gen) {
			if (m->jobs[i].ops)
				m->jobs[i].ops->close(m->jobs[i].state);
			gen_unref(m->jobs[i].gen);
		}
	for (size_t r = 0; r < m->cfg->nruntimes; r++)
		if (m->rts[r].gen) {
			if (m->rts[r].ops)
				m->rts[r].ops->close(m->rts[r].state);
			gen_unref(m->rts[r].gen);
		}
	for (size_t d = 0; d < m->ndevs; d++)
		if (m->devs[d].gen) {
			if (m->devs[d].ops)
				m->devs[d].ops->close(m->devs[d].state);
			gen_unref(m->devs[d].gen);
		}
	free(m->devs);
	free(m->jobs);
	free(m->taken);
	free(m->rts);
	sched_free(&m->sched);
	buf_free(&m->line);
	gen_unref(m->gen);
	free(m);
}
