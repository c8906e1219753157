/* SPDX-License-Identifier: MIT */
/* Who each device is allocated to: the pod-resources answer mapped to the devices; see owners.h. */
#include "owners.h"
#include "../../common/jset.h"
#include "../../common/log.h"
#include "../../common/util.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define UNMAPPED_MAX 1024 /* ids remembered as logged (past it, nothing more is logged) */

struct owners {
	json_t *last;          /* the last object made (a reference), handed out while nothing changed */
	unsigned long gen;     /* the answer it was made from */
	uint64_t table_hash;   /* and that answer's records (a new answer that says the same keeps the object) */
	int have;              /* last is set */
	uint64_t devs_hash;    /* the devices it was made for */
	uint64_t uids_hash;    /* and the pods' UIDs it gave the owners */
	char *err;             /* the error it was made with (a copy; its "error" may differ: made valid UTF-8) */
	json_t *known;         /* {"<type>/<key>": true}: every device seen so far (a device new to it: *fresh) */
	json_t *logged;        /* {"<resource> <id>": true}: ids logged as naming no device */
	const struct podres_table *allocatable; /* the GetAllocatableResources table last checked (not dereferenced later) */
	struct owner_pod *pods; /* the pods last's owners name, each once (owned copies) */
	size_t npods, apods;
};

/* The id without a "::N" replica suffix: its length. */
static size_t id_len(const char *id)
{
	const char *sep = strstr(id, "::");

	return sep ? (size_t)(sep - id) : strlen(id);
}

/* id (up to a replica suffix) is s. */
static int id_is(const char *id, const char *s)
{
	size_t n = id_len(id);

	return *s && strlen(s) == n && !memcmp(id, s, n);
}

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* A decimal id's value: 1 and *v, or 0 when id (up to a replica suffix) is not one. */
static int id_number(const char *id, unsigned long *v)
{
	size_t n = id_len(id);
	char buf[24], *end;

	if (!n || n >= sizeof(buf) || id[0] < '0' || id[0] > '9')
		return 0;
	memcpy(buf, id, n);
	buf[n] = 0;
	*v = strtoul(buf, &end, 10);
	return !*end && (n == 1 || buf[0] != '0');
}

/*
 * Does record a name device d? 1 (*core: the NeuronCore it names, or -1),
 * else 0. One function per kind (the rows below).
 */
typedef int match_fn(const struct dev_ident *d, const struct podres_alloc *a, long *core);

static int match_nvidia(const struct dev_ident *d, const struct podres_alloc *a, long *core)
{
	char buf[48];

	(void)core;
	if (!a->resource[0]) { /* DRA: the NVIDIA driver's canonical names */
		if (strcmp(a->driver, "gpu.nvidia.com") || d->sub >= 0 || d->index < 0)
			return 0;
		snprintf(buf, sizeof(buf), "gpu-%d", d->index);
		if (!strcmp(a->device, buf))
			return 1;
		snprintf(buf, sizeof(buf), "gpu-%d-mig-", d->index);
		return starts(a->device, buf);
	}
	if (!starts(a->resource, "nvidia.com/"))
		return 0;
	if (id_is(a->device_id, d->uuid))
		return 1;
	if (d->index < 0)
		return 0;
	if (d->sub >= 0)
		snprintf(buf, sizeof(buf), "%d:%d", d->index, d->sub);
	else
		snprintf(buf, sizeof(buf), "%d", d->index);
	return id_is(a->device_id, buf);
}

/* A PCI address, the domain optional on either side ("0000:c1:00.0" is "c1:00.0"), in any case. */
static int same_pci(const char *id, size_t n, const char *pci)
{
	size_t m = strlen(pci);

	if (!m || !n)
		return 0;
	if (n == m)
		return !strncasecmp(id, pci, n);
	if (n + 5 == m && pci[4] == ':')
		return !strncasecmp(id, pci + 5, n);
	if (m + 5 == n && id[4] == ':')
		return !strncasecmp(id + 5, pci, m);
	return 0;
}

