/* SPDX-License-Identifier: MIT */
/*
 * Inference-server expositions turned into execution_stats; see infer.h and
 * docs/report-format.md ("execution_stats of endpoint runtimes").
 *
 * Each scrape becomes a snapshot: the samples of the families this module
 * knows (one table row per family and server), each with its model, version
 * and sub-key (error reason, GPU) as the server labels them. A period is the
 * difference between two snapshots: per series the increase, where a series
 * whose value went back (or a histogram or summary any of whose buckets or
 * count went back, or that is new) counts from zero. The increases are then
 * summed per model and version, and histograms' bucket increments give the
 * period's percentiles with Prometheus' histogram_quantile interpolation.
 */
#include "infer_int.h"
#include "bounds.h"

#include "../../common/expo_parse.h"
#include "../../common/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const mean_key[M_N] = { "request",		"queue",	 "time_to_first_token",
					   "time_per_output_token", "compute_input", "compute_infer",
					   "compute_output" };
const char *const pct_key[M_N] = { "total_latency", "queue", "time_to_first_token", "time_per_output_token" };
const char *const dev_key[D_N] = { "utilization_ratio", "memory_used_bytes", "memory_total_bytes",
					  "power_watts",       "power_limit_watts", "energy_joules",
					  "temperature_celsius" };

const struct fam fams[] = {
	TRI("nv_inference_request_success", 'c', ROLE_COMPLETED, 0, 1),
	{ INFER_TRITON, "nv_inference_request_failure", 'c', ROLE_FAILED, 0, 1, 1, "model", "version", "reason", NULL,
	  NULL },
	TRI("nv_inference_count", 'c', ROLE_INFER_COUNT, 0, 1),
	TRI("nv_inference_exec_count", 'c', ROLE_EXEC_COUNT, 0, 1),
	TRI("nv_inference_request_duration_us", 'c', ROLE_DURATION, M_REQUEST, 1e6),
	TRI("nv_inference_queue_duration_us", 'c', ROLE_DURATION, M_QUEUE, 1e6),
	TRI("nv_inference_compute_input_duration_us", 'c', ROLE_DURATION, M_COMPUTE_INPUT, 1e6),
	TRI("nv_inference_compute_infer_duration_us", 'c', ROLE_DURATION, M_COMPUTE_INFER, 1e6),
	TRI("nv_inference_compute_output_duration_us", 'c', ROLE_DURATION, M_COMPUTE_OUTPUT, 1e6),
	TRI("nv_inference_request_summary_us", 's', ROLE_DIST, M_REQUEST, 1e6),
	TRI("nv_inference_queue_summary_us", 's', ROLE_DIST, M_QUEUE, 1e6),
	TRI("nv_inference_compute_input_summary_us", 's', ROLE_DIST, M_COMPUTE_INPUT, 1e6),
	TRI("nv_inference_compute_infer_summary_us", 's', ROLE_DIST, M_COMPUTE_INFER, 1e6),
	TRI("nv_inference_compute_output_summary_us", 's', ROLE_DIST, M_COMPUTE_OUTPUT, 1e6),
	TRI("nv_inference_first_response_histogram_ms", 'h', ROLE_DIST, M_TTFT, 1e3),
	TRI("nv_inference_pending_request_count", 'g', ROLE_PENDING, 0, 1),
	TRI_GPU("nv_gpu_utilization", 'g', D_UTIL),
	TRI_GPU("nv_gpu_memory_used_bytes", 'g', D_MEM_USED),
	TRI_GPU("nv_gpu_memory_total_bytes", 'g', D_MEM_TOTAL),
	TRI_GPU("nv_gpu_power_usage", 'g', D_POWER),
	TRI_GPU("nv_gpu_power_limit", 'g', D_POWER_LIMIT),
	TRI_GPU("nv_energy_consumption", 'c', D_ENERGY),

	VLLM("vllm:request_success_total", 'c', ROLE_COMPLETED, 0, 1),
	VLLM("vllm:e2e_request_latency_seconds", 'h', ROLE_DIST, M_REQUEST, 1),
	VLLM("vllm:request_queue_time_seconds", 'h', ROLE_DIST, M_QUEUE, 1),
	VLLM("vllm:request_inference_time_seconds", 'h', ROLE_DIST, M_COMPUTE_INFER, 1),
	VLLM("vllm:time_to_first_token_seconds", 'h', ROLE_DIST, M_TTFT, 1),
	VLLM("vllm:time_per_output_token_seconds", 'h', ROLE_DIST, M_TPOT, 2),
	VLLM("vllm:inter_token_latency_seconds", 'h', ROLE_DIST, M_TPOT, 1),
	VLLM("vllm:num_requests_running", 'g', ROLE_IN_FLIGHT, 0, 1),
	VLLM("vllm:num_requests_waiting", 'g', ROLE_PENDING, 0, 1),
	VLLM("vllm:kv_cache_usage_perc", 'g', ROLE_KV_CACHE, 0, 2),
	VLLM("vllm:gpu_cache_usage_perc", 'g', ROLE_KV_CACHE, 0, 1),
	VLLM("vllm:prompt_tokens_total", 'c', ROLE_PROMPT, 0, 1),
	VLLM("vllm:generation_tokens_total", 'c', ROLE_GENERATION, 0, 1),

	TGI("tgi_request_success", 'c', ROLE_COMPLETED, 0, NULL),
	TGI("tgi_request_failure", 'c', ROLE_FAILED, 0, "err"),
	TGI("tgi_request_duration", 'h', ROLE_DIST, M_REQUEST, NULL),
	TGI("tgi_request_queue_duration", 'h', ROLE_DIST, M_QUEUE, NULL),
	TGI("tgi_request_inference_duration", 'h', ROLE_DIST, M_COMPUTE_INFER, NULL),
	TGI("tgi_request_mean_time_per_token_duration", 'h', ROLE_DIST, M_TPOT, NULL),
	TGI("tgi_request_input_length", 'h', ROLE_PROMPT, 0, NULL),
	TGI("tgi_request_generated_tokens", 'h', ROLE_GENERATION, 0, NULL),
	TGI("tgi_queue_size", 'g', ROLE_PENDING, 0, NULL),
	TGI("tgi_batch_current_size", 'g', ROLE_IN_FLIGHT, 0, NULL),

	TS("ts_inference_requests_total", ROLE_COMPLETED, 0, 1),
	TS("ts_inference_latency_microseconds", ROLE_DURATION, M_REQUEST, 1e6),
	TS("ts_queue_latency_microseconds", ROLE_DURATION, M_QUEUE, 1e6),
	TS_HOST("Requests4XX", "http_4xx"),
	TS_HOST("Requests5XX", "http_5xx"),

	OVMS("ovms_requests_success", 'c', ROLE_COMPLETED, 0, 1, ovms_infer_methods),
	OVMS("ovms_requests_fail", 'c', ROLE_FAILED, 0, 1, ovms_infer_methods),
	OVMS("ovms_request_time_us", 'h', ROLE_DIST, M_REQUEST, 1e6, NULL),
	OVMS("ovms_wait_for_infer_req_time_us", 'h', ROLE_DIST, M_QUEUE, 1e6, NULL),
	OVMS("ovms_inference_time_us", 'h', ROLE_DIST, M_COMPUTE_INFER, 1e6, NULL),
	OVMS("ovms_current_requests", 'g', ROLE_IN_FLIGHT, 0, 1, NULL),

	/* the NCS2 exporter's family, which inference applications serve themselves: any flavour */
	{ INFER_AUTO, "ncs2_temperature_celsius", 'g', ROLE_DEVICE, D_TEMP, 1, 1, NULL, NULL, "name", NULL, NULL },
};

