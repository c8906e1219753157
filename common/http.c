/* SPDX-License-Identifier: MIT */
/*
 * The HTTP client over libcurl's function table; see http.h.
 */
#include "http.h"
#include "log.h"
#include "timeutil.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

/* ---- libcurl, loaded ------------------------------------------------------------------------- */

int http_curl_load(struct http_curl *api, char *err, size_t errsz)
{
	static const char *const libs[] = { "libcurl.so.4", "libcurl-gnutls.so.4" };
#define SYM(field, name) { (void **)&api->field, name }
	const struct { void **p; const char *name; } syms[] = {
		SYM(global_init, "curl_global_init"), SYM(global_cleanup, "curl_global_cleanup"),
		SYM(easy_init, "curl_easy_init"), SYM(easy_reset, "curl_easy_reset"),
		SYM(easy_setopt, "curl_easy_setopt"), SYM(easy_getinfo, "curl_easy_getinfo"),
		SYM(easy_perform, "curl_easy_perform"), SYM(easy_cleanup, "curl_easy_cleanup"),
		SYM(easy_strerror, "curl_easy_strerror"), SYM(slist_append, "curl_slist_append"),
		SYM(slist_free_all, "curl_slist_free_all"), SYM(multi_init, "curl_multi_init"),
		SYM(multi_setopt, "curl_multi_setopt"), SYM(multi_add_handle, "curl_multi_add_handle"),
		SYM(multi_remove_handle, "curl_multi_remove_handle"),
		SYM(multi_socket_action, "curl_multi_socket_action"), SYM(multi_info_read, "curl_multi_info_read"),
		SYM(multi_assign, "curl_multi_assign"), SYM(multi_cleanup, "curl_multi_cleanup"),
		SYM(share_init, "curl_share_init"), SYM(share_setopt, "curl_share_setopt"),
		SYM(share_cleanup, "curl_share_cleanup"),
	};
#undef SYM
	void *dl = NULL;

	memset(api, 0, sizeof(*api));
	for (size_t i = 0; i < ARRAY_SIZE(libs) && !dl; i++)
		dl = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		snprintf(err, errsz, "cannot load libcurl (libcurl.so.4): %s", dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; i < ARRAY_SIZE(syms); i++) {
		/* A function pointer from dlsym: POSIX guarantees the conversion; memcpy keeps -Wpedantic quiet. */
		void *f = dlsym(dl, syms[i].name);

		if (!f) {
			snprintf(err, errsz, "cannot load libcurl: %s is missing", syms[i].name);
			dlclose(dl);
			return -ENOENT;
		}
		memcpy(syms[i].p, &f, sizeof(f));
	}
	if (api->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		/* Left loaded: curl_global_init may have registered something. */
		snprintf(err, errsz, "cannot load libcurl: curl_global_init failed");
		return -ENOENT;
	}
	return 0;
}

/* ---- secrets, header values, host names --------------------------------------------------------- */

/* The first control byte of s (below 0x20, or DEL), or NULL. */
static const char *control_byte(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return s;
	return NULL;
}

static void say_control(const char *what, const char *path, const char *value, const char *at, char *err,
			size_t errsz)
{
	char q[LOG_QUOTE_BUF];

	snprintf(err, errsz, "%s%s%s: holds a control character (0x%02x at byte %zu): refused, a secret must be one "
		 "line of printable text (a CR or LF would add request headers)", what, path ? " " : "",
		 path ? log_quote(q, sizeof(q), path, (size_t)-1) : "", (unsigned)(unsigned char)*at,
		 (size_t)(at - value));
}

int http_secret_check(const char *what, const char *value, char *err, size_t errsz)
{
	const char *at = control_byte(value);

	if (!at)
		return 0;
	say_control(what, NULL, value, at, err, errsz);
	return -EINVAL;
}