static int match_amdgpu(const struct dev_ident *d, const struct podres_alloc *a, long *core)
{
	(void)core;
	if (!starts(a->resource, "amd.com/"))
		return 0;
	return same_pci(a->device_id, id_len(a->device_id), d->pci_bus_id) || id_is(a->device_id, d->uuid);
}

static int match_neuron(const struct dev_ident *d, const struct podres_alloc *a, long *core)
{
	unsigned long v;

	if (!id_number(a->device_id, &v))
		return 0;
	if (!strcmp(a->resource, "aws.amazon.com/neuron") || !strcmp(a->resource, "aws.amazon.com/neurondevice"))
		return d->index >= 0 && v == (unsigned long)d->index;
	if (!strcmp(a->resource, "aws.amazon.com/neuroncore") && d->cores && v >= d->core_base &&
	    v - d->core_base < d->cores) {
		*core = (long)v;
		return 1;
	}
	return 0;
}

/* How each kind's device plugins (resources starting with prefix) and DRA driver name its devices. */
static const struct kind_row {
	const char *type;
	const char *prefix;  /* the plugins' resource names start with it */
	const char *driver;  /* its DRA driver's name; NULL: none known */
	match_fn *match;
} kinds[] = {
	{ "nvidia", "nvidia.com/", "gpu.nvidia.com", match_nvidia },
	{ "amdgpu", "amd.com/", NULL, match_amdgpu },
	{ "neuron", "aws.amazon.com/neuron", NULL, match_neuron },
};

static const struct kind_row *kind_of(const char *type)
{
	for (size_t i = 0; type && i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(kinds[i].type, type))
			return &kinds[i];
	return NULL;
}

/* The kind whose plugins or driver a names; NULL: none the monitor maps. */
static const struct kind_row *kind_named(const struct podres_alloc *a)
{
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (a->resource[0] ? starts(a->resource, kinds[i].prefix)
				   : kinds[i].driver && !strcmp(a->driver, kinds[i].driver))
			return &kinds[i];
	return NULL;
}

static void pods_clear(struct owners *o);

struct owners *owners_new(void)
{
	struct owners *o = xcalloc(1, sizeof(*o));

	o->known = json_object();
	o->logged = json_object();
	return o;
}

void owners_free(struct owners *o)
{
	if (!o)
		return;
	json_decref(o->last);
	free(o->err);
	json_decref(o->known);
	json_decref(o->logged);
	pods_clear(o);
	free(o->pods);
	free(o);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* The jobs jm names for device d (an NVIDIA GPU by its index, a MIG instance by its GPU's and its GPU instance id). */
static const char *const *jobs_of(const struct jobmap *jm, const struct dev_ident *d, size_t *n)
{
	*n = 0;
	if (!jm || strcmp(d->type, "nvidia") || d->index < 0 || (d->sub >= 0 && d->gi < 0))
		return NULL;
	return jobmap_lookup(jm, d->index, d->sub >= 0 ? d->gi : -1, n);
}

static uint64_t devs_hash(const struct dev_ident *devs, size_t n, const struct jobmap *jm)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < n; i++) {
		const struct dev_ident *d = &devs[i];
		const char *const *jobs;
		size_t nj;

		h = fnv(h, d->type, strlen(d->type) + 1);
		h = fnv(h, d->key, strlen(d->key) + 1);
		h = fnv(h, d->uuid, strlen(d->uuid) + 1);
		h = fnv(h, d->pci_bus_id, strlen(d->pci_bus_id) + 1);
		h = fnv(h, &d->index, sizeof(d->index));
		h = fnv(h, &d->sub, sizeof(d->sub));
		h = fnv(h, &d->core_base, sizeof(d->core_base));
		h = fnv(h, &d->cores, sizeof(d->cores));
		h = fnv(h, &d->gi, sizeof(d->gi));
		jobs = jobs_of(jm, d, &nj); /* the jobs, which change under it */
		for (size_t k = 0; k < nj; k++)
			h = fnv(h, jobs[k], strlen(jobs[k]) + 1);
	}
	return h;
}

