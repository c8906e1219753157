/* SPDX-License-Identifier: MIT */
/*
 * Process runtimes: "pid:N" (one process) and "process:NAME" (every process
 * whose comm or argv[0] basename is NAME, each its own runtime entry).
 *
 * Groups: runtime_vcpu_usage (user and system CPU time of the process over
 * the period, in percent of the host's total CPU capacity) and memory_used
 * (resident set size in bytes; device memory is filled in by device
 * collectors). Each process keeps its own baseline per group, so a group's
 * "period" is the real time since that group was last collected for that
 * process; a process first seen mid-run is measured from its start time.
 *
 * Processes are picked up and dropped as they start and exit: one that
 * exits between two cycles is reported once with an error, then removed.
 * A (pid, start time) pair identifies a process, so pid reuse is noticed.
 * The processes come from the producer's process table (proctab.h), one
 * scan of /proc per cycle however many runtimes read it; device memory is
 * what device collectors recorded there.
 */
#ifdef ACCEL_ROWS_ONLY
/* ---- rows: the fields this collector writes and their families (common/rows.h) ---- */
#include "../../common/rows.h"

static const struct map_field process_fields[] = {
	FIELD(RUNTIME_VCPU_USAGE, NULL, "vcpu_usage.{user,system}", NULL, NULL),
	FIELD(MEMORY_USED, NULL, "runtime_used_bytes.{host,device}", NULL, NULL),
};

static const struct family process_families[] = {
	GAUGE("runtime_vcpu_usage_ratio",
	      "Runtime process CPU time over the period, as a ratio of host CPU capacity", "ratio"),
	GAUGE("runtime_memory_used_bytes", "Runtime process memory used bytes", "bytes"),
};

static const struct map_rule process_rules[] = {
	{ SC_RUNTIME, "runtime_vcpu_usage", "vcpu_usage.{user,system}", "runtime_vcpu_usage_ratio", "usage_type", NULL,
	  PERCENT, 0 },
	{ SC_RUNTIME, "memory_used", "runtime_used_bytes.{host,device}", "runtime_memory_used_bytes", "memory_location",
	  NULL, 0, 0 },
};

static const struct map_rows process_rows = {
	"process", __FILE__, ROWS_FIELDS(process_fields), ROWS_FAMILIES(process_families), ROWS_RULES(process_rules),
};
#else /* the collector */
#include "../core/collector.h"
#include "../../common/log.h"
#include "../host/procfs.h"
#include "../host/proctab.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct proc_entry {
	pid_t pid;
	uint64_t starttime;  /* ticks since boot: with pid, the identity */
	char tag[64];        /* comm */
	struct pid_stat st;  /* this cycle's sample */
	uint64_t rss_pages;
	int alive;           /* seen in this cycle's scan */
	uint64_t base_utime, base_stime;  /* runtime_vcpu_usage baseline, ticks */
	int64_t base_vcpu_ns;             /* boot clock */
	int64_t base_mem_ns;              /* memory_used: last collection, boot clock */
};

struct proc_state {
	const struct cfg_runtime *rt; /* borrowed */
	size_t index;
	const struct mon_env *env;    /* borrowed */
	struct procfs pf;
	struct proc_entry *e;
	size_t ne, ae;
	int ncpu;
	int scan_error;               /* errno of a failed /proc scan, 0 if fine */
	int pid_filtered;             /* RT_PID: the process exists but tag_filter excludes it */
};

static int64_t ticks_to_ns(const struct proc_state *s, uint64_t ticks)
{
	return (int64_t)(ticks * (uint64_t)(NS_PER_S / s->env->clk_tck));
}

/* Does p's comm or argv[0]'s basename equal name? */
static int process_matches(struct proctab *t, struct proc_info *p, const char *name)
{
	const char *argv0, *base;

	if (!strcmp(p->comm, name))
		return 1;
	argv0 = proctab_argv0(t, p);
	base = strrchr(argv0, '/');
	return *argv0 && strcmp(base ? base + 1 : argv0, name) == 0;
}

static struct proc_entry *entry_find(struct proc_state *s, pid_t pid, uint64_t starttime)
{
	for (size_t i = 0; i < s->ne; i++)
		if (s->e[i].pid == pid && s->e[i].starttime == starttime)
			return &s->e[i];
	return NULL;
}

/* Record a live process; a new one gets its start as baseline. */
static void entry_seen(struct proc_state *s, pid_t pid, const struct pid_stat *ps, const struct cycle *cy,
		       int prime)
{
	struct proc_entry *e = entry_find(s, pid, ps->starttime);

	if (!e) {
		int64_t start = ticks_to_ns(s, ps->starttime);

		if (s->ne == s->ae) {
			s->ae = s->ae ? s->ae * 2 : 8;
			s->e = xrealloc(s->e, s->ae * sizeof(*s->e));
		}
		e = &s->e[s->ne++];
		memset(e, 0, sizeof(*e));
		e->pid = pid;
		e->starttime = ps->starttime;
		snprintf(e->tag, sizeof(e->tag), "%s", ps->comm);
		utf8_sanitize(e->tag);
		if (prime) {
			e->base_utime = ps->utime;
			e->base_stime = ps->stime;
			e->base_vcpu_ns = e->base_mem_ns = cy->boot_ns;
		} else {
			/* Born (or renamed) since the last scan: measure from its start. */
			e->base_vcpu_ns = e->base_mem_ns = start < cy->boot_ns ? start : cy->boot_ns;
		}
	}
	e->st = *ps;
	e->alive = 1;
}

