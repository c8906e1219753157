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
 * The processes come from the host layer (host.h): one scan of /proc per
 * cycle however many runtimes read it; each process is measured with the
 * host's process meter, as an endpoint runtime's listening process is, and
 * its device memory is what device collectors recorded there.
 */
#include "../core/collector.h"
#include "../config/config.h"
#include "../../common/log.h"
#include "../host/host.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct proc_entry {
	struct proc_meter m;  /* pid, start time, this cycle's sample and the groups' baselines */
	char tag[64];         /* comm */
	int alive;            /* seen in this cycle's scan */
};

struct proc_state {
	const struct cfg_runtime *rt; /* borrowed */
	size_t index;
	struct host *host;            /* borrowed */
	int opened;                   /* the procfs root could be opened: the first scan was the baseline */
	int open_error;               /* errno of the last failed open, 0 if fine */
	struct proc_entry *e;
	size_t ne, ae;
	int by_pid;                   /* a pid: runtime (else process:) */
	int scan_error;               /* errno of a failed /proc scan, 0 if fine */
	int pid_filtered;             /* pid: the process exists but tag_filter excludes it */
};

/* Does p's comm or argv[0]'s basename equal name? 1, 0, or -errno when its cmdline cannot be read. */
static int process_matches(struct host *h, struct proc_info *p, const char *name)
{
	const char *argv0, *base;

	if (!strcmp(p->comm, name))
		return 1;
	argv0 = host_process_argv0(h, p);
	if (!argv0)
		return -errno;
	base = strrchr(argv0, '/');
	return *argv0 && strcmp(base ? base + 1 : argv0, name) == 0;
}

static struct proc_entry *entry_find(struct proc_state *s, pid_t pid, uint64_t starttime)
{
	for (size_t i = 0; i < s->ne; i++)
		if (s->e[i].m.pid == pid && s->e[i].m.starttime == starttime)
			return &s->e[i];
	return NULL;
}