int http_secret_read(const char *what, const char *path, char *dst, size_t size, char *err, size_t errsz)
{
	char q[LOG_QUOTE_BUF];
	ssize_t n = read_regular_file(path, dst, size);
	const char *at;

	if (n < 0) {
		log_quote(q, sizeof(q), path, (size_t)-1);
		if (n == -EISDIR || n == -EINVAL)
			snprintf(err, errsz, "%s %s: %s, not a regular file", what, q, file_kind_name(path));
		else if (n == -EFBIG)
			snprintf(err, errsz, "%s %s: larger than %zu bytes", what, q, size - 1);
		else
			snprintf(err, errsz, "%s %s: %s", what, q, strerror((int)-n));
		if (size)
			memset(dst, 0, size);
		return (int)n;
	}
	while (n > 0 && (dst[n - 1] == '\n' || dst[n - 1] == '\r' || dst[n - 1] == ' ' || dst[n - 1] == '\t'))
		dst[--n] = '\0';
	if ((size_t)n != strlen(dst))
		at = dst + strlen(dst); /* a NUL byte inside */
	else
		at = control_byte(dst);
	if (at) {
		say_control(what, path, dst, at, err, errsz);
		memset(dst, 0, size);
		return -EINVAL;
	}
	return 0;
}

int http_header_check(const char *h, const char **why)
{
	/* RFC 9110's token characters. */
	size_t n = strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~");

	if (!n || h[n] != ':') {
		*why = "expected \"Name: value\"";
		return -EINVAL;
	}
	for (const char *p = h + n + 1; *p; p++)
		if (((unsigned char)*p < 0x20 && *p != '\t') || *p == 0x7f) {
			*why = "a control character in the value";
			return -EINVAL;
		}
	return 0;
}

int http_host_name_check(const char *name, const char **why)
{
	size_t total = strlen(name), label = 0;

	if (!total || total > 253) {
		*why = total ? "longer than 253 bytes" : "empty";
		return -EINVAL;
	}
	for (const char *p = name;; p++) {
		if (*p == '.' || !*p) {
			if (!label) {
				*why = "an empty label (two dots, or a dot at either end)";
				return -EINVAL;
			}
			if (label > 63) {
				*why = "a label longer than 63 bytes";
				return -EINVAL;
			}
			if (!*p)
				return 0;
			label = 0;
			continue;
		}
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_') {
			*why = "only letters, digits, '-', '_' and '.' make a host name";
			return -EINVAL;
		}
		label++;
	}
}

/* ---- retrying --------------------------------------------------------------------------------- */

static int month_of(const char *s)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";

	for (int i = 0; i < 12; i++)
		if (!strncmp(s, months + 3 * i, 3))
			return i;
	return -1;
}

/*
 * An HTTP date (RFC 9110 5.6.7) in Unix seconds, or -1: IMF-fixdate "Sun, 06
 * Nov 1994 08:49:37 GMT", RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT", asctime
 * "Sun Nov  6 08:49:37 1994". Parsed by hand: strptime's names follow the
 * locale.
 */
static int64_t http_date(const char *v)
{
	char mon[4] = "";
	int d, y, H, M, S, n = 0, m;
	const char *p = strchr(v, ',');
	struct tm tm;

	if (p && sscanf(p, ", %2d %3s %4d %2d:%2d:%2d GMT%n", &d, mon, &y, &H, &M, &S, &n) == 6 && n) {
		/* IMF-fixdate */
	} else if (p && sscanf(p, ", %2d-%3s-%2d %2d:%2d:%2d GMT%n", &d, mon, &y, &H, &M, &S, &n) == 6 && n) {
		y += y < 70 ? 2000 : 1900; /* RFC 850's two-digit year */
	} else if (!p && sscanf(v, "%*3s %3s %2d %2d:%2d:%2d %4d%n", mon, &d, &H, &M, &S, &y, &n) == 6 && n) {
		/* asctime */
	} else {
		return -1;
	}
	p = p ? p + n : v + n;
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	m = month_of(mon);
	if (*p || m < 0 || d < 1 || d > 31 || H > 23 || M > 59 || S > 60 || y < 1970)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = m;
	tm.tm_mday = d;
	tm.tm_hour = H;
	tm.tm_min = M;
	tm.tm_sec = S;
	return (int64_t)timegm(&tm);
}

