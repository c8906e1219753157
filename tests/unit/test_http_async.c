/* SPDX-License-Identifier: MIT */
/*
 * monitor/http/http_async.c: requests on the event loop against a small
 * server on 127.0.0.1: libcurl loaded at the first request, not before; the
 * answer and its times, never from within the start; a secret refused
 * before anything is sent; the body taken whole by its caller (the
 * transport parses nothing); the reply cap; a timeout; a cancel of a
 * transfer; a request that cannot start, told from the loop; and nothing
 * left on the loop.
 */
#include "../../common/timeutil.h"
#include "../../monitor/core/loop.h"
#include "../../monitor/http/http_async.h"
#include "http_server.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct seen {
	int calls;
	struct http_call *c;
};

static void on_done(struct http_call *c, void *data)
{
	struct seen *s = data;

	s->calls++;
	s->c = c;
}

/* Turn the loop until s has seen want answers, at most max_ms. */
static void run(struct loop *l, struct seen *s, int want, int64_t max_ms)
{
	int64_t end = clock_mono_ns() + max_ms * NS_PER_MS;

	while (s->calls < want && clock_mono_ns() < end)
		loop_run_once(l, end, NULL);
}

/* Turn the loop for ms. */
static void idle(struct loop *l, int64_t ms)
{
	int64_t end = clock_mono_ns() + ms * NS_PER_MS;

	while (clock_mono_ns() < end)
		loop_run_once(l, end, NULL);
}

static const char *file_with(const char *dir, const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		abort();
	return path;
}