static const char *const server_names[] = { "", "triton", "vllm", "tgi", "torchserve", "ovms", "prometheus" };

const char *infer_server_name(enum infer_server s)
{
	return (unsigned)s < ARRAY_SIZE(server_names) ? server_names[s] : "";
}

int infer_server_parse(const char *name)
{
	for (size_t i = 1; i < ARRAY_SIZE(server_names); i++)
		if (!strcmp(name, server_names[i]))
			return (int)i;
	return -1;
}

/* A table slot's hash: the high half of hash_bytes (its last step is a multiplication: the low bits mix least). */
uint32_t infer_name_hash(const char *s, size_t n)
{
	return (uint32_t)(hash_bytes(0x9e3779b97f4a7c15ull, s, n) >> 32);
}

static void name_add(struct infer *in, char *name, int fam, enum part part)
{
	uint32_t h = infer_name_hash(name, strlen(name)) & (NAME_SLOTS - 1);

	while (in->names[h].name)
		h = (h + 1) & (NAME_SLOTS - 1);
	in->names[h] = (struct name_ent){ name, fam, part };
}

static const struct name_ent *name_find(const struct infer *in, const char *name, size_t n)
{
	uint32_t h = infer_name_hash(name, n) & (NAME_SLOTS - 1);

	for (; in->names[h].name; h = (h + 1) & (NAME_SLOTS - 1))
		if (!strncmp(in->names[h].name, name, n) && !in->names[h].name[n])
			return &in->names[h];
	return NULL;
}