int64_t http_retry_after_ms(const char *v, int64_t now_ms)
{
	const int64_t cap = 3600 * MS_PER_S;
	int64_t t;

	while (*v == ' ' || *v == '\t')
		v++;
	if (!*v)
		return -1;
	if (isdigit((unsigned char)*v)) {
		char *end;
		long long s;

		errno = 0;
		s = strtoll(v, &end, 10);
		while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
			end++;
		if (errno || *end)
			return -1;
		return s > 3600 ? cap : s * MS_PER_S;
	}
	t = http_date(v);
	if (t < 0)
		return -1;
	t = t * MS_PER_S - now_ms;
	return t < 0 ? 0 : t > cap ? cap : t;
}

int64_t http_backoff_ms(int64_t min_ms, int64_t max_ms, unsigned attempt, unsigned *seed)
{
	int64_t d = min_ms;

	for (unsigned i = 1; i < attempt && d < max_ms; i++)
		d *= 2;
	if (d > max_ms)
		d = max_ms;
	if (d < 2)
		return d;
	return d / 2 + (int64_t)(rand_r(seed) % (unsigned)(d - d / 2 + 1));
}

/* ---- a request --------------------------------------------------------------------------------- */

/* Wipe and free a header list (it may hold a token). */
static void free_headers(const struct http_curl *api, struct curl_slist *l)
{
	for (struct curl_slist *p = l; p; p = p->next) {
		volatile char *v = p->data;

		while (*v)
			*v++ = 0;
	}
	api->slist_free_all(l);
}

/* A store the compiler cannot drop. */
static void wipe(char *p, size_t n)
{
	volatile char *v = p;

	while (n--)
		*v++ = 0;
}

int http_client_init(struct http_client *c, const struct http_curl *api, char *err, size_t errsz)
{
	memset(c, 0, sizeof(*c));
	c->api = api;
	buf_init(&c->body, 0);
	c->easy = api->easy_init();
	if (!c->easy) {
		snprintf(err, errsz, "libcurl: cannot make a handle");
		return -ENOMEM;
	}
	return 0;
}

void http_client_free(struct http_client *c)
{
	if (!c->api)
		return;
	if (c->easy)
		c->api->easy_cleanup(c->easy);
	free_headers(c->api, c->headers);
	c->api->slist_free_all(c->connect_to);
	buf_free(&c->body);
	memset(c, 0, sizeof(*c));
}

/* CURLOPT_WRITEFUNCTION: keep the decoded body, up to max_body. */
static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct http_client *c = ud;
	size_t len = size * n, room = c->max_body - c->body.len;

	if (len > room) {
		c->over = 1;
		if (!c->keep_head)
			return 0; /* aborts the transfer: CURLE_WRITE_ERROR */
		buf_add(&c->body, p, room);
		return len;
	}
	if (buf_add(&c->body, p, len)) {
		c->over = 1;
		return 0;
	}
	return len;
}

/*
 * A header (or HTTP/2 trailer) line p (len bytes, CRLF included) into
 * c->kept as "name: value\n" when its name is one of the request's
 * keep_headers, name in lower case and the value trimmed; what does not fit
 * HTTP_KEPT_MAX is dropped.
 */
static void keep_header(struct http_client *c, const char *p, size_t len)
{
	const char *colon = memchr(p, ':', len), *v, *end = p + len;
	size_t nlen, vlen;

	if (!colon)
		return;
	nlen = (size_t)(colon - p);
	for (size_t i = 0; i < c->nkeep; i++) {
		if (strlen(c->keep[i]) != nlen || strncasecmp(c->keep[i], p, nlen))
			continue;
		v = colon + 1;
		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
			end--;
		vlen = (size_t)(end - v);
		if (c->kept_len + nlen + vlen + 3 > sizeof(c->kept))
			return;
		for (size_t j = 0; j < nlen; j++)
			c->kept[c->kept_len++] = (char)tolower((unsigned char)p[j]);
		c->kept[c->kept_len++] = ':';
		c->kept[c->kept_len++] = ' ';
		memcpy(c->kept + c->kept_len, v, vlen);
		c->kept_len += vlen;
		c->kept[c->kept_len++] = '\n';
		c->kept[c->kept_len] = '\0';
		return;
	}
}

int http_kept_get(const char *kept, const char *name, char *dst, size_t size)
{
	size_t nlen = strlen(name);

	for (const char *l = kept ? kept : ""; *l; l = strchr(l, '\n') + 1) {
		size_t llen = strcspn(l, "\n");

		if (llen >= nlen + 2 && !strncasecmp(l, name, nlen) && l[nlen] == ':') {
			snprintf(dst, size, "%.*s", (int)(llen - nlen - 2), l + nlen + 2);
			return 0;
		}
		if (!l[llen])
			break;
	}
	return -ENOENT;
}

