/* SPDX-License-Identifier: MIT */
/*
 * The remote write encoder; see remote-write_enc.h.
 *
 * Each interned series keeps its label list already in protobuf-c's form
 * (an array of Prometheus__Label and the array of pointers to them that
 * TimeSeries.labels wants), so packing a batch is: count samples per
 * series, lay the samples out series by series, point one TimeSeries per
 * series at its labels and its samples, and call protobuf-c's pack.
 */
#include "remote-write_enc.h"
#include "remote-write_prompb.pb-c.h"
#include "../../common/series/prom_store.h"
#include "../../common/util.h"

#include <errno.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLE_BYTES 22 /* the most a Sample takes: tag, length, tag + double, tag + varint timestamp */

struct rw_series {
	const struct family *fam;
	char *key;                  /* series name (the family's, and a histogram's suffix), NUL, rendered labels */
	size_t keylen;
	uint32_t hash;
	uint32_t next;              /* hash chain: index + 1, 0 ends it */
	char *pool;                 /* label names and values */
	Prometheus__Label *lab;
	Prometheus__Label **labp;
	size_t nlab;
	size_t bytes;               /* the labels' encoded size, about */
	uint32_t bcount;            /* samples in the batch being packed */
	uint32_t bpos;
};

struct rw_sample {
	uint32_t id;
	int64_t ts;
	double v;
};

struct rw_enc {
	char **ext_name, **ext_value; /* external labels, sorted by name */
	size_t next;
	struct rw_series *ser;
	size_t nser, aser;
	uint32_t *tab;              /* hash table of index + 1, power of two */
	size_t tabsize;
	const struct family **fams; /* every family seen, for the metadata */
	size_t nfams, afams;
	struct rw_sample *batch;
	size_t nbatch, abatch;
	size_t batch_bytes;
	uint32_t *touched;          /* series with samples in the batch, in first-seen order */
	size_t ntouched, atouched;
	/* packing scratch, kept between flushes */
	Prometheus__TimeSeries *ts;
	Prometheus__TimeSeries **tsp;
	size_t ats;
	Prometheus__Sample *smp;
	Prometheus__Sample **smpp;
	size_t asmp;
	struct buf raw;
};

/* ---- snappy ----------------------------------------------------------------- */

int rw_snappy(const void *src, size_t len, struct buf *out)
{
	size_t max = snappy_max_compressed_length(len), n = max;
	int rc;

	buf_reset(out);
	if ((rc = buf_reserve(out, max + 1)))
		return rc;
	if (snappy_compress(src, len, out->data, &n) != SNAPPY_OK)
		return -ENOMEM;
	out->len = n;
	return 0;
}

int rw_unsnappy(const void *src, size_t len, struct buf *out)
{
	size_t n;
	int rc;

	buf_reset(out);
	if (snappy_uncompressed_length(src, len, &n) != SNAPPY_OK)
		return -EINVAL;
	if (n >= out->cap)
		return -E2BIG;
	if ((rc = buf_reserve(out, n + 1)))
		return rc;
	if (snappy_uncompress(src, len, out->data, &n) != SNAPPY_OK)
		return -EINVAL;
	out->len = n;
	out->data[n] = '\0';
	return 0;
}

/* ---- the encoder ---------------------------------------------------------------- */

static int name_cmp(const void *a, const void *b)
{
	return strcmp((*(Prometheus__Label *const *)a)->name, (*(Prometheus__Label *const *)b)->name);
}

struct rw_enc *rw_enc_new(const char *const *ext, size_t n, char *err, size_t errsz)
{
	struct rw_enc *e = xcalloc(1, sizeof(*e));

	e->ext_name = xcalloc(n + 1, sizeof(char *));
	e->ext_value = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(ext[i], '=');
		size_t k, j;

