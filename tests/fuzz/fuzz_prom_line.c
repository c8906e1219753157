/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: stream lines -> samples -> exposition, the path every
 * byte of accel-prom's input takes.
 *
 * The input is written to a memory file and read back with the stream
 * reader (a small line cap, so over-long lines are exercised too); each
 * report goes through the common mapping into one store that lives across
 * inputs, on a fake clock that advances a second per input (so staleness
 * and forgotten counters are exercised), with --passthrough's module (an
 * entry's "exposition" republished). After each input the exposition
 * is rendered and checked: every line is a HELP, a TYPE, a UNIT or a
 * well-formed sample; OpenMetrics ends with "# EOF"; the BIE body is JSON.
 * A violation aborts, which libFuzzer reports with the input.
 *
 * Build and run: tests/fuzz/run.sh (make fuzz), or tests/fuzz/build.sh DIR.
 */
#include "../../common/log.h"
#include "../../common/stream.h"
#include "../../common/timeutil.h"
#include "../../common/series/prom_expo.h"
#include "../../common/series/prom_pass.h"
#include "../../common/series/prom_store.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct prom_store *store;
static int64_t now_ns = 1000 * NS_PER_S;

static void fail(const char *what, const char *line, size_t len)
{
	fprintf(stderr, "fuzz_prom_line: %s: %.*s\n", what, (int)(len > 300 ? 300 : len), line);
	abort();
}

static int name_char(int c, int first)
{
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
}

/* One sample line: name{label="value",...} value */
static void check_sample(const char *p, size_t len)
{
	const char *e = p + len, *q = p;
	char num[64];

	if (q == e || !name_char(*q, 1))
		fail("bad metric name", p, len);
	while (q < e && name_char(*q, 0))
		q++;
	if (q < e && *q == '{') {
		q++;
		for (;;) {
			if (!name_char(*q, 1))
				fail("bad label name", p, len);
			while (q < e && name_char(*q, 0))
				q++;
			if (e - q < 2 || q[0] != '=' || q[1] != '"')
				fail("label without =\"", p, len);
			q += 2;
			while (q < e && *q != '"') {
				if (*q == '\\') {
					if (q + 1 >= e || (q[1] != '\\' && q[1] != '"' && q[1] != 'n'))
						fail("bad escape", p, len);
					q++;
				}
				q++;
			}
			if (q >= e)
				fail("unterminated label value", p, len);
			q++;
			if (q < e && *q == ',') {
				q++;
				continue;
			}
			if (q < e && *q == '}') {
				q++;
				break;
			}
			fail("bad label separator", p, len);
		}
	}
	if (q >= e || *q != ' ')
		fail("no space before the value", p, len);
	q++;
	if ((size_t)(e - q) >= sizeof(num) || q == e)
		fail("bad value length", p, len);
	memcpy(num, q, (size_t)(e - q));
	num[e - q] = '\0';
	if (strcmp(num, "NaN") && strcmp(num, "+Inf") && strcmp(num, "-Inf")) {
		char *end;
		double v = strtod(num, &end);

		if (*end || !isfinite(v) || strchr(num, ' '))
			fail("bad value", p, len);
	}
}

static void check_exposition(const struct expo_body *b, int om)
{
	const char *p = b->data, *end = b->data + b->len;

	if (b->len && end[-1] != '\n')
		fail("no final newline", p, b->len);
	if (strlen(b->data) != b->len)
		fail("NUL inside the exposition", p, b->len);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)(nl - p);

		if (!strncmp(p, "# HELP ", 7) || !strncmp(p, "# TYPE ", 7) || (om && !strncmp(p, "# UNIT ", 7)))
			;
		else if (om && len == 5 && !strncmp(p, "# EOF", 5)) {
			if (nl + 1 != end)
				fail("# EOF before the end", p, len);
		} else
			check_sample(p, len);
		p = nl + 1;
	}
	if (om && (b->len < 6 || strcmp(end - 6, "# EOF\n")))
		fail("OpenMetrics without # EOF", b->data, b->len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stream s;
	struct prom_expo *e;
	const struct expo_body *gz;
	json_t *report, *bie;
	enum stream_bad why;
	char err[512];
	size_t len;
	int fd, rc;

	if (!store) {
		log_init("fuzz", LOG_LVL_SILENT);
		/* --passthrough on: a runtime entry's "exposition" goes through expo_parse and prom_pass too */
		store = prom_store_new(
			&(struct prom_store_opts){ .node_name = "fuzz-node", .version = "0", .pass = prom_pass_new() });
	}
	fd = memfd_create("fuzz", 0);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	stream_init(&s, fd, "fuzz", 4096);
	while ((rc = stream_next(&s, &report, &len, &why, err, sizeof(err))) != 0 && rc != -2) {
		if (rc == 1) {
			prom_store_report(store, report, "fuzz:1", now_ns, now_ns);
			json_decref(report);
		} else {
			prom_store_bad_line(store, why);
		}
	}
	stream_free(&s);
	close(fd);
	now_ns += NS_PER_S;
	prom_store_sweep(store, now_ns);
	e = prom_store_render(store, now_ns, now_ns);
	check_exposition(&e->body[EXPO_TEXT], 0);
	check_exposition(&e->body[EXPO_OPENMETRICS], 1);
	bie = json_loadb(e->bie.data, e->bie.len, 0, NULL);
	if (!json_is_object(bie))
		fail("BIE body is not a JSON object", e->bie.data, e->bie.len);
	json_decref(bie);
	if ((now_ns / NS_PER_S) % 64 == 0 && prom_expo_gzip(e, EXPO_TEXT, &gz) != 0)
		fail("gzip failed", "", 0);
	prom_expo_unref(e);
	return 0;
}
