/* SPDX-License-Identifier: MIT */
/*
 * common/http.c: the secret reader (control bytes refused, the file named,
 * the secret never quoted), Retry-After's forms, the backoff's bounds and
 * jitter, host name and header checks, and requests set up from options
 * against a small server on 127.0.0.1 (what goes out, what comes back,
 * the caps, no request at all when a secret is refused).
 */
#include "../../common/http.h"
#include "../../common/log.h"
#include "http_server.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/test_http.XXXXXX";

static const char *file_with(const char *name, const void *text, size_t len)
{
	static char path[4][256];
	static int k;
	char *p = path[k++ % 4];
	int fd;

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len)
		abort();
	close(fd);
	return p;
}

static void test_secrets(void)
{
	char s[64], err[512], big[100];
	const char *p;

	p = file_with("tok", "abc.def\n", 8);
	is_int(http_secret_read("bearer_token_file", p, s, sizeof(s), err, sizeof(err)), 0, "a token with its newline");
	is_str(s, "abc.def", "... the newline is not part of it");
	p = file_with("tokcrlf", "abc \r\n\r\n", 8);
	is_int(http_secret_read("bearer_token_file", p, s, sizeof(s), err, sizeof(err)), 0, "trailing CR LF and spaces");
	is_str(s, "abc", "... trimmed");
	p = file_with("inj", "tok\r\nX-Injected: yes\n", 21);
	is_int(http_secret_read("bearer_token_file", p, s, sizeof(s), err, sizeof(err)), -EINVAL, "CR LF inside: refused");
	ok(strstr(err, "bearer_token_file ") && strstr(err, "/inj: holds a control character (0x0d at byte 3)"),
	   "... the message names the option and the file: %s", err);
	ok(!strstr(err, "Injected"), "... and never quotes the secret");
	is_str(s, "", "... nothing of it is left in the buffer");
	p = file_with("lf", "a\nb", 3);
	is_int(http_secret_read("--bearer-token-file", p, s, sizeof(s), err, sizeof(err)), -EINVAL, "a bare LF inside");
	p = file_with("esc", "a\033b", 3);
	is_int(http_secret_read("x", p, s, sizeof(s), err, sizeof(err)), -EINVAL, "ESC inside");
	p = file_with("del", "a\177", 2);
	is_int(http_secret_read("x", p, s, sizeof(s), err, sizeof(err)), -EINVAL, "DEL at the end");
	p = file_with("nul", "ab\0cd", 5);
	is_int(http_secret_read("x", p, s, sizeof(s), err, sizeof(err)), -EINVAL, "a NUL byte inside");
	ok(strstr(err, "(0x00 at byte 2)") != NULL, "... said where: %s", err);
	p = file_with("empty", "", 0);
	is_int(http_secret_read("x", p, s, sizeof(s), err, sizeof(err)), 0, "an empty file: an empty secret");
	memset(big, 'a', sizeof(big));
	p = file_with("big", big, sizeof(big));
	is_int(http_secret_read("x", p, s, sizeof(s), err, sizeof(err)), -EFBIG, "too large");
	ok(strstr(err, "larger than 63 bytes") != NULL, "... says so: %s", err);
	snprintf(big, sizeof(big), "%s/missing", dir);
	is_int(http_secret_read("password_file", big, s, sizeof(s), err, sizeof(err)), -ENOENT, "missing");
	ok(strstr(err, "password_file ") && strstr(err, "No such file"), "... says so: %s", err);
	snprintf(big, sizeof(big), "%s/fifo", dir);
	if (mkfifo(big, 0600) == 0) {
		is_int(http_secret_read("x", big, s, sizeof(s), err, sizeof(err)), -EINVAL, "a FIFO: refused at once");
		ok(strstr(err, "a FIFO, not a regular file") != NULL, "... says so: %s", err);
	}
	is_int(http_secret_read("x", dir, s, sizeof(s), err, sizeof(err)), -EISDIR, "a directory");
	is_int(http_secret_check("AWS_SESSION_TOKEN", "abc", err, sizeof(err)), 0, "a value: fine");
	is_int(http_secret_check("AWS_SESSION_TOKEN", "a\nb", err, sizeof(err)), -EINVAL, "a value with LF: refused");
	ok(!strncmp(err, "AWS_SESSION_TOKEN: holds a control character", 44), "... named: %s", err);
}