		if (!eq || eq == ext[i]) {
			snprintf(err, errsz, "external label \"%s\": expected NAME=VALUE", ext[i]);
			rw_enc_free(e);
			return NULL;
		}
		for (k = 0; ext[i] + k < eq; k++) {
			char c = ext[i][k];

			if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (k && c >= '0' && c <= '9'))) {
				snprintf(err, errsz, "external label \"%s\": the name must match [a-zA-Z_][a-zA-Z0-9_]*",
					 ext[i]);
				rw_enc_free(e);
				return NULL;
			}
		}
		if (k >= 2 && ext[i][0] == '_' && ext[i][1] == '_') {
			snprintf(err, errsz, "external label \"%s\": names starting with __ are reserved", ext[i]);
			rw_enc_free(e);
			return NULL;
		}
		/* A later --label of the same name replaces an earlier one. */
		for (j = 0; j < e->next; j++)
			if (strlen(e->ext_name[j]) == k && !strncmp(e->ext_name[j], ext[i], k))
				break;
		if (j == e->next) {
			e->ext_name[e->next] = xasprintf("%.*s", (int)k, ext[i]);
			e->next++;
		} else {
			free(e->ext_value[j]);
		}
		e->ext_value[j] = xstrdup(eq + 1);
	}
	buf_init(&e->raw, (size_t)1 << 30);
	return e;
}

void rw_enc_free(struct rw_enc *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->next; i++) {
		free(e->ext_name[i]);
		free(e->ext_value[i]);
	}
	free(e->ext_name);
	free(e->ext_value);
	for (size_t i = 0; i < e->nser; i++) {
		free(e->ser[i].key);
		free(e->ser[i].pool);
		free(e->ser[i].lab);
		free(e->ser[i].labp);
	}
	free(e->ser);
	free(e->tab);
	free(e->fams);
	free(e->batch);
	free(e->touched);
	free(e->ts);
	free(e->tsp);
	free(e->smp);
	free(e->smpp);
	buf_free(&e->raw);
	free(e);
}

static void tab_rebuild(struct rw_enc *e, size_t size)
{
	free(e->tab);
	e->tab = xcalloc(size, sizeof(*e->tab));
	e->tabsize = size;
	for (size_t i = 0; i < e->nser; i++) {
		uint32_t *b = &e->tab[e->ser[i].hash & (size - 1)];

		e->ser[i].next = *b;
		*b = (uint32_t)i + 1;
	}
}

static void note_family(struct rw_enc *e, const struct family *fam)
{
	for (size_t i = 0; i < e->nfams; i++)
		if (e->fams[i] == fam || !strcmp(e->fams[i]->name, fam->name))
			return;
	if (e->nfams == e->afams) {
		e->afams = e->afams ? 2 * e->afams : 64;
		e->fams = xrealloc(e->fams, e->afams * sizeof(*e->fams));
	}
	e->fams[e->nfams++] = fam;
}

/* Build the label list of a new series: __name__, its own labels, the external labels it lacks; sorted. */
static int series_build(struct rw_enc *e, struct rw_series *s, const char *labels, size_t len)
{
	const char *names[RW_LABELS_MAX], *values[RW_LABELS_MAX];
	size_t poolsz = len + 1, n = 0;
	int rc;

	s->pool = xmalloc(poolsz);
	rc = prom_parse_labels(labels, len, s->pool, poolsz, names, values, RW_LABELS_MAX - 1);
	if (rc < 0)
		return rc;
	n = (size_t)rc;
	s->lab = xcalloc(n + 1 + e->next, sizeof(*s->lab));
	s->labp = xcalloc(n + 1 + e->next, sizeof(*s->labp));
	prometheus__label__init(&s->lab[0]);
	s->lab[0].name = (char *)"__name__";
	s->lab[0].value = s->key; /* up to its NUL: the series name */
	s->nlab = 1;
	for (size_t i = 0; i < n; i++) {
		if (!*values[i])
			continue; /* an empty value is no label (Prometheus's own scrape drops it too) */
		prometheus__label__init(&s->lab[s->nlab]);
		s->lab[s->nlab].name = (char *)names[i];
		s->lab[s->nlab].value = (char *)values[i];
		s->nlab++;
	}
	for (size_t j = 0; j < e->next; j++) {
		size_t i;

		for (i = 0; i < n && (!*values[i] || strcmp(names[i], e->ext_name[j])); i++)
			;
		if (i < n)
			continue; /* the series' own label wins, as with Prometheus's external_labels */
		if (s->nlab == RW_LABELS_MAX)
			return -E2BIG;
		prometheus__label__init(&s->lab[s->nlab]);
		s->lab[s->nlab].name = e->ext_name[j];
		s->lab[s->nlab].value = e->ext_value[j];
		s->nlab++;
	}
	/* The TimeSeries' tag and length, and each Label's (tag, length, and the two strings with theirs). */
	s->bytes = 4;
	for (size_t i = 0; i < s->nlab; i++) {
		size_t nl = strlen(s->lab[i].name), vl = strlen(s->lab[i].value);

		s->labp[i] = &s->lab[i];
		s->bytes += 2 + (nl + vl + 4 >= 128) + 2 + (nl >= 128) + nl + 2 + (vl >= 128) + (vl >= 16384) + vl;
	}
	qsort(s->labp, s->nlab, sizeof(*s->labp), name_cmp);
	return 0;
}