static int tag_ok(const struct proc_state *s, const char *tag)
{
	return !s->rt->tag_filter || regexec(&s->rt->tag_re, tag, 0, NULL, 0) == 0;
}

/* A process that has exited (a zombie, or being reaped) is gone. */
static int alive(const struct proc_info *p)
{
	return p->state != 'Z' && p->state != 'X';
}

static struct pid_stat stat_of(const struct proc_info *p)
{
	struct pid_stat ps = { .state = p->state, .utime = p->utime, .stime = p->stime, .starttime = p->starttime };

	snprintf(ps.comm, sizeof(ps.comm), "%s", p->comm);
	return ps;
}

/* Find the runtime's processes in this cycle's process table; mark entries alive or not. */
static void scan(struct proc_state *s, const struct cycle *cy, int prime)
{
	struct proctab *t = s->env->procs;
	struct pid_stat ps;

	s->scan_error = 0;
	for (size_t i = 0; i < s->ne; i++)
		s->e[i].alive = 0;
	if (s->rt->kind == RT_PID) {
		struct proc_info *p;
		int rc = proctab_get(t, cy->mono_ns, s->rt->pid, &p);

		s->pid_filtered = 0;
		if (rc) {
			s->scan_error = -rc;
			return;
		}
		if (p && alive(p)) {
			ps = stat_of(p);
			if (tag_ok(s, ps.comm))
				entry_seen(s, s->rt->pid, &ps, cy, prime);
			else
				s->pid_filtered = 1;
		}
		return;
	}
	if (proctab_refresh(t, cy->mono_ns)) {
		s->scan_error = t->error;
		return;
	}
	for (size_t i = 0; i < t->n; i++) {
		struct proc_info *p = &t->p[i];

		if (!alive(p) || !process_matches(t, p, s->rt->name) || !tag_ok(s, p->comm))
			continue;
		ps = stat_of(p);
		entry_seen(s, p->pid, &ps, cy, prime);
	}
}

static int proc_open(const struct mon_env *env, const struct cfg_runtime *rt, size_t index,
		     const struct cycle *cy, void **state)
{
	struct proc_state *s = xcalloc(1, sizeof(*s));
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	int rc;

	s->rt = rt;
	s->index = index;
	s->env = env;
	s->ncpu = n > 0 ? (int)n : 1;
	*state = s;
	rc = procfs_open(&s->pf, env->procfs);
	if (rc == 0)
		scan(s, cy, 1);
	return rc;
}

static json_t *entry_json(const struct proc_state *s, pid_t pid, const char *tag)
{
	return json_pack("{s:I, s:s, s:I, s:s, s:s, s:o}", "runtime_index", (json_int_t)s->index, "address",
			 s->rt->address, "pid", (json_int_t)pid, "runtime_tag", tag, "error", "", "report",
			 json_object());
}

/* The entry's "container" (container.h) when its process is in a container, pod or unit. */
static void add_container(const struct proc_state *s, pid_t pid, const struct cycle *cy, json_t *ent)
{
	json_t *c = s->env->procs ? proctab_container_json_pid(s->env->procs, cy->mono_ns, pid) : NULL;

	if (c)
		json_object_set_new(ent, "container", c);
}

static void collect_vcpu(struct proc_state *s, struct proc_entry *e, const struct cycle *cy, json_t *g)
{
	double elapsed = (double)(cy->boot_ns - e->base_vcpu_ns) / 1e9;
	double cap = elapsed * (double)s->env->clk_tck * s->ncpu / 100.0;
	double user, sys;

	json_object_set_new(g, "period", json_real(elapsed));
	if (cap <= 0 || e->st.utime < e->base_utime || e->st.stime < e->base_stime) {
		set_error(g, "no CPU time interval yet");
	} else {
		/*
		 * CPU time is accounted in whole ticks, so a process busy on every
		 * CPU can read a hair over 100 % of a short period: clamp the sum.
		 */
		user = (double)(e->st.utime - e->base_utime) / cap;
		sys = (double)(e->st.stime - e->base_stime) / cap;
		if (user + sys > 100.0) {
			double k = 100.0 / (user + sys);

			user *= k;
			sys *= k;
		}
		json_object_set_new(g, "vcpu_usage", json_pack("{s:f, s:f}", "user", user, "system", sys));
	}
	e->base_utime = e->st.utime;
	e->base_stime = e->st.stime;
	e->base_vcpu_ns = cy->boot_ns;
}