struct infer *infer_new(enum infer_server configured)
{
	struct infer *in = xcalloc(1, sizeof(*in));

	in->configured = configured;
	in->parser = expo_parser_new();
	for (size_t i = 0; i < ARRAY_SIZE(fams); i++) {
		const struct fam *f = &fams[i];
		size_t n = strlen(f->name);

		in->lab_len[i][0] = f->model_l ? strlen(f->model_l) : 0;
		in->lab_len[i][1] = f->version_l ? strlen(f->version_l) : 0;
		in->lab_len[i][2] = f->sub_l ? strlen(f->sub_l) : 0;

		switch (f->type) {
		case 'h':
			name_add(in, xasprintf("%s_bucket", f->name), (int)i, P_BUCKET);
			/* fall through */
		case 's':
			name_add(in, xasprintf("%s_sum", f->name), (int)i, P_SUM);
			name_add(in, xasprintf("%s_count", f->name), (int)i, P_COUNT);
			if (f->type == 's')
				name_add(in, xstrdup(f->name), (int)i, P_QUANTILE);
			break;
		case 'c':
			name_add(in, xstrdup(f->name), (int)i, P_VALUE);
			/* OpenMetrics spells every counter's sample NAME_total */
			if (n < 6 || strcmp(f->name + n - 6, "_total"))
				name_add(in, xasprintf("%s_total", f->name), (int)i, P_VALUE);
			break;
		default:
			name_add(in, xstrdup(f->name), (int)i, P_VALUE);
		}
	}
	return in;
}

static void snap_free(struct snap *s)
{
	if (!s)
		return;
	free(s->arena);
	free(s->p);
	free(s);
}

/*
 * A snapshot whose buffers are larger than this is freed rather than kept as
 * the spare: a body of a few thousand samples reuses its buffers scrape after
 * scrape (no page faults), a large one costs two snapshots' memory, not three.
 */
#define SPARE_MAX_BYTES (1u << 20)

/* Done with s: keep it as the spare (its buffers reused by the next scrape), or free it. */
static void snap_drop(struct infer *in, struct snap *s)
{
	if (!s)
		return;
	if (in->spare || s->acap + s->cap * sizeof(*s->p) > SPARE_MAX_BYTES) {
		snap_free(s);
		return;
	}
	s->n = 0;
	s->alen = 0;
	in->spare = s;
}

/*
 * Room in s for a scrape like prev and an eighth more, allocated once: a
 * large body's arrays are not grown by doubling scrape after scrape (each
 * step a copy, and the blocks it leaves behind resident).
 */
static void snap_reserve(struct snap *s, const struct snap *prev)
{
	size_t n = prev->n + prev->n / 8, alen = prev->alen + prev->alen / 8;

	if (s->cap < n) {
		free(s->p);
		s->p = xmalloc(n * sizeof(*s->p));
		s->cap = n;
	}
	if (s->acap < alen) {
		free(s->arena);
		s->arena = xmalloc(alen);
		s->acap = alen;
	}
}

static void period_keep_free(struct infer *in);

void infer_free(struct infer *in)
{
	if (!in)
		return;
	snap_free(in->spare);
	if (in->cur != in->base)
		snap_free(in->cur);
	snap_free(in->base);
	for (size_t i = 0; i < NAME_SLOTS; i++)
		free(in->names[i].name);
	infer_index_free(&in->prev);
	infer_index_free(&in->grp);
	infer_index_free(&in->seen);
	free(in->dup);
	infer_look_free(&in->look);
	free(in->d);
	free(in->reset);
	free(in->gi);
	period_keep_free(in);
	free(in->recs);
	free(in->devs);
	expo_parser_free(in->parser);
	free(in);
}

enum infer_server infer_server_of(const struct infer *in)
{
	return in->configured != INFER_AUTO ? in->configured : in->recognised;
}

/* ---- One scrape -------------------------------------------------------------------------------------- */

struct scan {
	struct infer *in;
	struct snap *s;
	size_t samples;
	size_t per_server[INFER_PROMETHEUS + 1];
	unsigned want;                 /* the servers whose families are kept (bit per enum infer_server); 0: all */
	char last[256];                /* the previous sample's name */
	size_t last_len;               /* its length (SIZE_MAX: none, or too long to keep) */
	enum infer_server last_srv;    /* its server_of_name() */
	const struct name_ent *last_e; /* its name_find(), NULL when its family is not kept */
	size_t left_out;               /* samples beyond INFER_MAX_SERIES */
};