/* CURLOPT_HEADERFUNCTION: bound the headers, keep Retry-After and what the request asked to keep. */
static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct http_client *c = ud;
	size_t len = size * n;

	c->header_bytes += len;
	if (c->header_bytes > HTTP_HEADERS_MAX) {
		c->header_over = 1;
		return 0;
	}
	if (len > 12 && !strncasecmp(p, "Retry-After:", 12)) {
		size_t k = len - 12 < sizeof(c->retry_after) - 1 ? len - 12 : sizeof(c->retry_after) - 1;

		memcpy(c->retry_after, p + 12, k);
		c->retry_after[k] = '\0';
	}
	if (c->nkeep)
		keep_header(c, p, len);
	return len;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct http_client *c = ud;

	(void)dt, (void)dn, (void)ut, (void)un;
	return c->abort_now(c->abort_ud);
}

static int on_socket_reset(void *ud, curl_socket_t fd, curlsocktype purpose)
{
	struct linger l = { 1, 0 };

	(void)ud;
	if (purpose == CURLSOCKTYPE_IPCXN)
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	return CURL_SOCKOPT_OK;
}

/* The host and port of an http(s) URL, for server_name's CONNECT_TO. 0 or -EINVAL. */
static int url_host_port(const char *url, char *host, size_t hsize, unsigned *port)
{
	const char *p, *end, *colon;
	int https = !strncasecmp(url, "https://", 8);

	if (!https && strncasecmp(url, "http://", 7))
		return -EINVAL;
	p = url + (https ? 8 : 7);
	end = p + strcspn(p, "/?#");
	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(end - p));

		if (!rb)
			return -EINVAL;
		snprintf(host, hsize, "[%.*s]", (int)(rb - p - 1), p + 1);
		colon = rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = memchr(p, ':', (size_t)(end - p));
		snprintf(host, hsize, "%.*s", (int)((colon ? colon : end) - p), p);
	}
	*port = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : https ? 443 : 80;
	return *host ? 0 : -EINVAL;
}

/*
 * tls.server_name: the URL names server_name (so TLS asks for and verifies
 * it, and Host says it), and CONNECT_TO maps it back to the URL's address.
 */
static int server_name_setup(struct http_client *c, const struct http_opts *o, char **url, char *err, size_t errsz)
{
	const struct http_curl *api = c->api;
	const char *why, *path;
	char host[300], map[600];
	unsigned port;

	if (http_host_name_check(o->server_name, &why)) {
		char q[LOG_QUOTE_BUF];

		snprintf(err, errsz, "invalid server_name \"%s\": %s", log_quote(q, sizeof(q), o->server_name, (size_t)-1),
			 why);
		return -EINVAL;
	}
	if (strncasecmp(o->url, "https://", 8) || url_host_port(o->url, host, sizeof(host), &port))
		return 0; /* plain http: no TLS name to ask for */
	path = o->url + 8;
	path += strcspn(path, "/?#");
	*url = xasprintf("https://%s:%u%s", o->server_name, port, path);
	snprintf(map, sizeof(map), "%s:%u:%s:%u", o->server_name, port, host, port);
	c->connect_to = api->slist_append(NULL, map);
	api->easy_setopt(c->easy, CURLOPT_CONNECT_TO, c->connect_to);
	return 0;
}

/* c's state of the last request forgotten, and o's limits and callbacks taken, before a request is set up. */
static void client_reset(struct http_client *c, const struct http_opts *o)
{
	const struct http_curl *api = c->api;

	api->easy_reset(c->easy);
	free_headers(api, c->headers);
	c->headers = NULL;
	api->slist_free_all(c->connect_to);
	c->connect_to = NULL;
	buf_reset(&c->body);
	c->body.cap = o->max_body;
	c->max_body = o->max_body;
	c->keep_head = o->keep_head;
	c->over = 0;
	c->header_bytes = 0;
	c->header_over = 0;
	c->retry_after[0] = '\0';
	c->curl_err[0] = '\0';
	c->timeout_ms = o->timeout_ms;
	c->abort_now = o->abort_now;
	c->abort_ud = o->abort_ud;
	c->keep = o->keep_headers;
	c->nkeep = o->nkeep_headers;
	c->kept[0] = '\0';
	c->kept_len = 0;
}

