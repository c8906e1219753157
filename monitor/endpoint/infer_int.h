/* SPDX-License-Identifier: MIT */
/*
 * What infer.c (the family table, scrapes, the period's increases) and
 * infer_period.c (a period's sums per model and device, and the
 * execution_stats it writes) share. Private to monitor/endpoint/.
 */
#ifndef ACCEL_INFER_INT_H
#define ACCEL_INFER_INT_H

#include "infer.h"

#include "../../common/util.h"

#include <stddef.h>
#include <stdint.h>

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

enum dev_field { D_UTIL, D_MEM_USED, D_MEM_TOTAL, D_POWER, D_POWER_LIMIT, D_ENERGY, D_TEMP, D_N };

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

extern const char *const mean_key[M_N];
extern const char *const pct_key[M_N];
extern const char *const dev_key[D_N];

/* Every family of every server (infer.c). */
#define INFER_NFAMS 57
extern const struct fam fams[INFER_NFAMS];

/* Which part of a family a sample is. */
enum part { P_VALUE, P_BUCKET, P_SUM, P_COUNT, P_QUANTILE };

/* A sample name of a known family: name -> (family, part). */
struct name_ent {
	char *name;
	int fam;
	enum part part;
};

#define NAME_SLOTS 512u /* a power of two, well above 4 names per family */

/* One sample of a known family in one scrape (56 bytes: a body holds up to INFER_MAX_SERIES of them). */
struct pt {
	double le;     /* bucket's upper bound, or the quantile */
	double v;      /* the value; the period's increase once compared */
	union {
		const char *series; /* name and labels as written: the key between scrapes (its strings follow it) */
		size_t off;         /* while parsing: where its strings start in the arena */
	};
	uint32_t slen, glen;     /* strlen of series and group */
	int32_t og, om, ov, ob;  /* where group (PT_FAMILY: none), model, version and sub are from series (before
				    it: the same string of an earlier sample, not stored twice) */
	int fam;
	enum part part;
};

#define PT_FAMILY INT32_MIN /* a counter's or gauge's sample: its group is its family's name */

/* A point's strings: the group (family and labels but le/quantile), model, version and sub ("" when none). */
static inline const char *pt_group(const struct pt *p)
{
	return p->og == PT_FAMILY ? fams[p->fam].name : p->series + p->og;
}

static inline const char *pt_model(const struct pt *p) { return p->series + p->om; }
static inline const char *pt_version(const struct pt *p) { return p->series + p->ov; }
static inline const char *pt_sub(const struct pt *p) { return p->series + p->ob; }

struct snap {
	struct pt *p;
	size_t n, cap;
	char *arena; /* every pt's strings; while parsing, pt pointers hold offsets into it */
	size_t alen, acap;
	int64_t mono_ns;
};

struct index {
	const char **key;
	uint32_t *val; /* the item's index (a scrape holds at most INFER_MAX_SERIES) */
	size_t slots, cap; /* cap: slots allocated (kept from period to period) */
};

struct look;

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
	size_t lab_len[INFER_NFAMS][3]; /* strlen of each family's model_l, version_l, sub_l (0: none) */
	/* increases()'s work space, kept from period to period (no allocation, no page fault each) */
	struct index prev, grp, seen; /* seen: duplicates() uses it, then model_order() */
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
	struct infer_model *recs; /* the period's models as records (infer_stats), rcap of them */
	const char **devs;        /* and its devices' UUIDs, dvcap of them */
	size_t rcap, dvcap;
	size_t series_left_out;   /* samples the latest scrape had beyond INFER_MAX_SERIES */
	struct expo_parser *parser; /* owned: the scrapes' parser, its buffers kept */
	int hist;                   /* execution_stats also writes latency_histograms (infer_set_histograms) */
};

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
	int hist;           /* latency_histograms wanted (struct infer's) */
	/* samples left out past a limit (INFER_MAX_*) */
	size_t models_out, devices_out, errors_out, bounds_out;
};

/* Owners of error reasons and bounds besides a model's (its index in pd->a, times M_N for bounds). */
#define OWNER_HOST 0xfffffffeu  /* the host's error reasons */
#define OWNER_MERGED 0xffffffffu /* infer_runtime_json's merged reasons and bounds */


/* ---- infer_period.c (infer_name_hash: infer.c) ---- */

/* A table slot's hash: the high half of hash_bytes. */
uint32_t infer_name_hash(const char *s, size_t n);
/* A string-keyed open-addressing index: ready for n keys, empty; its arrays kept when large enough. */
void infer_index_init(struct index *x, size_t n);
/* The slot of key (n bytes): holding it, or the empty one where it goes. */
size_t infer_index_slot(const struct index *x, const char *key, size_t n);
/* Free an index's arrays. */
void infer_index_free(struct index *x);
/* The period's lookups: empty, ready for n items (its slots kept when large enough). */
void infer_look_reset(struct look *t, size_t n);
/* Free the lookups' slots. */
void infer_look_free(struct look *t);
/* One sample's increase d (or, for gauges and quantiles, its value) into its model's accumulator. */
void infer_add_pt(struct period *pd, const struct pt *p, double d);
/* A count as a JSON integer (new reference); NULL for what no count can be. */
json_t *infer_int_of(double v);
/* A real (new reference); NULL when not finite: JSON has no NaN or Inf. */
json_t *infer_real_of(double v);
/*
 * One model's object (new reference), its record's numbers in *r; NULL when the period gave it nothing. hist:
 * its histogram distributions' buckets too ("latency_histograms").
 */
json_t *infer_model_json(struct acc *a, int have_base, int hist, struct infer_model *r);
/* The runtime-level sums and merged distribution over all models, into group. */
void infer_runtime_json(struct period *pd, json_t *group);
/* What the limits left out of this period, in the group's "error" (after any error it has). */
void infer_limits_error(const struct infer *in, const struct period *pd, json_t *group);
/* The period's error lists are freed; its arrays go back to in for the next period. */
void infer_period_end(struct infer *in, struct period *pd);

#endif
