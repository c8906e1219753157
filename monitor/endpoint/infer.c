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
#include "infer.h"
#include "bounds.h"

#include "../../common/expo_parse.h"
#include "../../common/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a family means. */
enum role {
	ROLE_COMPLETED,   /* counter: requests that completed */
	ROLE_FAILED,      /* counter: requests that failed (sub: the error type) */
	ROLE_INFER_COUNT, /* counter: inferences (a batch of n counts n) */
	ROLE_EXEC_COUNT,  /* counter: batch executions */
	ROLE_DURATION,    /* counter: cumulative time, per completed request -> mean_seconds[mean] */
	ROLE_DIST,        /* histogram or summary of a time -> latency_stats and mean_seconds[mean] */
	ROLE_IN_FLIGHT,   /* gauge */
	ROLE_PENDING,     /* gauge */
	ROLE_KV_CACHE,    /* gauge, ratio 0..1 */
	ROLE_PROMPT,      /* counter (or a histogram's _sum): prompt tokens */
	ROLE_GENERATION,  /* counter (or a histogram's _sum): generated tokens */
	ROLE_HOST_ERROR,  /* counter without a model: runtime-level error_summary[sub] */
	ROLE_DEVICE,      /* gauge or counter of a GPU (sub: its UUID) -> server_devices */
};

/* mean_seconds keys; the first four also have percentiles in latency_stats. */
enum mean { M_REQUEST, M_QUEUE, M_TTFT, M_TPOT, M_COMPUTE_INPUT, M_COMPUTE_INFER, M_COMPUTE_OUTPUT, M_N };
static const char *const mean_key[M_N] = { "request",		"queue",	 "time_to_first_token",
					   "time_per_output_token", "compute_input", "compute_infer",
					   "compute_output" };
static const char *const pct_key[M_N] = { "total_latency", "queue", "time_to_first_token", "time_per_output_token" };

enum dev_field { D_UTIL, D_MEM_USED, D_MEM_TOTAL, D_POWER, D_POWER_LIMIT, D_ENERGY, D_TEMP, D_N };
static const char *const dev_key[D_N] = { "utilization_ratio", "memory_used_bytes", "memory_total_bytes",
					  "power_watts",       "power_limit_watts", "energy_joules",
					  "temperature_celsius" };

/* One family of one server. */
struct fam {
	enum infer_server srv;     /* INFER_AUTO: read whatever the flavour */
	const char *name;  /* the family's name (a counter's sample name as 0.0.4 text writes it) */
	char type;         /* 'c' counter, 'g' gauge, 'h' histogram, 's' summary */
	enum role role;
	int arg;           /* enum mean for DURATION/DIST, enum dev_field for DEVICE */
	int prio;          /* when two families feed one distribution, the higher one wins */
	double div;        /* server unit per second (1e6: microseconds); 1 for counts */
	const char *model_l, *version_l, *sub_l; /* label names; NULL: none */
	const char *sub_fixed;                   /* sub-key when it is no label */
	const char *const *only;                 /* label "method" must be one of these (OVMS) */
};

static const char *const ovms_infer_methods[] = { "Predict", "ModelInfer", "Unary", "Stream", NULL };

#define TRI(n, t, r, a, d) { INFER_TRITON, n, t, r, a, 1, d, "model", "version", NULL, NULL, NULL }
#define TRI_GPU(n, t, a) { INFER_TRITON, n, t, ROLE_DEVICE, a, 1, 1, NULL, NULL, "gpu_uuid", NULL, NULL }
#define VLLM(n, t, r, a, p) { INFER_VLLM, n, t, r, a, p, 1, "model_name", NULL, NULL, NULL, NULL }
#define TGI(n, t, r, a, s) { INFER_TGI, n, t, r, a, 1, 1, NULL, NULL, s, NULL, NULL }
#define TS(n, r, a, d) { INFER_TORCHSERVE, n, 'c', r, a, 1, d, "model_name", "model_version", NULL, NULL, NULL }
#define TS_HOST(n, s) { INFER_TORCHSERVE, n, 'c', ROLE_HOST_ERROR, 0, 1, 1, NULL, NULL, NULL, s, NULL }
#define OVMS(n, t, r, a, d, o) { INFER_OVMS, n, t, r, a, 1, d, "name", "version", NULL, NULL, o }

