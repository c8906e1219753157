/* SPDX-License-Identifier: MIT */
/*
 * The one HTTP client of accel-monitor's programs, over libcurl: every
 * request any of them makes (accel-cloudwatch, accel-remote-write,
 * accel-top --url, and accel-monitor for endpoint scrapes, the kubelet, the
 * ECS agent and task metadata endpoint, and instance metadata) is an easy handle set up here from one
 * options struct, so TLS, credentials, caps, decoding, proxies and redirects
 * behave the same everywhere:
 *
 *   - TLS: a CA file, a client certificate and key, a server name to ask
 *     for and verify (checked as a host name), or no verification at all;
 *   - a bearer token file or a basic-auth password file, read at each
 *     request (a rotated file is picked up) through http_secret_read, which
 *     refuses control bytes: a CR or LF would add request headers;
 *   - the answer's body capped after decoding (gzip and deflate accepted
 *     when asked for), its headers capped, redirects never followed, only
 *     http:// and https://;
 *   - what went wrong described in one set of words (http_result.error);
 *   - for gRPC (monitor/http/grpc.h): a unix socket instead of TCP, HTTP/2
 *     with prior knowledge, and named answer fields (HTTP/2 trailers such as
 *     grpc-status included: libcurl hands them to the header callback) kept.
 *
 * Also here, for the programs that retry: Retry-After parsing and the one
 * jittered exponential backoff.
 *
 * libcurl is reached through a table of its functions (struct http_curl),
 * never by name from this file. A program that links libcurl (the sinks)
 * takes http_curl_linked() (common/http_linked.c, the only file that names
 * libcurl's symbols); accel-monitor does not link it, because linking maps
 * libcurl and its ~30 libraries into the producer (about 9 MB of RSS
 * against 2.5 MB) whether or not it makes a request: it fills a table with
 * http_curl_load (dlopen) at its first request (http_async.h).
 *
 * Ownership: a client owns its easy handle, its header lists and its body
 * buffer; the strings of struct http_opts are borrowed for the call to
 * http_setup only, except body and keep_headers, borrowed until the transfer ends. A result's
 * body is borrowed from the client until its next http_setup.
 */
#ifndef ACCEL_HTTP_H
#define ACCEL_HTTP_H

#include "util.h"

#include <curl/curl.h>
#include <stddef.h>
#include <stdint.h>

/* ---- libcurl, linked or loaded --------------------------------------------------------------- */

/* The libcurl functions the client uses (each exactly libcurl's). */
struct http_curl {
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	void (*easy_reset)(CURL *);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	CURLcode (*easy_perform)(CURL *);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
	CURLMcode (*multi_add_handle)(CURLM *, CURL *);
	CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
	CURLMcode (*multi_socket_action)(CURLM *, curl_socket_t, int, int *);
	CURLMsg *(*multi_info_read)(CURLM *, int *);
	CURLMcode (*multi_assign)(CURLM *, curl_socket_t, void *);
	CURLMcode (*multi_cleanup)(CURLM *);
	CURLSH *(*share_init)(void);
	CURLSHcode (*share_setopt)(CURLSH *, CURLSHoption, ...);
	CURLSHcode (*share_cleanup)(CURLSH *);
};

/* The table of the linked libcurl (common/http_linked.c; the program must link libcurl). */
const struct http_curl *http_curl_linked(void);

/*
 * Fill api from libcurl.so.4 (else libcurl-gnutls.so.4) loaded with dlopen,
 * and run curl_global_init. The library is never unloaded (its TLS library
 * pins itself). 0, or -ENOENT with err ("cannot load libcurl ...").
 */
int http_curl_load(struct http_curl *api, char *err, size_t errsz);

/* ---- secrets, header values, host names --------------------------------------------------------- */

#define HTTP_SECRET_MAX 65536 /* bytes of a token or password file */

/*
 * Read a secret (a bearer token, a password) from the file path into dst
 * (size bytes), without its trailing white space and line ends. Refused: a
 * file that is not a regular file (a FIFO never blocks), one that does not
 * fit, and one with a control byte (CR, LF, any other below 0x20, DEL) in
 * the value, which would end the request header it goes into and start
 * another. 0, or -errno with err "<what> <path>: why" (what names the
 * option, such as "bearer_token_file"; the secret itself is never quoted).
 */
int http_secret_read(const char *what, const char *path, char *dst, size_t size, char *err, size_t errsz);

/*
 * The same check for a secret that comes from elsewhere (an environment
 * variable, a credentials file, a metadata answer): 0, or -EINVAL with err
 * "<what>: holds a control character ...".
 */
int http_secret_check(const char *what, const char *value, char *err, size_t errsz);

/* A request header "Name: value": a token name, no control byte in the value. 0 or -EINVAL with *why (static). */
int http_header_check(const char *header, const char **why);

/*
 * A host name to ask for in TLS (tls.server_name): dot-separated labels of
 * letters, digits, '-' and '_', none empty or over 63 bytes, 253 bytes at
 * most. Anything else ("evil.com/x?", a space, a port) would change where
 * the request goes. 0, or -EINVAL with *why (static).
 */
int http_host_name_check(const char *name, const char **why);

/* ---- retrying --------------------------------------------------------------------------------- */

/*
 * A Retry-After value (delay-seconds, or an HTTP date in IMF-fixdate, RFC
 * 850 or asctime form) as milliseconds from now_ms (Unix ms); a date in the
 * past is 0. Capped at an hour. -1 when it is neither.
 */
int64_t http_retry_after_ms(const char *v, int64_t now_ms);