/* Record a live process; a new one gets its start as baseline (now, when priming). */
static void entry_seen(struct proc_state *s, const struct proc_info *p, const struct cycle *cy, int prime)
{
	struct proc_entry *e = entry_find(s, p->pid, p->starttime);

	if (!e) {
		if (s->ne == s->ae) {
			s->ae = s->ae ? s->ae * 2 : 8;
			s->e = xrealloc(s->e, s->ae * sizeof(*s->e));
		}
		e = &s->e[s->ne++];
		memset(e, 0, sizeof(*e));
		snprintf(e->tag, sizeof(e->tag), "%s", p->comm);
		utf8_sanitize(e->tag);
		host_meter_start(s->host, &e->m, p, cy, prime);
	}
	host_meter_sample(&e->m, p);
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

/* Find the runtime's processes in this cycle's snapshot of the host; mark entries alive or not. */
static void scan(struct proc_state *s, const struct cycle *cy, int prime)
{
	struct proc_info *procs;
	size_t n;
	int rc;

	s->scan_error = 0;
	for (size_t i = 0; i < s->ne; i++)
		s->e[i].alive = 0;
	if (s->by_pid) {
		struct proc_info *p;

		rc = host_process(s->host, s->rt->pid, &p);
		s->pid_filtered = 0;
		if (rc) {
			s->scan_error = -rc;
			return;
		}
		if (p && alive(p)) {
			if (tag_ok(s, p->comm))
				entry_seen(s, p, cy, prime);
			else
				s->pid_filtered = 1;
		}
		return;
	}
	rc = host_processes(s->host, &procs, &n);
	if (rc) {
		s->scan_error = -rc;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct proc_info *p = &procs[i];

		if (!alive(p))
			continue;
		rc = process_matches(s->host, p, s->rt->name);
		if (rc < 0) {
			s->scan_error = -rc; /* one process unknown: the runtime's set is, too */
			return;
		}
		if (rc && tag_ok(s, p->comm))
			entry_seen(s, p, cy, prime);
	}
}

static int proc_open(const struct mon_env *env, const struct coll_target *t, int by_pid, void **state)
{
	struct proc_state *s = xcalloc(1, sizeof(*s));
	int rc;

	s->rt = t->rt;
	s->index = t->index;
	s->by_pid = by_pid;
	s->host = env->host;
	*state = s;
	rc = host_procfs_open(s->host);
	s->open_error = -rc;
	if (rc == 0) {
		s->opened = 1;
		scan(s, t->cy, 1);
	}
	return rc;
}

static int pid_open(const struct mon_env *env, const struct coll_target *t, void **state)
{
	return proc_open(env, t, 1, state);
}

static int process_open(const struct mon_env *env, const struct coll_target *t, void **state)
{
	return proc_open(env, t, 0, state);
}

static json_t *entry_json(const struct proc_state *s, pid_t pid, const char *tag)
{
	return json_pack("{s:I, s:s, s:I, s:s, s:s, s:o}", "runtime_index", (json_int_t)s->index, "address",
			 s->rt->address, "pid", (json_int_t)pid, "runtime_tag", tag, "error", "", "report",
			 json_object());
}

/* The entry's "container" (container.h) when its process is in a container, pod or unit. */
static void add_container(const struct proc_state *s, pid_t pid, json_t *ent)
{
	json_t *c = host_container_json(s->host, pid);

	if (c)
		json_object_set_new(ent, "container", c);
}

static int proc_collect(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue, json_t *out)
{
	struct proc_state *s = state;
	size_t keep = 0;
	int rc = 0;

	if (!s->opened) {
		s->open_error = -host_procfs_open(s->host);
		if (s->open_error == 0) {
			s->opened = 1;
			scan(s, cy, 1);
		}
	} else {
		scan(s, cy, 0);
	}
	if (!s->opened || s->scan_error) {
		json_t *ent = entry_json(s, 0, s->rt->name ? s->rt->name : "");

		json_object_set_new(ent, "pid", json_null());
		set_error(ent, "cannot scan %s: %s", host_procfs(s->host),
			  strerror(s->scan_error ? s->scan_error : s->open_error));
		json_array_append_new(out, ent);
		return -1;
	}
	if (s->by_pid && s->ne == 0 && !s->pid_filtered) {
		json_t *ent = entry_json(s, s->rt->pid, "");

		set_error(ent, "no such process: %d", (int)s->rt->pid);
		json_array_append_new(out, ent);
		rc = -1;
	}
	for (size_t i = 0; i < s->ne; i++) {
		struct proc_entry *e = &s->e[i];
		json_t *ent = entry_json(s, e->m.pid, e->tag), *rep = json_object_get(ent, "report");

		if (!e->alive) {
			set_error(ent, "process %d exited", (int)e->m.pid);
			json_array_append_new(out, ent);
			rc = -1;
			continue; /* reported once, then dropped below */
		}
		add_container(s, e->m.pid, ent);
		for (size_t k = 0; k < ndue; k++) {
			json_t *g = group_new(0, cy->iso);

			host_meter_group(s->host, &e->m, due[k], cy, g);
			json_object_set_new(rep, group_name(due[k]), g);
		}
		json_array_append_new(out, ent);
		s->e[keep++] = *e;
	}
	s->ne = keep;
	return rc;
}

static void proc_close(void *state)
{
	struct proc_state *s = state;

	if (!s)
		return;
	free(s->e);
	free(s);
}

/* Config: "pid:N", N a process id. */
static int pid_config(const struct cfg_block *b)
{
	char *end, q[LOG_QUOTE_BUF];
	long pid;

	errno = 0;
	pid = strtol(b->arg, &end, 10);
	/* Digits only: strtol alone would take "pid: 5" and "pid:+5". */
	if (!isdigit((unsigned char)b->arg[0]) || *end || errno || pid <= 0 || pid > 0x3fffffff)
		return cfg_block_error(b, "address", 0, "invalid address \"%s\": expected pid:N with N a process id",
				       log_quote(q, sizeof(q), b->rt->address, (size_t)-1));
	b->rt->pid = (pid_t)pid;
	return 0;
}

/* Config: "process:NAME", NAME a command name (no '/'). */
static int process_config(const struct cfg_block *b)
{
	char q[LOG_QUOTE_BUF];

	if (b->arg[0] == '\0' || strchr(b->arg, '/'))
		return cfg_block_error(b, "address", 0, "invalid address \"%s\": expected process:NAME (a command name)",
				       log_quote(q, sizeof(q), b->rt->address, (size_t)-1));
	b->rt->name = xstrdup(b->arg);
	return 0;
}

const struct collector_ops coll_pid_ops = {
	.name = "pid",
	.rows = &process_rows,
	.scope = COLL_RUNTIME,
	.schemes = (const char *const[]){ "pid", NULL },
	.config = pid_config,
	.open = pid_open,
	.collect = proc_collect,
	.close = proc_close,
};

const struct collector_ops coll_process_ops = {
	.name = "process",
	.rows = &process_rows,
	.scope = COLL_RUNTIME,
	.schemes = (const char *const[]){ "process", NULL },
	.config = process_config,
	.open = process_open,
	.collect = proc_collect,
	.close = proc_close,
};
