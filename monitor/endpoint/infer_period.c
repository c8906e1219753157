/* SPDX-License-Identifier: MIT */
/*
 * A period of an inference server's execution_stats: the increases of
 * each scrape's samples (infer.c) summed per model and version, per GPU
 * and per error reason (found through one table of lookups), the
 * histograms' percentiles, and the JSON written from them.
 */
#include "infer_int.h"
#include "../../common/samples.h"
#include "bounds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- A period ---------------------------------------------------------------------------------------- */

/* A string-keyed open-addressing index into an array (series or groups). */
/* Ready for n keys, empty; its arrays kept from the previous use when large enough. */
void infer_index_init(struct index *x, size_t n)
{
	x->slots = 16;
	while (x->slots < 2 * n)
		x->slots <<= 1;
	if (x->slots > x->cap) {
		free(x->key);
		free(x->val);
		x->key = xmalloc(x->slots * sizeof(*x->key));
		x->val = xmalloc(x->slots * sizeof(*x->val));
		x->cap = x->slots;
	}
	memset(x->key, 0, x->slots * sizeof(*x->key));
}

void infer_index_free(struct index *x)
{
	free(x->key);
	free(x->val);
}

/* The slot of key: holding it, or the empty one where it goes. */
size_t infer_index_slot(const struct index *x, const char *key, size_t n)
{
	size_t h = infer_name_hash(key, n) & (x->slots - 1);

	while (x->key[h] && (strncmp(x->key[h], key, n) || x->key[h][n]))
		h = (h + 1) & (x->slots - 1);
	return h;
}

/* ---- The period's lookups (struct look) ---- */

static uint64_t look_hash(enum look_kind kind, uint32_t owner, const void *a, size_t na, const void *b, size_t nb)
{
	uint64_t h = hash_bytes((uint64_t)kind << 32 | owner, a, na);

	return b ? hash_bytes(h, b, nb) : h;
}

/* Empty, ready for n items (its slots kept when large enough). */
void infer_look_reset(struct look *t, size_t n)
{
	size_t cap = 64;

	while (cap < 2 * n)
		cap <<= 1;
	if (cap > t->cap) {
		free(t->s);
		t->s = xmalloc(cap * sizeof(*t->s));
		t->cap = cap;
	}
	memset(t->s, 0, t->cap * sizeof(*t->s));
	t->n = 0;
}

void infer_look_free(struct look *t)
{
	free(t->s);
}

/*
 * The item of kind and owner whose key hashes to h and for which same(ctx,
 * index) holds: its index, or -1 with *at the slot where it would go.
 */
static long look_find(const struct look *t, uint64_t h, enum look_kind kind, uint32_t owner,
		      int (*same)(const void *ctx, size_t idx), const void *ctx, size_t *at)
{
	size_t mask = t->cap - 1, i;

	for (i = (size_t)(h >> 32) & mask; t->s[i].idx; i = (i + 1) & mask)
		if (t->s[i].h == h && t->s[i].kind == (uint32_t)kind && t->s[i].owner == owner &&
		    same(ctx, t->s[i].idx - 1))
			return (long)(t->s[i].idx - 1);
	*at = i;
	return -1;
}

/* Record item idx at slot at (from look_find); the table grows past half full. */
static void look_add(struct look *t, size_t at, uint64_t h, enum look_kind kind, uint32_t owner, size_t idx)
{
	t->s[at] = (struct look_slot){ h, owner, (uint32_t)kind, (uint32_t)idx + 1 };
	if (++t->n * 2 > t->cap) {
		struct look_slot *old = t->s;
		size_t n = t->cap;

		t->cap *= 2;
		t->s = xcalloc(t->cap, sizeof(*t->s));
		for (size_t k = 0; k < n; k++) {
			size_t i;

			if (!old[k].idx)
				continue;
			for (i = (size_t)(old[k].h >> 32) & (t->cap - 1); t->s[i].idx; i = (i + 1) & (t->cap - 1))
				;
			t->s[i] = old[k];
		}
		free(old);
	}
}

