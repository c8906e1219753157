/* SPDX-License-Identifier: MIT */
/* The host's energy ledger (ledger.h). */
#include "ledger.h"

#include "../../common/hindex.h"
#include "../../common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ledger_dev {
	char uuid[96];
	double j;
};

struct energy_ledger {
	struct energy_ledger_proc *p; /* by serial */
	size_t np, ap;
	struct hindex pi; /* p by (pid, start) */
	uint64_t serial;  /* the next new process's */
	int64_t last_ns;  /* the last add's time */
	struct ledger_dev *d;
	size_t nd, ad;
};

struct energy_ledger *energy_ledger_new(void)
{
	return xcalloc(1, sizeof(struct energy_ledger));
}

void energy_ledger_free(struct energy_ledger *l)
{
	if (!l)
		return;
	free(l->p);
	hindex_free(&l->pi);
	free(l->d);
	free(l);
}

static uint64_t proc_hash(uint32_t pid, uint64_t start)
{
	return hash_bytes(hash_bytes(0, &pid, sizeof(pid)), &start, sizeof(start));
}

static struct energy_ledger_proc *ledger_find(struct energy_ledger *l, uint32_t pid, uint64_t start, uint64_t h)
{
	struct hindex_iter it;

	for (uint32_t i = hindex_first(&l->pi, h, &it); i != HINDEX_NONE; i = hindex_next(&l->pi, h, &it))
		if (l->p[i].pid == pid && l->p[i].start == start)
			return &l->p[i];
	return NULL;
}

void energy_ledger_add_process(struct energy_ledger *l, uint32_t pid, uint64_t start, double j, int64_t now_ns)
{
	uint64_t h = proc_hash(pid, start);
	struct energy_ledger_proc *e = ledger_find(l, pid, start, h);

	if (!e) {
		if (l->np == l->ap) {
			l->ap = l->ap ? l->ap * 2 : 16;
			l->p = xrealloc(l->p, l->ap * sizeof(*l->p));
		}
		e = &l->p[l->np];
		*e = (struct energy_ledger_proc){ .pid = pid, .start = start, .serial = l->serial++ };
		hindex_put(&l->pi, h, (uint32_t)l->np++);
	}
	e->j += j;
	e->seen = now_ns;
	l->last_ns = now_ns;
}

void energy_ledger_forget(struct energy_ledger *l, int (*alive)(void *ud, uint32_t pid, uint64_t start), void *ud)
{
	size_t keep = 0;

	for (size_t i = 0; i < l->np; i++)
		if (l->p[i].seen == l->last_ns || alive(ud, l->p[i].pid, l->p[i].start))
			l->p[keep++] = l->p[i];
	if (keep == l->np)
		return;
	l->np = keep;
	hindex_clear(&l->pi);
	for (size_t i = 0; i < l->np; i++)
		hindex_put(&l->pi, proc_hash(l->p[i].pid, l->p[i].start), (uint32_t)i);
}

void energy_ledger_add_device(struct energy_ledger *l, const char *uuid, double j)
{
	size_t i;

	for (i = 0; i < l->nd && strcmp(l->d[i].uuid, uuid); i++)
		;
	if (i == l->nd) {
		if (l->nd == l->ad) {
			l->ad = l->ad ? l->ad * 2 : 8;
			l->d = xrealloc(l->d, l->ad * sizeof(*l->d));
		}
		memset(&l->d[i], 0, sizeof(l->d[i]));
		snprintf(l->d[i].uuid, sizeof(l->d[i].uuid), "%s", uuid);
		l->nd++;
	}
	l->d[i].j += j;
}

int energy_ledger_device(const struct energy_ledger *l, const char *uuid, double *j)
{
	for (size_t i = 0; i < l->nd; i++)
		if (!strcmp(l->d[i].uuid, uuid)) {
			*j = l->d[i].j;
			return 0;
		}
	return -ENOENT;
}

size_t energy_ledger_count(const struct energy_ledger *l)
{
	return l->np;
}

const struct energy_ledger_proc *energy_ledger_at(const struct energy_ledger *l, size_t i)
{
	return &l->p[i];
}

uint64_t energy_ledger_next_serial(const struct energy_ledger *l)
{
	return l->serial;
}
