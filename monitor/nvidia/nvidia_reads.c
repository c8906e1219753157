/* SPDX-License-Identifier: MIT */
/*
 * The NVIDIA collector's reads as a table (nv_reads, in nvidia_groups.c):
 * each row is one NVML read of a GPU, the field it fills, its group and
 * its cadence (every cycle, once per "slow_period", once per
 * "energy_period", or a static value read at start and at each refresh).
 * Here is what walks the rows: a group's filler calls nv_walk, which makes
 * each of its group's rows that is due (its cadence, the NOT_SUPPORTED
 * cache, the entry point the library has), keeps or drops what a row not
 * due read last, and puts each row's record into the group's object, in
 * the rows' order. The rows' common readers and putters are here too.
 */
#include "nvidia_dev.h"

#include <string.h>

const struct nv_read *nv_row(enum group_id g, enum nv_field f)
{
	for (size_t i = 0; i < nv_nreads; i++)
		if (nv_reads[i].group == g && nv_reads[i].f == f)
			return &nv_reads[i];
	return NULL;
}

/* Does the library have rd's entry point (rd->api: an offset in struct nvml_api; NV_NO_API: rd decides)? */
static int nv_has(const struct nv_state *s, const struct nv_read *rd)
{
	void *fn;

	if (rd->api == NV_NO_API)
		return 1;
	memcpy(&fn, (const char *)&s->api + rd->api, sizeof(fn));
	return fn != NULL;
}

int nv_asks(const struct nv_state *s, const struct nv_dev *d, const struct nv_read *rd)
{
	return nv_has(s, rd) && !(d->unsup & (1u << rd->f));
}

/* rd's cadence in ns (0: every cycle). */
static int64_t nv_every(const struct nv_state *s, const struct nv_read *rd)
{
	return rd->every == NV_SLOW ? s->slow_every : rd->every == NV_ENERGY ? s->energy_every : 0;
}

/* Record rd's result r (1 read, 0 absent) in d->got. */
static void nv_set_got(struct nv_dev *d, const struct nv_read *rd, int r)
{
	uint64_t bit = 1ull << NV_ROW_I(rd);

	d->got = r ? d->got | bit : d->got & ~bit;
}

int nv_fresh(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd)
{
	size_t i = NV_ROW_I(rd);
	int r;

	switch (rd->every) {
	case NV_PUT:
		return 0;
	case NV_STATIC: /* read when a refresh marked it, whatever NOT_SUPPORTED said */
		if (!(d->stale & (1ull << i)))
			return 0;
		if ((r = nv_has(s, rd) ? rd->read(s, d, rd) : 0) < 0)
			return -1;
		nv_set_got(d, rd, r);
		d->stale &= ~(1ull << i);
		return 1;
	case NV_SLOW:
	case NV_ENERGY:
		if (!nv_asks(s, d, rd))
			break;
		if (!nv_due(s, d, &d->read_ns[i], nv_every(s, rd))) {
			if (!rd->must || !rd->must(s, d))
				return 0; /* between reads: the value last read stands */
			d->read_ns[i] = s->cycle_ns;
		}
		/* due: read as every cycle's are */
		/* fall through */
	case NV_EVERY:
		if (!nv_asks(s, d, rd))
			break;
		if ((r = rd->read(s, d, rd)) < 0)
			return -1;
		nv_set_got(d, rd, r);
		return 1;
	}
	nv_set_got(d, rd, 0); /* not asked: no value */
	return 0;
}

int nv_walk(struct nv_state *s, struct nv_dev *d, enum group_id g, json_t *o)
{
	for (size_t i = 0; i < nv_nreads; i++) {
		const struct nv_read *rd = &nv_reads[i];
		int now;

		if (rd->group != g)
			continue;
		if ((now = nv_fresh(s, d, rd)) < 0 || rd->put(s, d, rd, o, now) < 0)
			return -1;
	}
	return 0;
}

/* ---- the common readers: one value into d->val[row] ---------------------- */

/* fn = the entry point at rd->api (fn: a variable of its function pointer type). */
#define NV_FN(fn, s, rd) memcpy(&(fn), (const char *)&(s)->api + (rd)->api, sizeof(fn))

int nv_read_uint(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd)
{
	nvml_uint_fn fn;
	unsigned u = 0;
	int r;

	NV_FN(fn, s, rd);
	r = nv_ok(s, d, NVC(NV_LC, fn, d->h, &u), rd->f);

	d->val[NV_ROW_I(rd)] = u;
	return r;
}

int nv_read_ull(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd)
{
	nvml_ull_fn fn;
	unsigned long long v = 0;
	int r;

	NV_FN(fn, s, rd);
	r = nv_ok(s, d, NVC(NV_LC, fn, d->h, &v), rd->f);

	d->val[NV_ROW_I(rd)] = v;
	return r;
}

/* Encoder or decoder utilization (the sampling period not kept). */
int nv_read_codec(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd)
{
	nvml_codec_fn fn;
	unsigned u = 0, period;
	int r;

	NV_FN(fn, s, rd);
	r = nv_ok(s, d, NVC(NV_LC, fn, d->h, &u, &period), rd->f);

	d->val[NV_ROW_I(rd)] = u;
	return r;
}