struct model_key {
	const struct period *pd;
	const char *model, *version;
};

static int same_model(const void *ctx, size_t idx)
{
	const struct model_key *k = ctx;

	return idx < k->pd->na && !strcmp(k->pd->a[idx].model, k->model) && !strcmp(k->pd->a[idx].version, k->version);
}

struct dev_key {
	const struct period *pd;
	const char *uuid;
};

static int same_dev(const void *ctx, size_t idx)
{
	const struct dev_key *k = ctx;

	return idx < k->pd->ndv && !strcmp(k->pd->dv[idx].uuid, k->uuid);
}

static struct acc *acc_of(struct period *pd, const char *model, const char *version)
{
	/* a model's samples mostly follow each other (their strings often the same in the arena): the previous one first */
	if (pd->last < pd->na && (pd->a[pd->last].model == model || !strcmp(pd->a[pd->last].model, model)) &&
	    (pd->a[pd->last].version == version || !strcmp(pd->a[pd->last].version, version)))
		return &pd->a[pd->last];
	/* or, family after family (Triton), the model after it */
	if (pd->last + 1 < pd->na && !strcmp(pd->a[pd->last + 1].model, model) &&
	    !strcmp(pd->a[pd->last + 1].version, version))
		return &pd->a[++pd->last];
	{
		struct model_key k = { pd, model, version };
		size_t nm = strlen(model) + 1, at;
		uint64_t h = look_hash(LOOK_MODEL, 0, model, nm, version, strlen(version) + 1);
		long i = look_find(pd->look, h, LOOK_MODEL, 0, same_model, &k, &at);

		if (i >= 0) {
			pd->last = (size_t)i;
			return &pd->a[i];
		}
		if (pd->na >= INFER_MAX_MODELS) {
			pd->models_out++;
			return NULL;
		}
		look_add(pd->look, at, h, LOOK_MODEL, 0, pd->na);
	}
	pd->last = pd->na;
	if (pd->na == pd->cap) {
		size_t old = pd->cap;

		pd->cap = pd->cap ? 2 * pd->cap : 8;
		pd->a = xrealloc(pd->a, pd->cap * sizeof(*pd->a));
		memset(pd->a + old, 0, (pd->cap - old) * sizeof(*pd->a));
	}
	{ /* a slot an earlier period used: its bucket arrays are kept (their room), the rest starts again */
		struct acc *a = &pd->a[pd->na];
		struct bucket *b[M_N];
		size_t cap[M_N];

		for (int m = 0; m < M_N; m++) {
			b[m] = a->d[m].b;
			cap[m] = a->d[m].cap;
		}
		memset(a, 0, sizeof(*a));
		for (int m = 0; m < M_N; m++) {
			a->d[m].b = b[m];
			a->d[m].cap = cap[m];
		}
	}
	pd->a[pd->na].model = model;
	pd->a[pd->na].version = version;
	for (int m = 0; m < M_N; m++)
		pd->a[pd->na].d[m].fam = -1;
	return &pd->a[pd->na++];
}

static struct dev *dev_of(struct period *pd, const char *uuid)
{
	struct dev_key k = { pd, uuid };
	uint64_t h = look_hash(LOOK_DEVICE, 0, uuid, strlen(uuid), NULL, 0);
	size_t at;
	long i = look_find(pd->look, h, LOOK_DEVICE, 0, same_dev, &k, &at);

	if (i >= 0)
		return &pd->dv[i];
	if (pd->ndv >= INFER_MAX_DEVICES) {
		pd->devices_out++;
		return NULL;
	}
	look_add(pd->look, at, h, LOOK_DEVICE, 0, pd->ndv);
	if (pd->ndv == pd->dcap) {
		pd->dcap = pd->dcap ? 2 * pd->dcap : 4;
		pd->dv = xrealloc(pd->dv, pd->dcap * sizeof(*pd->dv));
	}
	memset(&pd->dv[pd->ndv], 0, sizeof(pd->dv[0]));
	pd->dv[pd->ndv].uuid = uuid;
	return &pd->dv[pd->ndv++];
}