static void collect_mem(struct proc_state *s, struct proc_entry *e, const struct cycle *cy, json_t *g)
{
	char path[32];
	const char *text;
	uint64_t pages;

	json_object_set_new(g, "period", json_real((double)(cy->boot_ns - e->base_mem_ns) / 1e9));
	e->base_mem_ns = cy->boot_ns;
	snprintf(path, sizeof(path), "%d/statm", (int)e->pid);
	text = procfs_read(&s->pf, path);
	if (!text || procfs_parse_statm_rss(text, &pages)) {
		set_error(g, "cannot read %s: %s", path, text ? "unexpected format" : strerror(errno));
		return;
	}
	{
		uint64_t dev;
		int have_dev = proctab_devmem(s->env->procs, e->pid, &dev) == 0;

		json_object_set_new(g, "runtime_used_bytes",
				    json_pack("{s:I, s:o}", "host", (json_int_t)(pages * (uint64_t)s->env->page_size),
					      "device", have_dev ? json_integer((json_int_t)dev) : json_null()));
	}
}

static void proc_collect(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue,
			 json_t *out)
{
	struct proc_state *s = state;
	size_t keep = 0;

	if (s->pf.dirfd < 0 && procfs_open(&s->pf, s->env->procfs) == 0)
		scan(s, cy, 1);
	else if (s->pf.dirfd >= 0)
		scan(s, cy, 0);
	if (s->pf.dirfd < 0 || s->scan_error) {
		json_t *ent = entry_json(s, 0, s->rt->name ? s->rt->name : "");

		json_object_set_new(ent, "pid", json_null());
		set_error(ent, "cannot scan %s: %s", s->env->procfs,
			  strerror(s->scan_error ? s->scan_error : errno));
		json_array_append_new(out, ent);
		return;
	}
	if (s->rt->kind == RT_PID && s->ne == 0 && !s->pid_filtered) {
		json_t *ent = entry_json(s, s->rt->pid, "");

		set_error(ent, "no such process: %d", (int)s->rt->pid);
		json_array_append_new(out, ent);
	}
	for (size_t i = 0; i < s->ne; i++) {
		struct proc_entry *e = &s->e[i];
		json_t *ent = entry_json(s, e->pid, e->tag), *rep = json_object_get(ent, "report");

		if (!e->alive) {
			set_error(ent, "process %d exited", (int)e->pid);
			json_array_append_new(out, ent);
			continue; /* reported once, then dropped below */
		}
		add_container(s, e->pid, cy, ent);
		for (size_t k = 0; k < ndue; k++) {
			json_t *g = group_new(0, cy->iso);

			if (due[k] == GROUP_RUNTIME_VCPU_USAGE)
				collect_vcpu(s, e, cy, g);
			else if (due[k] == GROUP_MEMORY_USED)
				collect_mem(s, e, cy, g);
			else
				set_error(g, "%s is not available for process runtimes", group_name(due[k]));
			json_object_set_new(rep, group_name(due[k]), g);
		}
		json_array_append_new(out, ent);
		s->e[keep++] = *e;
	}
	s->ne = keep;
}

static void proc_close(void *state)
{
	struct proc_state *s = state;

	if (!s)
		return;
	procfs_close(&s->pf);
	free(s->e);
	free(s);
}

/* Config: "pid:N", N a process id. */
static int pid_config(const struct cfg_block *b, const char *arg, struct cfg_runtime *rt)
{
	char *end, q[LOG_QUOTE_BUF];
	long pid;

	errno = 0;
	pid = strtol(arg, &end, 10);
	/* Digits only: strtol alone would take "pid: 5" and "pid:+5". */
	if (!isdigit((unsigned char)arg[0]) || *end || errno || pid <= 0 || pid > 0x3fffffff)
		return cfg_block_error(b, "address", 0, "invalid address \"%s\": expected pid:N with N a process id",
				       log_quote(q, sizeof(q), rt->address, (size_t)-1));
	rt->pid = (pid_t)pid;
	return 0;
}

/* Config: "process:NAME", NAME a command name (no '/'). */
static int process_config(const struct cfg_block *b, const char *arg, struct cfg_runtime *rt)
{
	char q[LOG_QUOTE_BUF];

	if (arg[0] == '\0' || strchr(arg, '/'))
		return cfg_block_error(b, "address", 0, "invalid address \"%s\": expected process:NAME (a command name)",
				       log_quote(q, sizeof(q), rt->address, (size_t)-1));
	rt->name = xstrdup(arg);
	return 0;
}

const struct runtime_ops coll_pid_ops = {
	.kind = RT_PID,
	.scheme = "pid",
	.config = pid_config,
	.open = proc_open,
	.collect = proc_collect,
	.close = proc_close,
};

const struct runtime_ops coll_process_ops = {
	.kind = RT_PROCESS,
	.scheme = "process",
	.config = process_config,
	.open = proc_open,
	.collect = proc_collect,
	.close = proc_close,
};
#endif /* ACCEL_ROWS_ONLY */
