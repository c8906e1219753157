/* SPDX-License-Identifier: MIT */
/*
 * monitor/http/http_async.c and http_helper.c: requests made by the HTTP
 * helper (accel-monitor --http-helper, found through ACCEL_BIN, else bin/)
 * against a small server on 127.0.0.1, answered on the event loop: the
 * answer and its times, a secret refused there, the kubelet's PodList
 * reduced there, the reply cap, a timeout, a cancel, a helper killed
 * mid-request and started again, the helper ending when idle, a helper
 * that cannot be run, and nothing left on the loop.
 */
#include "../../common/timeutil.h"
#include "../../monitor/core/loop.h"
#include "../../monitor/http/http_async.h"
#include "http_server.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
	const char *bin = getenv("ACCEL_BIN");
	char prog[512], url[128], dir[] = "/tmp/test_http_async.XXXXXX", cmd[128];
	struct loop *l = loop_new();
	struct http_async *h;
	struct http_call c, c2;
	struct seen s = { 0 };
	struct server sv;
	struct http_opts o;
	unsigned conn;
	pid_t pid;
	int64_t t0;
	int n;

	snprintf(prog, sizeof(prog), "%s/accel-monitor", bin && *bin ? bin : "bin");
	if (access(prog, X_OK) || !mkdtemp(dir) || server_start(&sv)) {
		printf("1..0 # SKIP no %s, or no temporary directory or server\n", prog);
		return 0;
	}
	h = http_async_new(l, prog);
	conn = http_async_conn(h);
	http_call_init(&c, 1 << 20);
	http_call_init(&c2, 1 << 20);

	/* an answer, read on the loop */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/ok", sv.port);
	o = (struct http_opts){ .url = url, .timeout_ms = 5000, .max_body = 1000, .user_agent = "t/1" };
	is_int(http_call_start(h, &c, conn, &o, NULL, on_done, &s), 0, "a request starts");
	is_int(s.calls, 0, "... its callback is not called from within the start");
	ok(http_async_helper_pid(h) > 0, "... the helper runs (pid %d)", (int)http_async_helper_pid(h));
	is_int(http_call_start(h, &c, conn, &o, NULL, on_done, &s), -EBUSY, "... a second start of a running call: -EBUSY");
	run(l, &s, 1, 10000);
	is_int(s.calls, 1, "the answer came");
	ok(s.c == &c && !c.error[0] && c.status == 200, "... 200, no error (%s)", c.error);
	is_str(c.body.data, "hello", "... the body");
	is_int(c.retry_after_ms, 3000, "... Retry-After");
	ok(c.first_byte_ns >= c.started_ns && c.first_byte_ns <= clock_mono_ns(),
	   "... the first byte's time on the shared monotonic clock");
	ok(strstr(sv.last, "User-Agent: t/1\r\n") != NULL, "... the options went with it");
	ok(!http_call_running(&c), "... the call has ended");

	/* a secret refused in the helper: nothing sent */
	n = sv.requests;
	o.bearer_token_file = file_with(dir, "tok", "abc\r\nX-Injected: yes\n");
	o.bearer_what = "bearer_token_file";
	http_call_start(h, &c, conn, &o, NULL, on_done, &s);
	run(l, &s, 2, 10000);
	ok(strstr(c.error, "bearer_token_file ") && strstr(c.error, "holds a control character"),
	   "a token file with CR LF: refused in the helper (%s)", c.error);
	is_int(sv.requests, n, "... nothing reached the server");
	o.bearer_token_file = NULL;

	/* the kubelet's PodList, reduced in the helper */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/pods", sv.port);
	http_call_start(h, &c, conn, &o, "kubelet_pods", on_done, &s);
	run(l, &s, 3, 10000);
	is_str(c.body.data, "{\"u1\":{\"name\":\"p1\",\"namespace\":\"ns\",\"containers\":{\"abc\":\"c1\"}}}",
	       "a PodList comes back reduced");

	/* the reply cap */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/big", sv.port);
	http_call_free(&c2);
	http_call_init(&c2, 10);
	http_call_start(h, &c2, conn, &o, NULL, on_done, &s);
	run(l, &s, 4, 10000);
	is_str(c2.error, "the answer is over 10 bytes", "an answer over reply_max is refused");

	/* a timeout, in the helper's words */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/hang", sv.port);
	o.timeout_ms = 200;
	http_call_start(h, &c, conn, &o, NULL, on_done, &s);
	run(l, &s, 5, 10000);
	is_str(c.error, "timeout after 0.2 s (no answer)", "a server that does not answer: the timeout");

	/* a cancel: no callback; the connection serves the next request */
	o.timeout_ms = 5000;
	http_call_start(h, &c, conn, &o, NULL, on_done, &s);
	http_call_cancel(&c);
	ok(!http_call_running(&c), "cancelled: not running");
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/ok", sv.port);
	http_call_start(h, &c, conn, &o, NULL, on_done, &s);
	run(l, &s, 6, 10000);
	ok(s.calls == 6 && c.status == 200, "... no callback for it, and the next request is answered (%d calls)",
	   s.calls);

	/* the helper killed mid-request: the call fails; the next starts a new helper */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/hang", sv.port);
	http_call_start(h, &c, conn, &o, NULL, on_done, &s);
	pid = http_async_helper_pid(h);
	idle(l, 100);
	kill(pid, SIGKILL);
	run(l, &s, 7, 10000);
	is_str(c.error, "the HTTP helper ended (killed by signal 9)", "the helper killed: the call says so");
	ok(http_async_helper_pid(h) == 0 && kill(pid, 0) < 0, "... the helper is reaped");
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/ok", sv.port);
	http_call_start(h, &c, conn, &o, NULL, on_done, &s);
	run(l, &s, 8, 10000);
	ok(c.status == 200 && http_async_helper_pid(h) != pid, "... the next request runs in a new helper (%s)",
	   c.error);

	/* idle: the helper ends, and is reaped */
	http_async_idle(h, 200 * NS_PER_MS);
	http_call_start(h, &c, conn, &o, NULL, on_done, &s);
	run(l, &s, 9, 10000);
	pid = http_async_helper_pid(h);
	idle(l, 1000);
	ok(http_async_helper_pid(h) == 0 && pid > 0 && kill(pid, 0) < 0 && errno == ESRCH,
	   "idle for 200 ms: the helper has ended and is reaped");
	http_call_start(h, &c, conn, &o, NULL, on_done, &s);
	run(l, &s, 10, 10000);
	is_int(c.status, 200, "... and a request starts a new one");

	/* the end: the helper asked to end, quickly */
	t0 = clock_mono_ns();
	pid = http_async_helper_pid(h);
	http_call_free(&c);
	http_call_free(&c2);
	http_async_conn_close(h, conn);
	http_async_free(h);
	ok(clock_mono_ns() - t0 < 2 * NS_PER_S && kill(pid, 0) < 0, "freed: the helper ended and was reaped at once");

	/* a helper that cannot be run: every request fails, from the loop */
	h = http_async_new(l, "/nonexistent/accel-monitor");
	http_call_init(&c, 100);
	http_call_start(h, &c, http_async_conn(h), &o, NULL, on_done, &s);
	is_int(s.calls, 10, "no helper: nothing is called back from within the start");
	run(l, &s, 11, 2000);
	is_str(c.error, "cannot run the HTTP helper /nonexistent/accel-monitor: No such file or directory",
	       "... the request fails from the loop, saying why");
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