/* The server a sample's name says the endpoint is, INFER_AUTO when it says nothing. */
static enum infer_server server_of_name(const char *n)
{
	static const char *const ts[] = { "ts_inference_requests_total", "ts_inference_latency_microseconds",
					  "ts_queue_latency_microseconds", "Requests2XX", "Requests4XX", "Requests5XX" };

	if (!strncmp(n, "nv_inference_", 13) || !strncmp(n, "nv_gpu_", 7) || !strncmp(n, "nv_energy_", 10) ||
	    !strncmp(n, "nv_cpu_", 7))
		return INFER_TRITON;
	if (!strncmp(n, "vllm:", 5))
		return INFER_VLLM;
	if (!strncmp(n, "tgi_", 4))
		return INFER_TGI;
	if (!strncmp(n, "ovms_", 5))
		return INFER_OVMS;
	for (size_t i = 0; i < ARRAY_SIZE(ts); i++)
		if (!strcmp(n, ts[i]))
			return INFER_TORCHSERVE;
	return INFER_AUTO;
}

/* Whether label l is named name (n bytes). */
static inline int is_label(const struct expo_label *l, const char *name, size_t n)
{
	return l->name_len == n && !memcmp(l->name, name, n);
}

/* A bound or quantile as the format writes it ("+Inf", "0.005"): 0, or -1 when it is none. */
static int parse_bound(const struct expo_label *l, double *v)
{
	return l && l->value_len && !expo_parse_number(l->value, l->value_len, v) && !isnan(*v) ? 0 : -1;
}

static char *put(char *w, const char *s, size_t n)
{
	memcpy(w, s, n);
	return w + n;
}

/* c, then n in decimal, then ':' */
static char *put_len(char *w, char c, size_t n)
{
	char d[24];
	int k = 0;

	*w++ = c;
	if (n < 10) { /* label names and values are mostly short */
		*w++ = (char)('0' + n);
	} else if (n < 100) {
		*w++ = (char)('0' + n / 10);
		*w++ = (char)('0' + n % 10);
	} else {
		do
			d[k++] = (char)('0' + n % 10);
		while ((n /= 10));
		while (k)
			*w++ = d[--k];
	}
	*w++ = ':';
	return w;
}

/*
 * The string of n bytes just written at at (through *w, its NUL after it):
 * given back, and the previous sample's same string (prev, earlier in the
 * same arena, so reading n bytes of it stays inside) used instead, when the
 * two are equal. The samples of one histogram share their group and model,
 * a server's families their version and error type.
 */
static char *share(char **w, char *at, size_t n, const char *prev)
{
	if (prev && !memcmp(at, prev, n) && !prev[n]) {
		*w = at;
		return (char *)prev;
	}
	return at;
}

/*
 * Sample x of family f (its part part) in sn's arena: series, group, model,
 * version, sub. The group of a bucket, a quantile, a _sum or a _count is the
 * family and every label but le/quantile, each name and value with its
 * length before it, so no two label sets share one; a counter's or gauge's
 * sample is a group of its own (increases()) and stores none. A string equal
 * to the previous sample's (p[-1], in the same arena) is not stored again.
 * Sets p's offsets of them from the series (og PT_FAMILY: no group) and
 * returns where the series starts.
 */
