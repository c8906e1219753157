/* SPDX-License-Identifier: MIT */
/* The pod-resources table, decoded from the kubelet's answers; see podres_table.h. */
#include "podres_table.h"
#include "podres_api.pb-c.h"
#include "../../common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct podres_table {
	ProtobufCMessage *msg;             /* the decoded answer, which the records' strings point into */
	struct podres_alloc *a;
	size_t n, cap, max;
	size_t pods;
	const struct podres_alloc **index; /* n pointers, sorted by key (key_len bytes of the id) */
};

/* The index key's length: the id up to a "::" replica suffix. */
static size_t key_len(const char *id)
{
	const char *sep = strstr(id, "::");

	return sep ? (size_t)(sep - id) : strlen(id);
}

static const char *key_of(const struct podres_alloc *a)
{
	return a->device_id[0] ? a->device_id : a->device;
}

/* Order by key, then by the whole id, then by place (the records are stable). */
static int cmp_alloc(const void *pa, const void *pb)
{
	const struct podres_alloc *a = *(const struct podres_alloc *const *)pa, *b = *(const struct podres_alloc *const *)pb;
	const char *ka = key_of(a), *kb = key_of(b);
	size_t la = key_len(ka), lb = key_len(kb);
	int c = memcmp(ka, kb, la < lb ? la : lb);

	if (c)
		return c;
	if (la != lb)
		return la < lb ? -1 : 1;
	if ((c = strcmp(ka, kb)))
		return c;
	return a < b ? -1 : a > b;
}

static const char *s_or_empty(const char *s)
{
	return s ? s : "";
}

/* Room for one more record. -E2BIG past the cap. */
static struct podres_alloc *add(struct podres_table *t, char *err, size_t errsz)
{
	if (t->n >= t->max) {
		snprintf(err, errsz, "the answer lists more than %zu devices", t->max);
		return NULL;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->a = xrealloc(t->a, t->cap * sizeof(*t->a));
	}
	memset(&t->a[t->n], 0, sizeof(t->a[0]));
	return &t->a[t->n++];
}

/* One record per id of d, with pod (may be NULL), its namespace and container's names. */
static int add_devices(struct podres_table *t, const V1__ContainerDevices *d, const char *ns, const char *pod,
		       const char *ctr, char *err, size_t errsz)
{
	for (size_t i = 0; i < d->n_device_ids; i++) {
		struct podres_alloc *a = add(t, err, errsz);

		if (!a)
			return -E2BIG;
		a->resource = s_or_empty(d->resource_name);
		a->device_id = s_or_empty(d->device_ids[i]);
		a->ns = ns;
		a->pod = pod;
		a->container = ctr;
	}
	return 0;
}

/* One record per ClaimResource of every claim the container uses. */
static int add_claims(struct podres_table *t, const V1__ContainerResources *c, const char *ns, const char *pod,
		      char *err, size_t errsz)
{
	for (size_t i = 0; i < c->n_dynamic_resources; i++) {
		const V1__DynamicResource *dr = c->dynamic_resources[i];

		for (size_t j = 0; j < dr->n_claim_resources; j++) {
			const V1__ClaimResource *cr = dr->claim_resources[j];
			struct podres_alloc *a = add(t, err, errsz);

			if (!a)
				return -E2BIG;
			a->ns = ns;
			a->pod = pod;
			a->container = s_or_empty(c->name);
			a->claim = s_or_empty(dr->claim_name);
			a->claim_ns = s_or_empty(dr->claim_namespace);
			a->driver = s_or_empty(cr->driver_name);
			a->pool = s_or_empty(cr->pool_name);
			a->device = s_or_empty(cr->device_name);
		}
	}
	return 0;
}

static int fill_list(struct podres_table *t, const V1__ListPodResourcesResponse *r, char *err, size_t errsz)
{
	t->pods = r->n_pod_resources;
	for (size_t i = 0; i < r->n_pod_resources; i++) {
		const V1__PodResources *p = r->pod_resources[i];
		const char *ns = s_or_empty(p->namespace_), *pod = s_or_empty(p->name);

		for (size_t j = 0; j < p->n_containers; j++) {
			const V1__ContainerResources *c = p->containers[j];

			for (size_t k = 0; k < c->n_devices; k++)
				if (add_devices(t, c->devices[k], ns, pod, s_or_empty(c->name), err, errsz))
					return -E2BIG;
			if (add_claims(t, c, ns, pod, err, errsz))
				return -E2BIG;
		}
	}
	return 0;
}

