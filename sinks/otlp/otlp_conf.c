/* SPDX-License-Identifier: MIT */
/*
 * accel-otlp's configuration from the OpenTelemetry variables and the flags;
 * see otlp_conf.h.
 */
#include "otlp_conf.h"

#include "../../common/http.h"
#include "../../common/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define VALUE_MAX 8192 /* bytes of one decoded header or attribute value */
#define KEY_MAX 256    /* bytes of one key */

/* A variable's value: NULL when unset or empty (the specification treats both the same). */
static const char *var(const char *(*env)(const char *), const char *name)
{
	const char *v = env(name);

	return v && *v ? v : NULL;
}

/*
 * The METRICS_ variable, else the general one: OTEL_EXPORTER_OTLP_METRICS_<what> or OTEL_EXPORTER_OTLP_<what>.
 * *from gets the name of the one that was set (a static buffer of the caller's).
 */
static const char *pick(const char *(*env)(const char *), const char *what, char *from, size_t fromsz)
{
	const char *v;

	snprintf(from, fromsz, "OTEL_EXPORTER_OTLP_METRICS_%s", what);
	if ((v = var(env, from)))
		return v;
	snprintf(from, fromsz, "OTEL_EXPORTER_OTLP_%s", what);
	return var(env, from);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int otlp_percent_decode(const char *src, size_t len, char *dst, size_t size, size_t *bad)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)src[i];

		if (c == '%') {
			int hi = i + 2 < len ? hexval(src[i + 1]) : -1, lo = i + 2 < len ? hexval(src[i + 2]) : -1;

			if (hi < 0 || lo < 0 || (hi | lo) == 0) { /* %00 would end the C string */
				if (bad)
					*bad = i;
				return -EINVAL;
			}
			c = hi * 16 + lo;
			i += 2;
		}
		if (o + 1 >= size)
			return -E2BIG;
		dst[o++] = (char)c;
	}
	if (!size)
		return -E2BIG;
	dst[o] = 0;
	return 0;
}

