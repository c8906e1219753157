/* SPDX-License-Identifier: MIT */
/*
 * Energy per model (model_energy.h; docs/energy.md): the server's energy
 * from the host's energy ledger, split among its models.
 */
#include "model_energy.h"

#include "../../common/util.h"
#include "../core/energy.h"
#include "../host/host.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* v's number at path a.b inside o, or -1 when absent or not a number. */
static double num_at(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(json_object_get(o, a), b);

	return json_is_number(v) ? json_number_value(v) : -1;
}

enum { W_COMPUTE, W_REQUEST, W_COUNT, W_N };

void model_energy_split(json_t *group, double energy_j, const char *source)
{
	static const char *const basis[W_N] = { "compute_time", "request_time", "requests" };
	json_t *models = json_object_get(group, "models"), *vs, *m;
	const char *mk, *vk;
	int have[W_N] = { 1, 1, 1 };
	double sum[W_N] = { 0 };
	int w, any = 0;

	json_object_set_new(group, "energy_joules", json_real(energy_j));
	json_object_set_new(group, "energy_source", json_string(source));
	/* one basis for every model: the first that every model with completed requests has */
	json_object_foreach(models, mk, vs) {
		json_object_foreach(vs, vk, m) {
			double done = num_at(m, "execution_summary", "completed");
			double ci = num_at(m, "mean_seconds", "compute_infer"), rq = num_at(m, "mean_seconds", "request");

			if (done <= 0)
				continue;
			any = 1;
			have[W_COMPUTE] &= ci >= 0;
			have[W_REQUEST] &= rq >= 0;
			sum[W_COMPUTE] += ci >= 0 ? ci * done : 0;
			sum[W_REQUEST] += rq >= 0 ? rq * done : 0;
			sum[W_COUNT] += done;
		}
	}
	for (w = 0; w < W_N && !(have[w] && sum[w] > 0); w++)
		;
	if (!any || w == W_N) {
		json_object_del(group, "energy_attribution");
		return;
	}
	json_object_set_new(group, "energy_attribution", json_string(basis[w]));
	json_object_foreach(models, mk, vs) {
		json_object_foreach(vs, vk, m) {
			double done = num_at(m, "execution_summary", "completed"), part, e, gen;

			if (done <= 0)
				continue;
			part = w == W_COMPUTE ? num_at(m, "mean_seconds", "compute_infer") * done
			       : w == W_REQUEST ? num_at(m, "mean_seconds", "request") * done
						: done;
			e = energy_j * part / sum[w];
			json_object_set_new(m, "energy_joules", json_real(e));
			json_object_set_new(m, "energy_per_request_joules", json_real(e / done));
			gen = num_at(m, "tokens", "generation");
			if (gen >= 0 && e > 0)
				json_object_set_new(m, "tokens_per_joule", json_real(gen / e));
		}
	}
}

/* The value se took for key last time: 1 and *j, or 0 when none. */
static int prev_of(const struct server_energy *se, const char *key, double *j)
{
	for (size_t i = 0; i < se->n; i++)
		if (!strcmp(se->prev[i].key, key)) {
			*j = se->prev[i].j;
			return 1;
		}
	return 0;
}

/* Add key's value now to next[] (grown as needed). */
static void keep(struct se_entry **next, size_t *n, size_t *a, const char *key, double j)
{
	if (*n == *a) {
		*a = *a ? *a * 2 : 8;
		*next = xrealloc(*next, *a * sizeof(**next));
	}
	snprintf((*next)[*n].key, sizeof((*next)[*n].key), "%s", key);
	(*next)[(*n)++].j = j;
}

/*
 * Is pid one of the server's processes, the listener's being in the
 * container ctr ("" when on the host)? In a container: the processes of
 * that container (or pod). On the host: the processes on the host that
 * descend from the listener (a process in a container descends from its
 * runtime's shim, never from a server on the host: no parents are walked).
 */
static int server_process(struct host *h, pid_t pid, pid_t listener, const char *ctr)
{
	json_t *c;
	int yes;

	if (pid == listener)
		return 1;
	c = host_container_json(h, pid);
	if (ctr[0])
		yes = c && json_is_string(json_object_get(c, "id")) &&
		      !strcmp(json_string_value(json_object_get(c, "id")), ctr);
	else
		yes = !c && host_process_descends(h, pid, listener);
	json_decref(c);
	return yes;
}

int server_energy_take(struct server_energy *se, struct host *h, pid_t listener, const json_t *group, double *j,
		       const char **source)
{
	struct energy_ledger *l = host_energy(h);
	struct se_entry *next = NULL;
	size_t nn = 0, an = 0;
	char ctr[96] = "", key[96];
	double sum = 0, v, p;
	const char *uuid;
	json_t *dev;
	int rc = -ENOENT;

	if (listener > 0) {
		json_t *c = host_container_json(h, listener);

		if (c && json_is_string(json_object_get(c, "id")))
			snprintf(ctr, sizeof(ctr), "%s", json_string_value(json_object_get(c, "id")));
		json_decref(c);
		for (size_t i = 0; i < energy_ledger_count(l); i++) {
			uint32_t pid = energy_ledger_at(l, i, &v);

			if (!server_process(h, (pid_t)pid, listener, ctr))
				continue;
			snprintf(key, sizeof(key), "%u", (unsigned)pid);
			sum += prev_of(se, key, &p) ? v - p : se->have ? v : 0;
			keep(&next, &nn, &an, key, v);
			*source = "processes";
			rc = 0;
		}
	}
	if (rc) {
		json_object_foreach((json_t *)json_object_get(group, "server_devices"), uuid, dev) {
			if (energy_ledger_device(l, uuid, &v))
				continue;
			sum += prev_of(se, uuid, &p) ? v - p : se->have ? v : 0;
			keep(&next, &nn, &an, uuid, v);
			*source = "devices";
			rc = 0;
		}
	}
	if (!rc && (!se->have || se->from_devices != !strcmp(*source, "devices")))
		rc = -EAGAIN; /* the first, or another source: the values taken are the baseline */
	if (!rc || rc == -EAGAIN)
		se->from_devices = !strcmp(*source, "devices");
	free(se->prev);
	se->prev = next;
	se->n = nn;
	se->a = an;
	se->have = !rc || rc == -EAGAIN;
	*j = sum > 0 ? sum : 0;
	return rc;
}

void server_energy_free(struct server_energy *se)
{
	if (!se)
		return;
	free(se->prev);
	se->prev = NULL;
	se->n = se->a = 0;
}
