/* SPDX-License-Identifier: MIT */
/*
 * HTTP(S) GETs on the producer's event loop (loop.h), for endpoint
 * runtimes: libcurl's multi interface, its sockets watched and its timer
 * run by the loop, so a slow or hung server never blocks the producer.
 * One scrape object is one endpoint: one transfer at a time, one easy
 * handle reused so the connection is kept alive between scrapes.
 *
 * libcurl is loaded with dlopen (libcurl.so.4, else libcurl-gnutls.so.4)
 * the first time a scrape object is made, not linked: linking it maps
 * libcurl and its ~30 libraries (TLS, HTTP/2, LDAP, Kerberos, ...) into
 * every accel-monitor process, which measured 8.4 MB of RSS against 2.5 MB
 * without, and the producer must stay within 4 MB when no endpoint is
 * configured.
 *
 * Also here: the parse of an endpoint URL (no libcurl needed), which the
 * configuration check and the process discovery use.
 */
#ifndef ACCEL_SCRAPE_H
#define ACCEL_SCRAPE_H

#include "../../common/util.h"

#include <stddef.h>
#include <stdint.h>

struct loop;
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
 * A new scrape object on loop (borrowed: it must outlive the object).
 * 0, or -errno with err "cannot load libcurl: ..." when libcurl cannot be
 * loaded (then *out is NULL).
 */
int scrape_new(struct loop *loop, struct scrape **out, char *err, size_t errsz);

/*
 * Start a GET with o, ending with "timeout after X s" at timeout_ns at the
 * latest. 0, or -errno with err (a credentials file that cannot be read,
 * a transfer already running: -EBUSY); cb is called only after 0.
 */
int scrape_start(struct scrape *s, const struct scrape_opts *o, int64_t timeout_ns, scrape_done_cb cb, void *data,
		 char *err, size_t errsz);

/* Is a transfer running? */
int scrape_busy(const struct scrape *s);

/* The body bytes the running transfer has received so far (0 when none runs). */
size_t scrape_received(const struct scrape *s);

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