/* [s, e) without the white space around it. */
static void trim(const char **s, const char **e)
{
	while (*s < *e && isspace((unsigned char)**s))
		(*s)++;
	while (*e > *s && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

/* One item of a key=value list, decoded: what the caller does with it. 0, or -EINVAL with err filled. */
typedef int (*kv_fn)(void *ud, const char *key, const char *value, const char *from, char *err, size_t errsz);

/*
 * A comma-separated key=value list (W3C Baggage without properties): keys and values trimmed, values
 * percent-decoded (keys too: a key is a token, so decoding changes nothing in a valid one). Empty items are
 * skipped, as Baggage allows. from names the variable for messages.
 */
static int kv_list(const char *list, const char *from, kv_fn fn, void *ud, char *err, size_t errsz)
{
	char key[KEY_MAX], *val = xmalloc(VALUE_MAX);
	const char *p = list;
	int rc = 0;

	while (*p && !rc) {
		const char *end = strchr(p, ','), *eq, *ks, *ke, *vs, *ve;
		size_t bad = 0;

		if (!end)
			end = p + strlen(p);
		ks = p;
		ke = end;
		trim(&ks, &ke);
		if (ks == ke) {
			p = *end ? end + 1 : end;
			continue;
		}
		eq = memchr(ks, '=', (size_t)(ke - ks));
		if (!eq) {
			snprintf(err, errsz, "%s: \"%.*s\" at byte %zu: expected key=value", from, (int)(ke - ks), ks,
				 (size_t)(ks - list));
			rc = -EINVAL;
			break;
		}
		vs = eq + 1;
		ve = ke;
		ke = eq;
		trim(&ks, &ke);
		trim(&vs, &ve);
		if (ks == ke) {
			snprintf(err, errsz, "%s: an empty key at byte %zu", from, (size_t)(ks - list));
			rc = -EINVAL;
			break;
		}
		if ((rc = otlp_percent_decode(ks, (size_t)(ke - ks), key, sizeof(key), &bad))) {
			snprintf(err, errsz, "%s: key \"%.*s\" at byte %zu: %s", from, (int)(ke - ks), ks,
				 (size_t)(ks - list) + (rc == -EINVAL ? bad : 0),
				 rc == -EINVAL ? "a '%' not followed by two hex digits" : "too long");
			break;
		}
		if ((rc = otlp_percent_decode(vs, (size_t)(ve - vs), val, VALUE_MAX, &bad))) {
			snprintf(err, errsz, "%s: the value of \"%s\" at byte %zu: %s", from, key,
				 (size_t)(vs - list) + (rc == -EINVAL ? bad : 0),
				 rc == -EINVAL ? "a '%' not followed by two hex digits, or %00 (percent-encode a '%' as %25)"
					       : "too long");
			break;
		}
		rc = fn(ud, key, val, from, err, errsz);
		p = *end ? end + 1 : end;
	}
	free(val);
	return rc;
}

/* ---- headers ------------------------------------------------------------------------------------- */

/* Set header name to value, replacing one of the same name. */
static int header_set(void *ud, const char *name, const char *value, const char *from, char *err, size_t errsz)
{
	struct otlp_conf *c = ud;
	size_t nlen = strlen(name), len = nlen + 2 + strlen(value) + 1;
	char *h = xmalloc(len);
	const char *why;

	snprintf(h, len, "%s: %s", name, value);
	if (http_header_check(h, &why)) {
		snprintf(err, errsz, "%s: header \"%s\": %s", from, name, why);
		free(h);
		return -EINVAL;
	}
	for (size_t i = 0; i < c->nheaders; i++)
		if (!strncasecmp(c->headers[i], name, nlen) && c->headers[i][nlen] == ':') {
			free(c->headers[i]);
			c->headers[i] = h;
			return 0;
		}
	if (c->nheaders == OTLP_HEADERS_MAX) {
		snprintf(err, errsz, "%s: more than %d headers", from, OTLP_HEADERS_MAX);
		free(h);
		return -EINVAL;
	}
	c->headers[c->nheaders++] = h;
	return 0;
}

/* --header "Name: value" (accel-remote-write's form). */
static int header_flag(struct otlp_conf *c, const char *arg, char *err, size_t errsz)
{
	const char *colon = strchr(arg, ':'), *v, *why;
	char name[KEY_MAX];

	if (!colon || colon == arg || (size_t)(colon - arg) >= sizeof(name) || http_header_check(arg, &why)) {
		snprintf(err, errsz, "--header \"%s\": expected \"Name: value\"", arg);
		return -EINVAL;
	}
	memcpy(name, arg, (size_t)(colon - arg));
	name[colon - arg] = 0;
	for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
		;
	return header_set(c, name, v, "--header", err, errsz);
}

/* ---- resource ------------------------------------------------------------------------------------ */

static int resource_set(void *ud, const char *key, const char *value, const char *from, char *err, size_t errsz)
{
	struct otlp_conf *c = ud;

	for (size_t i = 0; i < c->nresource; i++)
		if (!strcmp(c->resource[i].key, key)) {
			free((char *)c->resource[i].value);
			c->resource[i].value = xstrdup(value);
			return 0;
		}
	if (c->nresource == OTLP_RESOURCE_MAX) {
		snprintf(err, errsz, "%s: more than %d resource attributes", from, OTLP_RESOURCE_MAX);
		return -EINVAL;
	}
	c->resource[c->nresource].key = xstrdup(key);
	c->resource[c->nresource++].value = xstrdup(value);
	return 0;
}

static int resource_flag(struct otlp_conf *c, const char *arg, char *err, size_t errsz)
{
	const char *eq = strchr(arg, '=');
	char key[KEY_MAX];

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(key)) {
		snprintf(err, errsz, "--resource-attribute \"%s\": expected KEY=VALUE", arg);
		return -EINVAL;
	}
	memcpy(key, arg, (size_t)(eq - arg));
	key[eq - arg] = 0;
	return resource_set(c, key, eq + 1, "--resource-attribute", err, errsz);
}

/* ---- the URL ------------------------------------------------------------------------------------- */

/*
 * url (from names it) checked: http:// or https://, a host, no white space or control byte, no fragment.
 * base: "/v1/metrics" goes after its path; else "/" when it has no path. The result into c->url.
 */
static int url_set(struct otlp_conf *c, const char *url, int base, const char *from, char *err, size_t errsz)
{
	const char *host, *path;
	size_t len = strlen(url), plen;

	if (!strncmp(url, "http://", 7))
		host = url + 7;
	else if (!strncmp(url, "https://", 8))
		host = url + 8;
	else {
		snprintf(err, errsz, "%s: \"%s\": expected an http:// or https:// URL%s", from, url,
			 strstr(url, "://") ? "" : " (with its scheme)");
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)url[i] <= ' ' || url[i] == 0x7f) {
			snprintf(err, errsz, "%s: \"%s\": a space or control character at byte %zu", from, url, i);
			return -EINVAL;
		}
	if (strchr(url, '#')) {
		snprintf(err, errsz, "%s: \"%s\": a URL with a fragment", from, url);
		return -EINVAL;
	}
	path = host + strcspn(host, "/?");
	if (path == host) {
		snprintf(err, errsz, "%s: \"%s\": no host", from, url);
		return -EINVAL;
	}
	plen = strcspn(path, "?");
	free(c->url);
	if (base) {
		if (path[plen] == '?') {
			snprintf(err, errsz, "%s: \"%s\": a base URL with a query (give the full URL in "
				 "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT or --metrics-endpoint)", from, url);
			c->url = NULL;
			return -EINVAL;
		}
		c->url = xmalloc(len + sizeof("/v1/metrics"));
		snprintf(c->url, len + sizeof("/v1/metrics"), "%.*s%s", (int)(len - (plen && path[plen - 1] == '/')),
			 url, "/v1/metrics");
	} else if (!plen) { /* no path: the root */
		c->url = xmalloc(len + 2);
		snprintf(c->url, len + 2, "%.*s/%s", (int)(path - url), url, path);
	} else {
		c->url = xstrdup(url);
	}
	c->url_from = from;
	return 0;
}

