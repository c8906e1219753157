/* SPDX-License-Identifier: MIT */
/*
 * Jobs, cycles and the report line; see monitor.h and docs/report-format.md
 * for what a report holds.
 *
 * A configuration becomes units, one opened collector each (collector.h):
 * a system group's, a runtime's, or a "devices" entry's ("auto": one per
 * kind of device found); each unit's groups become jobs on their own
 * periods, each with a loop timer at its due time (once monitor_start armed
 * them). The first of them to fire runs a cycle: it takes every job due
 * within COALESCE_NS (sched.h) and runs its phases in order (enum phase
 * below): the host's groups, the devices, the attribution of their
 * energy, what the devices hold per process, the runtimes (which read
 * that), and the report line.
 */
#include "monitor.h"
#include "../../common/log.h"
#include "../../common/stream.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"
#include "../core/collector.h"
#include "../core/energy.h"
#include "../core/loop.h"
#include "report.h"
#include "../host/host.h"
#include "sched.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* A job's unit when it has none: the heartbeat. */
#define NO_UNIT SIZE_MAX

/*
 * One metric group on its own period: a group of a unit, or the heartbeat.
 * The heartbeat exists only when nothing else is scheduled (e.g. "auto"
 * found no devices): it writes a report with instance_info every root
 * period, so sinks still see a live producer and --count still ends.
 */
struct job {
	struct sched_job sj;
	struct monitor *m;
	size_t unit;        /* its unit, an index in m->units; NO_UNIT: the heartbeat */
	enum group_id id;
	int64_t last_ns;    /* monotonic time of the previous collection */
	/* An asynchronous source's group: its unit's ops and state. */
	const struct collector_ops *async;
	void *astate;
	struct loop_timer due_timer;   /* at sj.next_due: the cycle that collects it (once started) */
	struct loop_timer fetch_timer; /* starts the fetch for the next due cycle */
	struct mon_fetch fetch;
	int64_t wait;                  /* ns the fetch was meant to have */
	int carried;                   /* taken over from the monitor before a reload */
	char late[64];                 /* this cycle: "no answer within X s", or "" */
	char error[512];               /* this cycle: a system group's error from its collector's sample(), or "" */
};

/*
 * One opened collector: a system group's, a runtime's or a "devices"
 * entry's ("auto" becomes one unit per kind of device found), with the
 * configuration it serves (in gen) and this cycle's due jobs.
 */
struct unit {
	const struct collector_ops *ops; /* NULL: no collector of this build serves it (each report says why) */
	enum coll_scope scope;
	size_t entry;                    /* a system group's id; a runtime's or devices entry's index in the cfg */
	const char *name;                /* a device unit's type: the report's device_type */
	const struct cfg_runtime *rt;    /* a runtime's block */
	const struct cfg_device *dev;    /* a devices entry */
	const struct cfg_group *groups;  /* its groups (a system unit: its one) */
	size_t ngroups;
	struct gen *gen;                 /* the generation it was opened in; NULL once handed on */
	void *state;
	size_t old;                      /* its index in the monitor before a reload, or SIZE_MAX */
	struct job *due[GROUP_COUNT];    /* this cycle's due jobs, in the order they were due */
	size_t ndue;
};

struct monitor {
	struct gen *gen;               /* this monitor's configuration */
	const struct cfg *cfg;         /* &gen->cfg */
	const struct collector_ops *const *reg; /* the collectors it opens (collector.h's registry, or a test's) */
	struct loop *loop;
	struct host *host;             /* the producer's host layer (host.h), borrowed */
	struct unit *units;
	size_t nunits, aunits;
	struct job *jobs;
	size_t njobs;
	struct sched sched;
	struct sched_job **taken;
	/*
	 * A cycle's self-timing, one row per collection, as it ran
	 * (timing_put); timing_sum adds up the rows of one collector and group.
	 */
	struct report_timing *timing;
	size_t ntiming;
	struct report_group *system;   /* this cycle's system_data, one group per due system job, in order */
	size_t nsystem;
	uint64_t seq;
	/* monitor_start's: where reports go and whom to tell; started: the jobs' due timers are armed */
	int fd, started;
	monitor_report_fn done;
	void *done_arg;
	struct buf line;
	struct proc_devmem_list devmem; /* what the device collectors' proc_memory handed over this cycle */
	struct energy_obs_list obs;     /* what their energy op handed over this cycle (emptied by the attribution) */
	struct pid_list named;          /* the pids their groups named this cycle (emptied by the identities) */
	struct dev_list devs;           /* the devices their groups reported this cycle (emptied by the owners phase) */
};

