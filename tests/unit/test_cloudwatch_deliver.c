/* SPDX-License-Identifier: MIT */
/*
 * Batch delivery (sinks/cloudwatch/cloudwatch_deliver.c) against a scripted transport
 * on a fake clock: full batches, retries with growing backoff, a bad datum
 * found by the member CloudWatch names or by halving, the exit deadline,
 * datums that age out while waiting, and how HTTP answers are classified.
 */
#include "../../common/gzip.h"
#include "../../sinks/cloudwatch/cloudwatch_deliver.h"
#include "../../sinks/cloudwatch/cloudwatch_http.h"
#include "../../sinks/cloudwatch/cloudwatch_queue.h"
#include "tap.h"

#include <stdlib.h>

#define NOW 1795219200000LL

static struct fake {
	int requests;
	int fail_first;       /* answer CW_RETRY this many times */
	double bad;           /* a Value to refuse (0: none) */
	int name_member;      /* name the member in the refusal */
	int give_up_after;    /* give_up() true after this many sleeps (0: never) */
	int64_t slept[64];
	int nsleep;
	size_t sizes[256];    /* datums per request */
	int64_t now;
} F;

static int fake_send(void *ud, const struct buf *body, size_t ndatums, struct cw_reply *r)
{
	char needle[64];
	const char *hit;

	(void)ud;
	memset(r, 0, sizeof(*r));
	if (F.requests < 256)
		F.sizes[F.requests] = ndatums;
	F.requests++;
	if (F.fail_first > 0) {
		F.fail_first--;
		r->outcome = CW_RETRY;
		snprintf(r->detail, sizeof(r->detail), "HTTP 503");
		return 0;
	}
	snprintf(needle, sizeof(needle), ".Value=%.1f&", F.bad);
	if (F.bad && (hit = strstr(body->data, needle))) {
		long member;
		const char *m = hit;

		while (m > body->data && strncmp(m, "MetricData.member.", 18))
			m--;
		member = strtol(m + 18, NULL, 10);
		r->outcome = CW_REJECTED;
		r->status = 400;
		snprintf(r->err.code, sizeof(r->err.code), "InvalidParameterValue");
		if (F.name_member) {
			snprintf(r->err.message, sizeof(r->err.message),
				 "The value %.1f for parameter MetricData.member.%ld.Value is invalid.", F.bad, member);
			r->err.member = member;
		} else {
			snprintf(r->err.message, sizeof(r->err.message), "One or more parameters are invalid.");
		}
		return 0;
	}
	r->outcome = CW_SENT;
	r->status = 200;
	return 0;
}

static void fake_sleep(void *ud, int64_t ms)
{
	(void)ud;
	if (F.nsleep < 64)
		F.slept[F.nsleep] = ms;
	F.nsleep++;
	F.now += ms;
}

static int fake_give_up(void *ud)
{
	(void)ud;
	return F.give_up_after && F.nsleep >= F.give_up_after;
}

static int64_t fake_wall(void *ud)
{
	(void)ud;
	return F.now;
}

static size_t run(struct cw_deliver *dl, const struct cw_datum *d, size_t n, unsigned char *dead)
{
	memset(dead, 0, n);
	dl->requests = dl->sent = dl->retries = dl->rejected = dl->stale = 0;
	dl->attempt = 0;
	return cw_deliver_batch(dl, d, n, dead);
}

