/* SPDX-License-Identifier: MIT */
/*
 * accel-prom's HTTP side on libmicrohttpd; see prom_http.h.
 *
 * libmicrohttpd runs its own thread pool, each thread with its own epoll
 * set. A /metrics response hands libmicrohttpd the bytes of the published
 * snapshot directly (no copy) and keeps a reference to it until the
 * response is freed.
 *
 * Slow clients: libmicrohttpd closes a connection idle for
 * PROM_HTTP_CONN_TIMEOUT_S, but a client that sends a header line every
 * few seconds is never idle. So each connection is also on a list (from
 * libmicrohttpd's connection notifications) with the time its current
 * request began, and a watchdog thread shuts down the socket of any whose
 * request is not complete PROM_HTTP_REQUEST_DEADLINE_S later; libmicrohttpd
 * then sees the end of the stream and closes it. Connections per client
 * address are bounded by PROM_HTTP_PER_IP_LIMIT.
 */
#include "prom_http.h"

#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"
#include "prom_web.h"

#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#define CT_TEXT "text/plain; version=0.0.4; charset=utf-8"
#define CT_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"
#define CT_PLAIN "text/plain; charset=utf-8"

/* One connection on the watchdog's list (libmicrohttpd's socket context). */
struct conn {
	struct conn *prev, *next;
	int fd;
	_Atomic int64_t since_ns; /* CLOCK_MONOTONIC when the current request began; 0: complete */
	int cut;                  /* shut down by the watchdog */
};

struct prom_http {
	struct MHD_Daemon *d;
	pthread_mutex_t conns_mu; /* guards the list, and a socket against reuse while the watchdog cuts it */
	struct conn *conns;
	pthread_cond_t wd_cond;
	pthread_t wd;
	int wd_started, wd_stop;
	unsigned long long cut_total; /* requests cut at their deadline */
	struct log_limit cut_lim;
	struct prom_pub *pub;
	struct prom_store *store;
	struct prom_web *web;
	struct prom_web_tls tls;
	int have_tls;
	char *index_html;
	unsigned port;
};

/* ---- negotiation --------------------------------------------------------------- */

/* Trim spaces and tabs from both ends of [*b, *e). */
static void trim(const char **b, const char **e)
{
	while (*b < *e && (**b == ' ' || **b == '\t'))
		(*b)++;
	while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
		(*e)--;
}

static int token_is(const char *b, const char *e, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(e - b) == n && !strncasecmp(b, word, n);
}

/*
 * Walk a comma-separated header of "token;param=value;q=0.5" items. For
 * each, calls fn with the token and its parameters; returns the highest q
 * among the items fn accepts (fn returns 1), or -1 when none.
 */
typedef int (*item_fn)(const char *tb, const char *te, const char *params, const char *pe);

static double best_q(const char *hdr, item_fn fn)
{
	double best = -1;

	while (hdr && *hdr) {
		const char *end = strchr(hdr, ','), *semi, *tb = hdr, *te;
		double q = 1;

		if (!end)
			end = hdr + strlen(hdr);
		semi = memchr(hdr, ';', (size_t)(end - hdr));
		te = semi ? semi : end;
		trim(&tb, &te);
		/* q among the parameters */
		for (const char *p = semi; p && p < end;) {
			const char *pb = p + 1, *pe = memchr(pb, ';', (size_t)(end - pb));

			if (!pe)
				pe = end;
			trim(&pb, &pe);
			if (pe - pb >= 2 && (pb[0] == 'q' || pb[0] == 'Q') && pb[1] == '=') {
				char num[16];
				size_t n = (size_t)(pe - pb - 2) < sizeof(num) - 1 ? (size_t)(pe - pb - 2) : sizeof(num) - 1;
				char *stop;

				memcpy(num, pb + 2, n);
				num[n] = '\0';
				q = strtod(num, &stop);
				if (stop == num || q != q)
					q = 1;
			}
			p = pe < end ? pe : NULL;
		}
		if (te > tb && fn(tb, te, semi ? semi : end, end) && q > best)
			best = q;
		hdr = *end ? end + 1 : end;
	}
	return best;
}