/*
 * The wait before retry number attempt (1, 2, ...): min_ms doubled at each
 * attempt, at most max_ms, then jittered into [d/2, d] with rand_r(seed).
 */
int64_t http_backoff_ms(int64_t min_ms, int64_t max_ms, unsigned attempt, unsigned *seed);

/* ---- a request --------------------------------------------------------------------------------- */

#define HTTP_HEADERS_MAX 65536 /* bytes of an answer's headers, all lines together */

/* What one request is made with. */
struct http_opts {
	const char *url;                /* http:// or https:// only */
	const char *method;             /* NULL: GET, or POST when body is set; else "PUT", ... */
	const void *body;               /* the request's body (POST, PUT), or NULL; borrowed until it ends */
	size_t body_len;                /* bytes */
	const char *const *headers;     /* "Name: value" each (http_header_check'ed) */
	size_t nheaders;
	const char *user_agent;         /* NULL: none */
	int64_t timeout_ms;             /* the whole request; 0: none */
	int64_t connect_timeout_ms;     /* 0: timeout_ms */
	size_t max_body;                /* bytes of the decoded answer; 0: none kept */
	int keep_head;                  /* past max_body: keep the first max_body bytes and go on, not fail */
	int decode;                     /* ask for gzip and deflate and decode them */
	int direct;                     /* never through a proxy, whatever the environment says */
	int reset_on_close;             /* close connections with a reset (SO_LINGER 0): nothing left to send late */
	const char *ca_file;            /* NULL: the system's CAs */
	const char *cert_file, *key_file; /* a client certificate (PEM), or NULL */
	const char *server_name;        /* https: ask for and verify this name, connected to the URL's host */
	int insecure;                   /* do not verify the server's certificate */
	const char *bearer_token_file;  /* Authorization: Bearer <the file>, read at each request */
	const char *bearer_what;        /* how messages name it ("bearer_token_file"); NULL: "bearer token file" */
	const char *username;           /* basic auth, with the password read from password_file (NULL: empty) */
	const char *password_file;
	const char *password_what;      /* how messages name it; NULL: "password file" */
	int (*abort_now)(void *ud);     /* polled during a transfer: 1 stops it; NULL: never */
	void *abort_ud;
	const char *unix_socket;        /* connect to this unix socket path instead of the URL's host and port (the
	                                   URL still names the Host, e.g. "http://localhost/..."); NULL: TCP */
	int http2;                      /* HTTP/2 with prior knowledge (cleartext, no upgrade), as gRPC speaks it */
	const char *const *keep_headers; /* names of answer header or trailer fields whose values are kept
	                                    (http_result.kept; HTTP/2 trailers such as grpc-status included) */
	size_t nkeep_headers;
};

#define HTTP_KEPT_MAX 1024 /* bytes of the kept header lines, all together */

/* A finished request. */
struct http_result {
	CURLcode rc;                /* libcurl's result */
	long status;                /* the HTTP status; 0 when no answer came */
	const char *body;           /* the decoded body, NUL-terminated; borrowed until the next http_setup */
	size_t len;                 /* bytes */
	int over;                   /* the body went past max_body (it was cut, or the transfer failed) */
	int64_t retry_after_ms;     /* the answer's Retry-After from when it came; -1 when none */
	int64_t first_byte_us;      /* from the start until the answer began; 0 when it did not */
	char error[512];            /* "" when an answer came (whatever its status), else what went wrong */
	char detail[CURL_ERROR_SIZE]; /* libcurl's own words for a failure ("" when none) */
	const char *kept;           /* the kept fields (keep_headers), "name: value\n" each, names in lower case;
	                               borrowed until the next http_setup */
};

/* One reusable easy handle and what its transfers collect. */
struct http_client {
	const struct http_curl *api;   /* borrowed */
	CURL *easy;
	struct curl_slist *headers;    /* this request's, wiped and freed at the next http_setup and at free */
	struct curl_slist *connect_to; /* server_name's mapping back to the URL's host */
	struct buf body;
	size_t max_body;
	int keep_head, over;
	size_t header_bytes;
	int header_over;
	char retry_after[64];
	int64_t timeout_ms;
	int (*abort_now)(void *ud);
	void *abort_ud;
	char curl_err[CURL_ERROR_SIZE];
	const char *const *keep;       /* the request's keep_headers (borrowed until it ends) */
	size_t nkeep;
	char kept[HTTP_KEPT_MAX];      /* what was kept of them */
	size_t kept_len;
};

/* 0, or -ENOMEM with err when libcurl cannot make a handle. api is borrowed. */
int http_client_init(struct http_client *c, const struct http_curl *api, char *err, size_t errsz);
void http_client_free(struct http_client *c); /* safe on a zeroed or freed client */

/*
 * Set the handle up for one request from o, every option from scratch (the
 * connection and TLS session stay for the next). Reads the credentials'
 * files now. 0, or -errno with err: a secret refused (http_secret_read),
 * a header or server name refused, an URL that is not http(s). After 0, the
 * caller may set options of its own on c->easy (through c->api) and then
 * run it: http_perform, or a multi handle and then http_finish.
 */
int http_setup(struct http_client *c, const struct http_opts *o, char *err, size_t errsz);

/* Run the request set up, blocking, and fill r. */
void http_perform(struct http_client *c, struct http_result *r);

/* Fill r for a transfer that a multi handle finished with rc. */
void http_finish(struct http_client *c, CURLcode rc, struct http_result *r);

/*
 * The value of field name (case-insensitive) in kept ("name: value\n"
 * lines, http_result.kept) into dst (size bytes; truncated): 0, or -ENOENT
 * when it is not there.
 */
int http_kept_get(const char *kept, const char *name, char *dst, size_t size);

#endif
