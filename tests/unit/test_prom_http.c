/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for accel-prom's HTTP helpers and snapshots
 * (sinks/prom/prom_http.c, common/series/prom_expo.c): Accept and Accept-Encoding
 * negotiation, --listen-address parsing, gzip of a snapshot, and the
 * reference counting of published snapshots.
 */
#include "../../common/util.h"
#include "../../common/series/prom_expo.h"
#include "../../sinks/prom/prom_http.h"
#include "tap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void test_accept(void)
{
	static const struct {
		const char *accept;
		int om;
	} cases[] = {
		{ NULL, 0 },
		{ "", 0 },
		{ "*/*", 0 },
		{ "text/plain", 0 },
		{ "application/openmetrics-text", 1 },
		{ "application/openmetrics-text; version=1.0.0", 1 },
		{ "application/openmetrics-text;version=0.0.1", 0 },
		/* Prometheus 2.x's scrape Accept header */
		{ "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
		  "text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
		  1 },
		{ "text/plain;version=0.0.4;q=1, application/openmetrics-text;version=1.0.0;q=0.5", 0 },
		{ "application/openmetrics-text;q=0", 0 },
		{ "APPLICATION/OpenMetrics-Text ; Version=1.0.0 ; q=0.9, text/plain;q=0.8", 1 },
		{ "text/html, application/openmetrics-text;q=0.2", 1 },
		{ "text/*;q=0.9, application/openmetrics-text;q=0.5", 0 },
		{ "application/openmetrics-text;q=abc", 1 },
		{ ",,;;,", 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		is_int(prom_accept_openmetrics(cases[i].accept), cases[i].om,
		       cases[i].accept ? cases[i].accept : "(no Accept)");
}

static void test_accept_encoding(void)
{
	static const struct {
		const char *enc;
		int gz;
	} cases[] = {
		{ NULL, 0 },
		{ "", 0 },
		{ "gzip", 1 },
		{ "deflate, gzip;q=1.0, *;q=0.5", 1 },
		{ "gzip;q=0", 0 },
		{ "identity", 0 },
		{ "*", 1 },
		{ "*;q=0", 0 },
		{ "br, x-gzip", 1 },
		{ "GZIP", 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		is_int(prom_accept_gzip(cases[i].enc), cases[i].gz, cases[i].enc ? cases[i].enc : "(no Accept-Encoding)");
}

static void test_listen(void)
{
	static const struct {
		const char *in, *host;
		unsigned port;
		int rc;
	} cases[] = {
		{ "127.0.0.1:8000", "127.0.0.1", 8000, 0 },
		{ ":9100", "", 9100, 0 },
		{ "[::1]:8000", "::1", 8000, 0 },
		{ "localhost:0", "localhost", 0, 0 },
		{ "127.0.0.1", NULL, 0, -EINVAL },
		{ "::1:8000", NULL, 0, -EINVAL },
		{ "[::1]8000", NULL, 0, -EINVAL },
		{ "host:", NULL, 0, -EINVAL },
		{ "host:65536", NULL, 0, -EINVAL },
		{ "host:-1", NULL, 0, -EINVAL },
		{ "host:80x", NULL, 0, -EINVAL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char host[64] = "unset";
		unsigned port = 12345;
		int rc = prom_parse_listen(cases[i].in, host, sizeof(host), &port);

		is_int(rc, cases[i].rc, cases[i].in);
		if (!rc) {
			is_str(host, cases[i].host, "host");
			is_int(port, cases[i].port, "port");
		}
	}
}

static void test_gzip_and_refs(void)
{
	struct expo_body t = { xstrdup("a 1\nb 2\n"), 8 }, o = { xstrdup("a 1\n# EOF\n"), 10 }, j = { xstrdup("{}"), 2 };
	struct prom_expo *e = prom_expo_new(t, o, j), *got;
	const struct expo_body *gz, *gz2;
	struct prom_pub pub;
	char out[64];
	uLongf n = sizeof(out);
	z_stream z;

	ok(prom_expo_gzip(e, EXPO_TEXT, &gz) == 0 && gz->len > 10, "gzip made");
	ok(prom_expo_gzip(e, EXPO_TEXT, &gz2) == 0 && gz2 == gz, "gzip made once per snapshot");
	ok((unsigned char)gz->data[0] == 0x1f && (unsigned char)gz->data[1] == 0x8b, "gzip magic");
	memset(&z, 0, sizeof(z));
	inflateInit2(&z, 15 + 16);
	z.next_in = (Bytef *)gz->data;
	z.avail_in = (uInt)gz->len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)n;
	ok(inflate(&z, Z_FINISH) == Z_STREAM_END, "gzip inflates");
	is_int(z.total_out, 8, "gzip round trip length");
	ok(!memcmp(out, "a 1\nb 2\n", 8), "gzip round trip bytes");
	inflateEnd(&z);

	prom_pub_init(&pub);
	ok(prom_pub_get(&pub) == NULL, "nothing published yet");
	prom_pub_swap(&pub, e);
	got = prom_pub_get(&pub);
	ok(got == e, "get returns the published snapshot");
	is_int(atomic_load(&e->refs), 2, "a scrape holds its own reference");
	prom_pub_swap(&pub, prom_expo_new((struct expo_body){ xstrdup(""), 0 }, (struct expo_body){ xstrdup(""), 0 },
					  (struct expo_body){ xstrdup(""), 0 }));
	is_int(atomic_load(&e->refs), 1, "a newer snapshot releases the old one; the scrape still holds it");
	is_str(got->body[EXPO_TEXT].data, "a 1\nb 2\n", "the old snapshot is intact while held");
	prom_expo_unref(got);
	prom_pub_destroy(&pub);
	prom_expo_unref(NULL);
}

int main(void)
{
	test_accept();
	test_accept_encoding();
	test_listen();
	test_gzip_and_refs();
	return done_testing();
}