static void test_names(void)
{
	static const char *const good[] = { "metrics.test", "localhost", "a-b.c_d", "127.0.0.1", "x" };
	static const char *const bad[] = { "evil.com/x?", "", "a..b", ".a", "a.", "a b", "host:443", "a\r\nb",
					   "[::1]", "user@host" };
	char label[80], name[300];
	const char *why = "";
	int rc;

	for (size_t i = 0; i < ARRAY_SIZE(good); i++)
		is_int(http_host_name_check(good[i], &why), 0, good[i]);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char q[LOG_QUOTE_BUF];

		why = "";
		rc = http_host_name_check(bad[i], &why); /* before ok(): its arguments are read in any order */
		ok(rc == -EINVAL, "refused: \"%s\" (%s)", log_quote(q, sizeof(q), bad[i], (size_t)-1), why);
	}
	memset(label, 'a', 64);
	label[64] = '\0';
	rc = http_host_name_check(label, &why);
	ok(rc == -EINVAL, "a 64-byte label: %s", why);
	memset(name, 'a', 254);
	for (int i = 50; i < 254; i += 50)
		name[i] = '.';
	name[254] = '\0';
	rc = http_host_name_check(name, &why);
	ok(rc == -EINVAL, "254 bytes: %s", why);
	is_int(http_header_check("X-Scope-OrgID: tenant-1", &why), 0, "a header");
	is_int(http_header_check("Expect:", &why), 0, "an empty value (removes libcurl's)");
	is_int(http_header_check("X-A: a\tb", &why), 0, "a tab in the value");
	is_int(http_header_check("X-A", &why), -EINVAL, "no colon");
	is_int(http_header_check(": v", &why), -EINVAL, "no name");
	is_int(http_header_check("Bad Name: v", &why), -EINVAL, "a space in the name");
	is_int(http_header_check("X-A: a\r\nX-Injected: yes", &why), -EINVAL, "CR LF in the value");
}

static void test_retry(void)
{
	unsigned seed = 1, seed2 = 2;
	int in_bounds = 1, differ = 0;

	is_int(http_retry_after_ms("7", 0), 7000, "Retry-After: 7");
	is_int(http_retry_after_ms(" 2\r\n", 0), 2000, "Retry-After with spaces and CRLF");
	is_int(http_retry_after_ms("0", 0), 0, "Retry-After: 0");
	is_int(http_retry_after_ms("99999", 0), 3600000, "capped at an hour");
	is_int(http_retry_after_ms("Thu, 01 Jan 1970 00:00:10 GMT", 4000), 6000, "an IMF-fixdate");
	is_int(http_retry_after_ms("Sun, 06 Nov 1994 08:49:37 GMT", 784111767000LL), 10000, "IMF-fixdate, 1994");
	is_int(http_retry_after_ms("Sunday, 06-Nov-94 08:49:37 GMT", 784111767000LL), 10000, "RFC 850");
	is_int(http_retry_after_ms("Sun Nov  6 08:49:37 1994", 784111767000LL), 10000, "asctime");
	is_int(http_retry_after_ms("Sun, 06 Nov 1994 08:49:37 GMT", 784111787000LL), 0, "a date in the past: now");
	is_int(http_retry_after_ms("Sun, 06 Nov 2094 08:49:37 GMT", 0), 3600000, "far ahead: an hour");
	is_int(http_retry_after_ms("soon", 0), -1, "nonsense: none");
	is_int(http_retry_after_ms("1.5", 0), -1, "a fraction: none");
	is_int(http_retry_after_ms("-3", 0), -1, "negative: none");
	is_int(http_retry_after_ms("", 0), -1, "empty: none");
	is_int(http_retry_after_ms("Sun, 06 Foo 1994 08:49:37 GMT", 0), -1, "a month that is none");
	is_int(http_retry_after_ms("Sun, 06 Nov 1994 08:49:37 GMT trailing", 0), -1, "trailing text");
	for (unsigned a = 1; a < 30; a++) {
		int64_t d = http_backoff_ms(30, 5000, a, &seed), e = http_backoff_ms(30, 5000, a, &seed2), cap = 30;

		for (unsigned i = 1; i < a && cap < 5000; i++)
			cap *= 2;
		if (cap > 5000)
			cap = 5000;
		if (d < cap / 2 || d > cap || e < cap / 2 || e > cap)
			in_bounds = 0;
		differ += d != e;
	}
	ok(in_bounds, "backoff doubles from 30 ms, capped at 5 s, jittered into [d/2, d]");
	ok(differ > 10, "jitter: two seeds give different waits (%d of 29 differ)", differ);
	is_int(http_backoff_ms(1, 1, 5, &seed), 1, "1 ms: no jitter below 2");
	is_int(http_backoff_ms(1000, 60000, 100, &seed) <= 60000, 1, "a high attempt stays at the cap");
}

