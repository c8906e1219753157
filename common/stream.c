/* SPDX-License-Identifier: MIT */
/* Line-capped JSON stream reader; see stream.h. */
#include "stream.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RBUF_SIZE (64 * 1024)

const char *const stream_bad_names[STREAM_BAD_COUNT] = { "json", "too_long", "not_object" };

void stream_init(struct stream *s, int fd, const char *name, size_t max_line)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->name = name;
	s->max_line = max_line ? max_line : STREAM_DEFAULT_MAX_LINE;
	s->rbuf = xmalloc(RBUF_SIZE);
}

void stream_free(struct stream *s)
{
	free(s->rbuf);
	free(s->line);
	s->rbuf = s->line = NULL;
}

/* Refill the read buffer: >0 bytes, 0 at EOF, -errno. */
static ssize_t refill(struct stream *s)
{
	ssize_t n;

	do
		n = read(s->fd, s->rbuf, RBUF_SIZE);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	s->rpos = 0;
	s->rlen = (size_t)n;
	return n;
}

/*
 * Read one line into s->line. Returns its length, -1 at EOF with nothing
 * read, -2 when it was longer than the cap (consumed and dropped), or
 * -3 - errno on a read error.
 */
static long read_line(struct stream *s, size_t *len)
{
	size_t n = 0;
	int too_long = 0, any = 0;

	for (;;) {
		char *nl;
		size_t chunk;

		if (s->rpos == s->rlen) {
			ssize_t r = s->eof ? 0 : refill(s);

			if (r < 0) {
				s->eof = 1;
				return -3 + r;
			}
			if (r == 0) {
				s->eof = 1;
				if (!any)
					return -1;
				break; /* a last line without its newline still counts */
			}
		}
		any = 1;
		nl = memchr(s->rbuf + s->rpos, '\n', s->rlen - s->rpos);
		chunk = (nl ? (size_t)(nl - (s->rbuf + s->rpos)) : s->rlen - s->rpos);
		s->bytes += chunk + (nl ? 1 : 0);
		if (!too_long && n + chunk > s->max_line)
			too_long = 1;
		if (!too_long) {
			if (n + chunk + 1 > s->lalloc) {
				size_t a = s->lalloc ? s->lalloc : 4096;

				while (a < n + chunk + 1)
					a *= 2;
				s->line = xrealloc(s->line, a);
				s->lalloc = a;
			}
			memcpy(s->line + n, s->rbuf + s->rpos, chunk);
			n += chunk;
		}
		s->rpos += chunk + (nl ? 1 : 0);
		if (nl)
			break;
	}
	*len = n;
	if (too_long)
		return -2;
	s->line[n] = '\0';
	return (long)n;
}

int stream_next(struct stream *s, json_t **report, size_t *len, enum stream_bad *why, char *err, size_t errsz)
{
	json_error_t je;
	long n;

	*report = NULL;
	for (;;) {
		n = read_line(s, len);
		if (n == -1)
			return 0;
		s->lineno++;
		if (n <= -3) {
			snprintf(err, errsz, "%s:%llu: read error: %s", s->name, (unsigned long long)s->lineno,
				 strerror((int)(-(n + 3))));
			return -2;
		}
		if (n == -2) {
			*why = STREAM_BAD_TOO_LONG;
			snprintf(err, errsz, "%s:%llu: line longer than %zu bytes; skipped", s->name,
				 (unsigned long long)s->lineno, s->max_line);
			return -1;
		}
		/* Blank lines (a trailing "\r\n" included) are not reports. */
		while (n > 0 && (s->line[n - 1] == '\r' || s->line[n - 1] == ' '))
			s->line[--n] = '\0';
		if (n == 0)
			continue;
		break;
	}
	*report = json_loadb(s->line, (size_t)n, JSON_REJECT_DUPLICATES, &je);
	if (!*report) {
		*why = STREAM_BAD_JSON;
		snprintf(err, errsz, "%s:%llu: column %d: %s", s->name, (unsigned long long)s->lineno, je.column,
			 je.text);
		return -1;
	}
	if (!json_is_object(*report)) {
		json_decref(*report);
		*report = NULL;
		*why = STREAM_BAD_NOT_OBJECT;
		snprintf(err, errsz, "%s:%llu: a report must be a JSON object", s->name, (unsigned long long)s->lineno);
		return -1;
	}
	return 1;
}