int main(void)
{
	struct cw_deliver dl;
	struct cw_point p = { .name = "M", .unit = "Count", .ndims = 1 };
	struct cw_series *s;
	static struct cw_datum d[2500];
	static unsigned char dead[2500];
	size_t left, alive;

	p.dims[0] = (struct cw_dim){ "Host", "h" };
	s = cw_series_new(&p);
	for (size_t i = 0; i < 2500; i++)
		d[i] = (struct cw_datum){ s, (double)i + 1, NOW - 1000 };
	cw_deliver_init(&dl, "NS", 60);
	dl.tp = (struct cw_transport){ fake_send, NULL };
	dl.sleep_ms = fake_sleep;
	dl.give_up = fake_give_up;
	dl.wall_ms = fake_wall;
	dl.backoff_min_ms = 100;
	dl.backoff_max_ms = 1000;

	memset(&F, 0, sizeof(F));
	F.now = NOW;
	left = run(&dl, d, 2500, dead);
	is_int(left, 0, "2500 datums: all delivered");
	is_int(F.requests, 3, "in three requests");
	ok(F.sizes[0] == 1000 && F.sizes[1] == 1000 && F.sizes[2] == 500, "of 1000, 1000 and 500");
	is_int(dl.sent, 2500, "counted as sent");

	memset(&F, 0, sizeof(F));
	F.now = NOW;
	F.fail_first = 6;
	left = run(&dl, d, 10, dead);
	is_int(left, 0, "six failures, then success: all delivered");
	is_int(dl.retries, 6, "six retries");
	ok(F.slept[0] >= 50 && F.slept[0] <= 100 && F.slept[1] >= 100 && F.slept[1] <= 200 && F.slept[2] >= 200 &&
		   F.slept[2] <= 400 && F.slept[5] >= 500 && F.slept[5] <= 1000,
	   "backoff doubles with jitter in [d/2, d], capped: %lld %lld %lld %lld %lld %lld", (long long)F.slept[0],
	   (long long)F.slept[1], (long long)F.slept[2], (long long)F.slept[3], (long long)F.slept[4],
	   (long long)F.slept[5]);

	memset(&F, 0, sizeof(F));
	F.now = NOW;
	F.bad = 777;
	F.name_member = 1;
	left = run(&dl, d, 1000, dead);
	is_int(left, 0, "a refused datum that CloudWatch names: nothing left");
	is_int(dl.rejected, 1, "one dropped");
	ok(dead[776] && dl.sent == 999, "it was datum 777; the other 999 sent");
	is_int(F.requests, 2, "in one extra request");

	memset(&F, 0, sizeof(F));
	F.now = NOW;
	F.bad = 333;
	left = run(&dl, d, 1000, dead);
	is_int(left, 0, "a refused datum that is not named: nothing left");
	ok(dl.rejected == 1 && dl.sent == 999, "found by halving: one dropped, 999 sent");
	ok(F.requests <= 2 * 10 + 2, "in %d requests (about 2 log2 n)", F.requests);

	memset(&F, 0, sizeof(F));
	F.now = NOW;
	F.fail_first = 1000;
	F.give_up_after = 3;
	left = run(&dl, d, 50, dead);
	is_int(left, 50, "endpoint down past the deadline: all 50 left");
	is_int(dl.sent, 0, "none sent");

	/* Datums that age past two weeks while CloudWatch is down are dropped at send time. */
	memset(&F, 0, sizeof(F));
	F.now = NOW + 14LL * 86400 * 1000 - 15000; /* the old ones are 14 days less 5 s old */
	F.fail_first = 2;                          /* two waits of 5 to 10 s */
	dl.backoff_min_ms = dl.backoff_max_ms = 10000;
	for (size_t i = 0; i < 10; i++)
		d[i].ts_ms = i < 4 ? NOW - 10000 : NOW + 60000;
	left = run(&dl, d, 10, dead);
	alive = dl.sent;
	is_int(left, 0, "nothing left after aging");
	is_int(dl.stale, 4, "the four that crossed two weeks were dropped");
	is_int(alive, 6, "the six younger ones sent");

	/* A datum in messages: the one description for queued points and datums in flight. */
	{
		const struct cw_dim dims[2] = { { "InstanceId", "i-1" }, { "NeuronCore", "0" } };
		char what[256];

		cw_describe("NeuronCoreUtilization", dims, 2, 42.5, 1795219200000, what, sizeof(what));
		is_str(what, "NeuronCoreUtilization{InstanceId=i-1,NeuronCore=0} 42.5 at 2026-11-21T00:00:00Z",
		       "cw_describe");
	}

	/* Classification of HTTP answers. */
	{
		struct cw_error e = { "", "", 0 };

		is_int(cw_http_classify(200, &e), CW_SENT, "200 sent");
		is_int(cw_http_classify(500, &e), CW_RETRY, "500 retry");
		is_int(cw_http_classify(503, &e), CW_RETRY, "503 retry");
		is_int(cw_http_classify(429, &e), CW_RETRY, "429 retry");
		is_int(cw_http_classify(404, &e), CW_RETRY, "404 (a wrong endpoint) retry, never drop");
		is_int(cw_http_classify(413, &e), CW_TOO_LARGE, "413 split");
		is_int(cw_http_classify(403, &e), CW_AUTH, "403 credentials");
		snprintf(e.code, sizeof(e.code), "Throttling");
		is_int(cw_http_classify(400, &e), CW_RETRY, "400 Throttling retry");
		snprintf(e.code, sizeof(e.code), "InvalidParameterValue");
		is_int(cw_http_classify(400, &e), CW_REJECTED, "400 InvalidParameterValue: find the datum");
		snprintf(e.code, sizeof(e.code), "ExpiredToken");
		is_int(cw_http_classify(400, &e), CW_AUTH, "400 ExpiredToken: refresh");
		e.code[0] = '\0';
		is_int(cw_http_classify(400, &e), CW_RETRY, "400 without a Code (a proxy?): retry");
	}

	/* gzip round trip size sanity: shrinks a repetitive body. */
	{
		struct buf in, out;

		buf_init(&in, 1 << 20);
		buf_init(&out, 1 << 20);
		for (int i = 0; i < 1000; i++)
			buf_printf(&in, "&MetricData.member.%d.MetricName=SystemMemoryUsed", i);
		is_int(gzip_compress(in.data, in.len, &out), 0, "gzip works");
		ok(out.len < in.len / 5 && (unsigned char)out.data[0] == 0x1f && (unsigned char)out.data[1] == 0x8b,
		   "a gzip stream, much smaller (%zu -> %zu)", in.len, out.len);
		buf_free(&in);
		buf_free(&out);
	}
	cw_deliver_free(&dl);
	cw_series_free(s);
	return done_testing();
}