static char *put_strings(struct snap *sn, const struct expo_sample *x, const struct fam *f, enum part part,
			 const struct expo_label *const lab[3], const char *sub, size_t nsub, struct pt *p)
{
	int grouped = part != P_VALUE;
	size_t ns = x->series_len, nf = strlen(f->name), nm = lab[0] ? lab[0]->value_len : 0,
	       nv = lab[1] ? lab[1]->value_len : 0, need = ns + nm + nv + nsub + 4;
	const struct pt *q = p > sn->p ? p - 1 : NULL;
	const char *qb;
	char *block, *og = NULL, *om, *ov, *ob, *w;

	for (size_t i = 0; grouped && i < x->nlabels; i++)
		need += x->labels[i].name_len + x->labels[i].value_len + 2 * 21;
	if (grouped)
		need += nf + 1;
	if (sn->acap - sn->alen < need) {
		while (sn->acap - sn->alen < need)
			sn->acap = sn->acap ? 2 * sn->acap : 1u << 16;
		sn->arena = xrealloc(sn->arena, sn->acap);
	}
	qb = q ? sn->arena + q->off : NULL;
	w = block = sn->arena + sn->alen;
	w = put(w, x->series, ns + 1);
	if (grouped) {
		og = w;
		w = put(w, f->name, nf);
		for (size_t i = 0; i < x->nlabels; i++) {
			const struct expo_label *l = &x->labels[i];

			if (is_label(l, "le", 2) || is_label(l, "quantile", 8))
				continue;
			w = put_len(w, '|', l->name_len);
			w = put(w, l->name, l->name_len);
			w = put_len(w, '=', l->value_len);
			w = put(w, l->value, l->value_len);
		}
		*w++ = '\0';
		p->glen = (uint32_t)(w - og - 1);
		og = share(&w, og, p->glen, q && q->og != PT_FAMILY && q->glen == p->glen ? qb + q->og : NULL);
	} else {
		p->glen = (uint32_t)nf;
	}
	/* model names and labels become JSON keys: bounded, valid UTF-8 without control bytes */
	om = w;
	w = put(w, lab[0] ? lab[0]->value : "", nm + 1);
	om = share(&w, om, bound_name(om, nm), q ? qb + q->om : NULL);
	ov = w;
	w = put(w, lab[1] ? lab[1]->value : "", nv + 1);
	ov = share(&w, ov, bound_name(ov, nv), q ? qb + q->ov : NULL);
	ob = w;
	w = put(w, sub ? sub : "", nsub + 1);
	ob = share(&w, ob, bound_name(ob, nsub), q ? qb + q->ob : NULL);
	sn->alen += (size_t)(w - block);
	p->slen = (uint32_t)ns;
	p->og = og ? (int32_t)(og - block) : PT_FAMILY;
	p->om = (int32_t)(om - block);
	p->ov = (int32_t)(ov - block);
	p->ob = (int32_t)(ob - block);
	return block;
}

/*
 * One sample: kept in the snapshot when its name is one of a known family
 * that the flavour reads (looked up once per run of samples of one name,
 * before any label is looked at), with its strings in the arena. The
 * labels it needs are found in one pass over the line's, by length first.
 */
static void on_sample(const struct expo_sample *x, void *ud)
{
	struct scan *sc = ud;
	const struct name_ent *e;
	const struct fam *f;
	const struct expo_label *method = NULL, *bound = NULL, *lab[3] = { NULL, NULL, NULL };
	const size_t *ll;
	const char *sub;
	size_t nsub;
	struct pt *p;
	char *block;
	double le = 0;

	sc->samples++;
	/* a family's samples follow each other: the previous sample's name is looked up once */
	if (x->name_len != sc->last_len || memcmp(x->name, sc->last, x->name_len)) {
		if (x->name_len < sizeof(sc->last)) {
			memcpy(sc->last, x->name, x->name_len);
			sc->last_len = x->name_len;
		} else {
			sc->last_len = SIZE_MAX; /* never a match */
		}
		sc->last_srv = server_of_name(x->name);
		sc->last_e = name_find(sc->in, x->name, x->name_len);
		if (sc->last_e && sc->want && !((1u << fams[sc->last_e->fam].srv) & sc->want))
			sc->last_e = NULL; /* another server's family: nothing of it is read */
	}
	sc->per_server[sc->last_srv]++;
	e = sc->last_e;
	if (!e || !isfinite(x->value))
		return;
	f = &fams[e->fam];
	/* a counter, a bucket or a count below zero is no count: skipped, so no period can go negative */
	if (x->value < 0 && (f->type == 'c' || e->part == P_BUCKET || e->part == P_COUNT))
		return;
	/* the labels it reads, each the first of its name */
	ll = sc->in->lab_len[e->fam];
	for (size_t i = 0; i < x->nlabels; i++) {
		const struct expo_label *l = &x->labels[i];

		if (ll[0] && !lab[0] && is_label(l, f->model_l, ll[0]))
			lab[0] = l;
		else if (ll[1] && !lab[1] && is_label(l, f->version_l, ll[1]))
			lab[1] = l;
		else if (ll[2] && !lab[2] && is_label(l, f->sub_l, ll[2]))
			lab[2] = l;
		else if (f->only && !method && is_label(l, "method", 6))
			method = l;
		else if (e->part == P_BUCKET && !bound && is_label(l, "le", 2))
			bound = l;
		else if (e->part == P_QUANTILE && !bound && is_label(l, "quantile", 8))
			bound = l;
	}
	if (f->only) {
		size_t i;

		for (i = 0; method && f->only[i] && strcmp(f->only[i], method->value); i++)
			;
		if (!method || !f->only[i])
			return;
	}
	if (e->part == P_BUCKET && parse_bound(bound, &le))
		return;
	if (e->part == P_QUANTILE && (parse_bound(bound, &le) || le < 0 || le > 1))
		return;
	if (f->sub_fixed) {
		sub = f->sub_fixed;
		nsub = strlen(sub);
	} else {
		sub = lab[2] ? lab[2]->value : NULL;
		nsub = lab[2] ? lab[2]->value_len : 0;
	}
	if (f->role == ROLE_DEVICE && !sub)
		return; /* a GPU without its UUID cannot be told apart */
	if (sc->s->n >= INFER_MAX_SERIES) {
		sc->left_out++;
		return;
	}

	if (sc->s->n == sc->s->cap) {
		sc->s->cap = sc->s->cap ? 2 * sc->s->cap : 64;
		sc->s->p = xrealloc(sc->s->p, sc->s->cap * sizeof(*sc->s->p));
	}
	p = &sc->s->p[sc->s->n++];
	p->fam = e->fam;
	p->part = e->part;
	p->le = le;
	p->v = x->value;
	block = put_strings(sc->s, x, f, e->part, lab, sub, nsub, p);
	p->off = (size_t)(block - sc->s->arena); /* a pointer once the arena stops moving (infer_update) */
}

