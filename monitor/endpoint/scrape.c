/* SPDX-License-Identifier: MIT */
/*
 * HTTP(S) scrapes on the event loop with libcurl's multi interface,
 * libcurl loaded with dlopen; see scrape.h for why.
 *
 * libcurl drives the transfer through two callbacks: its socket callback
 * says which descriptor to wait on for what (a loop watch each), its timer
 * callback when to call it back (one loop timer). Every loop callback hands
 * the event to curl_multi_socket_action and then reads what finished.
 */
#include "scrape.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../core/loop.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the URL --------------------------------------------------------------------------------- */

int scrape_url_parse(const char *url, struct scrape_url *u, const char **why)
{
	const char *p, *end, *host_end;
	size_t hlen;

	memset(u, 0, sizeof(*u));
	if (!strncmp(url, "http://", 7)) {
		p = url + 7;
	} else if (!strncmp(url, "https://", 8)) {
		p = url + 8;
		u->https = 1;
	} else {
		*why = "expected http://HOST[:PORT]/PATH or https://...";
		return -EINVAL;
	}
	end = p + strcspn(p, "/?#");
	u->path = end;
	if (memchr(p, '@', (size_t)(end - p))) {
		*why = "credentials in the URL are not accepted (use basic_auth with a password_file)";
		return -EINVAL;
	}
	if (*p == '[') { /* an IPv6 literal */
		host_end = memchr(p, ']', (size_t)(end - p));
		if (!host_end) {
			*why = "unterminated [IPv6 address]";
			return -EINVAL;
		}
		hlen = (size_t)(host_end - p - 1);
		memcpy(u->host, p + 1, hlen < sizeof(u->host) ? hlen : 0);
		p = host_end + 1;
	} else {
		host_end = p + strcspn(p, ":/?#");
		hlen = (size_t)(host_end - p);
		if (hlen < sizeof(u->host))
			memcpy(u->host, p, hlen);
		p = host_end;
	}
	if (hlen == 0 || hlen >= sizeof(u->host) || strspn(u->host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
								  "0123456789.-_:%") != hlen) {
		*why = hlen ? "invalid host" : "no host";
		return -EINVAL;
	}
	u->port = u->https ? 443 : 80;
	if (p < end && *p == ':') {
		unsigned long port = 0;
		const char *d = p + 1;

		if (d == end) {
			*why = "empty port";
			return -EINVAL;
		}
		for (; d < end; d++) {
			if (*d < '0' || *d > '9' || (port = port * 10 + (unsigned)(*d - '0')) > 65535) {
				*why = "invalid port (1-65535)";
				return -EINVAL;
			}
		}
		if (port == 0) {
			*why = "invalid port (1-65535)";
			return -EINVAL;
		}
		u->port = (unsigned)port;
	} else if (p != end) {
		*why = "invalid host";
		return -EINVAL;
	}
	for (const char *c = url; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f) {
			*why = "a space or control character in the URL";
			return -EINVAL;
		}
	return 0;
}

/* ---- libcurl, loaded on first use ------------------------------------------------------------ */

static struct {
	void *dl;
	char error[200]; /* why it could not be loaded, once tried */
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
	CURLMcode (*multi_add_handle)(CURLM *, CURL *);
	CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
	CURLMcode (*multi_socket_action)(CURLM *, curl_socket_t, int, int *);
	CURLMsg *(*multi_info_read)(CURLM *, int *);
	CURLMcode (*multi_assign)(CURLM *, curl_socket_t, void *);
	CURLMcode (*multi_cleanup)(CURLM *);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
} C;

#define SYM(field, name) { (void **)&C.field, name }