static const struct fam fams[] = {
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

/* Which part of a family a sample is. */
enum part { P_VALUE, P_BUCKET, P_SUM, P_COUNT, P_QUANTILE };

/* A sample name of a known family: name -> (family, part). */
struct name_ent {
	char *name;
	int fam;
	enum part part;
};

#define NAME_SLOTS 512u /* a power of two, well above 4 names per family */

/* One sample of a known family in one scrape. */
struct pt {
	int fam;
	enum part part;
	double le;     /* bucket's upper bound, or the quantile */
	double v;      /* the value; the period's increase once compared */
	char *series;  /* name and labels as written: the key between scrapes (one allocation with the next) */
	char *group;   /* family and labels but le/quantile: one histogram or summary */
	char *model;   /* model label ("" when none) */
	char *version; /* version label ("" when none) */
	char *sub;     /* error type or GPU UUID ("" when none) */
	size_t slen, glen; /* strlen of series and group */
	size_t off;    /* while parsing: where its strings start in the arena */
	uint32_t og, om, ov, ob; /* and where group, model, version and sub start after that */
};

struct snap {
	struct pt *p;
	size_t n, cap;
	char *arena; /* every pt's strings; while parsing, pt pointers hold offsets into it */
	size_t alen, acap;
	int64_t mono_ns;
};

struct index {
	const char **key;
	size_t *val;
	size_t slots, cap; /* cap: slots allocated (kept from period to period) */
};

static void index_free(struct index *x);
struct look;
static void look_free(struct look *t);

/*
 * What one scrape may hold. A body within the default 4 MiB cap can name
 * tens of thousands of models, bounds or error reasons; past these limits the
 * rest is left out and the group's "error" says what (a report line must
 * stay readable by every sink, and each lookup below is a hash, so the cost
 * grows with the samples, not with their square).
 */
#define INFER_MAX_SERIES 200000u  /* samples of known families kept from one scrape */
#define INFER_MAX_MODELS 4096u    /* model versions */
#define INFER_MAX_DEVICES 256u    /* server devices */
#define INFER_MAX_ERRORS 128u     /* error reasons of one model (or of the host) */
#define INFER_MAX_BOUNDS 512u     /* bucket bounds (or quantiles) of one distribution */

/*
 * The period's lookups, one open-addressing table for all of them: models
 * by (model, version), devices by UUID, error reasons by (owner, reason) and
 * bucket bounds by (owner, bound). A slot keeps the key's hash, its kind and
 * owner and the index of the item in its owner's array (plus 1; 0: empty);
 * the item itself is compared on a hash match. Its slots are kept from
 * period to period.
 */
enum look_kind { LOOK_MODEL = 1, LOOK_DEVICE, LOOK_ERROR, LOOK_BOUND };

struct look_slot {
	uint64_t h;
	uint32_t owner;
	uint32_t kind;
	uint32_t idx; /* item index + 1; 0: empty */
};

struct look {
	struct look_slot *s;
	size_t cap, n; /* cap: a power of two, at most half full */
};

struct acc;
struct dev;

struct infer {
	enum infer_server configured, recognised;
	struct snap *base; /* the scrape the previous execution_stats used */
	struct snap *cur;  /* the latest scrape (may be base) */
	struct snap *spare; /* a snapshot no longer used, kept for its buffers (no page faults each scrape) */
	struct name_ent names[NAME_SLOTS];
	size_t lab_len[ARRAY_SIZE(fams)][3]; /* strlen of each family's model_l, version_l, sub_l (0: none) */
	/* increases()'s work space, kept from period to period (no allocation, no page fault each) */
	struct index prev, grp, seen;
	double *d;
	unsigned char *reset, *dup;
	size_t *gi, wcap;
	/*
	 * infer_execution_stats()'s period arrays, kept the same way (and each
	 * model's bucket arrays in them): allocated each period, those blocks
	 * of kilobytes made malloc consolidate all the small blocks the
	 * previous report's JSON had freed.
	 */
	struct acc *pa;   /* pcap of them, zeroed past those in use but for their bucket arrays */
	size_t pcap;
	struct dev *pdv;
	size_t pdcap;
	struct look look;         /* the period's lookups (its slots kept) */
	size_t series_left_out;   /* samples the latest scrape had beyond INFER_MAX_SERIES */
	struct expo_parser *parser; /* owned: the scrapes' parser, its buffers kept */
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
static uint32_t name_hash(const char *s, size_t n)
{
	return (uint32_t)(hash_bytes(0x9e3779b97f4a7c15ull, s, n) >> 32);
}

static void name_add(struct infer *in, char *name, int fam, enum part part)
{
	uint32_t h = name_hash(name, strlen(name)) & (NAME_SLOTS - 1);

	while (in->names[h].name)
		h = (h + 1) & (NAME_SLOTS - 1);
	in->names[h] = (struct name_ent){ name, fam, part };
}

static const struct name_ent *name_find(const struct infer *in, const char *name, size_t n)
{
	uint32_t h = name_hash(name, n) & (NAME_SLOTS - 1);

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

/* Done with s: keep it as the spare (its buffers reused by the next scrape), or free it. */
static void snap_drop(struct infer *in, struct snap *s)
{
	if (!s)
		return;
	if (in->spare) {
		snap_free(s);
		return;
	}
	s->n = 0;
	s->alen = 0;
	in->spare = s;
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
	index_free(&in->prev);
	index_free(&in->grp);
	index_free(&in->seen);
	free(in->dup);
	look_free(&in->look);
	free(in->d);
	free(in->reset);
	free(in->gi);
	period_keep_free(in);
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
	char *block, *og, *om, *ov, *ob;
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

	/*
	 * One allocation: series, group, model, version, sub. The group is the
	 * family and every label but le/quantile, each name and value with its
	 * length before it, so no two label sets share one; for a counter's or
	 * gauge's sample, its own group (increases()), the family alone.
	 */
	{
		int grouped = e->part != P_VALUE;
		size_t ns = x->series_len, nf = strlen(f->name), nm = lab[0] ? lab[0]->value_len : 0,
		       nv = lab[1] ? lab[1]->value_len : 0, need = ns + nf + nm + nv + nsub + 5;
		char *w;

		for (size_t i = 0; grouped && i < x->nlabels; i++)
			need += x->labels[i].name_len + x->labels[i].value_len + 2 * 21;
		if (sc->s->acap - sc->s->alen < need) {
			while (sc->s->acap - sc->s->alen < need)
				sc->s->acap = sc->s->acap ? 2 * sc->s->acap : 1u << 16;
			sc->s->arena = xrealloc(sc->s->arena, sc->s->acap);
		}
		w = block = sc->s->arena + sc->s->alen;
		w = put(w, x->series, ns + 1);
		og = w;
		w = put(w, f->name, nf);
		for (size_t i = 0; grouped && i < x->nlabels; i++) {
			const struct expo_label *l = &x->labels[i];

			if (is_label(l, "le", 2) || is_label(l, "quantile", 8))
				continue;
			w = put_len(w, '|', l->name_len);
			w = put(w, l->name, l->name_len);
			w = put_len(w, '=', l->value_len);
			w = put(w, l->value, l->value_len);
		}
		*w++ = '\0';
		om = w;
		w = put(w, lab[0] ? lab[0]->value : "", nm + 1);
		ov = w;
		w = put(w, lab[1] ? lab[1]->value : "", nv + 1);
		ob = w;
		w = put(w, sub ? sub : "", nsub + 1);
		sc->s->alen += (size_t)(w - block);
		/* model names and labels become JSON keys: bounded, valid UTF-8 without control bytes */
		bound_name(om, nm);
		bound_name(ov, nv);
		bound_name(ob, nsub);
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
	p->slen = x->series_len;
	p->glen = (size_t)(om - og - 1);
	p->off = (size_t)(block - sc->s->arena); /* pointers once the arena stops moving (infer_update) */
	p->og = (uint32_t)(og - block);
	p->om = (uint32_t)(om - block);
	p->ov = (uint32_t)(ov - block);
	p->ob = (uint32_t)(ob - block);
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
	sc.s->mono_ns = mono_ns;
	bad = expo_parse(in->parser, body, len, on_sample, &sc, err, errsz);
	if (bad && !sc.samples) {
		snap_drop(in, sc.s);
		return -EINVAL;
	}
	for (size_t i = 0; i < sc.s->n; i++) {
		struct pt *p = &sc.s->p[i];

		p->series = sc.s->arena + p->off;
		p->group = p->series + p->og;
		p->model = p->series + p->om;
		p->version = p->series + p->ov;
		p->sub = p->series + p->ob;
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

/* ---- A period ---------------------------------------------------------------------------------------- */

/* A string-keyed open-addressing index into an array (series or groups). */
/* Ready for n keys, empty; its arrays kept from the previous use when large enough. */
static void index_init(struct index *x, size_t n)
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

static void index_free(struct index *x)
{
	free(x->key);
	free(x->val);
}

/* The slot of key: holding it, or the empty one where it goes. */
static size_t index_slot(const struct index *x, const char *key, size_t n)
{
	size_t h = name_hash(key, n) & (x->slots - 1);

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
static void look_reset(struct look *t, size_t n)
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

static void look_free(struct look *t)
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

/* Bucket increments (or a summary's quantiles) merged by bound. */
struct bucket {
	double le, n;
};

/* One time distribution of a model over the period. */
struct dist {
	int fam;           /* the family it came from, -1: none yet */
	struct bucket *b;  /* histogram: bucket increments by bound; summary: (quantile, value) */
	size_t nb, cap;
	double sum, count; /* increases of _sum and _count */
	int has_sum, has_count;
	const char *qgroup; /* summary: the series its quantiles came from (one only) */
	int qmixed;         /* summary: quantiles of more than one series: none are given */
};

struct count {
	double v;
	int has;
};

struct err {
	char *type;
	double n;
};

struct acc {
	const char *model, *version;
	struct count completed, failed, infer, exec, prompt, gen, in_flight, pending, kv;
	struct err *errs;
	size_t nerrs;
	struct count dur[M_N]; /* ROLE_DURATION increases, server units */
	double dur_div[M_N];
	struct dist d[M_N];
};

struct dev {
	const char *uuid;
	struct count f[D_N];
	double energy_total;
	int has_energy_total;
};

struct period {
	int have_base;      /* increases are known */
	struct acc *a;
	size_t na, cap, last; /* last: the model acc_of() found last */
	struct dev *dv;
	size_t ndv, dcap;
	struct err *host_errs;
	size_t nhost;
	struct look *look;  /* borrowed from struct infer */
	/* samples left out past a limit (INFER_MAX_*) */
	size_t models_out, devices_out, errors_out, bounds_out;
};

/* Owners of error reasons and bounds besides a model's (its index in pd->a, times M_N for bounds). */
#define OWNER_HOST 0xfffffffeu  /* the host's error reasons */
#define OWNER_MERGED 0xffffffffu /* runtime_json's merged reasons and bounds */

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
	/* a model's samples mostly follow each other: the previous one first */
	if (pd->last < pd->na && !strcmp(pd->a[pd->last].model, model) && !strcmp(pd->a[pd->last].version, version))
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
static void add_pt(struct period *pd, const struct pt *p, double d)
{
	const struct fam *f = &fams[p->fam];
	struct acc *a;
	struct dist *ds;

	if (f->role == ROLE_DEVICE) {
		struct dev *dv;

		if (p->v < 0 && f->arg != D_TEMP)
			return; /* a utilization, memory, power or energy below zero is no reading: left out */
		dv = dev_of(pd, p->sub);
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
			err_add(pd, OWNER_HOST, &pd->host_errs, &pd->nhost, p->sub, d);
		return;
	}
	a = acc_of(pd, p->model, p->version);
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
		err_add(pd, (uint32_t)(a - pd->a), &a->errs, &a->nerrs, p->sub, d);
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
			if (ds->qgroup && strcmp(ds->qgroup, p->group)) {
				ds->qmixed = 1;
				ds->nb = 0;
				return;
			}
			ds->qgroup = p->group;
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
	double prev, obs, rank, start = 0, end, count;
	size_t lo, hi, k;

	if (isnan(q))
		return NAN;
	if (q < 0)
		return -INFINITY;
	if (q > 1)
		return INFINITY;
	if (!n || !isinf(b[n - 1].le) || b[n - 1].le < 0)
		return NAN;
	prev = b[0].n;
	for (size_t i = 1; i < n; i++) {
		double c = b[i].n;

		if (c == prev)
			continue;
		if (almost_equal(prev, c, 1e-12)) {
			b[i].n = prev;
			continue;
		}
		if (c < prev) {
			b[i].n = prev;
			continue;
		}
		prev = c;
	}
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
static json_t *int_of(double v)
{
	return isfinite(v) && fabs(v) < 9007199254740992.0 ? json_integer((json_int_t)llround(v)) : NULL;
}

/* A real; NULL (not set) when not finite (an overflow of garbage values): JSON has no NaN or Inf. */
static json_t *real_of(double v)
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
			json_object_set_new(o, pct_name[i], real_of(v / div));
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
		json_object_set_new(o, key, real_of(b[i].n / div));
	}
	if (!json_object_size(o)) {
		json_decref(o);
		return NULL;
	}
	return o;
}


static void set_errs(json_t *parent, const struct err *e, size_t n)
{
	json_t *o = json_object();

	for (size_t i = 0; i < n; i++)
		json_object_set_new(o, e[i].type, int_of(e[i].n));
	json_object_set_new(parent, "error_summary", o);
}

/* One model's object; NULL when the period gave it nothing. */
static json_t *model_json(struct acc *a, int have_base)
{
	json_t *o = json_object(), *lat = json_object(), *mean = json_object();
	int src_h = 0, src_s = 0;

	if (a->completed.has || a->failed.has) {
		json_t *es = json_object();

		if (a->completed.has)
			json_object_set_new(es, "completed", int_of(a->completed.v));
		if (a->failed.has)
			json_object_set_new(es, "failed", int_of(a->failed.v));
		json_object_set_new(o, "execution_summary", es);
	}
	if (a->failed.has)
		set_errs(o, a->errs, a->nerrs);
	for (int m = 0; have_base && m < M_N; m++) {
		struct dist *d = &a->d[m];
		const struct fam *f = d->fam >= 0 ? &fams[d->fam] : NULL;
		json_t *p = NULL;

		if (m < 4 && f && f->type == 'h' && d->has_count && d->count > 0) {
			p = hist_pcts(d->b, d->nb, f->div);
			src_h += !!p;
		} else if (m < 4 && f && f->type == 's' && !d->qmixed && d->has_count && d->count > 0) {
			p = summary_pcts(d->b, d->nb, f->div);
			src_s += !!p;
		}
		if (p)
			json_object_set_new(lat, pct_key[m], p);
		/* the mean: a cumulative duration counter per completed request, else the distribution's sum/count */
		if (a->dur[m].has) {
			if (a->completed.has && a->completed.v > 0)
				json_object_set_new(mean, mean_key[m], real_of(a->dur[m].v / a->dur_div[m] / a->completed.v));
		} else if (f && d->has_sum && d->has_count && d->count > 0) {
			json_object_set_new(mean, mean_key[m], real_of(d->sum / f->div / d->count));
		}
	}
	if (json_object_size(lat)) {
		json_object_set_new(lat, "percentile_source",
				    json_string(src_h && src_s ? "mixed" : src_h ? "histogram" : "summary"));
		json_object_set_new(o, "latency_stats", lat);
	} else {
		json_decref(lat);
	}
	if (json_object_size(mean))
		json_object_set_new(o, "mean_seconds", mean);
	else
		json_decref(mean);
	if (a->in_flight.has)
		json_object_set_new(o, "requests_in_flight", int_of(a->in_flight.v));
	if (a->pending.has)
		json_object_set_new(o, "requests_pending", int_of(a->pending.v));
	if (a->infer.has && a->exec.has && a->exec.v > 0)
		json_object_set_new(o, "batch_size", real_of(a->infer.v / a->exec.v));
	if (a->prompt.has || a->gen.has) {
		json_t *t = json_object();

		if (a->prompt.has)
			json_object_set_new(t, "prompt", int_of(a->prompt.v));
		if (a->gen.has)
			json_object_set_new(t, "generation", int_of(a->gen.v));
		json_object_set_new(o, "tokens", t);
	}
	if (a->kv.has)
		json_object_set_new(o, "kv_cache_usage_ratio", real_of(a->kv.v));
	if (!json_object_size(o)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The runtime-level sums and merged distribution over all models. */
static void runtime_json(struct period *pd, json_t *group)
{
	struct count completed = { 0, 0 }, failed = { 0, 0 };
	struct err *errs = NULL;
	size_t nerrs = 0, nb = 0, cap = 0;
	struct bucket *b = NULL;
	double div = 0;
	int merge = 1, any = 0;

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
		for (size_t k = 0; k < d->nb; k++)
			bucket_add(pd, OWNER_MERGED, &b, &nb, &cap, d->b[k].le, d->b[k].n);
	}
	for (size_t k = 0; k < pd->nhost; k++)
		err_add(pd, OWNER_MERGED, &errs, &nerrs, pd->host_errs[k].type, pd->host_errs[k].n);
	if (completed.has || failed.has) {
		json_t *es = json_object();

		if (completed.has)
			json_object_set_new(es, "completed", int_of(completed.v));
		if (failed.has)
			json_object_set_new(es, "failed", int_of(failed.v));
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
		}
	}
	for (size_t k = 0; k < nerrs; k++)
		free(errs[k].type);
	free(errs);
	free(b);
}

/* What the limits left out of this period, in the group's "error" (after any error it has). */
static void limits_error(const struct infer *in, const struct period *pd, json_t *group)
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
		json_object_set_new(group, "error", json_string(msg));
}

/* The period's error lists are freed; its arrays go back to in for the next period. */
static void period_end(struct infer *in, struct period *pd)
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
	int indexed = 0;
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
	index_init(&in->grp, cur->n);
	for (size_t i = 0; i < cur->n; i++) {
		const struct pt *p = &cur->p[i];
		const struct pt *b = NULL;
		int back;

		if (i < base->n && same_series(p, &base->p[i])) {
			b = &base->p[i];
		} else {
			size_t h;

			if (!indexed) {
				index_init(&in->prev, base->n);
				for (size_t k = 0; k < base->n; k++) {
					h = index_slot(&in->prev, base->p[k].series, base->p[k].slen);
					in->prev.key[h] = base->p[k].series;
					in->prev.val[h] = k;
				}
				indexed = 1;
			}
			h = index_slot(&in->prev, p->series, p->slen);
			b = in->prev.key[h] ? &base->p[in->prev.val[h]] : NULL;
		}
		if (p->part == P_VALUE) { /* a counter's or gauge's sample is its own group */
			gi[i] = i;
		} else if (i && p->glen == p[-1].glen && !memcmp(p->group, p[-1].group, p->glen)) {
			gi[i] = gi[i - 1];
		} else {
			size_t g = index_slot(&in->grp, p->group, p->glen);

			if (!in->grp.key[g]) {
				in->grp.key[g] = p->group;
				in->grp.val[g] = i;
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
	index_init(&in->seen, cur->n);
	for (size_t i = 0; i < cur->n; i++) {
		size_t h = index_slot(&in->seen, cur->p[i].series, cur->p[i].slen);

		in->dup[i] = in->seen.key[h] != NULL;
		if (!in->dup[i])
			in->seen.key[h] = cur->p[i].series;
	}
	return in->dup;
}

void infer_execution_stats(struct infer *in, json_t *group)
{
	struct snap *cur = in->cur;
	struct period pd;
	json_t *models, *devs;
	const double *d;
	const unsigned char *dup;
	unsigned want;

	if (!cur)
		return;
	memset(&pd, 0, sizeof(pd));
	pd.a = in->pa;
	pd.cap = in->pcap;
	pd.dv = in->pdv;
	pd.dcap = in->pdcap;
	pd.have_base = in->base && in->base != cur;
	pd.look = &in->look;
	look_reset(&in->look, cur->n < INFER_MAX_MODELS ? cur->n : INFER_MAX_MODELS);
	want = 1u << infer_server_of(in) | 1u << INFER_AUTO;
	d = increases(in, pd.have_base ? in->base : NULL, cur);
	dup = duplicates(in, cur);
	for (size_t i = 0; i < cur->n; i++)
		if (((1u << fams[cur->p[i].fam].srv) & want) && !dup[i])
			add_pt(&pd, &cur->p[i], d[i]);

	if (pd.have_base)
		runtime_json(&pd, group);
	models = json_object();
	for (size_t i = 0; i < pd.na; i++) {
		json_t *m = model_json(&pd.a[i], pd.have_base), *vs;

		if (!m)
			continue;
		vs = json_object_get(models, pd.a[i].model);
		if (!vs) {
			vs = json_object();
			json_object_set_new(models, pd.a[i].model, vs);
		}
		json_object_set_new(vs, pd.a[i].version, m);
	}
	json_object_set_new(group, "models", models);
	if (pd.ndv) {
		devs = json_object();
		for (size_t i = 0; i < pd.ndv; i++) {
			struct dev *dv = &pd.dv[i];
			json_t *o = json_object();

			for (int k = 0; k < D_N; k++) {
				if (!dv->f[k].has)
					continue;
				if (k == D_MEM_USED || k == D_MEM_TOTAL)
					json_object_set_new(o, dev_key[k], int_of(dv->f[k].v));
				else
					json_object_set_new(o, dev_key[k], real_of(dv->f[k].v));
			}
			if (dv->has_energy_total)
				json_object_set_new(o, "energy_total_joules", real_of(dv->energy_total));
			json_object_set_new(devs, dv->uuid, o);
		}
		json_object_set_new(group, "server_devices", devs);
	}
	limits_error(in, &pd, group);
	period_end(in, &pd);
	if (in->base != cur)
		snap_drop(in, in->base);
	in->base = cur;
}