struct err_key {
	const struct err *e;
	size_t n;
	const char *type;
};

static int same_err(const void *ctx, size_t idx)
{
	const struct err_key *k = ctx;

	return idx < k->n && !strcmp(k->e[idx].type, k->type);
}

/* Add v to the reason type of owner's list e (n of them), lower-cased; a new one past INFER_MAX_ERRORS is left out. */
static void err_add(struct period *pd, uint32_t owner, struct err **e, size_t *n, const char *type, double v)
{
	char t[128];
	size_t i, at;
	uint64_t h;
	long found;
	struct err_key k;

	/* Triton's reasons are upper case (REJECTED, BACKEND): error types are lower case (at most 127 bytes) */
	if (!*type)
		type = "generic";
	for (i = 0; type[i] && i < sizeof(t) - 1; i++)
		t[i] = type[i] >= 'A' && type[i] <= 'Z' ? (char)(type[i] - 'A' + 'a') : type[i];
	t[i] = '\0';
	if (type[i])
		utf8_sanitize(t); /* the cut may have split a character */
	k = (struct err_key){ *e, *n, t };
	h = look_hash(LOOK_ERROR, owner, t, strlen(t), NULL, 0);
	found = look_find(pd->look, h, LOOK_ERROR, owner, same_err, &k, &at);
	if (found >= 0) {
		i = (size_t)found;
	} else {
		if (*n >= INFER_MAX_ERRORS) {
			pd->errors_out++;
			return;
		}
		look_add(pd->look, at, h, LOOK_ERROR, owner, *n);
		i = *n;
		*e = xrealloc(*e, (*n + 1) * sizeof(**e));
		(*e)[i].type = xstrdup(t);
		(*e)[i].n = 0;
		(*n)++;
	}
	(*e)[i].n += v;
}

struct bound_key {
	const struct bucket *b;
	size_t n;
	double le;
};

static int same_bound(const void *ctx, size_t idx)
{
	const struct bound_key *k = ctx;

	return idx < k->n && k->b[idx].le == k->le;
}

/* Add v to owner's bucket of bound le (b: n of them, room for cap); a new one past INFER_MAX_BOUNDS is left out. */
static void bucket_add(struct period *pd, uint32_t owner, struct bucket **b, size_t *n, size_t *cap, double le,
		       double v)
{
	struct bound_key k = { *b, *n, le };
	double key = le == 0 ? 0.0 : le; /* -0 and 0 are one bound */
	uint64_t h = look_hash(LOOK_BOUND, owner, &key, sizeof(key), NULL, 0);
	size_t at;
	long i = look_find(pd->look, h, LOOK_BOUND, owner, same_bound, &k, &at);

	if (i >= 0) {
		(*b)[i].n += v;
		return;
	}
	if (*n >= INFER_MAX_BOUNDS) {
		pd->bounds_out++;
		return;
	}
	look_add(pd->look, at, h, LOOK_BOUND, owner, *n);
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		*b = xrealloc(*b, *cap * sizeof(**b));
	}
	(*b)[(*n)++] = (struct bucket){ le, v };
}

static void count_add(struct count *c, double v)
{
	c->v += v;
	c->has = 1;
}

