/* SPDX-License-Identifier: MIT */
/* The process table; see proctab.h. */
#include "proctab.h"
#include "../../common/util.h"
#include "container.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { HAVE_ARGV0 = 1, HAVE_CGROUP = 2, HAVE_CONTAINER = 4 };
#define PROC_CTR_MEMO_MAX 8192 /* identities remembered, by (pid, start time) */

static char *dup_n(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

void proctab_init(struct proctab *t, const char *procfs_root)
{
	memset(t, 0, sizeof(*t));
	t->root = procfs_root;
	t->pf.dirfd = -1;
	t->cycle = INT64_MIN;
	t->one_cycle = INT64_MIN;
}

static void infos_free(struct proc_info *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].argv0);
		free(p[i].cgroup);
		free(p[i].ctr);
	}
}

void proctab_free(struct proctab *t)
{
	infos_free(t->p, t->n);
	infos_free(t->old, t->nold);
	infos_free(&t->one, 1);
	free(t->p);
	free(t->old);
	for (size_t i = 0; i < t->ncm; i++)
		free(t->cm[i].id);
	free(t->cm);
	procfs_close(&t->pf);
	memset(t, 0, sizeof(*t));
	t->pf.dirfd = -1;
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct proc_info *)a)->pid, y = ((const struct proc_info *)b)->pid;

	return (x > y) - (x < y);
}

static struct proc_info *find_in(struct proc_info *p, size_t n, pid_t pid)
{
	struct proc_info key = { .pid = pid };

	return n ? bsearch(&key, p, n, sizeof(*p), by_pid) : NULL;
}

/* Read /proc/PID/stat into *p (argv0 and cgroup not read yet). 0, or -ENOENT when the process is gone. */
static int read_one(struct proctab *t, pid_t pid, struct proc_info *p)
{
	char path[32];
	const char *text;
	struct pid_stat ps;

	snprintf(path, sizeof(path), "%d/stat", (int)pid);
	text = procfs_read(&t->pf, path);
	if (!text || procfs_parse_pid_stat(text, &ps))
		return -ENOENT;
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->starttime = ps.starttime;
	snprintf(p->comm, sizeof(p->comm), "%s", ps.comm);
	p->state = ps.state;
	p->utime = ps.utime;
	p->stime = ps.stime;
	return 0;
}

/* Read every /proc/PID/stat into t->p. 0 or -errno. */
static int scan(struct proctab *t)
{
	struct dirent *de;
	DIR *dir;
	int fd;

	if (t->pf.dirfd < 0 && procfs_open(&t->pf, t->root))
		return -errno;
	fd = openat(t->pf.dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return -e;
	}
	while ((de = readdir(dir))) {
		char *end;
		long pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		errno = 0;
		pid = strtol(de->d_name, &end, 10);
		if (*end || errno || pid <= 0 || pid > INT_MAX)
			continue;
		if (t->n == t->a) {
			t->a = t->a ? t->a * 2 : 256;
			t->p = xrealloc(t->p, t->a * sizeof(*t->p));
		}
		if (read_one(t, (pid_t)pid, &t->p[t->n]) == 0) /* else gone between readdir and read */
			t->n++;
	}
	closedir(dir);
	return 0;
}

int proctab_refresh(struct proctab *t, int64_t cycle)
{
	struct proc_info *swap;
	size_t aswap;
	int rc;

	if (t->cycle == cycle)
		return t->error ? -t->error : 0;
	t->cycle = cycle;
	t->refreshes++;
	/* This scan's entries go into what was the older array; the last one's become old. */
	infos_free(t->old, t->nold);
	swap = t->old;
	aswap = t->aold;
	t->old = t->p;
	t->nold = t->n;
	t->aold = t->a;
	t->p = swap;
	t->a = aswap;
	t->n = 0;
	rc = scan(t);
	t->error = -rc;
	if (t->n)
		qsort(t->p, t->n, sizeof(*t->p), by_pid);
	/* argv[0] and the cgroup of a process seen before (same pid, start time and comm) carry over. */
	for (size_t i = 0; i < t->n; i++) {
		struct proc_info *p = &t->p[i], *o = find_in(t->old, t->nold, p->pid);

		if (o && o->starttime == p->starttime && !strcmp(o->comm, p->comm)) {
			p->argv0 = o->argv0;
			p->cgroup = o->cgroup;
			p->ctr = o->ctr;
			p->have = o->have;
			o->argv0 = o->cgroup = NULL;
			o->ctr = NULL;
		}
	}
	return rc;
}

struct proc_info *proctab_find(struct proctab *t, pid_t pid)
{
	return find_in(t->p, t->n, pid);
}

