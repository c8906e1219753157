/* SPDX-License-Identifier: MIT */
/* The producer's and its HTTP helper's frames; see http_wire.h. */
#include "http_wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define WIRE_READ_CHUNK 65536
#define WIRE_OUT_MAX ((size_t)1 << 30) /* bytes waiting: far beyond what a peer that reads can leave */

void http_wire_in_init(struct http_wire_in *w, size_t max_body)
{
	buf_init(&w->buf, HTTP_WIRE_HEAD_MAX + max_body + WIRE_READ_CHUNK);
	w->off = 0;
	w->max_body = max_body;
}

void http_wire_in_free(struct http_wire_in *w)
{
	buf_free(&w->buf);
	w->off = 0;
}

/* Drop what was taken, so the buffer does not grow with the stream. */
static void compact(struct http_wire_in *w)
{
	if (!w->off)
		return;
	memmove(w->buf.data, w->buf.data + w->off, w->buf.len - w->off);
	w->buf.len -= w->off;
	w->buf.data[w->buf.len] = '\0';
	w->off = 0;
}

int http_wire_read(struct http_wire_in *w, int fd, size_t budget)
{
	while (budget) {
		size_t want = budget < WIRE_READ_CHUNK ? budget : WIRE_READ_CHUNK;
		ssize_t n;

		if (w->off && w->off >= w->buf.len / 2)
			compact(w);
		if (buf_reserve(&w->buf, want)) {
			compact(w);
			if (buf_reserve(&w->buf, want))
				return -EPROTO; /* a frame larger than any may be: the reader takes frames as they come */
		}
		n = read(fd, w->buf.data + w->buf.len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		if (n == 0)
			return -EPIPE;
		w->buf.len += (size_t)n;
		w->buf.data[w->buf.len] = '\0';
		budget -= (size_t)n;
	}
	return 1;
}

int http_wire_next(struct http_wire_in *w, json_t **head, const char **body, size_t *len)
{
	const char *p = w->buf.data ? w->buf.data + w->off : "", *nl;
	size_t have = w->buf.len - w->off, hlen;
	json_int_t blen;
	json_t *h;

	*head = NULL;
	nl = memchr(p, '\n', have);
	if (!nl)
		return have > HTTP_WIRE_HEAD_MAX ? -EPROTO : 0;
	hlen = (size_t)(nl - p);
	if (hlen > HTTP_WIRE_HEAD_MAX)
		return -EPROTO;
	h = json_loadb(p, hlen, 0, NULL);
	if (!json_is_object(h)) {
		json_decref(h);
		return -EPROTO;
	}
	blen = json_integer_value(json_object_get(h, "len"));
	if (blen < 0 || (size_t)blen > w->max_body) {
		json_decref(h);
		return -EPROTO;
	}
	if (have - hlen - 1 < (size_t)blen) {
		json_decref(h);
		return 0; /* parsed again when the rest has come: heads are short */
	}
	*head = h;
	*body = nl + 1;
	*len = (size_t)blen;
	w->off += hlen + 1 + (size_t)blen;
	return 1;
}

void http_wire_out_init(struct http_wire_out *w)
{
	buf_init(&w->buf, WIRE_OUT_MAX);
	w->off = 0;
}

void http_wire_out_free(struct http_wire_out *w)
{
	buf_free(&w->buf);
	w->off = 0;
}

void http_wire_put(struct http_wire_out *w, json_t *head, const void *body, size_t len)
{
	char *line;

	json_object_set_new(head, "len", json_integer((json_int_t)len));
	line = json_dumps(head, JSON_COMPACT);
	if (w->off == w->buf.len) {
		buf_reset(&w->buf);
		w->off = 0;
	}
	/* Past WIRE_OUT_MAX the peer has stopped reading for good: what it never reads may as well be lost. */
	if (line && buf_reserve(&w->buf, strlen(line) + 1 + len) == 0) {
		buf_add(&w->buf, line, strlen(line));
		buf_add(&w->buf, "\n", 1);
		if (len)
			buf_add(&w->buf, body, len);
	}
	free(line);
}

int http_wire_pending(const struct http_wire_out *w)
{
	return w->off < w->buf.len;
}

int http_wire_flush(struct http_wire_out *w, int fd)
{
	while (w->off < w->buf.len) {
		ssize_t n = send(fd, w->buf.data + w->off, w->buf.len - w->off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 1 : -errno;
		w->off += (size_t)n;
	}
	buf_reset(&w->buf);
	w->off = 0;
	return 0;
}

/* ---- the options -------------------------------------------------------------------------------- */

static void put_s(json_t *o, const char *k, const char *v)
{
	if (v)
		json_object_set_new(o, k, json_string(v));
}

static void put_i(json_t *o, const char *k, json_int_t v)
{
	if (v)
		json_object_set_new(o, k, json_integer(v));
}

json_t *http_wire_opts(const struct http_opts *o)
{
	json_t *j = json_object();

	put_s(j, "url", o->url);
	put_s(j, "method", o->method);
	if (o->nheaders) {
		json_t *h = json_array();

		for (size_t i = 0; i < o->nheaders; i++)
			json_array_append_new(h, json_string(o->headers[i]));
		json_object_set_new(j, "headers", h);
	}
	put_s(j, "user_agent", o->user_agent);
	put_i(j, "timeout_ms", o->timeout_ms);
	put_i(j, "connect_timeout_ms", o->connect_timeout_ms);
	put_i(j, "max_body", (json_int_t)o->max_body);
	put_i(j, "keep_head", o->keep_head);
	put_i(j, "decode", o->decode);
	put_i(j, "direct", o->direct);
	put_s(j, "ca_file", o->ca_file);
	put_s(j, "cert_file", o->cert_file);
	put_s(j, "key_file", o->key_file);
	put_s(j, "server_name", o->server_name);
	put_i(j, "insecure", o->insecure);
	put_s(j, "bearer_token_file", o->bearer_token_file);
	put_s(j, "bearer_what", o->bearer_what);
	put_s(j, "username", o->username);
	put_s(j, "password_file", o->password_file);
	put_s(j, "password_what", o->password_what);
	return j;
}

static const char *get_s(json_t *j, const char *k)
{
	return json_string_value(json_object_get(j, k));
}

static json_int_t get_i(json_t *j, const char *k)
{
	return json_integer_value(json_object_get(j, k));
}

int http_wire_opts_parse(json_t *j, struct http_opts *o, const char **headers, size_t nmax, const char **why)
{
	json_t *h = json_object_get(j, "headers"), *v;
	size_t i;

	memset(o, 0, sizeof(*o));
	if (!json_is_object(j) || !(o->url = get_s(j, "url"))) {
		*why = "a request without an URL";
		return -EINVAL;
	}
	json_array_foreach(h, i, v) {
		if (o->nheaders == nmax || !json_is_string(v)) {
			*why = "too many headers, or one that is not a string";
			return -EINVAL;
		}
		headers[o->nheaders++] = json_string_value(v);
	}
	o->headers = headers;
	o->method = get_s(j, "method");
	o->user_agent = get_s(j, "user_agent");
	o->timeout_ms = get_i(j, "timeout_ms");
	o->connect_timeout_ms = get_i(j, "connect_timeout_ms");
	o->max_body = get_i(j, "max_body") > 0 ? (size_t)get_i(j, "max_body") : 0;
	o->keep_head = (int)get_i(j, "keep_head");
	o->decode = (int)get_i(j, "decode");
	o->direct = (int)get_i(j, "direct");
	o->ca_file = get_s(j, "ca_file");
	o->cert_file = get_s(j, "cert_file");
	o->key_file = get_s(j, "key_file");
	o->server_name = get_s(j, "server_name");
	o->insecure = (int)get_i(j, "insecure");
	o->bearer_token_file = get_s(j, "bearer_token_file");
	o->bearer_what = get_s(j, "bearer_what");
	o->username = get_s(j, "username");
	o->password_file = get_s(j, "password_file");
	o->password_what = get_s(j, "password_what");
	return 0;
}