int infer_update(struct infer *in, const char *body, size_t len, int64_t mono_ns, char *err, size_t errsz)
{
	struct scan sc;
	size_t bad, best = 0;
	enum infer_server found = INFER_PROMETHEUS;

	memset(&sc, 0, sizeof(sc));
	sc.in = in;
	sc.last_len = SIZE_MAX;
	/* a flavour known before this body: only its families (and the any-flavour ones) are kept */
	if (infer_server_of(in) != INFER_AUTO && infer_server_of(in) != INFER_PROMETHEUS)
		sc.want = 1u << infer_server_of(in) | 1u << INFER_AUTO;
	sc.s = in->spare ? in->spare : xcalloc(1, sizeof(*sc.s));
	in->spare = NULL;
	if (in->cur)
		snap_reserve(sc.s, in->cur);
	sc.s->mono_ns = mono_ns;
	bad = expo_parse(in->parser, body, len, on_sample, &sc, err, errsz);
	if (bad && !sc.samples) {
		snap_drop(in, sc.s);
		return -EINVAL;
	}
	for (size_t i = 0; i < sc.s->n; i++) {
		struct pt *p = &sc.s->p[i];

		p->series = sc.s->arena + p->off;
	}
	for (int s = INFER_TRITON; s < INFER_PROMETHEUS; s++)
		if (sc.per_server[s] > best) {
			best = sc.per_server[s];
			found = (enum infer_server)s;
		}
	/* recognised once a server's families appear; "prometheus" (none yet) is asked again each scrape */
	if (in->recognised == INFER_AUTO || in->recognised == INFER_PROMETHEUS)
		in->recognised = found;
	if (in->cur != in->base)
		snap_drop(in, in->cur);
	in->cur = sc.s;
	in->series_left_out = sc.left_out;
	return 0;
}

static void period_keep_free(struct infer *in)
{
	for (size_t i = 0; i < in->pcap; i++)
		for (int m = 0; m < M_N; m++)
			free(in->pa[i].d[m].b);
	free(in->pa);
	free(in->pdv);
}

/* Whether two points have the same series key (lengths first). */
static inline int same_series(const struct pt *a, const struct pt *b)
{
	return a->slen == b->slen && !memcmp(a->series, b->series, a->slen);
}

/*
 * The increase of every sample of cur since base (base may be NULL: no
 * increases). A series that went back, or is new, counts from zero; for a
 * histogram or summary that is decided for all its samples together (any
 * bucket, _sum or _count that went back resets them all), so its buckets
 * stay cumulative. A server writes its series in the same order scrape
 * after scrape: a series is first looked for at its own place in base, and
 * base is indexed (hashing every key) only when one is not there (a
 * series a body writes twice is matched by its place, then by the index:
 * to the last of base's); the
 * samples of one histogram or summary follow each other: its group is
 * looked up in the index of groups only when it is not the previous
 * sample's (a counter's or gauge's sample is a group of its own).
 */