/* An owner's keys from a record's fields (each written only when known), in the order they are written. */
static const struct {
	const char *key;
	size_t off; /* of the const char * in struct podres_alloc */
} owner_keys[] = {
	{ "namespace", offsetof(struct podres_alloc, ns) },
	{ "pod", offsetof(struct podres_alloc, pod) },
	{ "container", offsetof(struct podres_alloc, container) },
	{ "resource", offsetof(struct podres_alloc, resource) },
	{ "dra_claim_name", offsetof(struct podres_alloc, claim) },
	{ "dra_claim_namespace", offsetof(struct podres_alloc, claim_ns) },
	{ "dra_driver_name", offsetof(struct podres_alloc, driver) },
	{ "dra_pool_name", offsetof(struct podres_alloc, pool) },
	{ "dra_device_name", offsetof(struct podres_alloc, device) },
};

static const char *owner_field(const struct podres_alloc *a, size_t k)
{
	const char *v = *(const char *const *)(const void *)((const char *)a + owner_keys[k].off);

	return v ? v : "";
}

/* Records a and b stand for one owner: the same container and resource (or claim). */
static int same_owner(const struct podres_alloc *a, const struct podres_alloc *b)
{
	for (size_t k = 0; k < ARRAY_SIZE(owner_keys); k++)
		if (strcmp(owner_field(a, k), owner_field(b, k)))
			return 0;
	return 1;
}

/*
 * Add record a (core: its NeuronCore, or -1) to the owners list of a
 * device, whose owners' first records are firsts[0..*n) (one per entry of
 * list, in its order).
 */
static void add_owner(json_t *list, const struct podres_alloc **firsts, size_t *n, const struct podres_alloc *a,
		      long core)
{
	json_t *w = NULL, *v;
	char id[JSET_STR_MAX + 1];
	size_t i;

	for (i = 0; i < *n && !same_owner(firsts[i], a); i++)
		;
	if (i < *n) {
		w = json_array_get(list, i);
	} else {
		w = json_object();
		for (size_t k = 0; k < ARRAY_SIZE(owner_keys); k++)
			jset_str_opt(w, owner_keys[k].key, owner_field(a, k));
		json_array_append_new(list, w);
		firsts[(*n)++] = a;
	}
	if (a->device_id[0]) {
		if (!(v = json_object_get(w, "device_ids")))
			json_object_set_new_nocheck(w, "device_ids", v = json_array());
		snprintf(id, sizeof(id), "%s", a->device_id);
		json_array_append_new(v, json_string(utf8_sanitize(id)));
	}
	if (core >= 0) {
		if (!(v = json_object_get(w, "neuroncores")))
			json_object_set_new_nocheck(w, "neuroncores", v = json_array());
		json_array_append_new(v, json_integer(core));
	}
}

/* Log, once per id, a record of a kind the monitor maps that names none of the devices reported. */
static void tell_unmapped(struct owners *o, const struct podres_alloc *a, const struct dev_ident *devs, size_t n)
{
	const struct kind_row *k = kind_named(a);
	char key[512], q[5][LOG_QUOTE_BUF];
	size_t i;

	for (i = 0; k && i < n && strcmp(devs[i].type, k->type); i++)
		;
	if (!k || i == n) /* a kind not reported this cycle: nothing to map it to */
		return;
	snprintf(key, sizeof(key), "%s %s", a->resource[0] ? a->resource : a->driver,
		 a->resource[0] ? a->device_id : a->device);
	/* Not checked as UTF-8 (an internal set, never written): a kubelet's bytes must not defeat "once". */
	if (json_object_get(o->logged, key) || json_object_size(o->logged) >= UNMAPPED_MAX)
		return;
	json_object_set_new_nocheck(o->logged, key, json_true());
	/* The kubelet's strings, quoted: nothing it sends reaches the terminal raw. */
	log_quote(q[0], LOG_QUOTE_BUF, a->resource[0] ? a->resource : a->driver, (size_t)-1);
	log_quote(q[1], LOG_QUOTE_BUF, a->resource[0] ? a->device_id : a->device, (size_t)-1);
	log_quote(q[2], LOG_QUOTE_BUF, a->ns, (size_t)-1);
	log_quote(q[3], LOG_QUOTE_BUF, a->pod, (size_t)-1);
	log_quote(q[4], LOG_QUOTE_BUF, a->container, (size_t)-1);
	if (!a->pod[0]) /* GetAllocatableResources': the node's, allocated or not */
		log_warn("pod-resources: the kubelet can allocate %s %s %s, which names no %s device this monitor "
			 "reports (one the configuration does not select, or that its driver does not show)",
			 a->resource[0] ? "resource" : "DRA driver", q[0], q[1], k->type);
	else
		log_warn("pod-resources: %s %s %s (pod %s/%s, container %s) names no %s device this monitor reports",
			 a->resource[0] ? "resource" : "DRA driver", q[0], q[1], q[2], q[3], q[4], k->type);
}

