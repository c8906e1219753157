/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: what accel-otlp reads. Stream lines -> the OTLP encoder
 * (otlp_enc_report, the health points, otlp_enc_flush into requests of at
 * most a few points and bytes taken from the input) -> each request read
 * back: a protobuf one must unpack as an ExportMetricsServiceRequest, a JSON
 * one must parse as a JSON object; the points taken must add up to what was
 * pending, and nothing may stay pending. Then the server's side: the bytes
 * after a "\n#BODY\n" mark go to otlp_response_parse and otlp_status_parse in
 * both encodings, whose messages must be NUL-terminated within their
 * buffer. A violation aborts, which libFuzzer reports with the input.
 *
 * The first byte picks the encoding (its low bit) and the request limits.
 *
 * Build and run: tests/fuzz/run.sh otlp (make fuzz), or tests/fuzz/build.sh DIR otlp.
 */
#include "../../common/log.h"
#include "../../common/stream.h"
#include "../../common/util.h"
#include "../../sinks/otlp/otlp.pb-c.h"
#include "../../sinks/otlp/otlp_enc.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BODY_MARK "\n#BODY\n"
#define NOW_NS 1795239000000000000LL

static void fail(const char *what, const char *text, size_t len)
{
	fprintf(stderr, "fuzz_otlp: %s: %.*s\n", what, (int)(len > 300 ? 300 : len), text);
	abort();
}

/* Every pending point into requests, each read back. */
static void drain(struct otlp_enc *e, enum otlp_encoding enc, size_t max_points, size_t max_bytes, struct buf *out)
{
	size_t want = otlp_enc_pending(e), got = 0, n;

	while (otlp_enc_pending(e)) {
		if (otlp_enc_flush(e, max_points, max_bytes, out, &n))
			return; /* -E2BIG: the points are dropped, said */
		if (!n)
			fail("nothing taken while points are pending", "", 0);
		if (n > max_points)
			fail("more points than asked for", "", 0);
		got += n;
		if (enc == OTLP_PROTOBUF) {
			Otlp__ExportMetricsServiceRequest *r =
				otlp__export_metrics_service_request__unpack(NULL, out->len, (const uint8_t *)out->data);

			if (!r)
				fail("a request that does not unpack", out->data, out->len);
			otlp__export_metrics_service_request__free_unpacked(r, NULL);
		} else {
			json_error_t je;
			json_t *j = json_loadb(out->data, out->len, 0, &je);

			if (!json_is_object(j))
				fail("a JSON request that does not parse as an object", out->data, out->len);
			json_decref(j);
		}
	}
	if (got != want)
		fail("the requests do not hold every pending point", "", 0);
}

static void answers(const uint8_t *body, size_t len)
{
	char msg[256];
	int64_t rejected;

	for (int enc = OTLP_PROTOBUF; enc <= OTLP_JSON; enc++) {
		memset(msg, 'x', sizeof(msg));
		if (otlp_response_parse(body, len, (enum otlp_encoding)enc, &rejected, msg, sizeof(msg)) == 0 &&
		    !memchr(msg, 0, sizeof(msg)))
			fail("a partial_success message not terminated", msg, sizeof(msg));
		memset(msg, 'x', sizeof(msg));
		if (otlp_status_parse(body, len, (enum otlp_encoding)enc, msg, sizeof(msg)) == 0 &&
		    !memchr(msg, 0, sizeof(msg)))
			fail("a Status message not terminated", msg, sizeof(msg));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int started;
	static struct buf out;
	const char *mark;
	enum otlp_encoding enc;
	struct otlp_enc *e;
	struct otlp_health h = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
	struct otlp_kv res[] = { { "deployment.environment", "fuzz" } };
	size_t slen, max_points, max_bytes, len;
	struct stream s;
	json_t *report;
	enum stream_bad why;
	char err[512];
	int fd, rc;
	int64_t now = NOW_NS;

	if (!started) {
		log_init("fuzz", LOG_LVL_SILENT);
		buf_init(&out, 64 << 20);
		started = 1;
	}
	if (!size)
		return 0;
	enc = (data[0] & 1) ? OTLP_JSON : OTLP_PROTOBUF;
	max_points = 1 + (data[0] >> 1);         /* 1..128 */
	max_bytes = (data[0] & 0x80) ? 512 : 1 << 20;
	data++;
	size--;
	mark = memmem(data, size, BODY_MARK, strlen(BODY_MARK));
	slen = mark ? (size_t)(mark - (const char *)data) : size;
	if (mark)
		answers((const uint8_t *)mark + strlen(BODY_MARK), size - slen - strlen(BODY_MARK));
	e = otlp_enc_new(&(struct otlp_enc_opts){ .resource = res, .nresource = 1, .encoding = enc }, err, sizeof(err));
	if (!e)
		fail("otlp_enc_new", err, strlen(err));
	fd = memfd_create("fuzz", 0);
	if (fd < 0 || (slen && write(fd, data, slen) != (ssize_t)slen) || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	stream_init(&s, fd, "fuzz", 1 << 16);
	while ((rc = stream_next(&s, &report, &len, &why, err, sizeof(err))) != 0 && rc != -2) {
		if (rc == 1) {
			now += 1000000000LL;
			otlp_enc_report(e, report, "fuzz:1", now, now);
			json_decref(report);
			drain(e, enc, max_points, max_bytes, &out);
		} else if (rc == -1) {
			otlp_enc_bad_line(e, why);
		}
	}
	otlp_enc_health(e, &h, now);
	drain(e, enc, max_points, max_bytes, &out);
	stream_free(&s);
	close(fd);
	otlp_enc_free(e);
	return 0;
}
