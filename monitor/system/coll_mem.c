/* SPDX-License-Identifier: MIT */
/*
 * memory_info: host memory and swap from /proc/meminfo, in bytes.
 * "Used" is MemTotal - MemAvailable (the kernel's own estimate of what
 * could be handed out without swapping); on kernels before 3.14, which
 * lack MemAvailable, MemTotal - (MemFree + Buffers + Cached + SReclaimable).
 */
#include "../../common/jsonw.h"
#include "../core/collector.h"
#include "../host/host.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct mem_state {
	const char *root; /* borrowed from the host: --path.procfs */
	struct procfs pf;
	int meminfo_fd;   /* meminfo kept open (procfs_read_keep) */
	struct meminfo mi; /* the last good sample: what write() writes */
};

static int mem_open(const struct mon_env *env, const struct coll_target *t, void **state)
{
	struct mem_state *s = xcalloc(1, sizeof(*s));

	(void)t;
	*state = s;
	s->meminfo_fd = PROCFS_UNKEPT;
	s->root = host_procfs(env->host);
	return procfs_open(&s->pf, s->root);
}

static int mem_sample(void *state, const struct cycle *cy, char *err, size_t errsz)
{
	struct mem_state *s = state;
	const char *text;

	(void)cy;
	if (s->pf.dirfd < 0 && procfs_open(&s->pf, s->root)) {
		snprintf(err, errsz, "cannot open %s: %s", s->root, strerror(errno));
		return -1;
	}
	text = procfs_read_keep(&s->pf, "meminfo", &s->meminfo_fd);
	if (!text) {
		snprintf(err, errsz, "cannot read meminfo: %s", strerror(errno));
		return -1;
	}
	if (procfs_parse_meminfo(text, &s->mi)) {
		snprintf(err, errsz, "cannot parse meminfo: no MemTotal");
		return -1;
	}
	return 0;
}

static int mem_write(void *state, struct buf *b)
{
	const struct meminfo *mi = &((const struct mem_state *)state)->mi;
	int rc = buf_puts(b, ",\"memory_total_bytes\":") || json_write_u64(b, mi->total) ||
		 buf_puts(b, ",\"memory_used_bytes\":") || json_write_u64(b, meminfo_used(mi)) ||
		 buf_puts(b, ",\"swap_total_bytes\":") || json_write_u64(b, mi->swap_total) ||
		 buf_puts(b, ",\"swap_used_bytes\":") ||
		 json_write_u64(b, mi->swap_total > mi->swap_free ? mi->swap_total - mi->swap_free : 0);

	return rc ? -ENOSPC : 0;
}

static void mem_close(void *state)
{
	struct mem_state *s = state;

	if (!s)
		return;
	procfs_close(&s->pf);
	if (s->meminfo_fd >= 0)
		close(s->meminfo_fd);
	free(s);
}

const struct collector_ops coll_mem_ops = {
	.name = "mem",
	.rows = &mem_rows,
	.scope = COLL_SYSTEM,
	.group = GROUP_MEMORY_INFO,
	.open = mem_open,
	.sample = mem_sample,
	.write = mem_write,
	.close = mem_close,
};