/* A parameter's value in [params, pe), or NULL: copies into dst. */
static const char *param(const char *params, const char *pe, const char *name, char *dst, size_t size)
{
	size_t n = strlen(name);

	for (const char *p = params; p && p < pe;) {
		const char *b = p + 1, *e = memchr(b, ';', (size_t)(pe - b));

		if (!e)
			e = pe;
		trim(&b, &e);
		if ((size_t)(e - b) > n && !strncasecmp(b, name, n) && b[n] == '=') {
			size_t len = (size_t)(e - b) - n - 1 < size - 1 ? (size_t)(e - b) - n - 1 : size - 1;

			memcpy(dst, b + n + 1, len);
			dst[len] = '\0';
			return dst;
		}
		p = e < pe ? e : NULL;
	}
	return NULL;
}

static int is_openmetrics(const char *tb, const char *te, const char *params, const char *pe)
{
	char v[32];
	const char *ver;

	if (!token_is(tb, te, "application/openmetrics-text"))
		return 0;
	ver = param(params, pe, "version", v, sizeof(v));
	return !ver || !strcmp(ver, "1.0.0");
}

static int is_text(const char *tb, const char *te, const char *params, const char *pe)
{
	(void)params;
	(void)pe;
	return token_is(tb, te, "text/plain") || token_is(tb, te, "text/*") || token_is(tb, te, "*/*");
}

int prom_accept_openmetrics(const char *accept)
{
	double om = best_q(accept, is_openmetrics), text = best_q(accept, is_text);

	return om > 0 && om >= text;
}

static int is_gzip(const char *tb, const char *te, const char *params, const char *pe)
{
	(void)params;
	(void)pe;
	return token_is(tb, te, "gzip") || token_is(tb, te, "x-gzip");
}

static int is_any(const char *tb, const char *te, const char *params, const char *pe)
{
	(void)params;
	(void)pe;
	return token_is(tb, te, "*");
}

int prom_accept_gzip(const char *accept_encoding)
{
	double gz = best_q(accept_encoding, is_gzip);

	if (gz < 0)
		gz = best_q(accept_encoding, is_any);
	return gz > 0;
}

int prom_parse_listen(const char *s, char *host, size_t hostsz, unsigned *port)
{
	const char *colon, *hb = s, *he;
	char *end;
	unsigned long p;

	if (s[0] == '[') {
		he = strchr(s, ']');
		if (!he || he[1] != ':')
			return -EINVAL;
		hb = s + 1;
		colon = he + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			return -EINVAL; /* no port, or a bare IPv6 address without brackets */
		he = colon;
	}
	if ((size_t)(he - hb) >= hostsz)
		return -EINVAL;
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || p > 65535 || colon[1] == '-' || colon[1] == '+')
		return -EINVAL;
	memcpy(host, hb, (size_t)(he - hb));
	host[he - hb] = '\0';
	*port = (unsigned)p;
	return 0;
}

/* ---- responses ----------------------------------------------------------------- */

static void expo_free_cb(void *cls)
{
	prom_expo_unref(cls);
}

/* The headers the web config asks for on every response (http_server_config.headers). */
static void add_headers(const struct prom_http *h, struct MHD_Response *r)
{
	if (!h->web)
		return;
	for (const char *const *p = prom_web_headers(h->web); p && p[0] && p[1]; p += 2)
		MHD_add_response_header(r, p[0], p[1]);
}