/* One sample's increase (or, for gauges and quantiles, its value) into its model's accumulator. */
void infer_add_pt(struct period *pd, const struct pt *p, double d)
{
	const struct fam *f = &fams[p->fam];
	struct acc *a;
	struct dist *ds;

	if (f->role == ROLE_DEVICE) {
		struct dev *dv;

		if (p->v < 0 && f->arg != D_TEMP)
			return; /* a utilization, memory, power or energy below zero is no reading: left out */
		dv = dev_of(pd, pt_sub(p));
		if (!dv)
			return;
		if (f->arg == D_ENERGY) {
			dv->energy_total = p->v;
			dv->has_energy_total = 1;
			if (pd->have_base)
				count_add(&dv->f[D_ENERGY], d);
		} else {
			dv->f[f->arg].v = p->v;
			dv->f[f->arg].has = 1;
		}
		return;
	}
	if (f->role == ROLE_HOST_ERROR) {
		if (pd->have_base)
			err_add(pd, OWNER_HOST, &pd->host_errs, &pd->nhost, pt_sub(p), d);
		return;
	}
	a = acc_of(pd, pt_model(p), pt_version(p));
	if (!a)
		return;
	switch (f->role) {
	case ROLE_IN_FLIGHT:
		count_add(&a->in_flight, p->v);
		return;
	case ROLE_PENDING:
		count_add(&a->pending, p->v);
		return;
	case ROLE_KV_CACHE:
		/* vLLM 0.x and 1.x names for the same ratio; several engines: the fullest */
		if (!a->kv.has || p->v > a->kv.v)
			a->kv.v = p->v;
		a->kv.has = 1;
		return;
	default:
		break;
	}
	if (!pd->have_base)
		return;
	switch (f->role) {
	case ROLE_COMPLETED:
		count_add(&a->completed, d);
		break;
	case ROLE_FAILED:
		count_add(&a->failed, d);
		err_add(pd, (uint32_t)(a - pd->a), &a->errs, &a->nerrs, pt_sub(p), d);
		break;
	case ROLE_INFER_COUNT:
		count_add(&a->infer, d);
		break;
	case ROLE_EXEC_COUNT:
		count_add(&a->exec, d);
		break;
	case ROLE_PROMPT:
	case ROLE_GENERATION:
		if (p->part == P_VALUE || p->part == P_SUM)
			count_add(f->role == ROLE_PROMPT ? &a->prompt : &a->gen, d);
		break;
	case ROLE_DURATION:
		count_add(&a->dur[f->arg], d);
		a->dur_div[f->arg] = f->div;
		break;
	case ROLE_DIST:
		ds = &a->d[f->arg];
		if (ds->fam >= 0 && ds->fam != p->fam) {
			if (fams[ds->fam].prio >= f->prio)
				return;
			free(ds->b);
			memset(ds, 0, sizeof(*ds));
		}
		ds->fam = p->fam;
		if (p->part == P_BUCKET)
			bucket_add(pd, (uint32_t)((size_t)(a - pd->a) * M_N + (size_t)f->arg), &ds->b, &ds->nb, &ds->cap,
				   p->le, d);
		else if (p->part == P_SUM) {
			ds->sum += d;
			ds->has_sum = 1;
		} else if (p->part == P_COUNT) {
			ds->count += d;
			ds->has_count = 1;
		} else if (p->part == P_QUANTILE && !ds->qmixed) {
			if (ds->qgroup && strcmp(ds->qgroup, pt_group(p))) {
				ds->qmixed = 1;
				ds->nb = 0;
				return;
			}
			ds->qgroup = pt_group(p);
			bucket_add(pd, (uint32_t)((size_t)(a - pd->a) * M_N + (size_t)f->arg), &ds->b, &ds->nb, &ds->cap,
				   p->le, p->v);
		}
		break;
	default:
		break;
	}
}

static int cmp_bucket(const void *a, const void *b)
{
	double x = ((const struct bucket *)a)->le, y = ((const struct bucket *)b)->le;

	return x < y ? -1 : x > y;
}

/* Prometheus' almost.Equal: relative difference below epsilon. */
static int almost_equal(double a, double b, double epsilon)
{
	const double min_normal = 2.2250738585072014e-308; /* math.Float64frombits(0x0010000000000000) */
	double abs_sum, diff;

	if (isnan(a) && isnan(b))
		return 1;
	if (a == b)
		return 1;
	abs_sum = fabs(a) + fabs(b);
	diff = fabs(a - b);
	if (a == 0 || b == 0 || abs_sum < min_normal)
		return diff < epsilon * min_normal;
	return diff / fmin(abs_sum, 1.7976931348623157e308) < epsilon;
}

/*
 * Cumulative buckets b[0..n) (sorted by bound) made monotonic as Prometheus'
 * ensureMonotonicAndIgnoreSmallDeltas does: a count below the one before, or
 * within 1e-12 of it (relative), takes that one's value.
 */