static const double *increases(struct infer *in, const struct snap *base, const struct snap *cur)
{
	size_t n = cur->n ? cur->n : 1;
	int indexed = 0, grouped = 0;
	double *d;
	unsigned char *reset;
	size_t *gi;

	if (n > in->wcap) {
		in->wcap = n;
		in->d = xrealloc(in->d, n * sizeof(*in->d));
		in->reset = xrealloc(in->reset, n);
		in->gi = xrealloc(in->gi, n * sizeof(*in->gi));
	}
	d = in->d;
	reset = in->reset;
	gi = in->gi;
	if (!base) {
		memset(d, 0, n * sizeof(*d));
		return d;
	}
	memset(reset, 0, n);
	for (size_t i = 0; i < cur->n; i++) {
		const struct pt *p = &cur->p[i];
		const struct pt *b = NULL;
		int back;

		if (i < base->n && same_series(p, &base->p[i])) {
			b = &base->p[i];
		} else {
			size_t h;

			if (!indexed) {
				infer_index_init(&in->prev, base->n);
				for (size_t k = 0; k < base->n; k++) {
					h = infer_index_slot(&in->prev, base->p[k].series, base->p[k].slen);
					in->prev.key[h] = base->p[k].series;
					in->prev.val[h] = (uint32_t)k;
				}
				indexed = 1;
			}
			h = infer_index_slot(&in->prev, p->series, p->slen);
			b = in->prev.key[h] ? &base->p[in->prev.val[h]] : NULL;
		}
		if (p->part == P_VALUE) { /* a counter's or gauge's sample is its own group */
			gi[i] = i;
		} else if (i && p->glen == p[-1].glen &&
			   (pt_group(p) == pt_group(p - 1) || !memcmp(pt_group(p), pt_group(p - 1), p->glen))) {
			gi[i] = gi[i - 1];
		} else {
			size_t g;

			if (!grouped) { /* the index of groups is built only for a body with histograms or summaries */
				infer_index_init(&in->grp, cur->n);
				grouped = 1;
			}
			g = infer_index_slot(&in->grp, pt_group(p), p->glen);

			if (!in->grp.key[g]) {
				in->grp.key[g] = pt_group(p);
				in->grp.val[g] = (uint32_t)i;
			}
			gi[i] = in->grp.val[g];
		}
		back = !b || (p->part != P_QUANTILE && p->v < b->v) || !isfinite(b->v);
		d[i] = b ? p->v - b->v : p->v;
		if (back && p->part != P_QUANTILE)
			reset[gi[i]] = 1;
	}
	for (size_t i = 0; i < cur->n; i++)
		if (reset[gi[i]])
			d[i] = cur->p[i].v;
	return d;
}

/*
 * The samples of cur whose series an earlier sample of cur already had (a
 * body that writes a series twice): 1 in dup[i]. Prometheus keeps the first
 * and refuses the others; so do we (they are not added up).
 */
static const unsigned char *duplicates(struct infer *in, const struct snap *cur)
{
	in->dup = xrealloc(in->dup, cur->n ? cur->n : 1);
	infer_index_init(&in->seen, cur->n);
	for (size_t i = 0; i < cur->n; i++) {
		size_t h = infer_index_slot(&in->seen, cur->p[i].series, cur->p[i].slen);

		in->dup[i] = in->seen.key[h] != NULL;
		if (!in->dup[i])
			in->seen.key[h] = cur->p[i].series;
	}
	return in->dup;
}

/*
 * The models the period wrote (ms[i]: acc i's object, NULL: none), in the
 * group's order: by model name in the order each first has an object, and
 * under it its versions in theirs. The indices into order[], and how many.
 */
static size_t model_order(struct infer *in, const struct period *pd, json_t *const *ms, uint32_t *order)
{
	uint32_t *next = xmalloc(2 * (pd->na ? pd->na : 1) * sizeof(*next)), *tail = next + pd->na;
	size_t n = 0;

	infer_index_init(&in->seen, pd->na);
	for (size_t i = 0; i < pd->na; i++) {
		size_t h;

		next[i] = UINT32_MAX;
		if (!ms[i])
			continue;
		h = infer_index_slot(&in->seen, pd->a[i].model, strlen(pd->a[i].model));
		if (!in->seen.key[h]) {
			in->seen.key[h] = pd->a[i].model;
			in->seen.val[h] = (uint32_t)i;
			tail[i] = (uint32_t)i;
		} else {
			uint32_t first = in->seen.val[h];

			next[tail[first]] = (uint32_t)i;
			tail[first] = (uint32_t)i;
		}
	}
	for (size_t i = 0; i < pd->na; i++) {
		size_t h;

		if (!ms[i])
			continue;
		h = infer_index_slot(&in->seen, pd->a[i].model, strlen(pd->a[i].model));
		if (in->seen.val[h] != i)
			continue; /* written with its model's first */
		for (uint32_t k = (uint32_t)i; k != UINT32_MAX; k = next[k])
			order[n++] = k;
	}
	free(next);
	return n;
}