/* How handle h reaches the server: a unix socket, HTTP/2 with prior knowledge, TLS's files and checks. */
static void transport_setup(const struct http_curl *api, CURL *h, const struct http_opts *o)
{
	if (o->unix_socket)
		api->easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, o->unix_socket);
	if (o->http2) {
		api->easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
		/*
		 * libcurl 7.88 (Debian 12) sends nothing on an HTTP/2 connection it
		 * reuses after a POST answered with trailers (a gRPC call): the
		 * second call fails with "Error in the HTTP2 framing layer". Each
		 * HTTP/2 request has a connection of its own (a unix socket's
		 * connect and the HTTP/2 preface: microseconds).
		 */
		api->easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
	}
	if (o->ca_file)
		api->easy_setopt(h, CURLOPT_CAINFO, o->ca_file);
	if (o->cert_file)
		api->easy_setopt(h, CURLOPT_SSLCERT, o->cert_file);
	if (o->key_file)
		api->easy_setopt(h, CURLOPT_SSLKEY, o->key_file);
	if (o->insecure) {
		api->easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		api->easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
}

int http_setup(struct http_client *c, const struct http_opts *o, char *err, size_t errsz)
{
	const struct http_curl *api = c->api;
	CURL *h = c->easy;
	char *secret = NULL, *url = NULL;
	const char *why;
	int rc = 0;

	client_reset(c, o);
	if (strncasecmp(o->url, "http://", 7) && strncasecmp(o->url, "https://", 8)) {
		snprintf(err, errsz, "not an http:// or https:// URL");
		return -EINVAL;
	}
	for (size_t i = 0; i < o->nheaders; i++) {
		if (http_header_check(o->headers[i], &why)) {
			char q[LOG_QUOTE_BUF];

			/* Only the name: the value may be a secret. */
			snprintf(err, errsz, "header \"%s\": %s", log_quote(q, sizeof(q), o->headers[i],
									  strcspn(o->headers[i], ":")), why);
			rc = -EINVAL;
			goto out;
		}
		c->headers = api->slist_append(c->headers, o->headers[i]);
	}
	if (o->bearer_token_file || o->password_file)
		secret = xmalloc(HTTP_SECRET_MAX + 32);
	if (o->bearer_token_file) {
		memcpy(secret, "Authorization: Bearer ", 22);
		if ((rc = http_secret_read(o->bearer_what ? o->bearer_what : "bearer token file", o->bearer_token_file,
					   secret + 22, HTTP_SECRET_MAX, err, errsz)))
			goto out;
		c->headers = api->slist_append(c->headers, secret);
	}
	if (o->username) {
		if (o->password_file) {
			if ((rc = http_secret_read(o->password_what ? o->password_what : "password file", o->password_file,
						   secret, HTTP_SECRET_MAX, err, errsz)))
				goto out;
		}
		api->easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		api->easy_setopt(h, CURLOPT_USERNAME, o->username);
		api->easy_setopt(h, CURLOPT_PASSWORD, o->password_file ? secret : ""); /* libcurl keeps a copy */
	}
	if (o->server_name && (rc = server_name_setup(c, o, &url, err, errsz)))
		goto out;
	api->easy_setopt(h, CURLOPT_URL, url ? url : o->url);
	api->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	api->easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	api->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	if (o->body) {
		api->easy_setopt(h, CURLOPT_POST, 1L);
		api->easy_setopt(h, CURLOPT_POSTFIELDS, o->body);
		api->easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)o->body_len);
	}
	if (o->method && strcmp(o->method, o->body ? "POST" : "GET"))
		api->easy_setopt(h, CURLOPT_CUSTOMREQUEST, o->method);
	if (c->headers)
		api->easy_setopt(h, CURLOPT_HTTPHEADER, c->headers);
	if (o->user_agent)
		api->easy_setopt(h, CURLOPT_USERAGENT, o->user_agent);
	if (o->timeout_ms > 0)
		api->easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)o->timeout_ms);
	if (o->connect_timeout_ms > 0 || o->timeout_ms > 0)
		api->easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
				 (long)(o->connect_timeout_ms > 0 ? o->connect_timeout_ms : o->timeout_ms));
	if (!o->keep_head)
		api->easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)o->max_body);
	api->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	api->easy_setopt(h, CURLOPT_WRITEDATA, c);
	api->easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	api->easy_setopt(h, CURLOPT_HEADERDATA, c);
	api->easy_setopt(h, CURLOPT_ERRORBUFFER, c->curl_err);
	if (o->decode)
		api->easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""); /* every encoding this libcurl decodes */
	if (o->direct)
		api->easy_setopt(h, CURLOPT_PROXY, "");
	if (o->reset_on_close)
		api->easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, on_socket_reset);
	if (o->abort_now) {
		api->easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
		api->easy_setopt(h, CURLOPT_XFERINFODATA, c);
		api->easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	}
	transport_setup(api, h, o);