static void bucket_monotonic(struct bucket *b, size_t n)
{
	double prev = n ? b[0].n : 0;

	for (size_t i = 1; i < n; i++) {
		double c = b[i].n;

		if (c == prev)
			continue;
		if (almost_equal(prev, c, 1e-12) || c < prev) {
			b[i].n = prev;
			continue;
		}
		prev = c;
	}
}

/*
 * The q-quantile of cumulative buckets b[0..n) (bound, count; sorted by
 * bound, bounds distinct, already coalesced), exactly as Prometheus'
 * BucketQuantile (promql/quantile.go) computes histogram_quantile for
 * classic histograms: monotonicity forced (differences below 1e-12 relative
 * ignored), rank q*observations found by binary search, linear
 * interpolation in its bucket from the previous bound (0 below the lowest
 * bucket when its bound is positive), the second-highest bound when it
 * falls in +Inf. NaN where Prometheus gives NaN. b is changed in place.
 */
static double bucket_quantile(double q, struct bucket *b, size_t n)
{
	double obs, rank, start = 0, end, count;
	size_t lo, hi, k;

	if (isnan(q))
		return NAN;
	if (q < 0)
		return -INFINITY;
	if (q > 1)
		return INFINITY;
	if (!n || !isinf(b[n - 1].le) || b[n - 1].le < 0)
		return NAN;
	bucket_monotonic(b, n);
	if (n < 2)
		return NAN;
	obs = b[n - 1].n;
	if (obs == 0)
		return NAN;
	rank = q * obs;
	/* sort.Search(n-1, count >= rank) */
	lo = 0;
	hi = n - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (!(b[mid].n >= rank))
			lo = mid + 1;
		else
			hi = mid;
	}
	k = lo;
	if (k == n - 1)
		return b[n - 2].le;
	if (k == 0 && b[0].le <= 0)
		return b[0].le;
	end = b[k].le;
	count = b[k].n;
	if (k > 0) {
		start = b[k - 1].le;
		count -= b[k - 1].n;
		rank -= b[k - 1].n;
	}
	return start + (end - start) * (rank / count);
}

/* A count as a JSON integer; NULL (the key is then not set) for what no count can be. */
json_t *infer_int_of(double v)
{
	return isfinite(v) && fabs(v) < 9007199254740992.0 ? json_integer((json_int_t)llround(v)) : NULL;
}

/* A real; NULL (not set) when not finite (an overflow of garbage values): JSON has no NaN or Inf. */
json_t *infer_real_of(double v)
{
	return isfinite(v) ? json_real(v) : NULL;
}

static const double pct_q[] = { 0, 0.01, 0.25, 0.5, 0.75, 0.99, 1 };
static const char *const pct_name[] = { "p0", "p1", "p25", "p50", "p75", "p99", "p100" };

/*
 * Percentiles of bucket increments b (each bucket counts what is <= its
 * bound, as the buckets themselves do; sorted here)
 * in seconds (bounds divided by div): the object, or NULL when there were no
 * observations. A quantile histogram_quantile gives as NaN is left out.
 */
