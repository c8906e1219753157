/* SPDX-License-Identifier: MIT */
/*
 * The encoder's insides, shared by its two files: otlp_enc.c (interning,
 * the batch, protobuf) and otlp_json.c (OTLP/JSON). Nothing else includes it.
 */
#ifndef ACCEL_OTLP_ENC_INT_H
#define ACCEL_OTLP_ENC_INT_H

#include "../../common/hindex.h"
#include "../../common/log.h"
#include "otlp_enc.h"
#include "otlp_names.h"

#include <stdint.h>

#define OTLP_FLAG_NO_VALUE 1u /* DataPointFlags.NO_RECORDED_VALUE_MASK: the series left */

/* One attribute: its key and either a string value (str) or, when str is NULL, a double (num). */
struct oattr {
	const char *key;
	const char *str;
	double num;
};

/*
 * An attribute list, encoded once (otlp_pb_attrs, otlp_json_attrs) for every
 * request that carries it. The list owns kv, pool, pb, pbtag and json
 * (attrs_free in otlp_enc.c frees them); the keys and string values are
 * borrowed: from pool, or from what outlives the list (the names' tables,
 * the metric's descriptor, the encoder's configured attributes and
 * service.name).
 */
struct oattrs {
	struct oattr *kv;
	size_t n;
	char *pool;  /* keys and values */
	uint8_t *pb; /* the attributes as a NumberDataPoint's (field 7: KeyValue), each tagged */
	uint32_t *pbtag; /* the offset of each one's tag in pb (another field's attributes patch them) */
	size_t pb_len;
	char *json;  /* "[{...},...]" */
	size_t json_len;
	size_t bytes; /* their size in the encoder's encoding, about */
};

/* One family's metric: its descriptor, resolved once. */
struct omet {
	const struct family *fam;
	struct otlp_desc d;
	size_t bytes;    /* the Metric's own fields encoded, about */
	/* flush scratch: the group of this metric in the request being built */
	uint64_t stamp;
	uint32_t grp;
};

/* A resource: the instance labels' attributes, the configured ones, service.name. */
struct ores {
	char *key;       /* the instance labels as "name=value\n..." */
	struct oattrs a;
	uint64_t stamp;  /* flush scratch */
	uint32_t idx;
};

/* A series: its metric, resource and data-point attributes. */
struct oser {
	uint32_t met, res;
	char *key;       /* family name, NUL, rendered labels */
	size_t keylen;
	struct oattrs a;
	uint32_t gen;    /* the last report in which the store showed it */
	int live;        /* a point was sent since it (re)appeared: a NO_VALUE point is due when it leaves */
	int pinned;      /* the encoder's own health: never in the store, never leaves */
};

/* A pending data point. */
struct opoint {
	uint32_t ser;
	uint32_t met, res;  /* its series' (copied: a flush lays points out without reading the series) */
	uint32_t bytes;     /* what it counts for in pending_bytes */
	uint32_t flags;
	int64_t ts_ms, start_ms;
	double v;
	size_t hist;     /* index + 1 into the encoder's hist pool (n, sum, count, le[n], counts[n+1]); 0: none */
};

/* A group of the request being built: the points of one metric under one resource. */
struct ogroup {
	uint32_t met, res;
	uint32_t n, pos;
};


struct otlp_enc {
	struct otlp_enc_opts o;
	size_t point_bytes;     /* OTLP_POINT_BYTES or OTLP_JSON_POINT_BYTES */
	struct otlp_kv *conf;   /* the configured resource attributes (copies) */
	size_t nconf;
	char *service;
	int64_t start_ms;       /* the encoder's start: the health counters' */
	struct prom_store *store;
	struct omet *met;
	size_t nmet, amet;
	struct hindex mix;      /* family pointer -> metric index */
	struct ores *res;
	size_t nres, ares;
	uint32_t last_res;      /* the resource of the last series added (the health metrics'); index + 1 */
	char host[256], node[256]; /* the stream's instance_info hostname and node_name: a new series' resource's */
	struct oser *ser;
	size_t nser, aser;
	struct hindex six;      /* family name and rendered labels -> series index */
	struct opoint *pt;      /* pending: pt[head..npt) */
	size_t head, npt, apt;
	double *hp;             /* hist pool */
	size_t nhp, ahp;
	size_t pending_bytes;
	uint32_t gen;
	int sweeping;           /* on_series only notes the series (otlp_enc_sweep) */
	uint64_t flush_no;
	struct log_limit lim;   /* series refused */
	/* flush scratch, kept between flushes */
	struct ogroup *grp;
	size_t ngrp, agrp;
	uint32_t *ridx;         /* resources of the request, in first-seen order */
	size_t nridx, aridx;
	uint32_t *order;        /* point indices (relative to head), grouped */
	size_t aorder;
};

/* Bytes a data point adds to a request besides its attributes, about: protobuf, OTLP/JSON. */
#define OTLP_POINT_BYTES 40
#define OTLP_JSON_POINT_BYTES 110

/* OTLP/JSON: the request of the groups built by otlp_enc_flush (otlp_json.c). 0 or -ENOSPC. */
int otlp_json_request(struct otlp_enc *e, size_t k, struct buf *out);
/* The protobuf request of the groups built by otlp_enc_flush (otlp_pb.c), into out (reset). 0 or -E2BIG. */
int otlp_pb_request(struct otlp_enc *e, size_t k, struct buf *out);
/* The bytes of v as a protobuf varint (otlp_pb.c). */
size_t otlp_varint_len(uint64_t v);
/* An attribute list's protobuf encoding (otlp_pb.c), into a->pb and a->pbtag. */
void otlp_pb_attrs(struct oattrs *a);
/* An attribute list's JSON text (otlp_json.c), into a->json. */
void otlp_json_attrs(struct oattrs *a);

#endif