static void cycle_now(struct cycle *cy)
{
	cy->mono_ns = clock_mono_ns();
	cy->boot_ns = clock_boot_ns();
	cy->real_ns = clock_real_ns();
	iso8601_format(cy->real_ns, cy->iso);
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
	lead = j->async->fetch_timeout_ns > 0 ? j->async->fetch_timeout_ns : MON_FETCH_TIMEOUT_NS;
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
 * j's due time has come: one cycle collects it and every other group due
 * within COALESCE_NS (their timers are stopped by it), writes the report,
 * and tells the monitor's done.
 */
static void on_due_timer(struct loop_timer *t)
{
	struct job *j = t->data;
	struct monitor *m = j->m;
	int rc = monitor_cycle(m, m->fd, 0);

	if (m->done)
		m->done(m, rc, m->done_arg);
}

/* Arm j's due timer for its next slot, when its monitor is started. */
static void due_arm(struct job *j)
{
	if (j->m->started)
		loop_timer_start(j->m->loop, &j->due_timer, j->sj.next_due, on_due_timer, j);
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

/* The collector's own keys of two blocks (rt->own, dev->own) are the same: compared as --check-config prints them. */
static int own_eq(const struct collector_ops *ops, const void *a, const void *b)
{
	json_t *ja, *jb;
	int eq;

	if (!a && !b)
		return 1;
	if (!a || !b || !ops || !ops->config_print)
		return 0;
	ja = json_object();
	jb = json_object();
	ops->config_print(a, ja);
	ops->config_print(b, jb);
	eq = json_equal(ja, jb);
	json_decref(ja);
	json_decref(jb);
	return eq;
}

/* Does a reload leave this runtime as it was (same address, filter, groups and own keys)? */
static int runtime_eq(const struct monitor *m, const struct cfg_runtime *a, const struct cfg_runtime *b)
{
	return str_eq(a->collector, b->collector) && a->pid == b->pid && str_eq(a->address, b->address) &&
	       str_eq(a->name, b->name) && str_eq(a->tag_filter, b->tag_filter) && a->period_ms == b->period_ms &&
	       groups_eq(a->groups, a->ngroups, b->groups, b->ngroups) &&
	       own_eq(collector_find(m->reg, COLL_RUNTIME, a->collector), a->own, b->own);
}

/* Does a reload leave this "devices" entry as it was? */
static int device_eq(const struct monitor *m, const struct cfg_device *a, const struct cfg_device *b)
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
	return own_eq(collector_find(m->reg, COLL_DEVICE, a->type), a->own, b->own);
}

/* "auto" expands to the same kinds under both configurations: every kind is named explicitly in both or in neither. */
static int auto_same(const struct monitor *m, const struct cfg *a, const struct cfg *b)
{
	for (const struct collector_ops *const *c = m->reg; *c; c++)
		if ((*c)->scope == COLL_DEVICE && !cfg_device_named(a, (*c)->name) != !cfg_device_named(b, (*c)->name))
			return 0;
	return 1;
}

/* How many entries of a scope the configuration has: system groups, runtimes, "devices" entries. */
static size_t cfg_entries(const struct cfg *cfg, enum coll_scope scope)
{
	return scope == COLL_SYSTEM ? cfg->nsystem : scope == COLL_RUNTIME ? cfg->nruntimes : cfg->ndevices;
}

/* The unit that entry i of a scope asks for, not yet opened ("auto": ops NULL until a kind is found). */
static struct unit unit_of(const struct monitor *m, enum coll_scope scope, size_t i)
{
	const struct cfg *cfg = m->cfg;
	struct unit u = { .scope = scope, .old = SIZE_MAX };

	if (scope == COLL_SYSTEM) {
		u.entry = cfg->system[i].id;
		u.ops = collector_group(m->reg, cfg->system[i].id);
		u.groups = &cfg->system[i];
		u.ngroups = 1;
	} else if (scope == COLL_RUNTIME) {
		u.entry = i;
		u.rt = &cfg->runtimes[i];
		u.ops = collector_find(m->reg, COLL_RUNTIME, u.rt->collector);
		u.groups = u.rt->groups;
		u.ngroups = u.rt->ngroups;
	} else {
		u.entry = i;
		u.dev = &cfg->devices[i];
		u.name = u.dev->type;
		u.ops = collector_find(m->reg, COLL_DEVICE, u.dev->type);
		u.groups = u.dev->groups;
		u.ngroups = u.dev->ngroups;
	}
	return u;
}

/* Does old's unit o serve what want asks of the same entry, unchanged? */
static int unit_unchanged(const struct monitor *m, const struct monitor *old, const struct unit *o,
			  const struct unit *want)
{
	if (!o->gen || o->scope != want->scope || o->entry != want->entry)
		return 0;
	switch (want->scope) {
	case COLL_SYSTEM:
		return o->groups[0].period_ms == want->groups[0].period_ms;
	case COLL_RUNTIME:
		return runtime_eq(m, want->rt, o->rt);
	case COLL_DEVICE:
		return device_eq(m, want->dev, o->dev) &&
		       (strcmp(want->dev->type, "auto") || auto_same(m, m->cfg, old->cfg));
	}
	return 0;
}

static struct unit *unit_add(struct monitor *m, const struct unit *u)
{
	if (m->nunits == m->aunits) {
		m->aunits = m->aunits ? 2 * m->aunits : 8;
		m->units = xrealloc(m->units, m->aunits * sizeof(*m->units));
	}
	m->units[m->nunits] = *u;
	return &m->units[m->nunits++];
}

/*
 * Add the units serving want's entry to m: old's, handed on with their
 * collectors, state and schedule when the entry did not change, else new
 * ones ("auto": one per kind of device this host has, but those another
 * entry names).
 */
static void unit_plan(struct monitor *m, struct monitor *old, struct unit want)
{
	int carried = 0;

	for (size_t i = 0; old && i < old->nunits; i++)
		if (unit_unchanged(m, old, &old->units[i], &want)) {
			unit_add(m, &old->units[i])->old = i;
			old->units[i].gen = NULL; /* handed on */
			carried = 1;
		}
	if (carried)
		return;
	if (want.scope != COLL_DEVICE || strcmp(want.dev->type, "auto")) {
		unit_add(m, &want);
		return;
	}
	for (const struct collector_ops *const *c = m->reg; *c; c++)
		if ((*c)->scope == COLL_DEVICE && (*c)->probe && !cfg_device_named(m->cfg, (*c)->name) &&
		    (*c)->probe(&m->gen->env)) {
			want.ops = *c;
			want.name = (*c)->name;
			unit_add(m, &want);
		}
}

/* Open u's collector in m's generation (cy: the moment, a runtime's baseline). */
static void unit_open(struct monitor *m, struct unit *u, const struct cycle *cy)
{
	const struct coll_target t = { .rt = u->rt, .index = u->rt ? u->entry : 0, .dev = u->dev, .cy = cy };

	u->gen = gen_ref(m->gen);
	if (!u->ops || u->ops->open(&m->gen->env, &t, &u->state) == 0)
		return;
	if (u->scope == COLL_SYSTEM)
		log_warn("%s: cannot open its source; it will report the error and retry", group_name(u->entry));
	else if (u->scope == COLL_RUNTIME)
		log_warn("runtime %zu (%s): cannot open its source; it will report the error", u->entry,
			 u->rt->address);
	else
		log_warn("devices (%s): cannot open; each report will say why", u->name);
}

/* old's job of this unit (its index in old) and group, not yet handed on; NULL if none. */
static struct job *old_job(struct monitor *old, size_t unit, enum group_id id)
{
	for (size_t i = 0; old && i < old->njobs; i++) {
		struct job *j = &old->jobs[i];

		if (j->unit == unit && j->id == id && j->m == old)
			return j;
	}
	return NULL;
}

/* Take over old job o's schedule and baseline in j. */
static void job_carry(struct job *j, struct job *o, struct monitor *m)
{
	j->last_ns = o->last_ns;
	j->sj.next_due = o->sj.next_due;
	j->carried = 1;
	o->m = m; /* handed on: old's free leaves it alone */
}

struct monitor *monitor_new(struct cfg *cfg, const struct collector_ops *const *reg, struct loop *loop,
			    struct host *host, struct monitor *old)
{
	struct monitor *m = xcalloc(1, sizeof(*m)), *prev = old;
	struct gen *gen = xcalloc(1, sizeof(*gen));
	size_t n = 0, k = 0;
	struct mon_env *env = &gen->env;
	int same_roots;
	struct cycle cy;

	gen->cfg = *cfg; /* steals */
	memset(cfg, 0, sizeof(*cfg));
	cfg = &gen->cfg;
	m->gen = gen_ref(gen);
	m->cfg = cfg;
	m->reg = reg ? reg : collectors();
	m->loop = loop;
	m->host = host;
	m->seq = old ? old->seq : 0;
	env->host = host;
	env->loop = loop;
	/* The configuration's roots and host options are the host's from now on; the collectors opened below see them. */
	same_roots = !host_configure(host, cfg);
	if (!same_roots || (old && old->reg != m->reg))
		old = NULL; /* everything reads from the roots (with these collectors): nothing carries over */
	/* A request in flight belongs to the old monitor's job; the next fetch starts afresh. */
	for (size_t i = 0; old && i < old->njobs; i++) {
		struct job *o = &old->jobs[i];

		loop_timer_stop(loop, &o->fetch_timer);
		if (o->async && o->fetch.state == FETCH_WAITING)
			o->async->abandon(o->astate, &o->fetch);
		o->fetch.state = FETCH_IDLE;
	}
	buf_init(&m->line, STREAM_DEFAULT_MAX_LINE);
	sched_init(&m->sched);
	/* The units: system groups, runtimes, then devices (probing for "auto"). */
	for (enum coll_scope sc = COLL_SYSTEM; sc <= COLL_DEVICE; sc++)
		for (size_t i = 0; i < cfg_entries(cfg, sc); i++)
			unit_plan(m, old, unit_of(m, sc, i));
	for (size_t u = 0; u < m->nunits; u++)
		n += m->units[u].ngroups;
	m->jobs = xcalloc(n + 1, sizeof(*m->jobs)); /* + 1: room for a heartbeat */
	m->taken = xcalloc(n + 1, sizeof(*m->taken));
	m->timing = xcalloc(n + 1, sizeof(*m->timing));
	m->system = xcalloc(n + 1, sizeof(*m->system));
	cycle_now(&cy);
	host_snapshot(host, &cy); /* what the collectors opened below take as their first sample */
	/* Open the new units; a job per group of each unit (one handed on keeps its schedule). */
	for (size_t u = 0; u < m->nunits; u++) {
		struct unit *un = &m->units[u];

		if (un->old == SIZE_MAX)
			unit_open(m, un, &cy);
		for (size_t g = 0; g < un->ngroups; g++, k++) {
			struct job *j = &m->jobs[k], *o;

			j->unit = u;
			j->id = un->groups[g].id;
			j->sj.period = un->groups[g].period_ms * NS_PER_MS;
			if (un->old != SIZE_MAX && (o = old_job(old, un->old, j->id)))
				job_carry(j, o, m);
			if (un->ops && un->ops->fetch) {
				j->async = un->ops;
				j->astate = un->state;
			}
		}
	}
	if (k == 0) {
		struct job *o = old_job(old, NO_UNIT, 0);

		m->jobs[k].unit = NO_UNIT;
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
	if (prev && prev->started)
		monitor_start(m, prev->fd, prev->done, prev->done_arg);
	monitor_free(prev);
	return m;
}

void monitor_start(struct monitor *m, int fd, monitor_report_fn done, void *arg)
{
	m->fd = fd;
	m->done = done;
	m->done_arg = arg;
	m->started = 1;
	for (size_t i = 0; i < m->njobs; i++)
		due_arm(&m->jobs[i]);
}

void monitor_stop(struct monitor *m)
{
	m->started = 0;
	for (size_t i = 0; i < m->njobs; i++)
		loop_timer_stop(m->loop, &m->jobs[i].due_timer);
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

/* ---- one cycle ---------------------------------------------------------------------------------- */

/*
 * A cycle's phases, in the order monitor_cycle runs them: each one reads
 * what the ones before it left in the cycle's run.
 */
enum phase {
	PHASE_HOST,             /* the host's groups (system_data) */
	PHASE_DEVICES,          /* one device_data entry per device unit with due groups */
	PHASE_ATTRIBUTION,      /* the devices' energy split among their processes, into the host's ledger */
	PHASE_PROCESS_DEVICES,  /* what the devices of this cycle hold per process, by container and for runtimes */
	PHASE_OWNERS,           /* who each device of this cycle is allocated to (the kubelet's pod-resources) */
	PHASE_RUNTIMES,         /* runtime_data: a process's device memory is this cycle's */
	PHASE_REPORT,           /* the report line */
	PHASE_COUNT
};

/* What a cycle collects and where it goes, handed from phase to phase. */
struct cycle_run {
	struct cycle cy;
	size_t ntaken;                  /* jobs due, in m->taken */
	int fd;                         /* where the report line goes */
	struct report report;           /* its JSON parts owned (monitor_cycle frees them) */
	int rc;                         /* PHASE_REPORT's: 0 or -errno from the write */
};

/*
 * Self-timing (docs/report-format.md, "monitor"): what collector u spent on
 * group id since wall0 and cpu0 (CLOCK_MONOTONIC and this thread's CPU time,
 * ns), split evenly over the share groups collected by one call, plus the
 * CPU time its source's loop callbacks took for the group's answer (j's
 * fetch: an endpoint's transfer, decoding and parse), as the cycle's next
 * row; timing_sum adds them up.
 */
static void timing_put(struct monitor *m, const struct unit *u, struct job *j, int64_t wall0, int64_t cpu0,
		       size_t share, int ok)
{
	struct report_timing *r = &m->timing[m->ntiming++];

	r->collector = u->ops ? u->ops->name : u->name;
	r->group = group_name(j->id);
	r->seconds = (double)(clock_mono_ns() - wall0) / 1e9 / (double)share;
	r->cpu_seconds = ((double)(clock_thread_cpu_ns() - cpu0) / (double)share + (double)j->fetch.loop_cpu_ns) / 1e9;
	r->ok = ok;
	j->fetch.loop_cpu_ns = 0; /* counted once */
}

/*
 * The cycle's rows, one per collector and group: the rows of one collector
 * and group (several runtimes of a kind) added up into the first, in the
 * order they ran, and successful when none reported an error. Returns how
 * many; report_write writes them (struct report).
 */
static size_t timing_sum(struct monitor *m)
{
	struct report_timing *t = m->timing;
	size_t n = 0;

	for (size_t i = 0; i < m->ntiming; i++) {
		size_t k = 0;

		while (k < n && (strcmp(t[k].group, t[i].group) || strcmp(t[k].collector, t[i].collector)))
			k++;
		if (k < n) {
			t[k].seconds += t[i].seconds;
			t[k].cpu_seconds += t[i].cpu_seconds;
			t[k].ok = t[k].ok && t[i].ok;
		} else {
			t[n++] = t[i];
		}
	}
	m->ntiming = 0;
	return n;
}

/* The seconds since job j's previous collection, for the group it collects in this cycle. */
static double job_period(const struct job *j, const struct cycle *cy)
{
	return (double)(cy->mono_ns - j->last_ns) / 1e9;
}

static const char *runtime_unsupported_reason(const struct cfg_runtime *rt, char *dst, size_t size)
{
	if (!rt->address[0]) {
		snprintf(dst, size, "Neuron runtime discovery is not supported by this build");
	} else {
		/* The schemes the registry serves, so the message stays true when a collector is added. */
		int n = snprintf(dst, size, "cannot poll \"%s\": this build polls ", rt->address);

		if (n >= 0 && (size_t)n < size)
			n += (int)collector_schemes_list(dst + n, size - (size_t)n);
		if (n >= 0 && (size_t)n < size)
			snprintf(dst + n, size - (size_t)n, " runtimes");
	}
	return dst;
}

/* A runtime entry that says why (no data): on the entry and each due group. */
static void runtime_error_entry(const struct unit *u, const struct cycle *cy, const char *why, json_t *out)
{
	json_t *rep = json_object();

	for (size_t k = 0; k < u->ndue; k++) {
		json_t *g = group_new(job_period(u->due[k], cy), cy->iso);

		set_error(g, "%s", why);
		json_object_set_new(rep, group_name(u->due[k]->id), g);
	}
	json_array_append_new(out, json_pack("{s:I, s:s, s:n, s:s, s:s, s:o}", "runtime_index", (json_int_t)u->entry,
					     "address", u->rt->address, "pid", "runtime_tag", "", "error", why,
					     "report", rep));
}

/*
 * Collect a runtime's due groups. Those of an asynchronous source with no
 * answer (late[k] set) say so: in each entry the source wrote, or in an
 * entry of the monitor's when no group answered.
 */
static void collect_runtime(struct monitor *m, struct unit *u, const struct cycle *cy, const char *const *late,
			    json_t *out)
{
	enum group_id due[GROUP_COUNT];
	size_t nlate = 0, first = json_array_size(out);
	char why[256];
	int64_t wall0 = clock_mono_ns(), cpu0 = clock_thread_cpu_ns();

	for (size_t k = 0; k < u->ndue; k++) {
		nlate += late[k] != NULL;
		due[k] = u->due[k]->id;
	}
	if (!u->ops) {
		runtime_error_entry(u, cy, runtime_unsupported_reason(u->rt, why, sizeof(why)), out);
		return;
	}
	if (nlate && nlate == u->ndue) {
		runtime_error_entry(u, cy, late[0], out);
		return;
	}
	{
		int ok = u->ops->collect(u->state, cy, due, u->ndue, out) == 0;

		for (size_t k = 0; k < u->ndue; k++)
			timing_put(m, u, u->due[k], wall0, cpu0, u->ndue, ok && !late[k]);
	}
	for (size_t e = first; nlate && e < json_array_size(out); e++) {
		json_t *rep = json_object_get(json_array_get(out, e), "report");

		for (size_t k = 0; k < u->ndue && json_is_object(rep); k++) {
			json_t *g;

			if (!late[k])
				continue;
			g = group_new(job_period(u->due[k], cy), cy->iso);
			set_error(g, "%s", late[k]);
			json_object_set_new(rep, group_name(due[k]), g);
		}
	}
}

/*
 * A system group, as the next of the cycle's system_data: sampled into its
 * collector's record, and written from it with the line (struct
 * report_group).
 */
static void collect_system(struct monitor *m, const struct unit *u, struct job *j, const struct cycle *cy)
{
	struct report_group *g = &m->system[m->nsystem++];
	int64_t t0 = clock_mono_ns(), took, cpu0 = clock_thread_cpu_ns();

	*g = (struct report_group){ .name = group_name(j->id), .period = job_period(j, cy), .error = j->error };
	j->error[0] = '\0';
	if (!fetch_settle(j, cy))
		snprintf(j->error, sizeof(j->error), "%s", j->late);
	else if (u->ops)
		report_group_sample(g, u->ops, u->state, cy, j->error, sizeof(j->error));
	else
		snprintf(j->error, sizeof(j->error),
			 "%s needs the Neuron device collector, which this build does not have", group_name(j->id));
	took = clock_mono_ns() - t0;
	timing_put(m, u, j, t0, cpu0, 1, !j->error[0]);
	if (took > j->sj.period)
		log_warn("%s: collection took %.3f s, longer than its period of %.3f s", group_name(j->id),
			 (double)took / 1e9, (double)j->sj.period / 1e9);
}

/* One device_data entry: the unit's due groups. */
static void collect_devices(struct monitor *m, struct unit *u, const struct cycle *cy, json_t *out)
{
	json_t *rep = json_object(), *ent;
	int ent_ok = 0;

	ent = json_pack("{s:s, s:s, s:o}", "device_type", u->name, "error", "", "report", rep);
	if (!u->ops)
		set_error(ent, "%s devices are not supported by this build", u->name);
	else if (u->ops->error && u->ops->error(u->state))
		set_error(ent, "%s", u->ops->error(u->state));
	else
		ent_ok = 1;
	for (size_t k = 0; k < u->ndue; k++) {
		struct job *j = u->due[k];
		json_t *g = group_new(job_period(j, cy), cy->iso);
		int64_t wall0 = clock_mono_ns(), cpu0 = clock_thread_cpu_ns();
		int ok = 0;

		if (!fetch_settle(j, cy))
			set_error(g, "%s", j->late);
		else if (u->ops)
			ok = u->ops->collect(u->state, cy, &j->id, 1, g) == 0;
		else
			set_error(g, "%s devices are not supported by this build", u->name);
		timing_put(m, u, j, wall0, cpu0, 1, ok && ent_ok);
		json_object_set_new(rep, group_name(j->id), g);
	}
	json_array_append_new(out, ent);
}

static void phase_host(struct monitor *m, struct cycle_run *run)
{
	for (size_t i = 0; i < run->ntaken; i++) {
		struct job *j = m->taken[i]->data;

		if (j->unit != NO_UNIT && m->units[j->unit].scope == COLL_SYSTEM)
			collect_system(m, &m->units[j->unit], j, &run->cy);
	}
	run->report.system = m->system;
	run->report.nsystem = m->nsystem;
}

static void phase_devices(struct monitor *m, struct cycle_run *run)
{
	for (size_t u = 0; u < m->nunits; u++)
		if (m->units[u].scope == COLL_DEVICE && m->units[u].ndue)
			collect_devices(m, &m->units[u], &run->cy, run->report.device_data);
}

/*
 * Whether the configuration has a device unit. Without one no process is
 * named, nothing is allocated and no energy is split: the host's device
 * phases (the attribution, the identities, the owners) are not run, and a
 * cycle of the host's groups alone touches none of their code.
 */
static int has_devices(const struct monitor *m)
{
	for (size_t u = 0; u < m->nunits; u++)
		if (m->units[u].scope == COLL_DEVICE)
			return 1;
	return 0;
}

/*
 * One attribution for every device kind: each device collector hands over
 * the processes its groups named and the observations of the device_power
 * it collected this cycle, and the host splits each among the device's
 * processes (which device_power then names too) and keeps the ledger.
 */
static void phase_attribution(struct monitor *m, struct cycle_run *run)
{
	(void)run;
	if (!has_devices(m))
		return;
	for (size_t u = 0; u < m->nunits; u++) {
		const struct unit *un = &m->units[u];

		if (un->scope != COLL_DEVICE || !un->ndue || !un->ops || !un->state)
			continue;
		if (un->ops->processes)
			un->ops->processes(un->state, &m->named);
		if (un->ops->energy)
			un->ops->energy(un->state, &m->obs);
	}
	for (size_t i = 0; i < m->obs.n; i++)
		for (size_t k = 0; m->obs.o[i].have && k < m->obs.o[i].n; k++)
			pid_list_add(&m->named, (pid_t)m->obs.o[i].shares[k].pid);
	host_energy_attribute(m->host, &m->obs);
}

/* The report's members after instance_info ("identities", "allocations"), made on first use. */
static json_t *report_extra(struct cycle_run *run)
{
	if (!run->report.extra)
		run->report.extra = json_object();
	return run->report.extra;
}

/*
 * The identities of the processes this cycle's device groups named, once in
 * the report; and when a runtime's memory_used is due, every device
 * collector records the device memory of each process into the host.
 */
static void phase_process_devices(struct monitor *m, struct cycle_run *run)
{
	json_t *ids = has_devices(m) ? host_identities(m->host, m->named.p, m->named.n) : NULL;
	int need = 0;

	m->named.n = 0;
	if (ids) /* each process's, container's and pod's identity once */
		json_object_set_new(report_extra(run), "identities", ids);
	for (size_t u = 0; u < m->nunits && !need; u++)
		for (size_t k = 0; m->units[u].scope == COLL_RUNTIME && k < m->units[u].ndue; k++)
			need |= m->units[u].due[k]->id == GROUP_MEMORY_USED;
	if (!need)
		return;
	for (size_t u = 0; u < m->nunits; u++) {
		const struct unit *un = &m->units[u];

		if (un->scope == COLL_DEVICE && un->ops && un->ops->proc_memory && un->state)
			un->ops->proc_memory(un->state, &run->cy, &m->devmem);
	}
	host_devmem_take(m->host, &m->devmem);
}

/*
 * The devices this cycle's groups reported, as each collector knows them,
 * and who each is allocated to, once in the report ("allocations"); then
 * the pods only owners name (host_owner_pods).
 */
static void phase_owners(struct monitor *m, struct cycle_run *run)
{
	json_t *a;

	m->devs.n = 0;
	if (!has_devices(m))
		return;
	for (size_t u = 0; u < m->nunits; u++) {
		const struct unit *un = &m->units[u];
		size_t first = m->devs.n;

		if (un->scope != COLL_DEVICE || !un->ndue || !un->ops || !un->ops->devices || !un->state)
			continue;
		un->ops->devices(un->state, &m->devs);
		for (size_t i = first; i < m->devs.n; i++)
			m->devs.d[i].type = un->ops->name;
	}
	if (m->devs.n && (a = host_allocations(m->host, m->devs.d, m->devs.n)))
		json_object_set_new(report_extra(run), "allocations", a);
	if ((a = host_owner_pods(m->host))) /* pods only owners name, with their labels */
		json_object_set_new(report_extra(run), "identities", a);
}

static void phase_runtimes(struct monitor *m, struct cycle_run *run)
{
	for (size_t u = 0; u < m->nunits; u++) {
		struct unit *un = &m->units[u];
		const char *late[GROUP_COUNT];

		if (un->scope != COLL_RUNTIME || !un->ndue)
			continue;
		for (size_t k = 0; k < un->ndue; k++)
			late[k] = fetch_settle(un->due[k], &run->cy) ? NULL : un->due[k]->late;
		collect_runtime(m, un, &run->cy, late, run->report.runtime_data);
	}
}

static void phase_report(struct monitor *m, struct cycle_run *run)
{
	int rc;

	run->report.seq = m->seq;
	run->report.timing = m->timing;
	run->report.ntiming = timing_sum(m);
	rc = report_write(&run->report, &m->line, STREAM_DEFAULT_MAX_LINE);
	if (rc) {
		log_err("report %llu is longer than %u bytes even without its runtimes' data; dropped",
			(unsigned long long)m->seq, STREAM_DEFAULT_MAX_LINE);
		run->rc = 0;
	} else {
		run->rc = write_all(run->fd, m->line.data, m->line.len);
	}
	m->seq++;
}

typedef void phase_fn(struct monitor *m, struct cycle_run *run);

/* What each phase runs; monitor_cycle runs them in enum phase's order. */
static phase_fn *const phases[PHASE_COUNT] = {
	[PHASE_HOST] = phase_host,
	[PHASE_DEVICES] = phase_devices,
	[PHASE_ATTRIBUTION] = phase_attribution,
	[PHASE_PROCESS_DEVICES] = phase_process_devices,
	[PHASE_OWNERS] = phase_owners,
	[PHASE_RUNTIMES] = phase_runtimes,
	[PHASE_REPORT] = phase_report,
};

int monitor_cycle(struct monitor *m, int fd, int all)
{
	struct cycle_run run = { .fd = fd };
	int64_t now;

	cycle_now(&run.cy);
	host_snapshot(m->host, &run.cy); /* the host as of this cycle: processes scanned once, device memory afresh */
	run.ntaken = sched_take(&m->sched, all ? INT64_MAX / 2 : run.cy.mono_ns, COALESCE_NS, m->taken, m->njobs);
	run.report.iso = run.cy.iso;
	run.report.runtime_data = json_array();
	m->nsystem = 0;
	run.report.device_data = json_array();
	run.report.instance_info = host_instance_text(m->host);
	/* Each unit's due jobs, in the order they were due; this cycle is theirs, whichever timer fired. */
	for (size_t u = 0; u < m->nunits; u++)
		m->units[u].ndue = 0;
	for (size_t i = 0; i < run.ntaken; i++) {
		struct job *j = m->taken[i]->data;

		loop_timer_stop(m->loop, &j->due_timer);

		if (j->unit != NO_UNIT) {
			struct unit *u = &m->units[j->unit];

			u->due[u->ndue++] = j;
		}
	}
	for (enum phase p = 0; p < PHASE_COUNT; p++)
		phases[p](m, &run);
	json_decref(run.report.runtime_data);
	json_decref(run.report.device_data);
	json_decref(run.report.extra);

	/* Requeue after the write: a slot that passed meanwhile is skipped, not replayed. */
	now = clock_mono_ns();
	for (size_t i = 0; i < run.ntaken; i++) {
		struct job *j = m->taken[i]->data;
		unsigned skipped;

		j->last_ns = run.cy.mono_ns;
		skipped = sched_requeue(&m->sched, &j->sj, now);
		fetch_arm(j);
		due_arm(j);
		if (skipped && !all) /* --once: there is no next slot to be behind */
			log_warn("%s: behind schedule; skipped %u slot(s) of %.3f s", group_name(j->id), skipped,
				 (double)j->sj.period / 1e9);
	}
	return run.rc;
}

void monitor_free(struct monitor *m)
{
	if (!m)
		return;
	/* Jobs and collectors handed on to a newer monitor (o->m != m, gen NULL) are left alone. */
	for (size_t i = 0; i < m->njobs; i++) {
		struct job *j = &m->jobs[i];

		loop_timer_stop(m->loop, &j->due_timer); /* its own, even handed on: the newer job has another */
		if (j->m != m)
			continue;
		loop_timer_stop(m->loop, &j->fetch_timer);
		if (j->async && j->fetch.state == FETCH_WAITING)
			j->async->abandon(j->astate, &j->fetch);
	}
	for (size_t u = 0; u < m->nunits; u++)
		if (m->units[u].gen) {
			if (m->units[u].ops)
				m->units[u].ops->close(m->units[u].state);
			gen_unref(m->units[u].gen);
		}
	free(m->units);
	free(m->jobs);
	free(m->taken);
	free(m->timing);
	free(m->system);
	free(m->devmem.p);
	energy_obs_free(&m->obs);
	pid_list_free(&m->named);
	dev_list_free(&m->devs);
	sched_free(&m->sched);
	buf_free(&m->line);
	gen_unref(m->gen);
	free(m);
}