static json_t *hist_pcts(struct bucket *b, size_t n, double div)
{
	struct bucket *cum;
	json_t *o;

	if (!n)
		return NULL;
	qsort(b, n, sizeof(*b), cmp_bucket);
	cum = xmalloc(n * sizeof(*cum));
	o = json_object();
	for (size_t i = 0; i < ARRAY_SIZE(pct_q); i++) {
		double v;

		/* bucket_quantile changes its input (monotonicity): a fresh copy each time */
		memcpy(cum, b, n * sizeof(*cum));
		v = bucket_quantile(pct_q[i], cum, n);
		if (isfinite(v))
			json_object_set_new(o, pct_name[i], infer_real_of(v / div));
	}
	free(cum);
	if (!json_object_size(o)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* A summary's quantiles (q, value in server units) as p<100q> in seconds. */
static json_t *summary_pcts(struct bucket *b, size_t n, double div)
{
	json_t *o;

	if (!n)
		return NULL;
	qsort(b, n, sizeof(*b), cmp_bucket);
	for (size_t i = 1; i < n; i++)
		if (b[i].n < b[i - 1].n)
			return NULL; /* quantiles out of order: not a summary's, none given */
	o = json_object();
	for (size_t i = 0; i < n; i++) {
		char key[32];

		if (!isfinite(b[i].n))
			continue;
		snprintf(key, sizeof(key), "p%.10g", b[i].le * 100);
		json_object_set_new(o, key, infer_real_of(b[i].n / div));
	}
	if (!json_object_size(o)) {
		json_decref(o);
		return NULL;
	}
	return o;
}


/* A count as a JSON number: an integer where it is one below 2^53, else a real; NULL when not finite. */
static json_t *count_of(double v)
{
	return v == trunc(v) && fabs(v) < 9007199254740992.0 ? json_integer((json_int_t)v) : infer_real_of(v);
}

/*
 * A histogram's period as latency_histograms writes it (docs/report-format.md):
 * {"le": finite bounds ascending in seconds, "counts": the n + 1 buckets' own
 * increments (not cumulative, the +Inf bucket last), "sum": seconds,
 * "count": observations}, from the bucket increments b (sorted by bound, as
 * hist_pcts leaves them), made monotonic first as histogram_quantile does,
 * so that the percentiles written beside it are these buckets'. NULL when
 * there is no +Inf bucket, no _sum, no observation, or a value that is not
 * finite.
 */
_Static_assert(INFER_MAX_BOUNDS <= SAMPLE_HIST_MAX_BOUNDS + 1, "a histogram's finite bounds fit a sample's");

static json_t *hist_json(const struct bucket *b, size_t n, double sum, int has_sum, double div)
{
	struct bucket *cum;
	json_t *o = NULL, *le, *counts;
	double prev = 0;

	if (!n || !isinf(b[n - 1].le) || b[n - 1].le < 0 || !has_sum || !isfinite(sum / div))
		return NULL;
	cum = xmalloc(n * sizeof(*cum));
	memcpy(cum, b, n * sizeof(*cum));
	bucket_monotonic(cum, n);
	if (!(cum[0].n >= 0) || !(cum[n - 1].n > 0) || !isfinite(cum[n - 1].n))
		goto out;
	le = json_array();
	counts = json_array();
	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n)
			json_array_append_new(le, json_real(cum[i].le / div));
		json_array_append_new(counts, count_of(cum[i].n - prev));
		prev = cum[i].n;
	}
	o = json_object();
	json_object_set_new(o, "le", le);
	json_object_set_new(o, "counts", counts);
	json_object_set_new(o, "sum", json_real(sum / div));
	json_object_set_new(o, "count", count_of(cum[n - 1].n));
out:
	free(cum);
	return o;
}


static void set_errs(json_t *parent, const struct err *e, size_t n)
{
	json_t *o = json_object();

	for (size_t i = 0; i < n; i++)
		json_object_set_new(o, e[i].type, infer_int_of(e[i].n));
	json_object_set_new(parent, "error_summary", o);
}

/* One model's object; NULL when the period gave it nothing. */
/* A count as infer_int_of writes it, as a number; NAN when it writes none. */
static double count_written(const struct count *c)
{
	return c->has && isfinite(c->v) && fabs(c->v) < 9007199254740992.0 ? (double)llround(c->v) : NAN;
}

