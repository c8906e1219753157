/* SPDX-License-Identifier: MIT */
/* Line-capped JSON stream reader; see stream.h. */
#include "stream.h"
#include "derive.h"
#include "util.h"

#include <errno.h>
#include <poll.h>
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
	s->wait_ms = -1;
}

void stream_free(struct stream *s)
{
	free(s->rbuf);
	free(s->line);
	s->rbuf = s->line = NULL;
}

void stream_set_wait(struct stream *s, int ms)
{
	s->wait_ms = ms;
}

int stream_buffered(const struct stream *s)
{
	return s->rpos < s->rlen && memchr(s->rbuf + s->rpos, '\n', s->rlen - s->rpos) != NULL;
}

/*
 * Refill the read buffer: >0 bytes, 0 at EOF, -errno. With wait_ms >= 0,
 * wait at most that long for input first: -EAGAIN when none came.
 */
static ssize_t refill(struct stream *s, int wait_ms)
{
	ssize_t n;

	if (wait_ms >= 0) {
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		int r = poll(&p, 1, wait_ms);

		if (r == 0 || (r < 0 && errno == EINTR))
			return -EAGAIN;
		if (r < 0)
			return -errno;
	}
	do
		n = read(s->fd, s->rbuf, RBUF_SIZE);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	s->rpos = 0;
	s->rlen = (size_t)n;
	return n;
}

enum line_rc { LINE_OK, LINE_EOF, LINE_TOO_LONG, LINE_AGAIN, LINE_ERROR };

/*
 * Read one line into s->line (its length in *len). LINE_EOF at the end
 * with nothing read; LINE_TOO_LONG when it was longer than the cap
 * (consumed and dropped); LINE_AGAIN when the wait passed first (what was
 * read of the line is kept in s->part); LINE_ERROR with *err an errno.
 * *wait_ms is what is left of the call's wait: -1 (block), or the first
 * wait's length, then 0.
 */
static enum line_rc read_line(struct stream *s, size_t *len, int *err, int *wait_ms)
{
	for (;;) {
		char *nl;
		size_t chunk, n = s->part;

		if (s->rpos == s->rlen) {
			ssize_t r = s->eof ? 0 : refill(s, *wait_ms);

			if (*wait_ms > 0)
				*wait_ms = 0; /* one wait a call */
			if (r == -EAGAIN && s->wait_ms >= 0)
				return LINE_AGAIN;
			if (r < 0) {
				s->eof = 1;
				s->part = 0;
				s->part_any = s->part_too_long = 0;
				*err = (int)-r;
				return LINE_ERROR;
			}
			if (r == 0) {
				s->eof = 1;
				if (!s->part_any)
					return LINE_EOF;
				break; /* a last line without its newline still counts */
			}
		}
		s->part_any = 1;
		nl = memchr(s->rbuf + s->rpos, '\n', s->rlen - s->rpos);
		chunk = (nl ? (size_t)(nl - (s->rbuf + s->rpos)) : s->rlen - s->rpos);
		s->bytes += chunk + (nl ? 1 : 0);
		if (!s->part_too_long && n + chunk > s->max_line)
			s->part_too_long = 1;
		if (!s->part_too_long) {
			if (n + chunk + 1 > s->lalloc) {
				size_t a = s->lalloc ? s->lalloc : 4096;

				while (a < n + chunk + 1)
					a *= 2;
				s->line = xrealloc(s->line, a);
				s->lalloc = a;
			}
			memcpy(s->line + n, s->rbuf + s->rpos, chunk);
			s->part = n + chunk;
		}
		s->rpos += chunk + (nl ? 1 : 0);
		if (nl)
			break;
	}
	*len = s->part;
	s->part = 0;
	s->part_any = 0;
	if (s->part_too_long) {
		s->part_too_long = 0;
		return LINE_TOO_LONG;
	}
	s->line[*len] = '\0';
	return LINE_OK;
}

/* Whether the integer literal p[0..n) ("-?[0-9]+") is outside what jansson's json_int_t holds. */
static int int_overflows(const char *p, size_t n)
{
	char tmp[32];

	if (n >= sizeof(tmp))
		return 1; /* 31 digits: far past 2^63 */
	memcpy(tmp, p, n);
	tmp[n] = '\0';
	errno = 0;
	(void)strtoll(tmp, NULL, 10);
	return errno == ERANGE;
}