/* Load libcurl once per process (never unloaded). 0, or -ENOENT with C.error. */
static int curl_load(void)
{
	static const char *const libs[] = { "libcurl.so.4", "libcurl-gnutls.so.4" };
	const struct { void **p; const char *name; } syms[] = {
		SYM(global_init, "curl_global_init"), SYM(easy_init, "curl_easy_init"),
		SYM(easy_setopt, "curl_easy_setopt"), SYM(easy_getinfo, "curl_easy_getinfo"),
		SYM(easy_cleanup, "curl_easy_cleanup"), SYM(easy_strerror, "curl_easy_strerror"),
		SYM(multi_init, "curl_multi_init"), SYM(multi_setopt, "curl_multi_setopt"),
		SYM(multi_add_handle, "curl_multi_add_handle"), SYM(multi_remove_handle, "curl_multi_remove_handle"),
		SYM(multi_socket_action, "curl_multi_socket_action"), SYM(multi_info_read, "curl_multi_info_read"),
		SYM(multi_assign, "curl_multi_assign"), SYM(multi_cleanup, "curl_multi_cleanup"),
		SYM(slist_append, "curl_slist_append"), SYM(slist_free_all, "curl_slist_free_all"),
	};

	if (C.dl)
		return 0;
	if (C.error[0])
		return -ENOENT;
	for (size_t i = 0; i < ARRAY_SIZE(libs) && !C.dl; i++)
		C.dl = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
	if (!C.dl) {
		snprintf(C.error, sizeof(C.error), "cannot load libcurl (libcurl.so.4): %s", dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; i < ARRAY_SIZE(syms); i++) {
		/* A function pointer from dlsym: POSIX guarantees the conversion; memcpy keeps -Wpedantic quiet. */
		void *f = dlsym(C.dl, syms[i].name);

		if (!f) {
			snprintf(C.error, sizeof(C.error), "cannot load libcurl: %s is missing", syms[i].name);
			dlclose(C.dl);
			C.dl = NULL;
			return -ENOENT;
		}
		memcpy(syms[i].p, &f, sizeof(f));
	}
	if (C.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(C.error, sizeof(C.error), "cannot load libcurl: curl_global_init failed");
		C.dl = NULL; /* left loaded: global_init may have registered something */
		return -ENOENT;
	}
	log_debug("scrape: libcurl loaded");
	return 0;
}

/* ---- the transfer ---------------------------------------------------------------------------- */

/* One descriptor libcurl waits on. */
struct sock {
	struct loop_watch w;
	struct scrape *s;
	curl_socket_t fd;
	struct sock *next;        /* the scrape's list: freed with it if libcurl never says REMOVE */
};

struct scrape {
	struct loop *loop;
	CURLM *multi;
	CURL *easy;
	struct loop_timer timer;
	struct sock *socks;       /* the descriptors being watched */
	int running;              /* a transfer is in the multi handle */
	scrape_done_cb cb;
	void *data;
	struct curl_slist *headers;
	struct curl_slist *connect_to; /* tls.server_name's CONNECT_TO entry */
	struct buf body;
	size_t max_body;
	int over;                 /* the body went past max_body */
	int64_t timeout_ns;
	char curl_err[CURL_ERROR_SIZE];
	char error[512];
	struct scrape_result res;
};

static void check_done(struct scrape *s);

static void on_sock(struct loop_watch *w, short revents)
{
	struct sock *k = w->data;
	struct scrape *s = k->s; /* k may be freed inside socket_action (CURL_POLL_REMOVE) */
	int flags = 0, n;

	if (revents & POLLIN)
		flags |= CURL_CSELECT_IN;
	if (revents & POLLOUT)
		flags |= CURL_CSELECT_OUT;
	if (revents & (POLLERR | POLLHUP))
		flags |= CURL_CSELECT_ERR;
	C.multi_socket_action(s->multi, k->fd, flags, &n);
	check_done(s);
}

/* libcurl's CURLMOPT_SOCKETFUNCTION: wait on fd for what, or stop. */
static int sock_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct scrape *s = userp;
	struct sock *k = socketp;
	short ev = 0;

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		if (k) {
			struct sock **pp = &s->socks;

			while (*pp && *pp != k)
				pp = &(*pp)->next;
			if (*pp)
				*pp = k->next;
			loop_watch_stop(s->loop, &k->w);
			C.multi_assign(s->multi, fd, NULL);
			free(k);
		}
		return 0;
	}
	if (!k) {
		k = xcalloc(1, sizeof(*k));
		k->s = s;
		k->fd = fd;
		k->next = s->socks;
		s->socks = k;
		C.multi_assign(s->multi, fd, k);
	}
	if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
		ev |= POLLIN;
	if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
		ev |= POLLOUT;
	loop_watch_start(s->loop, &k->w, fd, ev, on_sock, k);
	return 0;
}

static void on_timer(struct loop_timer *t)
{
	struct scrape *s = t->data;
	int n;

	C.multi_socket_action(s->multi, CURL_SOCKET_TIMEOUT, 0, &n);
	check_done(s);
}

