/* SPDX-License-Identifier: MIT */
/*
 * HTTP(S) GETs for endpoint runtimes, on the producer's loop
 * (http_async.h): a slow or hung server never blocks the producer. One
 * scrape object is one endpoint: one transfer at a time, on a connection
 * of its own kept alive between scrapes.
 *
 * Also here: the parse of an endpoint URL, which the configuration check
 * and the process discovery use.
 */
#ifndef ACCEL_SCRAPE_H
#define ACCEL_SCRAPE_H

#include "../../common/util.h"

#include <stddef.h>
#include <stdint.h>

struct http_async;
struct scrape;

/* An endpoint URL: http[s]://HOST[:PORT][/PATH]. */
struct scrape_url {
	int https;
	char host[256];    /* as written, without the brackets of an IPv6 literal */
	unsigned port;     /* given, or 80 / 443 */
	const char *path;  /* borrowed from the URL: "/metrics", "" when none */
};

/*
 * Parse url. 0, or -EINVAL with why (a static string): no http:// or
 * https://, credentials in the URL (use basic_auth), no host, a bad port.
 */
int scrape_url_parse(const char *url, struct scrape_url *u, const char **why);

/* What a transfer is made with; every string is borrowed for the call to scrape_start only. */
struct scrape_opts {
	const char *url;
	size_t max_body;               /* bytes: the transfer is aborted past this (decoded) size */
	const char *ca_file;           /* NULL: the system's CAs */
	const char *cert_file, *key_file; /* client certificate (PEM) */
	const char *server_name;       /* TLS server name to send and verify, NULL: the URL's host */
	int insecure;                  /* do not verify the server's certificate */
	const char *bearer_token_file; /* read at each scrape (a rotated token is picked up) */
	const char *username;          /* basic auth */
	const char *password_file;     /* basic auth's password, read at each scrape; NULL: empty */
};

/* A finished transfer (scrape_result): called once, from a loop callback. */
typedef void (*scrape_done_cb)(struct scrape *s, void *data);

/*
 * A new scrape object through http (borrowed: it must outlive the object).
 * 0, or -errno with err (then *out is NULL); libcurl is loaded at the
 * first request, so a libcurl that cannot be loaded is each scrape's error.
 */
int scrape_new(struct http_async *http, struct scrape **out, char *err, size_t errsz);

/*
 * Start a GET with o, ending with "timeout after X s" at timeout_ns at the
 * latest. 0, or -errno with err (an invalid URL, a transfer already
 * running: -EBUSY); cb is called only after 0. A credentials file that
 * cannot be read (or holds a control character) is the result's error.
 */
int scrape_start(struct scrape *s, const struct scrape_opts *o, int64_t timeout_ns, scrape_done_cb cb, void *data,
		 char *err, size_t errsz);

/* Is a transfer running? */
int scrape_busy(const struct scrape *s);

/* Non-zero once the running transfer's body has begun to arrive (0 when none runs). */
size_t scrape_received(const struct scrape *s);

/*
 * This thread's CPU time the running transfer, or the last one, has taken
 * so far in the loop's callbacks (reading, TLS, decoding the body), ns: the
 * endpoint's share of the loop, for its self-timing.
 */
int64_t scrape_loop_cpu_ns(const struct scrape *s);

/* Stop a running transfer (its connection is closed); cb is not called. No-op when none runs. */
void scrape_cancel(struct scrape *s);

struct scrape_result {
	const char *error;   /* "" when the body is good (HTTP 2xx, whole, within max_body), else what happened */
	const char *body;    /* the body (decoded), NUL-terminated; borrowed until the next scrape_start */
	size_t len;          /* bytes */
	long http_code;      /* 0 when there was no answer */
	int64_t started_ns;  /* CLOCK_MONOTONIC: the request went out */
	int64_t first_byte_ns; /* CLOCK_MONOTONIC: the answer began (the server's sample time, near enough) */
};

/* The last finished transfer's result (in the done callback, and until the next scrape_start). */
const struct scrape_result *scrape_result(const struct scrape *s);

void scrape_free(struct scrape *s); /* NULL-safe; cancels a running transfer */

#endif