static int endpoint(struct otlp_conf *c, const struct otlp_conf_flags *f, const char *(*env)(const char *),
		    char *err, size_t errsz)
{
	const char *v;

	if (f->metrics_endpoint)
		return url_set(c, f->metrics_endpoint, 0, "--metrics-endpoint", err, errsz);
	if (f->endpoint)
		return url_set(c, f->endpoint, 1, "--endpoint", err, errsz);
	if ((v = var(env, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")))
		return url_set(c, v, 0, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", err, errsz);
	if ((v = var(env, "OTEL_EXPORTER_OTLP_ENDPOINT")))
		return url_set(c, v, 1, "OTEL_EXPORTER_OTLP_ENDPOINT", err, errsz);
	return url_set(c, OTLP_DEFAULT_ENDPOINT, 1, "the default endpoint", err, errsz);
}

/* ---- the rest ------------------------------------------------------------------------------------ */

/* A file the exporter must read (a certificate, a key): readable now. */
static int file_set(char **dst, const char *path, const char *from, char *err, size_t errsz)
{
	if (access(path, R_OK)) {
		snprintf(err, errsz, "%s: %s: %s", from, path, strerror(errno));
		return -EINVAL;
	}
	*dst = xstrdup(path);
	return 0;
}

static int files(struct otlp_conf *c, const struct otlp_conf_flags *f, const char *(*env)(const char *), char *err,
		 size_t errsz)
{
	static const struct {
		const char *what, *flag;
		size_t flag_off, conf_off;
	} rows[] = {
		{ "CERTIFICATE", "--ca-file", offsetof(struct otlp_conf_flags, ca_file), offsetof(struct otlp_conf, ca_file) },
		{ "CLIENT_CERTIFICATE", "--cert-file", offsetof(struct otlp_conf_flags, cert_file),
		  offsetof(struct otlp_conf, cert_file) },
		{ "CLIENT_KEY", "--key-file", offsetof(struct otlp_conf_flags, key_file), offsetof(struct otlp_conf, key_file) },
	};
	char from[64];

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const char *v = *(const char *const *)((const char *)f + rows[i].flag_off);
		char **dst = (char **)((char *)c + rows[i].conf_off);
		int rc;

		if (v)
			rc = file_set(dst, v, rows[i].flag, err, errsz);
		else if ((v = pick(env, rows[i].what, from, sizeof(from))))
			rc = file_set(dst, v, from, err, errsz);
		else
			continue;
		if (rc)
			return rc;
	}
	if (!!c->cert_file != !!c->key_file) {
		snprintf(err, errsz, "a client certificate and its key go together: %s",
			 c->cert_file ? "the key (--key-file, OTEL_EXPORTER_OTLP_CLIENT_KEY) is missing"
				      : "the certificate (--cert-file, OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE) is missing");
		return -EINVAL;
	}
	return 0;
}

static int timeout(struct otlp_conf *c, const struct otlp_conf_flags *f, const char *(*env)(const char *), char *err,
		   size_t errsz)
{
	char from[64], *end;
	const char *v;
	long long ms;

	c->timeout_ms = OTLP_DEFAULT_TIMEOUT_MS;
	if (f->timeout_ms >= 0) {
		c->timeout_ms = f->timeout_ms;
		return 0;
	}
	if (!(v = pick(env, "TIMEOUT", from, sizeof(from))))
		return 0;
	errno = 0;
	ms = strtoll(v, &end, 10);
	if (!isdigit((unsigned char)*v) || *end || errno || ms <= 0 || ms > 3600000) {
		snprintf(err, errsz, "%s: \"%s\": expected milliseconds, a whole number from 1 to 3600000", from, v);
		return -EINVAL;
	}
	c->timeout_ms = ms;
	return 0;
}

static int choices(struct otlp_conf *c, const struct otlp_conf_flags *f, const char *(*env)(const char *), char *err,
		   size_t errsz)
{
	char from[64];
	const char *v, *src;

	c->gzip = 1;
	src = "--compression";
	if ((v = f->compression) || (src = from, v = pick(env, "COMPRESSION", from, sizeof(from)))) {
		if (!strcmp(v, "gzip"))
			c->gzip = 1;
		else if (!strcmp(v, "none"))
			c->gzip = 0;
		else {
			snprintf(err, errsz, "%s: \"%s\": expected gzip or none", src, v);
			return -EINVAL;
		}
	}
	c->encoding = OTLP_PROTOBUF;
	src = "--protocol";
	if ((v = f->protocol) || (src = from, v = pick(env, "PROTOCOL", from, sizeof(from)))) {
		if (!strcmp(v, "http/protobuf"))
			c->encoding = OTLP_PROTOBUF;
		else if (!strcmp(v, "http/json"))
			c->encoding = OTLP_JSON;
		else if (!strcmp(v, "grpc")) {
			snprintf(err, errsz, "%s: grpc is not supported: accel-otlp speaks OTLP/HTTP; use http/protobuf "
				 "(the collector's OTLP/HTTP port is 4318)", src);
			return -EINVAL;
		} else {
			snprintf(err, errsz, "%s: \"%s\": expected http/protobuf or http/json", src, v);
			return -EINVAL;
		}
	}
	return 0;
}

/* Headers, resource attributes and the service name. */
static int lists(struct otlp_conf *c, const struct otlp_conf_flags *f, const char *(*env)(const char *), char *err,
		 size_t errsz)
{
	char from[64];
	const char *v;
	int rc;

	if ((v = pick(env, "HEADERS", from, sizeof(from))) && (rc = kv_list(v, from, header_set, c, err, errsz)))
		return rc;
	for (size_t i = 0; i < f->nheaders; i++)
		if ((rc = header_flag(c, f->headers[i], err, errsz)))
			return rc;
	if ((v = var(env, "OTEL_RESOURCE_ATTRIBUTES")) &&
	    (rc = kv_list(v, "OTEL_RESOURCE_ATTRIBUTES", resource_set, c, err, errsz)))
		return rc;
	for (size_t i = 0; i < f->nresource; i++)
		if ((rc = resource_flag(c, f->resource[i], err, errsz)))
			return rc;
	if ((v = f->service_name) || (v = var(env, "OTEL_SERVICE_NAME")))
		c->service_name = xstrdup(v);
	return 0;
}

int otlp_conf_load(struct otlp_conf *c, const struct otlp_conf_flags *f, const char *(*env)(const char *name),
		   char *err, size_t errsz)
{
	int rc;

	memset(c, 0, sizeof(*c));
	if (!env)
		env = (const char *(*)(const char *))getenv;
	if ((rc = endpoint(c, f, env, err, errsz)) || (rc = lists(c, f, env, err, errsz)) ||
	    (rc = timeout(c, f, env, err, errsz)) || (rc = choices(c, f, env, err, errsz)) ||
	    (rc = files(c, f, env, err, errsz))) {
		otlp_conf_free(c);
		return rc;
	}
	return 0;
}

void otlp_conf_free(struct otlp_conf *c)
{
	free(c->url);
	for (size_t i = 0; i < c->nheaders; i++)
		free(c->headers[i]);
	for (size_t i = 0; i < c->nresource; i++) {
		free((char *)c->resource[i].key);
		free((char *)c->resource[i].value);
	}
	free(c->ca_file);
	free(c->cert_file);
	free(c->key_file);
	free(c->service_name);
	memset(c, 0, sizeof(*c));
}