static enum MHD_Result send_text(const struct prom_http *h, struct MHD_Connection *c, unsigned status,
				 const char *ctype, const char *text, int copy, const char *hdr, const char *val)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)(uintptr_t)text,
								  copy ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (hdr)
		MHD_add_response_header(r, hdr, val);
	add_headers(h, r);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* A body of snapshot e (the caller's reference is handed over to the response). */
static enum MHD_Result send_expo(const struct prom_http *h, struct MHD_Connection *c, struct prom_expo *e,
				 const struct expo_body *b, const char *ctype, int gz)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->data, expo_free_cb, e);
	enum MHD_Result ret;

	if (!r) {
		prom_expo_unref(e);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (gz)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
	add_headers(h, r);
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result serve_metrics(struct prom_http *h, struct MHD_Connection *c)
{
	struct prom_expo *e = prom_pub_get(h->pub);
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	const char *enc = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	enum expo_variant v = prom_accept_openmetrics(accept) ? EXPO_OPENMETRICS : EXPO_TEXT;
	const char *ctype = v == EXPO_OPENMETRICS ? CT_OPENMETRICS : CT_TEXT;
	const struct expo_body *b;

	if (!e)
		return send_text(h, c, MHD_HTTP_SERVICE_UNAVAILABLE, CT_PLAIN, "starting\n", 0, NULL, NULL);
	if (prom_accept_gzip(enc) && prom_expo_gzip(e, v, &b) == 0)
		return send_expo(h, c, e, b, ctype, 1);
	return send_expo(h, c, e, &e->body[v], ctype, 0);
}

static enum MHD_Result serve_health(struct prom_http *h, struct MHD_Connection *c)
{
	char why[256], line[260];
	int ok = prom_store_health(h->store, clock_mono_ns(), why, sizeof(why));

	snprintf(line, sizeof(line), "%s\n", why);
	return send_text(h, c, ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, CT_PLAIN, line, 1, NULL, NULL);
}

static enum MHD_Result serve_bie(struct prom_http *h, struct MHD_Connection *c)
{
	struct prom_expo *e = prom_pub_get(h->pub);

	if (!e)
		return send_text(h, c, MHD_HTTP_SERVICE_UNAVAILABLE, CT_PLAIN, "starting\n", 0, NULL, NULL);
	return send_expo(h, c, e, &e->bie, "application/json", 0);
}

/* TLS client certificate and basic auth. 1: go on; 0: a refusal was queued (in *ret). */
static int authorized(struct prom_http *h, struct MHD_Connection *c, enum MHD_Result *ret)
{
	if (!h->web)
		return 1;
	if (h->have_tls && h->tls.verify_client) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);

		if (!ci || !prom_web_check_client(h->web, ci->tls_session)) {
			*ret = send_text(h, c, MHD_HTTP_FORBIDDEN, CT_PLAIN, "client certificate required\n", 0, NULL, NULL);
			return 0;
		}
	}
	if (!prom_web_authorize(h->web, MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION))) {
		*ret = send_text(h, c, MHD_HTTP_UNAUTHORIZED, CT_PLAIN, "unauthorized\n", 0, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
				 "Basic realm=\"accel-prom\"");
		return 0;
	}
	return 1;
}

/* The request on c has arrived whole: the watchdog leaves it alone until the next one begins. */
static void request_complete(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *k = ci ? ci->socket_context : NULL;

	if (k)
		atomic_store(&k->since_ns, 0);
}

/* A response went out (or the request ended): the next request's clock starts now. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode code)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *k = ci ? ci->socket_context : NULL;

	(void)cls;
	(void)req_cls;
	(void)code;
	if (k)
		atomic_store(&k->since_ns, clock_mono_ns());
}

/* A connection opens (onto the watchdog's list) or closes (off it, before libmicrohttpd closes its socket). */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context, enum MHD_ConnectionNotificationCode code)
{
	struct prom_http *h = cls;
	struct conn *k;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		k = xcalloc(1, sizeof(*k));
		k->fd = ci ? ci->connect_fd : -1;
		atomic_init(&k->since_ns, clock_mono_ns());
		pthread_mutex_lock(&h->conns_mu);
		k->next = h->conns;
		if (h->conns)
			h->conns->prev = k;
		h->conns = k;
		pthread_mutex_unlock(&h->conns_mu);
		*socket_context = k;
		return;
	}
	k = *socket_context;
	if (!k)
		return;
	pthread_mutex_lock(&h->conns_mu);
	if (k->prev)
		k->prev->next = k->next;
	else
		h->conns = k->next;
	if (k->next)
		k->next->prev = k->prev;
	pthread_mutex_unlock(&h->conns_mu);
	*socket_context = NULL;
	free(k);
}

