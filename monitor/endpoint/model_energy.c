/* SPDX-License-Identifier: MIT */
/*
 * Energy per model (model_energy.h; docs/energy.md): the server's energy
 * from the host's energy ledger, split among its models.
 */
#include "model_energy.h"

#include "../../common/util.h"
#include "../core/energy.h"
#include "../host/host.h"
#include "../host/ledger.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W_COMPUTE, W_REQUEST, W_COUNT, W_N };

/* Model r's part by basis w (a number > 0), or NAN when it has none. */
static double part_of(const struct infer_model *r, int w)
{
	return w == W_COMPUTE ? r->compute_s * r->completed : w == W_REQUEST ? r->request_s * r->completed : r->completed;
}

void model_energy_split(json_t *group, const struct infer_stats *st, double energy_j, const char *source)
{
	static const char *const basis[W_N] = { "compute_time", "request_time", "requests" };
	int have[W_N] = { 1, 1, 1 };
	double sum[W_N] = { 0 };
	int w, any = 0;

	json_object_set_new(group, "energy_joules", json_real(energy_j));
	json_object_set_new(group, "energy_source", json_string(source));
	/* one basis for every model: the first that every model with completed requests has */
	for (size_t i = 0; i < st->nmodels; i++) {
		const struct infer_model *r = &st->models[i];

		if (!(r->completed > 0))
			continue;
		any = 1;
		have[W_COMPUTE] &= r->compute_s >= 0;
		have[W_REQUEST] &= r->request_s >= 0;
		for (w = 0; w < W_N; w++)
			sum[w] += part_of(r, w) >= 0 ? part_of(r, w) : 0;
	}
	for (w = 0; w < W_N && !(have[w] && sum[w] > 0); w++)
		;
	if (!any || w == W_N) {
		json_object_del(group, "energy_attribution");
		return;
	}
	json_object_set_new(group, "energy_attribution", json_string(basis[w]));
	for (size_t i = 0; i < st->nmodels; i++) {
		const struct infer_model *r = &st->models[i];
		double e;

		if (!(r->completed > 0))
			continue;
		e = energy_j * part_of(r, w) / sum[w];
		json_object_set_new(r->obj, "energy_joules", json_real(e));
		json_object_set_new(r->obj, "energy_per_request_joules", json_real(e / r->completed));
		if (r->generation >= 0 && e > 0)
			json_object_set_new(r->obj, "tokens_per_joule", json_real(r->generation / e));
	}
}

/* Grow an array *p of *a entries of size sz so that it holds n + 1. */
static void *room(void *p, size_t *a, size_t n, size_t sz)
{
	if (n < *a)
		return p;
	*a = *a ? *a * 2 : 8;
	return xrealloc(p, *a * sz);
}

/*
 * Is pid one of the server's processes, the listener's being in the
 * container ctr ("" when on the host or in no container of its own)? In a
 * container: the processes of that container (or pod). On the host: the
 * processes on the host that descend from the listener (a process in a
 * container descends from its runtime's shim, never from a server on the
 * host: no parents are walked).
 */
static int server_process(struct host *h, pid_t pid, pid_t listener, const char *ctr)
{
	const struct container_id *c;

	if (pid == listener)
		return 1;
	c = host_container_id(h, pid);
	if (ctr[0])
		return c && !strcmp(c->id, ctr);
	return !c && host_process_descends(h, pid, listener);
}

/*
 * The server's processes' joules since se's last take (server_energy_take
 * says which count), their values now kept in *next: the ledger lists its
 * processes in the order of their serials, as se->prev holds them, so one
 * walk of both finds each one's previous value. 0 when any process of the
 * server is in the ledger, else -ENOENT.
 */
static int take_processes(const struct server_energy *se, struct host *h, pid_t listener, double *sum,
			  struct se_proc **next, size_t *nn, size_t *an)
{
	struct energy_ledger *l = host_energy(h);
	const struct container_id *c = host_container_id(h, listener);
	char ctr[sizeof(c->id)] = "";
	size_t k = 0;
	int rc = -ENOENT;

	if (c)
		snprintf(ctr, sizeof(ctr), "%s", c->id);
	for (size_t i = 0; i < energy_ledger_count(l); i++) {
		const struct energy_ledger_proc *e = energy_ledger_at(l, i);

		while (k < se->n && se->prev[k].serial < e->serial)
			k++;
		if (!server_process(h, (pid_t)e->pid, listener, ctr))
			continue;
		if (k < se->n && se->prev[k].serial == e->serial)
			*sum += e->j - se->prev[k].j;
		else if (se->have && e->serial >= se->serial)
			*sum += e->j; /* new since the last take: all of it is in the period */
		*next = room(*next, an, *nn, sizeof(**next));
		(*next)[(*nn)++] = (struct se_proc){ e->serial, e->j };
		rc = 0;
	}
	return rc;
}

/* The same for the devices the server reports on (st's). */
static int take_devices(const struct server_energy *se, struct host *h, const struct infer_stats *st, double *sum,
			struct se_dev **next, size_t *nn, size_t *an)
{
	struct energy_ledger *l = host_energy(h);
	double v;
	int rc = -ENOENT;

	for (size_t i = 0; i < st->ndevices; i++) {
		const char *uuid = st->devices[i];
		size_t k;

		if (energy_ledger_device(l, uuid, &v))
			continue;
		for (k = 0; k < se->nd && strcmp(se->dprev[k].uuid, uuid); k++)
			;
		*sum += k < se->nd ? v - se->dprev[k].j : se->have ? v : 0;
		*next = room(*next, an, *nn, sizeof(**next));
		snprintf((*next)[*nn].uuid, sizeof((*next)[*nn].uuid), "%s", uuid);
		(*next)[(*nn)++].j = v;
		rc = 0;
	}
	return rc;
}

int server_energy_take(struct server_energy *se, struct host *h, pid_t listener, const struct infer_stats *st,
		       double *j, const char **source)
{
	struct se_proc *next = NULL;
	struct se_dev *dnext = NULL;
	size_t nn = 0, an = 0, nd = 0, ad = 0;
	double sum = 0;
	int rc = -ENOENT;

	if (listener > 0 && !(rc = take_processes(se, h, listener, &sum, &next, &nn, &an)))
		*source = "processes";
	if (rc && !(rc = take_devices(se, h, st, &sum, &dnext, &nd, &ad)))
		*source = "devices";
	if (!rc && (!se->have || se->from_devices != !strcmp(*source, "devices")))
		rc = -EAGAIN; /* the first, or another source: the values taken are the baseline */
	if (!rc || rc == -EAGAIN)
		se->from_devices = !strcmp(*source, "devices");
	server_energy_free(se);
	se->prev = next;
	se->n = nn;
	se->a = an;
	se->dprev = dnext;
	se->nd = nd;
	se->ad = ad;
	se->serial = energy_ledger_next_serial(host_energy(h));
	se->have = !rc || rc == -EAGAIN;
	*j = sum > 0 ? sum : 0;
	return rc;
}

void server_energy_free(struct server_energy *se)
{
	if (!se)
		return;
	free(se->prev);
	free(se->dprev);
	se->prev = NULL;
	se->dprev = NULL;
	se->n = se->a = se->nd = se->ad = 0;
}