/* A temperature, sensor rd->arg. */
int nv_read_temp(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd)
{
	nvml_temp_fn fn;
	unsigned u = 0;
	int r;

	NV_FN(fn, s, rd);
	r = nv_ok(s, d, NVC(NV_LC, fn, d->h, (nvmlTemperatureSensors_t)rd->arg, &u), rd->f);

	d->val[NV_ROW_I(rd)] = u;
	return r;
}

/* A clock, rd->arg (nvmlClockType_t). */
int nv_read_clock(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd)
{
	nvml_clock_fn fn;
	unsigned u = 0;
	int r;

	NV_FN(fn, s, rd);
	r = nv_ok(s, d, NVC(NV_LC, fn, d->h, (nvmlClockType_t)rd->arg, &u), rd->f);

	d->val[NV_ROW_I(rd)] = u;
	return r;
}

int nv_field_u64(struct nv_state *s, struct nv_dev *d, const nvmlFieldValue_t *f, enum nv_field nf, uint64_t *v)
{
	int r = nv_ok(s, d, f->nvmlReturn, nf);

	if (r <= 0)
		return r;
	switch (f->valueType) {
	case NVML_VALUE_TYPE_DOUBLE:
		if (!(f->value.dVal >= 0) || f->value.dVal >= 18446744073709551616.0) /* no u64 can hold it */
			return 0;
		*v = (uint64_t)f->value.dVal;
		return 1;
	case NVML_VALUE_TYPE_UNSIGNED_INT:
		*v = f->value.uiVal;
		return 1;
	case NVML_VALUE_TYPE_UNSIGNED_LONG:
		*v = f->value.ulVal;
		return 1;
	case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
		if (f->value.ullVal == NVML_VALUE_NOT_AVAILABLE_ULL)
			return 0;
		*v = f->value.ullVal;
		return 1;
	case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
		if (f->value.sllVal < 0)
			return 0;
		*v = (uint64_t)f->value.sllVal;
		return 1;
	case NVML_VALUE_TYPE_SIGNED_INT:
		if (f->value.siVal < 0)
			return 0;
		*v = (uint64_t)f->value.siVal;
		return 1;
	default:
		return 0;
	}
}

/* One field value, field id rd->arg (nvmlDeviceGetFieldValues), as an unsigned integer. */
int nv_read_field(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd)
{
	nvml_fields_fn fn;
	nvmlFieldValue_t f;
	nvmlReturn_t rc;
	uint64_t v = 0;
	int r;

	NV_FN(fn, s, rd);
	memset(&f, 0, sizeof(f));
	f.fieldId = (unsigned)rd->arg;
	rc = NVC(NV_LC, fn, d->h, 1, &f);
	r = rc != NVML_SUCCESS ? nv_ok(s, d, rc, rd->f) : nv_field_u64(s, d, &f, rd->f, &v);
	d->val[NV_ROW_I(rd)] = v;
	return r;
}

/* ---- the common putters: d->val[row] as rd->key (in the object rd->in) ---- */

/*
 * The object rd's key goes in: o, or o's rd->in (made when missing). *last:
 * rd is the last row of its group with that rd->in (that object is dropped
 * after it when empty).
 */
static json_t *nv_put_in(const struct nv_read *rd, json_t *o, int *last)
{
	const struct nv_read *next = rd + 1;

	*last = 0;
	if (!rd->in)
		return o;
	while (next < nv_reads + nv_nreads && next->group != rd->group)
		next++;
	*last = next == nv_reads + nv_nreads || !next->in || strcmp(next->in, rd->in);
	return jset_obj(o, rd->in);
}

/* How rd's value is written: an integer, a real (divided by rd->div), or u64 with NVML's "not available". */
enum { NV_AS_INT, NV_AS_REAL, NV_AS_U64 };

static int nv_put_as(struct nv_dev *d, const struct nv_read *rd, json_t *o, int as)
{
	int last;
	json_t *t = nv_put_in(rd, o, &last);
	uint64_t v = d->val[NV_ROW_I(rd)];

	if (!nv_got(d, rd))
		json_object_del(t, rd->key);
	else if (as == NV_AS_INT)
		jset_int(t, rd->key, (json_int_t)v);
	else if (as == NV_AS_REAL)
		jset_real(t, rd->key, (double)v / rd->div);
	else
		jset_u64_na(t, rd->key, v, NVML_VALUE_NOT_AVAILABLE_ULL);
	if (last)
		drop_if_empty(o, rd->in);
	return 0;
}

int nv_put_int(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	(void)s;
	(void)now;
	return nv_put_as(d, rd, o, NV_AS_INT);
}

int nv_put_real(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	(void)s;
	(void)now;
	return nv_put_as(d, rd, o, NV_AS_REAL);
}

int nv_put_u64(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	(void)s;
	(void)now;
	return nv_put_as(d, rd, o, NV_AS_U64);
}
