/* SPDX-License-Identifier: MIT */
/*
 * /proc parsers; see procfs.h. Numbers are parsed by hand: strtoull is
 * locale-aware and slower, and /proc/stat on a 96-CPU machine is parsed
 * every second.
 */
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROCFS_BUF_START (64 * 1024)
#define PROCFS_BUF_CAP (16 * 1024 * 1024)

/* Parse an unsigned decimal at *p, skipping leading blanks; advance *p. */
static bool parse_u64(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t n = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9')
		n = n * 10 + (uint64_t)(*s++ - '0');
	*p = s;
	*v = n;
	return true;
}

static const char *next_line(const char *p)
{
	const char *nl = strchr(p, '\n');

	return nl ? nl + 1 : p + strlen(p);
}

/* Parse the numbers after "cpu" or "cpuN"; missing trailing fields are 0 (old kernels). */
static int parse_cpu_fields(const char *p, struct cpu_times *t)
{
	uint64_t *f[] = { &t->user, &t->nice, &t->system, &t->idle, &t->iowait, &t->irq, &t->softirq, &t->steal };

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (!parse_u64(&p, f[i])) {
			if (i < 4)
				return -EINVAL;
			break;
		}
	t->present = true;
	return 0;
}

int procfs_parse_stat(const char *text, struct proc_stat *st)
{
	const char *p = text;
	bool have_all = false;

	st->ncpu = 0;
	st->ctxt = 0;
	for (size_t i = 0; i < st->acpu; i++)
		st->cpu[i].present = false;
	for (; *p; p = next_line(p)) {
		if (p[0] == 'c' && p[1] == 'p' && p[2] == 'u') {
			if (p[3] == ' ') {
				if (parse_cpu_fields(p + 3, &st->all))
					return -EINVAL;
				have_all = true;
			} else {
				const char *q = p + 3;
				uint64_t n;

				if (!parse_u64(&q, &n) || n > 1 << 20)
					return -EINVAL;
				if (n >= st->acpu) {
					size_t a = st->acpu ? st->acpu : 8;

					while (a <= n)
						a *= 2;
					st->cpu = xrealloc(st->cpu, a * sizeof(*st->cpu));
					memset(st->cpu + st->acpu, 0, (a - st->acpu) * sizeof(*st->cpu));
					st->acpu = a;
				}
				if (parse_cpu_fields(q, &st->cpu[n]))
					return -EINVAL;
				if (n + 1 > st->ncpu)
					st->ncpu = n + 1;
			}
		} else if (!strncmp(p, "ctxt ", 5)) {
			const char *q = p + 5;

			if (!parse_u64(&q, &st->ctxt))
				return -EINVAL;
		}
	}
	return have_all ? 0 : -EINVAL;
}

void proc_stat_free(struct proc_stat *st)
{
	free(st->cpu);
	memset(st, 0, sizeof(*st));
}

int procfs_parse_meminfo(const char *text, struct meminfo *mi)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "MemTotal:", offsetof(struct meminfo, total) },
		{ "MemFree:", offsetof(struct meminfo, free) },
		{ "MemAvailable:", offsetof(struct meminfo, available) },
		{ "Buffers:", offsetof(struct meminfo, buffers) },
		{ "Cached:", offsetof(struct meminfo, cached) },
		{ "SReclaimable:", offsetof(struct meminfo, sreclaimable) },
		{ "SwapTotal:", offsetof(struct meminfo, swap_total) },
		{ "SwapFree:", offsetof(struct meminfo, swap_free) },
	};
	const unsigned all = (1u << (sizeof(keys) / sizeof(keys[0]))) - 1;
	unsigned seen = 0;

	memset(mi, 0, sizeof(*mi));
	/* The keys are among the first 25 of some 55 lines: the rest is not scanned once each was seen. */
	for (const char *p = text; *p && seen != all; p = next_line(p)) {
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t n;
			const char *q;
			uint64_t v;

			/* Most lines match no key's first two bytes: no strncmp for them (p[1] may be the NUL). */
			if (p[0] != keys[i].key[0] || p[1] != keys[i].key[1])
				continue;
			n = strlen(keys[i].key);
			q = p + n;
			if (strncmp(p, keys[i].key, n))
				continue;
			if (!parse_u64(&q, &v))
				return -EINVAL;
			/* Values are in kB (KiB) unless no unit follows (none do today). */
			if (!strncmp(q, " kB", 3))
				v *= 1024;
			*(uint64_t *)((char *)mi + keys[i].off) = v;
			seen |= 1u << i;
			break;
		}
	}
	mi->has_available = (seen & 4) != 0; /* keys[2] */
	return seen & 1 ? 0 : -EINVAL; /* keys[0], MemTotal */
}