/*
 * The watchdog: once a second, shut down the socket of every connection
 * whose request has not arrived whole within PROM_HTTP_REQUEST_DEADLINE_S.
 */
static void *watchdog_main(void *arg)
{
	struct prom_http *h = arg;
	struct timespec ts;

	pthread_mutex_lock(&h->conns_mu);
	while (!h->wd_stop) {
		int64_t now = clock_mono_ns(), dl = (int64_t)PROM_HTTP_REQUEST_DEADLINE_S * NS_PER_S;
		unsigned long long n = 0;

		for (struct conn *k = h->conns; k; k = k->next) {
			int64_t since = atomic_load(&k->since_ns);

			if (since && !k->cut && k->fd >= 0 && now - since > dl) {
				shutdown(k->fd, SHUT_RDWR);
				k->cut = 1;
				n++;
			}
		}
		if (n) {
			h->cut_total += n;
			log_limited(&h->cut_lim,
				    "prom: http: %llu connection(s) closed: the request did not arrive whole within %d s "
				    "(%llu so far)",
				    n, PROM_HTTP_REQUEST_DEADLINE_S, h->cut_total);
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&h->wd_cond, &h->conns_mu, &ts);
	}
	pthread_mutex_unlock(&h->conns_mu);
	return NULL;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			       const char *version, const char *upload_data, size_t *upload_size, void **req_cls)
{
	struct prom_http *h = cls;
	enum MHD_Result ret;

	(void)version;
	(void)upload_data;
	/*
	 * The first call only marks the request: a response queued before the
	 * request is complete would cost the connection its keep-alive.
	 */
	if (!*req_cls) {
		*req_cls = h;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0; /* a body (a POST): ignored, the answer is 405 */
		return MHD_YES;
	}
	request_complete(c);
	if (!authorized(h, c, &ret))
		return ret;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return send_text(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, CT_PLAIN, "method not allowed\n", 0, MHD_HTTP_HEADER_ALLOW,
				 "GET, HEAD");
	if (!strcmp(url, "/metrics"))
		return serve_metrics(h, c);
	if (!strcmp(url, "/health"))
		return serve_health(h, c);
	if (!strcmp(url, "/v1/collect"))
		return serve_bie(h, c);
	if (!strcmp(url, "/"))
		return send_text(h, c, MHD_HTTP_OK, "text/html; charset=utf-8", h->index_html, 0, NULL, NULL);
	return send_text(h, c, MHD_HTTP_NOT_FOUND, CT_PLAIN, "not found\n", 0, NULL, NULL);
}

/* libmicrohttpd's own messages (a refused connection, a TLS handshake failure): info level. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	log_info("prom: http: %s", msg);
}

/* ---- lifetime ------------------------------------------------------------------ */

/* Connections we can hold: the file descriptor limit, raised to its hard maximum, minus a margin. */
static unsigned conn_limit(void)
{
	struct rlimit rl;
	rlim_t n = PROM_HTTP_CONN_LIMIT;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
			getrlimit(RLIMIT_NOFILE, &rl);
		}
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < n + 64)
			n = rl.rlim_cur > 128 ? rl.rlim_cur - 64 : 64;
	}
	return (unsigned)n;
}

static struct MHD_Daemon *start(struct prom_http *h, unsigned flags, const struct sockaddr *sa, unsigned port)
{
	struct MHD_OptionItem opts[16];
	size_t n = 0;

	/* The logger first, so that libmicrohttpd's messages about the other options go through it. */
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, (intptr_t)conn_limit(), NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, PROM_HTTP_CONN_TIMEOUT_S, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT, PROM_HTTP_PER_IP_LIMIT, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, h };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, PROM_HTTP_THREADS, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024, NULL };
	if (sa)
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, (void *)(uintptr_t)sa };
	if (h->have_tls) {
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)(uintptr_t)h->tls.cert_pem };
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)(uintptr_t)h->tls.key_pem };
		if (h->tls.ca_pem)
			opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_TRUST, 0,
							     (void *)(uintptr_t)h->tls.ca_pem };
		if (h->tls.priorities)
			opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
							     (void *)(uintptr_t)h->tls.priorities };
	}
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	flags |= MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	if (h->have_tls)
		flags |= MHD_USE_TLS;
	return MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, handler, h, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
}