void owners_check_allocatable(struct owners *o, const struct dev_ident *devs, size_t n, const struct podres_table *t)
{
	size_t nt = podres_table_size(t);

	if (!nt || t == o->allocatable)
		return;
	o->allocatable = t;
	for (size_t r = 0; r < nt; r++) {
		const struct podres_alloc *a = podres_table_at(t, r);
		const struct kind_row *k = kind_named(a);
		size_t i;
		long core = -1;

		for (i = 0; k && i < n && !(!strcmp(devs[i].type, k->type) && k->match(&devs[i], a, &core)); i++)
			;
		if (k && i == n)
			tell_unmapped(o, a, devs, n);
	}
}

/* The "devices" object: each device's owners, from t, then jm. */
/* Enter pod pod of namespace ns among o's owners' pods unless it is there. */
static void pod_named(struct owners *o, const char *ns, const char *pod)
{
	for (size_t i = 0; i < o->npods; i++)
		if (!strcmp(o->pods[i].ns, ns) && !strcmp(o->pods[i].pod, pod))
			return;
	if (o->npods == o->apods) {
		o->apods = o->apods ? o->apods * 2 : 16;
		o->pods = xrealloc(o->pods, o->apods * sizeof(*o->pods));
	}
	o->pods[o->npods].ns = xstrdup(ns);
	o->pods[o->npods++].pod = xstrdup(pod);
}

static void pods_clear(struct owners *o)
{
	for (size_t i = 0; i < o->npods; i++) {
		free((char *)o->pods[i].ns);
		free((char *)o->pods[i].pod);
	}
	o->npods = 0;
}

const struct owner_pod *owners_pods(const struct owners *o, size_t *n)
{
	*n = o ? o->npods : 0;
	return o ? o->pods : NULL;
}

static json_t *map_devices(struct owners *o, const struct dev_ident *devs, size_t n, const struct podres_table *t,
			   const struct jobmap *jm, const struct owner_pods *pods)
{
	json_t *out = json_object();
	size_t nt = podres_table_size(t);

	pods_clear(o);
	unsigned char *hit = xcalloc(nt ? nt : 1, 1);
	const struct podres_alloc **firsts = xcalloc(nt ? nt : 1, sizeof(*firsts));

	for (size_t i = 0; i < n; i++) {
		const struct dev_ident *d = &devs[i];
		const struct kind_row *k = kind_of(d->type);
		json_t *list = NULL, *bytype;
		const char *const *jobs;
		size_t nj, nfirst = 0;

		for (size_t r = 0; k && r < nt; r++) {
			const struct podres_alloc *a = podres_table_at(t, r);
			long core = -1;

			if (!a->pod[0] || !k->match(d, a, &core))
				continue;
			hit[r] = 1;
			if (!list)
				list = json_array();
			add_owner(list, firsts, &nfirst, a, core);
		}
		for (size_t w = 0; w < nfirst; w++) {
			const char *uid = pods ? pods->uid(pods->ud, firsts[w]->ns, firsts[w]->pod) : NULL;

			if (uid)
				jset_str(json_array_get(list, w), "pod_uid", uid);
			pod_named(o, firsts[w]->ns, firsts[w]->pod);
		}
		jobs = jobs_of(jm, d, &nj);
		for (size_t j = 0; j < nj; j++) {
			if (!list)
				list = json_array();
			json_array_append_new(list, json_pack("{s:s}", "hpc_job", jobs[j]));
		}
		if (!list)
			continue;
		if (!(bytype = json_object_get(out, d->type)))
			json_object_set_new(out, d->type, bytype = json_object());
		json_object_set_new(bytype, d->key, list);
	}
	for (size_t r = 0; r < nt; r++)
		if (!hit[r] && podres_table_at(t, r)->pod[0])
			tell_unmapped(o, podres_table_at(t, r), devs, n);
	free(hit);
	free(firsts);
	return out;
}