int proctab_get(struct proctab *t, int64_t cycle, pid_t pid, struct proc_info **out)
{
	struct proc_info p;

	*out = NULL;
	if (t->cycle == cycle) {
		*out = proctab_find(t, pid);
		return t->error ? -t->error : 0;
	}
	if (t->one_cycle == cycle && t->one.pid == pid) { /* read in this cycle already */
		*out = &t->one;
		return 0;
	}
	if (t->pf.dirfd < 0 && procfs_open(&t->pf, t->root))
		return -errno;
	if (read_one(t, pid, &p))
		return 0;
	/* The same process as the slot's: what was read on demand carries over. */
	if (t->one.pid == p.pid && t->one.starttime == p.starttime && !strcmp(t->one.comm, p.comm)) {
		p.argv0 = t->one.argv0;
		p.cgroup = t->one.cgroup;
		p.ctr = t->one.ctr;
		p.have = t->one.have;
	} else {
		infos_free(&t->one, 1);
	}
	t->one = p;
	t->one_cycle = cycle;
	*out = &t->one;
	return 0;
}

const char *proctab_argv0(struct proctab *t, struct proc_info *p)
{
	char path[32];
	const char *text;

	if (!(p->have & HAVE_ARGV0)) {
		snprintf(path, sizeof(path), "%d/cmdline", (int)p->pid);
		text = t->pf.dirfd >= 0 ? procfs_read(&t->pf, path) : NULL;
		p->argv0 = xstrdup(text ? text : ""); /* cmdline's first NUL ends argv[0] */
		p->have |= HAVE_ARGV0;
	}
	return p->argv0;
}

const char *proctab_cgroup(struct proctab *t, struct proc_info *p)
{
	char path[32];
	const char *text, *line, *v1 = NULL;

	if (p->have & HAVE_CGROUP)
		return p->cgroup;
	p->have |= HAVE_CGROUP;
	snprintf(path, sizeof(path), "%d/cgroup", (int)p->pid);
	text = t->pf.dirfd >= 0 ? procfs_read(&t->pf, path) : NULL;
	for (line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		/* "hierarchy-ID:controllers:path"; v2 is "0::path". */
		const char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		if (!strncmp(line, "0::", 3)) {
			v1 = NULL;
			p->cgroup = dup_n(c2 + 1, strcspn(c2 + 1, "\n"));
			break;
		}
		if (!v1)
			v1 = c2 + 1;
	}
	if (!p->cgroup)
		p->cgroup = v1 ? dup_n(v1, strcspn(v1, "\n")) : xstrdup("");
	utf8_sanitize(p->cgroup);
	return p->cgroup;
}

const struct container_id *proctab_container(struct proctab *t, struct proc_info *p)
{
	char path[32];
	const char *text;
	struct container_id id;

	struct proc_ctr_memo *m;

	if (p->have & HAVE_CONTAINER)
		return p->ctr;
	p->have |= HAVE_CONTAINER;
	for (size_t i = 0; i < t->ncm; i++)
		if (t->cm[i].pid == p->pid && t->cm[i].starttime == p->starttime) {
			if (t->cm[i].id) {
				p->ctr = xmalloc(sizeof(*p->ctr));
				*p->ctr = *t->cm[i].id;
			}
			return p->ctr;
		}
	snprintf(path, sizeof(path), "%d/cgroup", (int)p->pid);
	text = t->pf.dirfd >= 0 ? procfs_read(&t->pf, path) : NULL;
	if (!text)
		return NULL; /* gone or unreadable: no identity, and nothing remembered */
	/* On the host: no identity (and never a half-read one); "/" is kept: it may be the monitor's own cgroup. */
	if (container_from_proc_cgroup(text, &id) == 0 || id.ns_root) {
		p->ctr = xmalloc(sizeof(*p->ctr));
		*p->ctr = id;
	}
	if (t->ncm >= PROC_CTR_MEMO_MAX) { /* exited processes pile up: start over */
		for (size_t i = 0; i < t->ncm; i++)
			free(t->cm[i].id);
		t->ncm = 0;
	}
	if (t->ncm == t->acm) {
		t->acm = t->acm ? t->acm * 2 : 64;
		t->cm = xrealloc(t->cm, t->acm * sizeof(*t->cm));
	}
	m = &t->cm[t->ncm++];
	m->pid = p->pid;
	m->starttime = p->starttime;
	m->id = NULL;
	if (p->ctr) {
		m->id = xmalloc(sizeof(*m->id));
		*m->id = *p->ctr;
	}
	return p->ctr;
}