static int fill_allocatable(struct podres_table *t, const V1__AllocatableResourcesResponse *r, char *err,
			    size_t errsz)
{
	for (size_t i = 0; i < r->n_devices; i++)
		if (add_devices(t, r->devices[i], "", "", "", err, errsz))
			return -E2BIG;
	return 0;
}

/* Every string field a record leaves NULL becomes "", then the index is sorted. */
static void finish(struct podres_table *t)
{
	t->index = xmalloc((t->n ? t->n : 1) * sizeof(*t->index));
	for (size_t i = 0; i < t->n; i++) {
		struct podres_alloc *a = &t->a[i];
		const char **f[] = { &a->resource, &a->device_id, &a->ns, &a->pod, &a->container,
				     &a->claim, &a->claim_ns, &a->driver, &a->pool, &a->device };

		for (size_t k = 0; k < ARRAY_SIZE(f); k++)
			*f[k] = s_or_empty(*f[k]);
		t->index[i] = a;
	}
	qsort(t->index, t->n, sizeof(*t->index), cmp_alloc);
}

int podres_table_decode(enum podres_kind kind, const uint8_t *msg, size_t len, size_t max_allocs,
			struct podres_table **out, char *err, size_t errsz)
{
	const ProtobufCMessageDescriptor *d = kind == PODRES_LIST ? &v1__list_pod_resources_response__descriptor
								  : &v1__allocatable_resources_response__descriptor;
	struct podres_table *t = xcalloc(1, sizeof(*t));
	int rc;

	*out = NULL;
	t->max = max_allocs;
	t->msg = protobuf_c_message_unpack(d, NULL, len, msg);
	if (!t->msg) {
		snprintf(err, errsz, "malformed answer: %zu bytes that are not a %s message", len, d->name);
		free(t);
		return -EBADMSG;
	}
	rc = kind == PODRES_LIST ? fill_list(t, (const V1__ListPodResourcesResponse *)(void *)t->msg, err, errsz)
				 : fill_allocatable(t, (const V1__AllocatableResourcesResponse *)(void *)t->msg, err,
						    errsz);
	if (rc) {
		podres_table_free(t);
		return rc;
	}
	finish(t);
	*out = t;
	return 0;
}

void podres_table_free(struct podres_table *t)
{
	if (!t)
		return;
	if (t->msg)
		protobuf_c_message_free_unpacked(t->msg, NULL);
	free(t->a);
	free(t->index);
	free(t);
}

size_t podres_table_size(const struct podres_table *t)
{
	return t ? t->n : 0;
}

const struct podres_alloc *podres_table_at(const struct podres_table *t, size_t i)
{
	return t && i < t->n ? &t->a[i] : NULL;
}

size_t podres_table_pods(const struct podres_table *t)
{
	return t ? t->pods : 0;
}

/* Compare id's key (klen bytes) with a record's. */
static int cmp_key(const char *id, size_t klen, const struct podres_alloc *a)
{
	const char *k = key_of(a);
	size_t l = key_len(k);
	int c = memcmp(id, k, klen < l ? klen : l);

	return c ? c : klen < l ? -1 : klen > l;
}

const struct podres_alloc *const *podres_lookup(const struct podres_table *t, const char *id, size_t *n)
{
	size_t klen = key_len(id), lo = 0, hi, end;

	*n = 0;
	if (!t || !t->n || !klen)
		return NULL;
	hi = t->n;
	while (lo < hi) { /* the first record whose key is not below id's */
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_key(id, klen, t->index[mid]) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < t->n && !cmp_key(id, klen, t->index[end]); end++)
		;
	*n = end - lo;
	return *n ? (const struct podres_alloc *const *)t->index + lo : NULL;
}