uint64_t meminfo_used(const struct meminfo *mi)
{
	uint64_t avail = mi->has_available ? mi->available
					   : mi->free + mi->buffers + mi->cached + mi->sreclaimable;

	return avail < mi->total ? mi->total - avail : 0;
}

int procfs_parse_pid_stat(const char *text, struct pid_stat *ps)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')'), *p;
	uint64_t v;
	size_t n;

	if (!open || !close || close < open || close[1] != ' ' || !close[2])
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n >= sizeof(ps->comm))
		n = sizeof(ps->comm) - 1;
	memcpy(ps->comm, open + 1, n);
	ps->comm[n] = '\0';
	ps->state = close[2];
	p = close + 3;
	/* Fields after state, numbered as in proc(5): ppid is 4, utime 14, stime 15, starttime 22. */
	for (int field = 4; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (*p == '-')
			p++; /* signed fields (priority, nice) */
		if (!parse_u64(&p, &v))
			return -EINVAL;
		if (field == 4)
			ps->ppid = v <= 0x3fffffff ? (pid_t)v : 0;
		else if (field == 14)
			ps->utime = v;
		else if (field == 15)
			ps->stime = v;
		else if (field == 22)
			ps->starttime = v;
	}
	return 0;
}

int procfs_parse_statm_rss(const char *text, uint64_t *rss_pages)
{
	const char *p = text;
	uint64_t size;

	if (!parse_u64(&p, &size) || !parse_u64(&p, rss_pages))
		return -EINVAL;
	return 0;
}

int procfs_open(struct procfs *pf, const char *root)
{
	pf->dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return pf->dirfd < 0 ? -errno : 0;
}

/* Into pf's buffer: relpath, else the kept fd; the buffer doubled while the text does not fit. */
static const char *read_grown(struct procfs *pf, const char *relpath, int fd, int check_links)
{
	ssize_t n;

	if (!pf->text) {
		pf->size = PROCFS_BUF_START;
		pf->text = xmalloc(pf->size);
	}
	while ((n = relpath ? read_file_at(pf->dirfd, relpath, pf->text, pf->size)
			    : read_kept_file(fd, check_links, pf->text, pf->size)) == -EFBIG) {
		if (pf->size >= PROCFS_BUF_CAP)
			break;
		pf->size *= 2;
		pf->text = xrealloc(pf->text, pf->size);
	}
	if (n < 0) {
		errno = (int)-n;
		return NULL;
	}
	return pf->text;
}

const char *procfs_read(struct procfs *pf, const char *relpath)
{
	return read_grown(pf, relpath, -1, 0);
}

const char *procfs_read_kept(struct procfs *pf, int fd, int check_links)
{
	return read_grown(pf, NULL, fd, check_links);
}

#define PROCFS_BY_PATH (-2) /* *fd of procfs_read_keep: not a kernel file system's file */

const char *procfs_read_keep(struct procfs *pf, const char *relpath, int *fd)
{
	const char *text;

	if (*fd >= 0) {
		if ((text = procfs_read_kept(pf, *fd, 0)))
			return text;
		close(*fd);
		*fd = PROCFS_UNKEPT;
	} else if (*fd == PROCFS_UNKEPT) {
		int k = open_kept(pf->dirfd, relpath);

		if (k >= 0 && on_kernel_fs(k)) {
			*fd = k;
			if ((text = procfs_read_kept(pf, k, 0)))
				return text;
			close(k);
			*fd = PROCFS_UNKEPT;
		} else if (k >= 0) {
			close(k);
			*fd = PROCFS_BY_PATH;
		}
	}
	return procfs_read(pf, relpath);
}

void procfs_close(struct procfs *pf)
{
	if (pf->dirfd >= 0)
		close(pf->dirfd);
	pf->dirfd = -1;
	free(pf->text);
	pf->text = NULL;
}