int prom_http_start(const struct prom_http_opts *o, struct prom_http **out, char *err, size_t errsz)
{
	struct prom_http *h = xcalloc(1, sizeof(*h));
	const union MHD_DaemonInfo *di;
	int rc = 0;

	h->pub = o->pub;
	h->store = o->store;
	pthread_mutex_init(&h->conns_mu, NULL);
	pthread_cond_init(&h->wd_cond, NULL);
	h->web = o->web;
	h->have_tls = h->web && prom_web_tls(h->web, &h->tls);
	h->index_html = xasprintf("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>accel-prom</title></head>\n"
				  "<body><h1>accel-prom</h1><p>Version %s</p>\n<ul>\n"
				  "<li><a href=\"metrics\">/metrics</a>: metrics</li>\n"
				  "<li><a href=\"health\">/health</a>: health</li>\n"
				  "<li><a href=\"v1/collect\">/v1/collect</a>: Baidu BIE accelerator collector API</li>\n"
				  "</ul></body></html>\n",
				  o->version ? o->version : "");
	if (!o->host || !*o->host) {
		/* Every address: IPv6 with IPv4 mapped in, or IPv4 alone where IPv6 is off. */
		h->d = start(h, MHD_USE_DUAL_STACK, NULL, o->port);
		if (!h->d)
			h->d = start(h, 0, NULL, o->port);
	} else {
		struct addrinfo hints = { .ai_flags = AI_PASSIVE, .ai_socktype = SOCK_STREAM }, *ai = NULL;
		int g = getaddrinfo(o->host, NULL, &hints, &ai);

		if (g) {
			snprintf(err, errsz, "cannot listen on %s:%u: %s", o->host, o->port, gai_strerror(g));
			rc = -EINVAL;
			goto fail;
		}
		if (ai->ai_family == AF_INET6)
			((struct sockaddr_in6 *)ai->ai_addr)->sin6_port = htons((uint16_t)o->port);
		else
			((struct sockaddr_in *)ai->ai_addr)->sin_port = htons((uint16_t)o->port);
		h->d = start(h, ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0, ai->ai_addr, o->port);
		freeaddrinfo(ai);
	}
	if (!h->d) {
		rc = errno ? -errno : -EADDRINUSE;
		snprintf(err, errsz, "cannot listen on %s%s%s:%u: %s", o->host && strchr(o->host, ':') ? "[" : "",
			 o->host && *o->host ? o->host : "*", o->host && strchr(o->host, ':') ? "]" : "", o->port,
			 strerror(-rc));
		goto fail;
	}
	di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	h->port = di && di->port ? di->port : o->port;
	if (pthread_create(&h->wd, NULL, watchdog_main, h)) {
		snprintf(err, errsz, "cannot start the HTTP watchdog thread");
		rc = -EAGAIN;
		MHD_stop_daemon(h->d);
		goto fail;
	}
	h->wd_started = 1;
	*out = h;
	return 0;
fail:
	pthread_cond_destroy(&h->wd_cond);
	pthread_mutex_destroy(&h->conns_mu);
	free(h->index_html);
	free(h);
	return rc;
}

unsigned prom_http_port(const struct prom_http *h)
{
	return h->port;
}

void prom_http_stop(struct prom_http *h)
{
	if (!h)
		return;
	if (h->wd_started) {
		pthread_mutex_lock(&h->conns_mu);
		h->wd_stop = 1;
		pthread_cond_signal(&h->wd_cond);
		pthread_mutex_unlock(&h->conns_mu);
		pthread_join(h->wd, NULL);
	}
	MHD_stop_daemon(h->d);
	pthread_cond_destroy(&h->wd_cond);
	pthread_mutex_destroy(&h->conns_mu);
	free(h->index_html);
	free(h);
}