/* The period's models (ms: each acc's object) into group's "models", and as records in in->recs. */
static size_t models_out(struct infer *in, const struct period *pd, json_t *const *ms, const struct infer_model *rs,
			 json_t *group)
{
	uint32_t *order = xmalloc((pd->na ? pd->na : 1) * sizeof(*order));
	size_t n = model_order(in, pd, ms, order);
	json_t *models = json_object();

	if (n > in->rcap) {
		in->rcap = n;
		in->recs = xrealloc(in->recs, n * sizeof(*in->recs));
	}
	for (size_t k = 0; k < n; k++) {
		const struct acc *a = &pd->a[order[k]];
		json_t *vs = json_object_get(models, a->model);

		if (!vs) {
			vs = json_object();
			json_object_set_new(models, a->model, vs);
		}
		json_object_set_new(vs, a->version, ms[order[k]]);
		in->recs[k] = rs[order[k]];
		in->recs[k].obj = ms[order[k]];
	}
	json_object_set_new(group, "models", models);
	free(order);
	return n;
}

/* The server's devices into group's "server_devices", and their UUIDs in in->devs. */
static void devices_out(struct infer *in, const struct period *pd, json_t *group)
{
	json_t *devs = json_object();

	if (pd->ndv > in->dvcap) {
		in->dvcap = pd->ndv;
		in->devs = xrealloc(in->devs, pd->ndv * sizeof(*in->devs));
	}
	for (size_t i = 0; i < pd->ndv; i++) {
		const struct dev *dv = &pd->dv[i];
		json_t *o = json_object();

		for (int k = 0; k < D_N; k++) {
			if (!dv->f[k].has)
				continue;
			if (k == D_MEM_USED || k == D_MEM_TOTAL)
				json_object_set_new(o, dev_key[k], infer_int_of(dv->f[k].v));
			else
				json_object_set_new(o, dev_key[k], infer_real_of(dv->f[k].v));
		}
		if (dv->has_energy_total)
			json_object_set_new(o, "energy_total_joules", infer_real_of(dv->energy_total));
		json_object_set_new(devs, dv->uuid, o);
		in->devs[i] = dv->uuid;
	}
	json_object_set_new(group, "server_devices", devs);
}

void infer_set_histograms(struct infer *in, int on)
{
	in->hist = on;
}

void infer_execution_stats(struct infer *in, json_t *group, struct infer_stats *st)
{
	struct snap *cur = in->cur;
	struct period pd;
	const double *d;
	const unsigned char *dup;
	json_t **ms;
	struct infer_model *rs;
	size_t nrec;
	unsigned want;

	if (st)
		memset(st, 0, sizeof(*st));
	if (!cur)
		return;
	memset(&pd, 0, sizeof(pd));
	pd.a = in->pa;
	pd.cap = in->pcap;
	pd.dv = in->pdv;
	pd.dcap = in->pdcap;
	pd.have_base = in->base && in->base != cur;
	pd.look = &in->look;
	pd.hist = in->hist;
	infer_look_reset(&in->look, cur->n < INFER_MAX_MODELS ? cur->n : INFER_MAX_MODELS);
	want = 1u << infer_server_of(in) | 1u << INFER_AUTO;
	d = increases(in, pd.have_base ? in->base : NULL, cur);
	dup = duplicates(in, cur);
	for (size_t i = 0; i < cur->n; i++)
		if (((1u << fams[cur->p[i].fam].srv) & want) && !dup[i])
			infer_add_pt(&pd, &cur->p[i], d[i]);

	if (pd.have_base)
		infer_runtime_json(&pd, group);
	ms = xmalloc((pd.na ? pd.na : 1) * sizeof(*ms));
	rs = xmalloc((pd.na ? pd.na : 1) * sizeof(*rs));
	for (size_t i = 0; i < pd.na; i++)
		ms[i] = infer_model_json(&pd.a[i], pd.have_base, in->hist, &rs[i]);
	nrec = models_out(in, &pd, ms, rs, group);
	free(ms);
	free(rs);
	if (pd.ndv)
		devices_out(in, &pd, group);
	if (st) {
		st->models = in->recs;
		st->nmodels = nrec;
		st->devices = in->devs;
		st->ndevices = pd.ndv;
	}
	infer_limits_error(in, &pd, group);
	infer_period_end(in, &pd);
	if (in->base != cur)
		snap_drop(in, in->base);
	in->base = cur;
}