json_t *infer_model_json(struct acc *a, int have_base, int hist, struct infer_model *r)
{
	json_t *o = json_object(), *lat = json_object(), *mean = json_object(), *hs = json_object();
	double mv[M_N];
	int src_h = 0, src_s = 0;

	if (a->completed.has || a->failed.has) {
		json_t *es = json_object();

		if (a->completed.has)
			json_object_set_new(es, "completed", infer_int_of(a->completed.v));
		if (a->failed.has)
			json_object_set_new(es, "failed", infer_int_of(a->failed.v));
		json_object_set_new(o, "execution_summary", es);
	}
	if (a->failed.has)
		set_errs(o, a->errs, a->nerrs);
	for (int m = 0; have_base && m < M_N; m++) {
		struct dist *d = &a->d[m];
		const struct fam *f = d->fam >= 0 ? &fams[d->fam] : NULL;
		json_t *p = NULL, *h;

		if (m < 4 && f && f->type == 'h' && d->has_count && d->count > 0) {
			p = hist_pcts(d->b, d->nb, f->div);
			src_h += !!p;
			if (hist && p && (h = hist_json(d->b, d->nb, d->sum, d->has_sum, f->div)))
				json_object_set_new(hs, pct_key[m], h);
		} else if (m < 4 && f && f->type == 's' && !d->qmixed && d->has_count && d->count > 0) {
			p = summary_pcts(d->b, d->nb, f->div);
			src_s += !!p;
		}
		if (p)
			json_object_set_new(lat, pct_key[m], p);
		/* the mean: a cumulative duration counter per completed request, else the distribution's sum/count */
		mv[m] = NAN;
		if (a->dur[m].has) {
			if (a->completed.has && a->completed.v > 0)
				mv[m] = a->dur[m].v / a->dur_div[m] / a->completed.v;
		} else if (f && d->has_sum && d->has_count && d->count > 0) {
			mv[m] = d->sum / f->div / d->count;
		}
		if (isfinite(mv[m]))
			json_object_set_new(mean, mean_key[m], infer_real_of(mv[m]));
	}
	r->completed = count_written(&a->completed);
	r->compute_s = have_base && isfinite(mv[M_COMPUTE_INFER]) ? mv[M_COMPUTE_INFER] : NAN;
	r->request_s = have_base && isfinite(mv[M_REQUEST]) ? mv[M_REQUEST] : NAN;
	r->generation = count_written(&a->gen);
	if (json_object_size(lat)) {
		json_object_set_new(lat, "percentile_source",
				    json_string(src_h && src_s ? "mixed" : src_h ? "histogram" : "summary"));
		json_object_set_new(o, "latency_stats", lat);
	} else {
		json_decref(lat);
	}
	if (json_object_size(hs))
		json_object_set_new(o, "latency_histograms", hs);
	else
		json_decref(hs);
	if (json_object_size(mean))
		json_object_set_new(o, "mean_seconds", mean);
	else
		json_decref(mean);
	if (a->in_flight.has)
		json_object_set_new(o, "requests_in_flight", infer_int_of(a->in_flight.v));
	if (a->pending.has)
		json_object_set_new(o, "requests_pending", infer_int_of(a->pending.v));
	if (a->infer.has && a->exec.has && a->exec.v > 0)
		json_object_set_new(o, "batch_size", infer_real_of(a->infer.v / a->exec.v));
	if (a->prompt.has || a->gen.has) {
		json_t *t = json_object();

		if (a->prompt.has)
			json_object_set_new(t, "prompt", infer_int_of(a->prompt.v));
		if (a->gen.has)
			json_object_set_new(t, "generation", infer_int_of(a->gen.v));
		json_object_set_new(o, "tokens", t);
	}
	if (a->kv.has)
		json_object_set_new(o, "kv_cache_usage_ratio", infer_real_of(a->kv.v));
	if (!json_object_size(o)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The runtime-level sums and merged distribution over all models. */
void infer_runtime_json(struct period *pd, json_t *group)
{
	struct count completed = { 0, 0 }, failed = { 0, 0 };
	struct err *errs = NULL;
	size_t nerrs = 0, nb = 0, cap = 0;
	struct bucket *b = NULL;
	double div = 0, sum = 0;
	int merge = 1, any = 0, has_sum = 1;

	for (size_t i = 0; i < pd->na; i++) {
		struct acc *a = &pd->a[i];
		struct dist *d = &a->d[M_REQUEST];

		if (a->completed.has)
			count_add(&completed, a->completed.v);
		if (a->failed.has) {
			count_add(&failed, a->failed.v);
			for (size_t k = 0; k < a->nerrs; k++)
				err_add(pd, OWNER_MERGED, &errs, &nerrs, a->errs[k].type, a->errs[k].n);
		}
		if (d->fam < 0)
			continue;
		/* merged only when every model's distribution is a histogram in the same unit */
		if (fams[d->fam].type != 'h' || (div && div != fams[d->fam].div)) {
			merge = 0;
			continue;
		}
		div = fams[d->fam].div;
		if (d->has_count && d->count > 0)
			any = 1;
		sum += d->sum;
		has_sum &= d->has_sum || !d->nb;
		for (size_t k = 0; k < d->nb; k++)
			bucket_add(pd, OWNER_MERGED, &b, &nb, &cap, d->b[k].le, d->b[k].n);
	}
	for (size_t k = 0; k < pd->nhost; k++)
		err_add(pd, OWNER_MERGED, &errs, &nerrs, pd->host_errs[k].type, pd->host_errs[k].n);
	if (completed.has || failed.has) {
		json_t *es = json_object();

		if (completed.has)
			json_object_set_new(es, "completed", infer_int_of(completed.v));
		if (failed.has)
			json_object_set_new(es, "failed", infer_int_of(failed.v));
		json_object_set_new(group, "execution_summary", es);
	}
	if (nerrs)
		set_errs(group, errs, nerrs);
	if (merge && any) {
		json_t *p = hist_pcts(b, nb, div);

		if (p) {
			json_t *lat = json_object();

			json_object_set_new(lat, "total_latency", p);
			json_object_set_new(lat, "percentile_source", json_string("histogram"));
			json_object_set_new(group, "latency_stats", lat);
			if (pd->hist && (p = hist_json(b, nb, sum, has_sum, div)))
				json_object_set_new(group, "latency_histograms", json_pack("{s:o}", "total_latency", p));
		}
	}
	for (size_t k = 0; k < nerrs; k++)
		free(errs[k].type);
	free(errs);
	free(b);
}

/* What the limits left out of this period, in the group's "error" (after any error it has). */
void infer_limits_error(const struct infer *in, const struct period *pd, json_t *group)
{
	const struct {
		size_t out;
		unsigned max;
		const char *what;
	} lim[] = {
		{ in->series_left_out, INFER_MAX_SERIES, "samples" },
		{ pd->models_out, INFER_MAX_MODELS, "model versions" },
		{ pd->devices_out, INFER_MAX_DEVICES, "server devices" },
		{ pd->errors_out, INFER_MAX_ERRORS, "error reasons of one model" },
		{ pd->bounds_out, INFER_MAX_BOUNDS, "bounds of one distribution" },
	};
	const char *old = json_string_value(json_object_get(group, "error"));
	char msg[512];
	int n = 0;

	if (old && *old)
		n = snprintf(msg, sizeof(msg), "%s", old);
	for (size_t i = 0; i < ARRAY_SIZE(lim); i++)
		if (lim[i].out && n >= 0 && (size_t)n < sizeof(msg))
			n += snprintf(msg + n, sizeof(msg) - (size_t)n, "%smore than %u %s: %zu samples left out",
				      n ? "; " : "", lim[i].max, lim[i].what, lim[i].out);
	if (n > 0 && !(old && (size_t)n == strlen(old)))
		json_object_set_new(group, "error", json_string(utf8_sanitize(msg))); /* cut inside a character: still valid */
}

/* The period's error lists are freed; its arrays go back to in for the next period. */
void infer_period_end(struct infer *in, struct period *pd)
{
	for (size_t i = 0; i < pd->na; i++) {
		for (size_t k = 0; k < pd->a[i].nerrs; k++)
			free(pd->a[i].errs[k].type);
		free(pd->a[i].errs);
		pd->a[i].errs = NULL;
		pd->a[i].nerrs = 0;
	}
	for (size_t k = 0; k < pd->nhost; k++)
		free(pd->host_errs[k].type);
	free(pd->host_errs);
	in->pa = pd->a;
	in->pcap = pd->cap;
	in->pdv = pd->dv;
	in->pdcap = pd->dcap;
}