/*
 * A copy of line[0..n) in which every integer literal past int64 has ".0"
 * appended, so that jansson reads it as a real (a double: 2^64-1 becomes
 * 1.8446744073709552e19) and every other integer stays an integer (what
 * JSON_DECODE_INT_AS_REAL would not do: it turns pids and indexes into
 * reals too). Strings are skipped. NULL when there is no such integer; the
 * caller frees the copy, *outn is its length.
 */
static char *big_ints_as_reals(const char *line, size_t n, size_t *outn)
{
	char *out = NULL;
	size_t o = 0, i = 0, from = 0;

	while (i < n) {
		size_t a = i;
		int integer = 1;

		if (line[i] == '"') {
			for (i++; i < n && line[i] != '"'; i++)
				if (line[i] == '\\')
					i++;
			i++;
			continue;
		}
		if (line[i] != '-' && (line[i] < '0' || line[i] > '9')) {
			i++;
			continue;
		}
		for (i++; i < n && line[i] && strchr("0123456789.eE+-", line[i]); i++)
			if (line[i] < '0' || line[i] > '9')
				integer = 0;
		if (!integer || !int_overflows(line + a, i - a))
			continue;
		if (!out)
			out = xmalloc(n + 2 * (n / 19 + 1) + 1); /* a big integer has 19 digits or more */
		memcpy(out + o, line + from, i - from);
		o += i - from;
		memcpy(out + o, ".0", 2);
		o += 2;
		from = i;
	}
	if (!out)
		return NULL;
	memcpy(out + o, line + from, n - from);
	o += n - from;
	out[o] = '\0';
	*outn = o;
	return out;
}

int stream_next(struct stream *s, json_t **report, size_t *len, enum stream_bad *why, char *err, size_t errsz)
{
	json_error_t je;
	char *real = NULL; /* the line with its big integers made reals */
	size_t rn = 0;
	long n;
	int wait_ms = s->wait_ms;

	*report = NULL;
	for (;;) {
		int e = 0;
		enum line_rc lr = read_line(s, len, &e, &wait_ms);

		if (lr == LINE_AGAIN)
			return STREAM_AGAIN;
		if (lr == LINE_EOF)
			return 0;
		s->lineno++;
		if (lr == LINE_ERROR) {
			snprintf(err, errsz, "%s:%llu: read error: %s", s->name, (unsigned long long)s->lineno,
				 strerror(e));
			return -2;
		}
		if (lr == LINE_TOO_LONG) {
			*why = STREAM_BAD_TOO_LONG;
			snprintf(err, errsz, "%s:%llu: line longer than %zu bytes", s->name,
				 (unsigned long long)s->lineno, s->max_line);
			return -1;
		}
		n = (long)*len;
		/* Blank lines (a trailing "\r\n" included) are not reports. */
		while (n > 0 && (s->line[n - 1] == '\r' || s->line[n - 1] == ' '))
			s->line[--n] = '\0';
		if (n == 0)
			continue;
		break;
	}
	*report = json_loadb(s->line, (size_t)n, JSON_REJECT_DUPLICATES, &je);
	if (!*report && json_error_code(&je) == json_error_numeric_overflow) {
		/* An integer past int64 (2^64-1 is a common sentinel): read it, alone, as a real. */
		real = big_ints_as_reals(s->line, (size_t)n, &rn);
		if (real)
			*report = json_loadb(real, rn, JSON_REJECT_DUPLICATES, &je);
	}
	if (!*report) {
		/*
		 * jansson takes only an object or an array unless told otherwise;
		 * a line that is a number, a string or null is JSON all the same,
		 * and counts as not_object. Only bad lines pay for this second look.
		 */
		json_t *any = real ? json_loadb(real, rn, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL)
				   : json_loadb(s->line, (size_t)n, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);

		if (any) {
			*report = any;
		} else {
			*why = STREAM_BAD_JSON;
			snprintf(err, errsz, "%s:%llu: column %d: %s", s->name, (unsigned long long)s->lineno, je.column,
				 je.text);
			free(real);
			return -1;
		}
	}
	free(real);
	if (!json_is_object(*report)) {
		json_decref(*report);
		*report = NULL;
		*why = STREAM_BAD_NOT_OBJECT;
		snprintf(err, errsz, "%s:%llu: a report must be a JSON object", s->name, (unsigned long long)s->lineno);
		return -1;
	}
	report_derive(*report); /* one model for every reader, whatever the report's version */
	return 1;
}