static void test_requests(void)
{
	static const char *const hdr[] = { "X-Scope-OrgID: tenant-1", "Connection: close" };
	static const char *const bad_hdr[] = { "X-A: a\r\nX-Injected: yes" };
	const struct http_curl *api = http_curl_linked();
	struct http_client c;
	struct http_result r;
	struct server sv;
	char url[128], err[512];
	const char *tok, *inj, *pw;
	struct http_opts o;
	int n;

	if (server_start(&sv)) {
		ok(0, "a server on 127.0.0.1");
		return;
	}
	api->global_init(CURL_GLOBAL_DEFAULT);
	is_int(http_client_init(&c, api, err, sizeof(err)), 0, "a client");
	tok = file_with("bearer", "s3cret-token\n", 13);
	inj = file_with("bearer-inj", "s3cret\r\nX-Injected: yes\r\nHost: evil.test\n", 41);
	pw = file_with("pw", "pa55\n", 5);

	/* what goes out: the token, the headers, the user agent; what comes back: status, body, Retry-After */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/ok", sv.port);
	o = (struct http_opts){ .url = url, .headers = hdr, .nheaders = 2, .user_agent = "test/1", .timeout_ms = 5000,
				.max_body = 100, .bearer_token_file = tok, .direct = 1 };
	is_int(http_setup(&c, &o, err, sizeof(err)), 0, "setup with a bearer token file");
	http_perform(&c, &r);
	is_str(r.error, "", "... the request went and an answer came");
	is_int(r.status, 200, "... 200");
	is_str(r.body, "hello", "... the body");
	is_int(r.retry_after_ms, 3000, "... Retry-After: 3");
	ok(strstr(sv.last, "\r\nAuthorization: Bearer s3cret-token\r\n") != NULL, "... the token was sent");
	ok(strstr(sv.last, "\r\nX-Scope-OrgID: tenant-1\r\n") && strstr(sv.last, "\r\nUser-Agent: test/1\r\n"),
	   "... the headers and the user agent");

	/* a token with CR LF: refused, no request at all */
	n = sv.requests;
	o.bearer_token_file = inj;
	o.bearer_what = "bearer_token_file";
	is_int(http_setup(&c, &o, err, sizeof(err)), -EINVAL, "a token file with CR LF: setup refuses it");
	ok(strstr(err, "bearer_token_file ") && strstr(err, "holds a control character") && !strstr(err, "s3cret"),
	   "... naming the file, not the secret: %s", err);
	is_int(sv.requests, n, "... and nothing reached the server");
	o.bearer_token_file = NULL;
	o.headers = bad_hdr;
	o.nheaders = 1;
	is_int(http_setup(&c, &o, err, sizeof(err)), -EINVAL, "a header with CR LF: refused");
	ok(strstr(err, "X-A") && !strstr(err, "Injected"), "... naming the header, not its value: %s", err);
	o.headers = hdr;
	o.nheaders = 2;

	/* basic auth, the password read from its file */
	o.username = "alice";
	o.password_file = pw;
	is_int(http_setup(&c, &o, err, sizeof(err)), 0, "basic auth");
	http_perform(&c, &r);
	ok(strstr(sv.last, "\r\nAuthorization: Basic YWxpY2U6cGE1NQ==\r\n") != NULL, "... alice:pa55 was sent");
	o.username = NULL;
	o.password_file = NULL;

	/* gzip: asked for, decoded */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/gzip", sv.port);
	o.decode = 1;
	is_int(http_setup(&c, &o, err, sizeof(err)), 0, "gzip");
	http_perform(&c, &r);
	ok(strstr(sv.last, "Accept-Encoding: ") != NULL, "... asked for");
	is_str(r.body, "decoded body", "... decoded");

	/* the body cap: an error, or the head kept */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/big", sv.port);
	is_int(http_setup(&c, &o, err, sizeof(err)), 0, "a body over max_body");
	http_perform(&c, &r);
	is_str(r.error, "body over 100 bytes", "... fails, saying so");
	is_int(r.over, 1, "... over");
	o.keep_head = 1;
	is_int(http_setup(&c, &o, err, sizeof(err)), 0, "keep_head");
	http_perform(&c, &r);
	ok(!r.error[0] && r.len == 100 && r.over, "... the first 100 bytes kept (%zu), no error (%s)", r.len, r.error);
	o.keep_head = 0;

	/* redirects are not followed */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/redirect", sv.port);
	is_int(http_setup(&c, &o, err, sizeof(err)), 0, "a redirect");
	n = sv.requests;
	http_perform(&c, &r);
	ok(r.status == 302 && sv.requests == n + 1, "... not followed: 302, one request (%ld)", r.status);

	/* the answer's headers are bounded */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/headers", sv.port);
	is_int(http_setup(&c, &o, err, sizeof(err)), 0, "100 KiB of headers");
	http_perform(&c, &r);
	ok(strstr(r.error, "headers are over 65536 bytes") != NULL, "... refused: %s", r.error);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/bigheader", sv.port);
	is_int(http_setup(&c, &o, err, sizeof(err)), 0, "one header line of 1 MiB");
	http_perform(&c, &r);
	ok(strstr(r.error, "a header line of the answer is too long") != NULL, "... said so, not just \"Out of memory\": %s",
	   r.error);

	/* a timeout is described */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/hang", sv.port);
	o.timeout_ms = 200;
	is_int(http_setup(&c, &o, err, sizeof(err)), 0, "a server that does not answer");
	http_perform(&c, &r);
	is_str(r.error, "timeout after 0.2 s (no answer)", "... timeout after 0.2 s");
	o.timeout_ms = 5000;

	/* server_name: checked before anything goes out */
	snprintf(url, sizeof(url), "https://127.0.0.1:%u/ok", sv.port);
	o.server_name = "evil.com/x?";
	n = sv.requests;
	is_int(http_setup(&c, &o, err, sizeof(err)), -EINVAL, "server_name \"evil.com/x?\": refused");
	ok(strstr(err, "invalid server_name") != NULL, "... says so: %s", err);
	o.server_name = NULL;

	/* only http and https */
	o.url = "file:///etc/passwd";
	is_int(http_setup(&c, &o, err, sizeof(err)), -EINVAL, "file:// refused");
	is_int(sv.requests, n, "no request went out for any refused setup");
	http_client_free(&c);
	http_client_free(&c); /* twice: a no-op */
	api->global_cleanup();
	server_stop(&sv);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	test_secrets();
	test_names();
	test_retry();
	test_requests();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# cannot remove %s\n", dir);
	}
	return done_testing();
}