/* What table t says (every record's fields, in order): a new answer the same as the last keeps the object. */
static uint64_t table_hash(const struct podres_table *t)
{
	uint64_t h = 14695981039346656037ull;
	size_t nt = podres_table_size(t);

	for (size_t r = 0; r < nt; r++) {
		const struct podres_alloc *a = podres_table_at(t, r);

		for (size_t k = 0; k < ARRAY_SIZE(owner_keys); k++)
			h = fnv(h, owner_field(a, k), strlen(owner_field(a, k)) + 1);
		h = fnv(h, a->device_id, strlen(a->device_id) + 1);
	}
	return fnv(h, &nt, sizeof(nt));
}

/* The pods' UIDs as pods gives them now for t's records: an answer that changes rebuilds the object. */
static uint64_t uids_hash(const struct podres_table *t, const struct owner_pods *pods)
{
	uint64_t h = 14695981039346656037ull;
	size_t nt = pods ? podres_table_size(t) : 0;

	for (size_t r = 0; r < nt; r++) {
		const struct podres_alloc *a = podres_table_at(t, r);
		const char *uid = a->pod[0] ? pods->uid(pods->ud, a->ns, a->pod) : NULL;

		h = uid ? fnv(h, uid, strlen(uid) + 1) : fnv(h, "", 1);
	}
	return h;
}

json_t *owners_report(struct owners *o, const struct dev_ident *devs, size_t n, const struct podres_table *t,
		      unsigned long gen, const struct jobmap *jm, const struct owner_pods *pods, const char *err,
		      int *fresh)
{
	uint64_t h = devs_hash(devs, n, jm), uh = uids_hash(t, pods);
	const char *e = err ? err : "";
	json_t *a;

	*fresh = 0;
	for (size_t i = 0; i < n; i++) {
		char key[96];

		snprintf(key, sizeof(key), "%s/%s", devs[i].type, devs[i].key);
		/* Past the cap nothing is new any more: a kick every cycle would ask the kubelet at each. */
		if (!json_object_get(o->known, key) && json_object_size(o->known) < UNMAPPED_MAX) {
			*fresh = 1;
			json_object_set_new(o->known, key, json_true());
		}
	}
	if (o->have && o->gen != gen) { /* a new answer (one a List: 30 s apart by default) that may say the same */
		uint64_t th = table_hash(t);

		if (th == o->table_hash)
			o->gen = gen;
		o->table_hash = th;
	} else if (!o->have) {
		o->table_hash = table_hash(t);
	}
	if (o->have && o->gen == gen && o->devs_hash == h && o->uids_hash == uh && !strcmp(o->err, e))
		return json_incref(o->last);
	a = json_object();
	jset_str(a, "error", e); /* the sources' text may be cut inside a character */
	json_object_set_new_nocheck(a, "devices", map_devices(o, devs, n, t, jm, pods));
	json_decref(o->last);
	o->last = json_incref(a);
	o->gen = gen;
	o->devs_hash = h;
	o->uids_hash = uh;
	free(o->err);
	o->err = xstrdup(e);
	o->have = 1;
	return a;
}