int main(void)
{
	char url[128], dir[] = "/tmp/test_http_async.XXXXXX", cmd[128];
	struct loop *l = loop_new();
	struct http_async *h;
	struct http_call c, c2;
	struct seen s = { 0 };
	struct server sv;
	struct http_opts o;
	unsigned conn;
	int n;

	if (!mkdtemp(dir) || server_start(&sv)) {
		printf("Bail out! no temporary directory or server\n");
		return 1;
	}
	h = http_async_new(l);
	conn = http_async_conn(h);
	http_call_init(&c, 1 << 20);
	http_call_init(&c2, 1 << 20);
	ok(!http_async_loaded(h), "libcurl is not loaded before the first request");

	/* an answer, read on the loop */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/ok", sv.port);
	o = (struct http_opts){ .url = url, .timeout_ms = 5000, .max_body = 1000, .user_agent = "t/1" };
	is_int(http_call_start(h, &c, conn, &o, on_done, &s), 0, "a request starts");
	is_int(s.calls, 0, "... its callback is not called from within the start");
	ok(http_async_loaded(h), "... libcurl is loaded now");
	is_int(http_call_start(h, &c, conn, &o, on_done, &s), -EBUSY, "... a second start of a running call: -EBUSY");
	run(l, &s, 1, 10000);
	is_int(s.calls, 1, "the answer came");
	ok(s.c == &c && !c.error[0] && c.status == 200, "... 200, no error (%s)", c.error);
	is_str(c.body.data, "hello", "... the body");
	is_int(c.retry_after_ms, 3000, "... Retry-After");
	ok(c.first_byte_ns >= c.started_ns && c.first_byte_ns <= clock_mono_ns(),
	   "... the first byte's time on the monotonic clock");
	ok(strstr(sv.last, "User-Agent: t/1\r\n") != NULL, "... the options went with it");
	ok(!http_call_running(&c), "... the call has ended");

	/* a secret refused: nothing sent, told from the loop */
	n = sv.requests;
	o.bearer_token_file = file_with(dir, "tok", "abc\r\nX-Injected: yes\n");
	o.bearer_what = "bearer_token_file";
	http_call_start(h, &c, conn, &o, on_done, &s);
	is_int(s.calls, 1, "a token file with CR LF: not told from within the start");
	run(l, &s, 2, 10000);
	ok(strstr(c.error, "bearer_token_file ") && strstr(c.error, "holds a control character"),
	   "... refused (%s)", c.error);
	is_int(sv.requests, n, "... nothing reached the server");
	o.bearer_token_file = NULL;

	/* the kubelet's PodList comes as it is (the kubelet client reduces it off the loop), its body taken whole */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/pods", sv.port);
	http_call_start(h, &c, conn, &o, on_done, &s);
	run(l, &s, 3, 10000);
	ok(c.status == 200 && strstr(c.body.data, "\"items\"") != NULL, "a PodList comes back as it is");
	{
		struct buf taken;

		http_call_take_body(&c, &taken);
		ok(taken.data && strstr(taken.data, "\"items\"") && c.body.len == 0 && c.body.cap == taken.cap,
		   "... its body taken whole; the call keeps an empty body of the same cap");
		buf_free(&taken);
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/ok", sv.port);
	http_call_start(h, &c, conn, &o, on_done, &s);
	run(l, &s, 4, 10000);
	ok(c.status == 200 && c.body.len > 0 && !c.error[0], "... and the call serves the next answer");
	http_call_start(h, &c, conn, &o, on_done, &s);
	run(l, &s, 5, 10000);
	ok(c.status == 200 && c.body.len > 0, "... and the one after (the connection's buffer was moved, not lost)");

	/* the reply cap */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/big", sv.port);
	http_call_free(&c2);
	http_call_init(&c2, 10);
	http_call_start(h, &c2, conn, &o, on_done, &s);
	run(l, &s, 6, 10000);
	is_str(c2.error, "the answer is over 10 bytes", "an answer over reply_max is refused");
	is_int((int)c2.body.len, 0, "... and none of it kept");

	/* a timeout */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/hang", sv.port);
	o.timeout_ms = 200;
	http_call_start(h, &c, conn, &o, on_done, &s);
	run(l, &s, 7, 10000);
	is_str(c.error, "timeout after 0.2 s (no answer)", "a server that does not answer: the timeout");

	/* a cancel: no callback; the connection serves the next request */
	o.timeout_ms = 5000;
	http_call_start(h, &c, conn, &o, on_done, &s);
	idle(l, 50);
	http_call_cancel(&c);
	ok(!http_call_running(&c), "cancelled: not running");
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/ok", sv.port);
	http_call_start(h, &c, conn, &o, on_done, &s);
	run(l, &s, 8, 10000);
	ok(s.calls == 8 && c.status == 200, "... no callback for it, and the next request is answered (%d calls)",
	   s.calls);

	/* a request that ended before it started, cancelled before the loop told it: never told */
	o.bearer_token_file = file_with(dir, "tok", "a\rb\n");
	http_call_start(h, &c, conn, &o, on_done, &s);
	http_call_cancel(&c);
	idle(l, 50);
	is_int(s.calls, 8, "a failed start cancelled at once: no callback");
	o.bearer_token_file = NULL;

	/* freed with a transfer running: no callback, no leak */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/hang", sv.port);
	http_call_start(h, &c, conn, &o, on_done, &s);
	idle(l, 50);
	http_call_free(&c);
	http_call_free(&c2);
	http_async_conn_close(h, conn);
	http_async_free(h);
	is_int(s.calls, 8, "... freed with a transfer running: no callback");

	/* a request refused before it starts on a new http_async: told from the loop */
	h = http_async_new(l);
	http_call_init(&c, 100);
	o.url = "ftp://127.0.0.1/";
	http_call_start(h, &c, http_async_conn(h), &o, on_done, &s);
	is_int(s.calls, 8, "a URL that is not http(s): nothing is called back from within the start");
	run(l, &s, 9, 2000);
	ok(c.error[0] != '\0', "... the request fails from the loop, saying why (%s)", c.error);
	http_call_free(&c);
	http_async_free(h);
	is_int(loop_count(l), 0, "nothing is left on the loop");
	loop_free(l);
	server_stop(&sv);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# cannot remove %s\n", dir);
	return done_testing();
}
