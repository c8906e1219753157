/* SPDX-License-Identifier: MIT */
/*
 * The stream reader (common/stream.c): line numbers in messages, the line
 * cap (an over-long line is skipped without being buffered), blank lines,
 * CRLF, a last line without newline, bad JSON, NaN, deep nesting,
 * integers past int64 (read as reals), JSON that is not an object; with a
 * wait, STREAM_AGAIN on a quiet input and a line read in parts kept whole.
 */
#include "../../common/stream.h"
#include "../../common/timeutil.h"
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

/* Write all of str to fd: 1, or 0. */
static int put(int fd, const char *str)
{
	return write(fd, str, strlen(str)) == (ssize_t)strlen(str);
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
		is_str(err, "stdin:4: line longer than 4096 bytes", "too-long message");
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

	/*
	 * Integers past int64: read as reals, the rest of the
	 * line as it was; non-object JSON is "not_object" (item 16).
	 */
	{
		static const char text[] =
			"{\"a\":9223372036854775808,\"b\":18446744073709551615,\"c\":10000000000000000000,"
			"\"d\":1e308,\"e\":-9223372036854775809,\"f\":9223372036854775807,\"pid\":42,"
			"\"s\":\"18446744073709551615\\\"x\",\"g\":1" "00000000000000000000000000000000000000000000000000"
			"00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
			"00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
			"00000000000000000000000000000000000000000000000000000000000000}\n"
			"[18446744073709551615]\n"
			"5\n\"text\"\nnull\ntrue\n[]\n"
			"{\"x\":1e400}\n"
			"{\"y\":18446744073709551615,}\n";
		json_t *v;

		fd = feed(text, sizeof(text) - 1);
		stream_init(&s, fd, "stdin", 0);
		ok(stream_next(&s, &r, &len, &why, err, sizeof(err)) == 1, "a line with integers past 2^63 parses");
		v = json_object_get(r, "a");
		ok(json_is_real(v) && json_real_value(v) == 9223372036854775808.0, "2^63 is the real 2^63");
		v = json_object_get(r, "b");
		ok(json_is_real(v) && json_real_value(v) == 18446744073709551615.0, "2^64-1 is the real 1.8446744073709552e19");
		v = json_object_get(r, "c");
		ok(json_is_real(v) && json_real_value(v) == 1e19, "10000000000000000000 is the real 1e19");
		ok(json_real_value(json_object_get(r, "d")) == 1e308, "1e308 stays 1e308");
		v = json_object_get(r, "e");
		ok(json_is_real(v) && json_real_value(v) == -9223372036854775809.0, "-2^63-1 is a real");
		v = json_object_get(r, "f");
		ok(json_is_integer(v) && json_integer_value(v) == INT64_MAX, "2^63-1 stays an integer");
		v = json_object_get(r, "pid");
		ok(json_is_integer(v) && json_integer_value(v) == 42, "the other integers stay integers");
		is_str(json_string_value(json_object_get(r, "s")), "18446744073709551615\"x", "a string is left alone");
		ok(json_real_value(json_object_get(r, "g")) == 1e308, "a 309-digit integer is the real 1e308");
		json_decref(r);
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), -1, "an array with a big integer: not an object");
		is_int(why, STREAM_BAD_NOT_OBJECT, "counted as not_object");
		for (int i = 0; i < 5; i++) {
			ok(stream_next(&s, &r, &len, &why, err, sizeof(err)) == -1, "scalar line %d is rejected", i + 3);
			ok(why == STREAM_BAD_NOT_OBJECT, "and counts as not_object, not json (%s)", err);
		}
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), -1, "1e400 is rejected");
		is_int(why, STREAM_BAD_JSON, "as bad JSON");
		ok(strstr(err, "real number overflow") != NULL, "with jansson's reason: %s", err);
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), -1, "bad JSON with a big integer");
		is_int(why, STREAM_BAD_JSON, "is still bad JSON");
		ok(!strncmp(err, "stdin:9: ", 9), "named by its line: %s", err);
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), 0, "end of input");
		stream_free(&s);
		close(fd);
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

	/* With a wait: a quiet input answers STREAM_AGAIN; a line read in three parts is one line. */
	{
		int p[2];
		int64_t t0;
		static char longline[100000];

		if (pipe(p))
			return 2;
		stream_init(&s, p[0], "stdin", 64);
		stream_set_wait(&s, 50);
		t0 = clock_mono_ns();
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), STREAM_AGAIN, "nothing yet: STREAM_AGAIN");
		ok(clock_mono_ns() - t0 >= 40 * NS_PER_MS, "after the wait (%lld ms)",
		   (long long)((clock_mono_ns() - t0) / NS_PER_MS));
		ok(!stream_buffered(&s), "nothing buffered");
		ok(put(p[1], "{\"a\":"), "the first part");
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), STREAM_AGAIN, "part of a line: STREAM_AGAIN");
		ok(put(p[1], "1"), "the second part");
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), STREAM_AGAIN, "still part of a line");
		ok(put(p[1], "}\n{\"b\":2}\n"), "the rest, and one more line");
		ok(stream_next(&s, &r, &len, &why, err, sizeof(err)) == 1 && json_integer_value(json_object_get(r, "a")) == 1,
		   "the line read in three parts is whole");
		json_decref(r);
		ok(stream_buffered(&s), "the next line is buffered");
		ok(stream_next(&s, &r, &len, &why, err, sizeof(err)) == 1 && s.lineno == 2, "and comes next, line 2");
		json_decref(r);
		/* An over-long line in parts: dropped, still one line. */
		memset(longline, 'x', sizeof(longline));
		ok(write(p[1], longline, 60) == 60 && write(p[1], longline, 60) == 60, "an over-long line, in parts");
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), STREAM_AGAIN, "not over yet");
		ok(put(p[1], "x\n{\"c\":3}"), "its end, and a last line without newline");
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), -1, "the over-long line is skipped");
		ok(why == STREAM_BAD_TOO_LONG && s.lineno == 3, "as too long, line 3");
		close(p[1]);
		ok(stream_next(&s, &r, &len, &why, err, sizeof(err)) == 1 && json_integer_value(json_object_get(r, "c")) == 3,
		   "the last line without its newline");
		json_decref(r);
		is_int(stream_next(&s, &r, &len, &why, err, sizeof(err)), 0, "then the end");
		is_int(s.bytes, 5 + 1 + 10 + 122 + 7, "every byte counted");
		stream_free(&s);
		close(p[0]);
	}
	return done_testing();
}
