/* SPDX-License-Identifier: MIT */
/*
 * memory_info: host memory and swap from /proc/meminfo, in bytes.
 * "Used" is MemTotal - MemAvailable (the kernel's own estimate of what
 * could be handed out without swapping); on kernels before 3.14, which
 * lack MemAvailable, MemTotal - (MemFree + Buffers + Cached + SReclaimable).
 */
#include "../core/collector.h"
#include "../host/host.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct mem_state {
	const char *root; /* borrowed from the host: --path.procfs */
	struct procfs pf;
	int meminfo_fd;   /* meminfo kept open (procfs_read_keep) */
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

static void mem_collect(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue, json_t *group)
{
	struct mem_state *s = state;
	struct meminfo mi;
	const char *text;

	(void)due;
	(void)ndue;
	(void)cy;
	if (s->pf.dirfd < 0 && procfs_open(&s->pf, s->root)) {
		set_error(group, "cannot open %s: %s", s->root, strerror(errno));
		return;
	}
	text = procfs_read_keep(&s->pf, "meminfo", &s->meminfo_fd);
	if (!text) {
		set_error(group, "cannot read meminfo: %s", strerror(errno));
		return;
	}
	if (procfs_parse_meminfo(text, &mi)) {
		set_error(group, "cannot parse meminfo: no MemTotal");
		return;
	}
	json_object_set_new(group, "memory_total_bytes", json_integer((json_int_t)mi.total));
	json_object_set_new(group, "memory_used_bytes", json_integer((json_int_t)meminfo_used(&mi)));
	json_object_set_new(group, "swap_total_bytes", json_integer((json_int_t)mi.swap_total));
	json_object_set_new(group, "swap_used_bytes",
			    json_integer((json_int_t)(mi.swap_total > mi.swap_free ? mi.swap_total - mi.swap_free : 0)));
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
	.collect = mem_collect,
	.close = mem_close,
};