int rw_enc_series(struct rw_enc *e, const struct family *fam, const char *labels, size_t len, uint32_t *id)
{
	return rw_enc_series_sub(e, fam, "", labels, len, id);
}

int rw_enc_series_sub(struct rw_enc *e, const struct family *fam, const char *suffix, const char *labels, size_t len,
		      uint32_t *id)
{
	size_t flen = strlen(fam->name), slen = strlen(suffix), nlen = flen + slen, klen = nlen + 1 + len;
	uint64_t h64 = hash_bytes(hash_bytes(hash_bytes(0x84222325cbf29ce4ull, fam->name, flen), suffix, slen), labels,
				  len);
	uint32_t h = (uint32_t)(h64 ^ (h64 >> 32));
	struct rw_series *s;
	int rc;

	if (e->tabsize) {
		for (uint32_t i = e->tab[h & (e->tabsize - 1)]; i; i = e->ser[i - 1].next) {
			s = &e->ser[i - 1];
			if (s->hash == h && s->keylen == klen && !memcmp(s->key + nlen + 1, labels, len) &&
			    !memcmp(s->key, fam->name, flen) && !memcmp(s->key + flen, suffix, slen)) {
				*id = i - 1;
				return 0;
			}
		}
	}
	if (e->nser >= RW_SERIES_MAX)
		return -ENOSPC;
	if (e->nser == e->aser) {
		e->aser = e->aser ? 2 * e->aser : 256;
		e->ser = xrealloc(e->ser, e->aser * sizeof(*e->ser));
	}
	s = &e->ser[e->nser];
	memset(s, 0, sizeof(*s));
	s->fam = fam;
	s->key = xmalloc(klen);
	memcpy(s->key, fam->name, flen);
	memcpy(s->key + flen, suffix, slen + 1);
	memcpy(s->key + nlen + 1, labels, len);
	if ((rc = series_build(e, s, labels, len))) {
		free(s->pool);
		free(s->lab);
		free(s->labp);
		free(s->key);
		return rc;
	}
	s->keylen = klen;
	s->hash = h;
	*id = (uint32_t)e->nser++;
	note_family(e, fam);
	if (e->nser > e->tabsize / 2) {
		tab_rebuild(e, e->tabsize ? 2 * e->tabsize : 1024);
	} else {
		s->next = e->tab[h & (e->tabsize - 1)];
		e->tab[h & (e->tabsize - 1)] = *id + 1;
	}
	return 0;
}

void rw_enc_add(struct rw_enc *e, uint32_t id, int64_t ts_ms, double value)
{
	struct rw_series *s = &e->ser[id];

	if (e->nbatch == e->abatch) {
		e->abatch = e->abatch ? 2 * e->abatch : 1024;
		e->batch = xrealloc(e->batch, e->abatch * sizeof(*e->batch));
	}
	e->batch[e->nbatch++] = (struct rw_sample){ id, ts_ms, value };
	if (s->bcount++ == 0) {
		if (e->ntouched == e->atouched) {
			e->atouched = e->atouched ? 2 * e->atouched : 256;
			e->touched = xrealloc(e->touched, e->atouched * sizeof(*e->touched));
		}
		e->touched[e->ntouched++] = id;
		e->batch_bytes += s->bytes;
	}
	e->batch_bytes += SAMPLE_BYTES;
}

size_t rw_enc_cost(const struct rw_enc *e, uint32_t id)
{
	return (e->ser[id].bcount ? 0 : e->ser[id].bytes) + SAMPLE_BYTES;
}

size_t rw_enc_pending(const struct rw_enc *e)
{
	return e->nbatch;
}

size_t rw_enc_pending_bytes(const struct rw_enc *e)
{
	return e->batch_bytes;
}

/* Pack msg and compress it into out. */
static int pack_compress(struct rw_enc *e, const Prometheus__WriteRequest *req, struct buf *out, size_t *raw_len)
{
	size_t n = prometheus__write_request__get_packed_size(req);
	int rc;

	buf_reset(&e->raw);
	if ((rc = buf_reserve(&e->raw, n + 1)))
		return rc;
	e->raw.len = prometheus__write_request__pack(req, (uint8_t *)e->raw.data);
	if (raw_len)
		*raw_len = e->raw.len;
	return rw_snappy(e->raw.data, e->raw.len, out);
}

