/* SPDX-License-Identifier: MIT */
/*
 * The stream reader (common/stream.c): line numbers in messages, the line
 * cap (an over-long line is skipped without being buffered), blank lines,
 * CRLF, a last line without newline, bad JSON, NaN, deep nesting.
 */
#include "../../common/stream.h"
#include "tap.h"

#include <stdlib.h>
#include <unistd.h>

/* Feed text through a pipe from a child process so reads come in pieces. */
static int feed(const char *text, size_t len)
{
	int p[2];

	if (pipe(p))
		exit(2);
	if (fork() == 0) {
		close(p[0]);
		for (size_t off = 0; off < len;) {
			size_t n = len - off < 777 ? len - off : 777;
			ssize_t w = write(p[1], text + off, n);

			if (w <= 0)
				_exit(1);
			off += (size_t)w;
		}
		_exit(0);
	}
	close(p[1]);
	return p[0];
}

int main(void)
{
	struct stream s;
	json_t *r;
	size_t len;
	enum stream_bad why;
	char err[256];
	static char big[300000];
	char *deep;
	int fd;

	/* Mixed stream: good, bad, long, blank, CRLF, last line unterminated. */
	memset(big, 'x', sizeof(big));
	big[0] = '{';
	big[sizeof(big) - 2] = '}';
	big[sizeof(big) - 1] = '\n';
	{
		size_t cap = 4096, n = 0;
		char *text = malloc(sizeof(big) + 512);

		n += (size_t)sprintf(text + n, "{\"a\":1}\n{\"a\":\n[1,2]\n");
		memcpy(text + n, big, sizeof(big));
		n += sizeof(big);
		n += (size_t)sprintf(text + n, "\n\r\n{\"b\":NaN}\n{\"c\":2}\r\n{\"d\":3}");
		fd = feed(text, n);
		stream_init(&s, fd, "stdin", cap);

		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), 1, "line 1 parses");
		is_int(json_integer_value(json_object_get(r, "a")), 1, "line 1 value");
		json_decref(r);
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), -1, "line 2 is bad JSON");
		is_int(why, STREAM_BAD_JSON, "reason json");
		ok(!strncmp(err, "stdin:2: ", 9), "message names line 2: %s", err);
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), -1, "line 3 is not an object");
		is_str(err, "stdin:3: a report must be a JSON object", "not-object message");
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), -1, "line 4 is too long");
		is_int(why, STREAM_BAD_TOO_LONG, "reason too_long");
		is_str(err, "stdin:4: line longer than 4096 bytes; skipped", "too-long message");
		ok(s.lalloc <= 2 * cap, "the long line was not buffered (%zu bytes allocated)", s.lalloc);
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), -1, "NaN is rejected");
		ok(!strncmp(err, "stdin:7: ", 9), "blank lines are counted: %s", err);
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), 1, "CRLF line parses");
		json_decref(r);
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), 1, "unterminated last line parses");
		is_int(json_integer_value(json_object_get(r, "d")), 3, "last line value");
		json_decref(r);
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), 0, "end of input");
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), 0, "end of input again");
		stream_free(&s);
		close(fd);
		free(text);
	}

	/* 100000-deep nesting: rejected by jansson's depth limit, no crash. */
	deep = malloc(200003);
	memset(deep, '[', 100000);
	memset(deep + 100000, ']', 100000);
	deep[200000] = '\n';
	fd = feed(deep, 200001);
	stream_init(&s, fd, "stdin", 0);
	is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), -1, "100000-deep nesting is rejected");
	is_int(why, STREAM_BAD_JSON, "as bad JSON");
	stream_free(&s);
	close(fd);
	free(deep);
	return done_testing();
}