/* libcurl's CURLMOPT_TIMERFUNCTION: call back in ms milliseconds (-1: never). */
static int timer_cb(CURLM *multi, long ms, void *userp)
{
	struct scrape *s = userp;

	(void)multi;
	loop_timer_stop(s->loop, &s->timer);
	if (ms >= 0)
		loop_timer_start(s->loop, &s->timer, clock_mono_ns() + ms * NS_PER_MS, on_timer, s);
	return 0;
}

/* CURLOPT_WRITEFUNCTION: keep the (decoded) body, up to max_body. */
static size_t write_cb(char *p, size_t size, size_t n, void *userp)
{
	struct scrape *s = userp;

	if (s->body.len + n > s->max_body || buf_add(&s->body, p, n)) {
		s->over = 1;
		return 0; /* aborts the transfer: CURLE_WRITE_ERROR */
	}
	(void)size; /* always 1 */
	return n;
}

int scrape_new(struct loop *loop, struct scrape **out, char *err, size_t errsz)
{
	struct scrape *s;

	*out = NULL;
	if (curl_load()) {
		snprintf(err, errsz, "%s", C.error);
		return -ENOENT;
	}
	s = xcalloc(1, sizeof(*s));
	s->loop = loop;
	s->multi = C.multi_init();
	s->easy = C.easy_init();
	if (!s->multi || !s->easy) {
		snprintf(err, errsz, "libcurl: cannot make a handle");
		scrape_free(s);
		return -ENOMEM;
	}
	C.multi_setopt(s->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
	C.multi_setopt(s->multi, CURLMOPT_SOCKETDATA, s);
	C.multi_setopt(s->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	C.multi_setopt(s->multi, CURLMOPT_TIMERDATA, s);
	C.multi_setopt(s->multi, CURLMOPT_MAXCONNECTS, 1L); /* one connection per endpoint */
	buf_init(&s->body, 0);
	*out = s;
	return 0;
}

/*
 * Read a credentials file (a token, a password) into dst, without the
 * trailing newline or spaces. 0, or -errno with err.
 */
static int read_secret(const char *what, const char *path, char *dst, size_t size, char *err, size_t errsz)
{
	char q[LOG_QUOTE_BUF];
	ssize_t n = read_regular_file(path, dst, size);

	if (n < 0) {
		snprintf(err, errsz, "cannot read %s %s: %s", what, log_quote(q, sizeof(q), path, (size_t)-1),
			 n == -EINVAL ? file_kind_name(path) : n == -EFBIG ? "too large" : strerror((int)-n));
		return (int)n;
	}
	while (n > 0 && (dst[n - 1] == '\n' || dst[n - 1] == '\r' || dst[n - 1] == ' ' || dst[n - 1] == '\t'))
		dst[--n] = '\0';
	return 0;
}

/* Wipe a secret from memory (a store the compiler cannot drop). */
static void wipe(char *p, size_t n)
{
	volatile char *v = p;

	while (n--)
		*v++ = 0;
}

int scrape_start(struct scrape *s, const struct scrape_opts *o, int64_t timeout_ns, scrape_done_cb cb, void *data,
		 char *err, size_t errsz)
{
	char secret[16384], line[16384 + 32];
	struct scrape_url u;
	const char *why;
	char *url = NULL, connect_to[300];
	struct curl_slist *connect = NULL;
	long ms = (long)((timeout_ns + NS_PER_MS - 1) / NS_PER_MS);
	int rc = 0;

	if (s->running) {
		snprintf(err, errsz, "a scrape is still running");
		return -EBUSY;
	}
	if (scrape_url_parse(o->url, &u, &why)) {
		snprintf(err, errsz, "%s", why);
		return -EINVAL;
	}
	C.slist_free_all(s->headers);
	s->headers = C.slist_append(NULL, "Accept: text/plain;version=0.0.4;q=1,"
					  "application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1");
	C.easy_setopt(s->easy, CURLOPT_USERNAME, NULL);
	C.easy_setopt(s->easy, CURLOPT_PASSWORD, NULL);
	C.easy_setopt(s->easy, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
	if (o->bearer_token_file) {
		if ((rc = read_secret("bearer_token_file", o->bearer_token_file, secret, sizeof(secret), err, errsz)))
			goto out;
		snprintf(line, sizeof(line), "Authorization: Bearer %s", secret);
		s->headers = C.slist_append(s->headers, line);
	} else if (o->username) {
		secret[0] = '\0';
		if (o->password_file &&
		    (rc = read_secret("basic_auth password_file", o->password_file, secret, sizeof(secret), err, errsz)))
			goto out;
		C.easy_setopt(s->easy, CURLOPT_USERNAME, o->username);
		C.easy_setopt(s->easy, CURLOPT_PASSWORD, secret); /* libcurl keeps its own copy */
	}
	/*
	 * tls.server_name: ask for (and verify) that name, connected to the
	 * URL's address: the URL names server_name and CONNECT_TO maps it back.
	 */
	C.easy_setopt(s->easy, CURLOPT_CONNECT_TO, NULL);
	if (o->server_name && u.https) {
		int v6 = strchr(u.host, ':') != NULL;

		url = xasprintf("https://%s:%u%s", o->server_name, u.port, u.path);
		snprintf(connect_to, sizeof(connect_to), "%s:%u:%s%s%s:%u", o->server_name, u.port, v6 ? "[" : "",
			 u.host, v6 ? "]" : "", u.port);
		connect = C.slist_append(NULL, connect_to);
		C.easy_setopt(s->easy, CURLOPT_CONNECT_TO, connect);
	}
	C.easy_setopt(s->easy, CURLOPT_URL, url ? url : o->url);
	C.easy_setopt(s->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	C.easy_setopt(s->easy, CURLOPT_HTTPHEADER, s->headers);
	C.easy_setopt(s->easy, CURLOPT_USERAGENT, "accel-monitor/" ACCEL_VERSION);
	C.easy_setopt(s->easy, CURLOPT_NOSIGNAL, 1L);
	C.easy_setopt(s->easy, CURLOPT_PROXY, ""); /* as Prometheus: the environment's proxy is not used */
	C.easy_setopt(s->easy, CURLOPT_FOLLOWLOCATION, 0L);
	C.easy_setopt(s->easy, CURLOPT_ACCEPT_ENCODING, ""); /* every encoding this libcurl decodes: gzip, ... */
	C.easy_setopt(s->easy, CURLOPT_TIMEOUT_MS, ms > 0 ? ms : 1L);
	C.easy_setopt(s->easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)o->max_body);
	C.easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, write_cb);
	C.easy_setopt(s->easy, CURLOPT_WRITEDATA, s);
	C.easy_setopt(s->easy, CURLOPT_ERRORBUFFER, s->curl_err);
	C.easy_setopt(s->easy, CURLOPT_CAINFO, o->ca_file);
	C.easy_setopt(s->easy, CURLOPT_SSLCERT, o->cert_file);
	C.easy_setopt(s->easy, CURLOPT_SSLKEY, o->key_file);
	C.easy_setopt(s->easy, CURLOPT_SSL_VERIFYPEER, o->insecure ? 0L : 1L);
	C.easy_setopt(s->easy, CURLOPT_SSL_VERIFYHOST, o->insecure ? 0L : 2L);
	s->curl_err[0] = '\0';
	s->error[0] = '\0';
	s->over = 0;
	s->max_body = o->max_body;
	s->timeout_ns = timeout_ns;
	buf_reset(&s->body);
	s->body.cap = o->max_body;
	memset(&s->res, 0, sizeof(s->res));
	s->res.error = s->error;
	s->res.body = "";
	s->res.started_ns = clock_mono_ns();
	s->cb = cb;
	s->data = data;
	if (C.multi_add_handle(s->multi, s->easy) != CURLM_OK) {
		snprintf(err, errsz, "libcurl: cannot start the transfer");
		rc = -EIO;
		goto out;
	}
	s->running = 1;
out:
	/* libcurl copied the strings it keeps, but not the lists: those live until the next start. */
	C.slist_free_all(s->connect_to);
	s->connect_to = connect;
	free(url);
	if (o->bearer_token_file || o->password_file) {
		wipe(secret, sizeof(secret));
		wipe(line, sizeof(line));
	}
	return rc;
}

static int is_tls_error(CURLcode rc)
{
	switch (rc) {
	case CURLE_SSL_CONNECT_ERROR: case CURLE_SSL_ENGINE_NOTFOUND: case CURLE_SSL_ENGINE_SETFAILED:
	case CURLE_SSL_CERTPROBLEM: case CURLE_SSL_CIPHER: case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE: case CURLE_SSL_SHUTDOWN_FAILED: case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_ISSUER_ERROR: case CURLE_SSL_PINNEDPUBKEYNOTMATCH: case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_SSL_CLIENTCERT: case CURLE_USE_SSL_FAILED:
		return 1;
	default:
		return 0;
	}
}

/* What went wrong with a finished transfer, in s->error ("" when the body is good). */
static void describe(struct scrape *s, CURLcode rc, long code, long oserr)
{
	const char *detail = s->curl_err[0] ? s->curl_err : C.easy_strerror(rc);
	size_t n = s->body.len;

	if (rc == CURLE_OK && code >= 200 && code < 300)
		s->error[0] = '\0';
	else if (rc == CURLE_OK)
		snprintf(s->error, sizeof(s->error), "HTTP %ld", code);
	else if (s->over || rc == CURLE_FILESIZE_EXCEEDED)
		snprintf(s->error, sizeof(s->error), "body over %zu bytes (max_body_bytes)", s->max_body);
	else if (rc == CURLE_OPERATION_TIMEDOUT)
		snprintf(s->error, sizeof(s->error), "timeout after %.3g s%s", (double)s->timeout_ns / 1e9,
			 n ? " (mid-body)" : code ? "" : " (no answer)");
	else if (rc == CURLE_COULDNT_CONNECT && oserr)
		snprintf(s->error, sizeof(s->error), "cannot connect: %s", strerror((int)oserr));
	else if (rc == CURLE_PARTIAL_FILE || (rc == CURLE_RECV_ERROR && code))
		snprintf(s->error, sizeof(s->error), "connection closed mid-body (%zu bytes received)", n);
	else if (rc == CURLE_GOT_NOTHING)
		snprintf(s->error, sizeof(s->error), "connection closed before any answer");
	else if (is_tls_error(rc))
		snprintf(s->error, sizeof(s->error), "TLS: %s", detail);
	else
		snprintf(s->error, sizeof(s->error), "%s", detail);
	utf8_sanitize(s->error);
}

/* Read what libcurl finished: the transfer's result, then the owner's callback. */
static void check_done(struct scrape *s)
{
	CURLMsg *msg;
	int left;

	while ((msg = C.multi_info_read(s->multi, &left))) {
		long code = 0, oserr = 0;
		curl_off_t ttfb = 0;

		if (msg->msg != CURLMSG_DONE || msg->easy_handle != s->easy)
			continue;
		C.easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
		C.easy_getinfo(s->easy, CURLINFO_OS_ERRNO, &oserr);
		C.easy_getinfo(s->easy, CURLINFO_STARTTRANSFER_TIME_T, &ttfb);
		describe(s, msg->data.result, code, oserr);
		C.multi_remove_handle(s->multi, s->easy); /* the connection stays in the cache when it can */
		s->running = 0;
		s->res.http_code = code;
		s->res.body = s->body.data ? s->body.data : "";
		s->res.len = s->body.len;
		s->res.first_byte_ns = s->res.started_ns + (int64_t)ttfb * 1000;
		if (s->cb)
			s->cb(s, s->data);
		return; /* one transfer per scrape object */
	}
}

int scrape_busy(const struct scrape *s)
{
	return s->running;
}

size_t scrape_received(const struct scrape *s)
{
	return s->running ? s->body.len : 0;
}

void scrape_cancel(struct scrape *s)
{
	if (!s || !s->running)
		return;
	/* Removing a transfer mid-way closes its connection; the socket callback stops the watches. */
	C.multi_remove_handle(s->multi, s->easy);
	s->running = 0;
	loop_timer_stop(s->loop, &s->timer);
}

const struct scrape_result *scrape_result(const struct scrape *s)
{
	return &s->res;
}

void scrape_free(struct scrape *s)
{
	if (!s)
		return;
	scrape_cancel(s);
	if (s->easy)
		C.easy_cleanup(s->easy);
	if (s->multi)
		C.multi_cleanup(s->multi); /* closes the cached connection: the socket callback frees its watch */
	loop_timer_stop(s->loop, &s->timer);
	while (s->socks) { /* what libcurl closed without a CURL_POLL_REMOVE */
		struct sock *k = s->socks;

		s->socks = k->next;
		loop_watch_stop(s->loop, &k->w);
		free(k);
	}
	C.slist_free_all(s->headers);
	C.slist_free_all(s->connect_to);
	buf_free(&s->body);
	free(s);
}