int rw_enc_flush(struct rw_enc *e, struct buf *out, size_t *raw_len)
{
	Prometheus__WriteRequest req = PROMETHEUS__WRITE_REQUEST__INIT;
	size_t pos = 0;
	int rc;

	if (e->ntouched > e->ats) {
		e->ats = e->ntouched * 2;
		e->ts = xrealloc(e->ts, e->ats * sizeof(*e->ts));
		e->tsp = xrealloc(e->tsp, e->ats * sizeof(*e->tsp));
	}
	if (e->nbatch > e->asmp) {
		e->asmp = e->nbatch * 2;
		free(e->smp);
		free(e->smpp);
		e->smp = xmalloc(e->asmp * sizeof(*e->smp));
		e->smpp = xmalloc(e->asmp * sizeof(*e->smpp));
	}
	/* Each series' samples side by side, in the order they came. */
	for (size_t i = 0; i < e->ntouched; i++) {
		struct rw_series *s = &e->ser[e->touched[i]];
		Prometheus__TimeSeries *t = &e->ts[i];

		s->bpos = (uint32_t)pos;
		prometheus__time_series__init(t);
		t->n_labels = s->nlab;
		t->labels = s->labp;
		t->n_samples = s->bcount;
		t->samples = &e->smpp[pos];
		e->tsp[i] = t;
		pos += s->bcount;
	}
	for (size_t i = 0; i < e->nbatch; i++) {
		struct rw_series *s = &e->ser[e->batch[i].id];
		Prometheus__Sample *m = &e->smp[s->bpos];

		prometheus__sample__init(m);
		m->value = e->batch[i].v;
		m->timestamp = e->batch[i].ts;
		e->smpp[s->bpos++] = m;
	}
	req.n_timeseries = e->ntouched;
	req.timeseries = e->tsp;
	rc = pack_compress(e, &req, out, raw_len);
	for (size_t i = 0; i < e->ntouched; i++)
		e->ser[e->touched[i]].bcount = 0;
	e->ntouched = 0;
	e->nbatch = 0;
	e->batch_bytes = 0;
	return rc;
}

/*
 * The unit as Prometheus has it after scraping accel-prom's OpenMetrics:
 * accel-prom writes a UNIT line only when the family name (without _total)
 * ends in "_" and the unit, so the same rule here.
 */
static const char *om_unit(const struct family *f)
{
	size_t n = strlen(f->name), u = f->unit ? strlen(f->unit) : 0;

	if (f->type == METRIC_COUNTER && n > 6 && !strcmp(f->name + n - 6, "_total"))
		n -= 6;
	if (!u || n <= u + 1 || f->name[n - u - 1] != '_' || strncmp(f->name + n - u, f->unit, u))
		return "";
	return f->unit;
}

int rw_enc_metadata(struct rw_enc *e, struct buf *out)
{
	Prometheus__WriteRequest req = PROMETHEUS__WRITE_REQUEST__INIT;
	Prometheus__MetricMetadata *md = xcalloc(e->nfams + 1, sizeof(*md));
	Prometheus__MetricMetadata **mdp = xcalloc(e->nfams + 1, sizeof(*mdp));
	int rc;

	for (size_t i = 0; i < e->nfams; i++) {
		const struct family *f = e->fams[i];

		prometheus__metric_metadata__init(&md[i]);
		md[i].type = f->type == METRIC_COUNTER	   ? PROMETHEUS__METRIC_METADATA__METRIC_TYPE__COUNTER
			     : f->type == METRIC_HISTOGRAM ? PROMETHEUS__METRIC_METADATA__METRIC_TYPE__HISTOGRAM
							   : PROMETHEUS__METRIC_METADATA__METRIC_TYPE__GAUGE;
		md[i].metric_family_name = (char *)f->name;
		md[i].help = (char *)f->help;
		md[i].unit = (char *)om_unit(f);
		mdp[i] = &md[i];
	}
	req.n_metadata = e->nfams;
	req.metadata = mdp;
	rc = pack_compress(e, &req, out, NULL);
	free(md);
	free(mdp);
	return rc;
}

size_t rw_enc_nfamilies(const struct rw_enc *e)
{
	return e->nfams;
}
