/* SPDX-License-Identifier: MIT */
/*
 * accel-prom's HTTP endpoint, on libmicrohttpd's own threads: /metrics
 * (Prometheus text or OpenMetrics, gzip when asked), /health, / and
 * BIE's /v1/collect. GET and HEAD only. With a web config (prom_web.h)
 * it serves TLS, checks client certificates and basic auth.
 *
 * Every response is built from the published snapshot (prom_expo.h) or
 * from atomics (health): a request never waits on ingestion.
 */
#ifndef ACCEL_PROM_HTTP_H
#define ACCEL_PROM_HTTP_H

#include "../../common/series/prom_expo.h"
#include "../../common/series/prom_store.h"

#include <stddef.h>

#define PROM_HTTP_CONN_LIMIT 4096    /* connections at once, lowered to fit RLIMIT_NOFILE */
#define PROM_HTTP_CONN_TIMEOUT_S 10  /* idle seconds before a connection is closed */
#define PROM_HTTP_REQUEST_DEADLINE_S 10 /* seconds a request may take to arrive whole (headers, body) */
#define PROM_HTTP_PER_IP_LIMIT 64    /* connections at once from one client address */
#define PROM_HTTP_THREADS 4          /* libmicrohttpd's thread pool */

struct prom_web;

struct prom_http_opts {
	const char *host;       /* numeric address or name; NULL or "": every address (IPv6 and IPv4) */
	unsigned port;          /* 0: any free port (see prom_http_port) */
	struct prom_pub *pub;   /* borrowed: the snapshot to serve */
	struct prom_store *store; /* borrowed: for /health */
	struct prom_web *web;   /* borrowed, may be NULL: TLS and basic auth */
	const char *version;
};

struct prom_http;

/* Start listening. 0, or -errno with err filled ("cannot listen on ADDR:PORT: why"). */
int prom_http_start(const struct prom_http_opts *o, struct prom_http **out, char *err, size_t errsz);
/* The port actually bound. */
unsigned prom_http_port(const struct prom_http *h);
void prom_http_stop(struct prom_http *h); /* NULL-safe; waits for the threads */

/*
 * Content negotiation, exposed for tests. accept is an Accept header
 * (NULL: absent): 1 when it prefers OpenMetrics 1.0.0 to the text format.
 */
int prom_accept_openmetrics(const char *accept);
/* 1 when an Accept-Encoding header (NULL: absent) allows gzip. */
int prom_accept_gzip(const char *accept_encoding);

/*
 * Split "ADDR:PORT", "[V6ADDR]:PORT" or ":PORT" into host (empty for any
 * address) and port. 0 or -EINVAL.
 */
int prom_parse_listen(const char *s, char *host, size_t hostsz, unsigned *port);

#endif