out:
	free(url);
	if (secret) {
		wipe(secret, HTTP_SECRET_MAX + 32);
		free(secret);
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

void http_finish(struct http_client *c, CURLcode rc, struct http_result *r)
{
	const struct http_curl *api = c->api;
	long code = 0, oserr = 0;
	curl_off_t ttfb = 0;
	size_t n = c->body.len;

	memset(r, 0, sizeof(*r));
	api->easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &code);
	api->easy_getinfo(c->easy, CURLINFO_OS_ERRNO, &oserr);
	api->easy_getinfo(c->easy, CURLINFO_STARTTRANSFER_TIME_T, &ttfb);
	r->rc = rc;
	r->status = rc == CURLE_OK ? code : 0;
	r->body = c->body.data ? c->body.data : "";
	r->len = n;
	r->over = c->over || rc == CURLE_FILESIZE_EXCEEDED; /* a Content-Length over the cap: nothing was read */
	r->first_byte_us = (int64_t)ttfb;
	r->retry_after_ms = c->retry_after[0] ? http_retry_after_ms(c->retry_after, clock_real_ns() / NS_PER_MS) : -1;
	r->kept = c->kept;
	if (rc == CURLE_OK)
		return;
	snprintf(r->detail, sizeof(r->detail), "%s", c->curl_err[0] ? c->curl_err : api->easy_strerror(rc));
	if (r->over)
		snprintf(r->error, sizeof(r->error), "body over %zu bytes", c->max_body);
	else if (c->header_over)
		snprintf(r->error, sizeof(r->error), "the answer's headers are over %d bytes", HTTP_HEADERS_MAX);
	else if (rc == CURLE_OUT_OF_MEMORY && !n) /* libcurl refuses a header line over 100 KiB this way */
		snprintf(r->error, sizeof(r->error), "a header line of the answer is too long (libcurl: %s)", r->detail);
	else if (rc == CURLE_OPERATION_TIMEDOUT)
		snprintf(r->error, sizeof(r->error), "timeout after %.3g s%s", (double)c->timeout_ms / 1e3,
			 n ? " (mid-body)" : code ? "" : " (no answer)");
	else if (rc == CURLE_ABORTED_BY_CALLBACK)
		snprintf(r->error, sizeof(r->error), "stopped");
	else if (rc == CURLE_COULDNT_CONNECT && oserr)
		snprintf(r->error, sizeof(r->error), "cannot connect: %s", strerror((int)oserr));
	else if (rc == CURLE_PARTIAL_FILE || (rc == CURLE_RECV_ERROR && code))
		snprintf(r->error, sizeof(r->error), "connection closed mid-body (%zu bytes received)", n);
	else if (rc == CURLE_GOT_NOTHING)
		snprintf(r->error, sizeof(r->error), "connection closed before any answer");
	else if (is_tls_error(rc))
		snprintf(r->error, sizeof(r->error), "TLS: %s", r->detail);
	else
		snprintf(r->error, sizeof(r->error), "%s", r->detail);
	utf8_sanitize(r->error);
	utf8_sanitize(r->detail);
}

void http_perform(struct http_client *c, struct http_result *r)
{
	http_finish(c, c->api->easy_perform(c->easy), r);
}
