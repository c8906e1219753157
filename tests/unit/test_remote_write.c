/* SPDX-License-Identifier: MIT */
/*
 * accel-remote-write's encoder (sinks/remote-write/remote-write_enc.c): what it packs
 * and compresses is snappy-uncompressed and protobuf-c-unpacked here and
 * compared with what went in: labels sorted by name with __name__ and the
 * external labels (a series' own label wins), each series once with its
 * samples in order, metadata with type, help and unit; accel-prom's label
 * sets parsed back with their escapes; bad external labels refused. Also
 * the transport's pure parts: the outcome of each status, Retry-After, the
 * backoff's bounds.
 */
#include "../../common/series/prom_store.h"
#include "../../sinks/remote-write/remote-write_enc.h"
#include "../../sinks/remote-write/remote-write_http.h"
#include "../../sinks/remote-write/remote-write_prompb.pb-c.h"
#include "tap.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct family F_G = { "accelerator_memory_used_bytes", "Device memory in use", METRIC_GAUGE, "bytes" };
static const struct family F_C = { "execution_status_total", "Executions, by status", METRIC_COUNTER, "count" };

/* Uncompress and unpack a request; NULL on failure. */
static Prometheus__WriteRequest *decode(const struct buf *b)
{
	struct buf raw;
	Prometheus__WriteRequest *r = NULL;

	buf_init(&raw, 1 << 26);
	if (rw_unsnappy(b->data, b->len, &raw) == 0)
		r = prometheus__write_request__unpack(NULL, raw.len, (const uint8_t *)raw.data);
	buf_free(&raw);
	return r;
}

/* "name=value,..." of a series, in its order. */
static void labels_text(const Prometheus__TimeSeries *t, char *dst, size_t size)
{
	size_t n = 0;

	dst[0] = '\0';
	for (size_t i = 0; i < t->n_labels && n < size; i++)
		n += (size_t)snprintf(dst + n, size - n, "%s%s=%s", i ? "," : "", t->labels[i]->name,
				      t->labels[i]->value);
}

static void test_parse_labels(void)
{
	char pool[256];
	const char *names[8], *values[8];
	const char *s = "{a=\"x\\\"y\",b=\"1\\\\2\\n\",c=\"\"}";
	int n = prom_parse_labels(s, strlen(s), pool, sizeof(pool), names, values, 8);

	is_int(n, 3, "three labels parsed");
	if (n == 3) {
		is_str(names[0], "a", "first name");
		is_str(values[0], "x\"y", "\\\" unescaped");
		is_str(values[1], "1\\2\n", "\\\\ and \\n unescaped");
		is_str(values[2], "", "empty value");
	}
	is_int(prom_parse_labels("", 0, pool, sizeof(pool), names, values, 8), 0, "no labels: \"\"");
	is_int(prom_parse_labels("{a=x}", 5, pool, sizeof(pool), names, values, 8), -EINVAL, "unquoted value refused");
	is_int(prom_parse_labels("{a=\"x", 5, pool, sizeof(pool), names, values, 8), -EINVAL, "unterminated refused");
	is_int(prom_parse_labels("{a=\"1\",b=\"2\"}", 13, pool, sizeof(pool), names, values, 1), -E2BIG,
	       "more labels than max: -E2BIG");
}

#define DEV "{device=\"0\",device_type=\"nvidia\",uuid=\"\"}"
#define RT "{runtime_tag=\"app\",status_type=\"completed\"}"

static void test_encode(void)
{
	const char *ext[] = { "instance=node-1", "job=accel-monitor", "runtime_tag=ext-loses", "zone=z1" };
	char err[256], text[512];
	struct rw_enc *e = rw_enc_new(ext, 4, err, sizeof(err));
	struct buf out;
	uint32_t a, b, c, again;
	size_t raw = 0, est;
	Prometheus__WriteRequest *r;

	buf_init(&out, 1 << 26);
	ok(e != NULL, "encoder made");
	if (!e)
		return;
	is_int(rw_enc_series(e, &F_G, DEV, strlen(DEV), &a), 0, "series a");
	is_int(rw_enc_series(e, &F_C, RT, strlen(RT), &b), 0, "series b");
	is_int(rw_enc_series(e, &F_G, "", 0, &c), 0, "series c without labels");
	is_int(rw_enc_series(e, &F_G, DEV, strlen(DEV), &again), 0, "series a again");
	is_int(again, a, "interned: the same id");
	is_int(rw_enc_series(e, &F_G, "{bad", 4, &again), -EINVAL, "a label set not in accel-prom's form refused");
	rw_enc_add(e, a, 1000, 5);
	rw_enc_add(e, b, 1000, 118);
	rw_enc_add(e, a, 2000, 6.5);
	rw_enc_add(e, c, 2000, -0.25);
	rw_enc_add(e, b, 2000, 239);
	is_int(rw_enc_pending(e), 5, "five samples pending");
	est = rw_enc_pending_bytes(e);
	is_int(rw_enc_cost(e, a), 22, "cost of one more sample of a series already in the batch: a Sample");
	is_int(rw_enc_flush(e, &out, &raw), 0, "flushed");
	ok(est >= raw && est <= raw + raw / 4, "the size estimate bounds the packed request closely (%zu for %zu)", est,
	   raw);
	ok(rw_enc_cost(e, a) > 22 + 100, "cost of a series new to the batch includes its labels (%zu)", rw_enc_cost(e, a));
	is_int(rw_enc_pending(e), 0, "batch emptied");
	ok(out.len > 0 && out.len < raw + 32, "compressed %zu bytes from %zu", out.len, raw);
	r = decode(&out);
	ok(r != NULL, "snappy + protobuf-c decode what was encoded");
	if (r) {
		is_int(r->n_timeseries, 3, "three series, each once");
		is_int(r->n_metadata, 0, "no metadata in a data request");
		labels_text(r->timeseries[0], text, sizeof(text));
		is_str(text, "__name__=accelerator_memory_used_bytes,device=0,device_type=nvidia,instance=node-1,"
			     "job=accel-monitor,runtime_tag=ext-loses,zone=z1",
		       "series a: sorted, __name__ first, external labels added, the empty uuid left out");
		labels_text(r->timeseries[1], text, sizeof(text));
		is_str(text, "__name__=execution_status_total,instance=node-1,job=accel-monitor,runtime_tag=app,"
			     "status_type=completed,zone=z1",
		       "series b: its own runtime_tag wins over the external one");
		is_int(r->timeseries[0]->n_samples, 2, "series a: two samples");
		is_int(r->timeseries[0]->samples[0]->timestamp, 1000, "in order: 1000");
		is_int(r->timeseries[0]->samples[1]->timestamp, 2000, "then 2000");
		is_double(r->timeseries[0]->samples[1]->value, 6.5, 0, "value 6.5");
		is_double(r->timeseries[1]->samples[1]->value, 239, 0, "counter value 239");
		is_int(r->timeseries[2]->n_samples, 1, "series c: one sample");
		is_double(r->timeseries[2]->samples[0]->value, -0.25, 0, "value -0.25");
		prometheus__write_request__free_unpacked(r, NULL);
	}
	/* A zero value is left out of the wire by proto3 and reads back as 0; NaN survives. */
	rw_enc_add(e, a, 3000, 0);
	rw_enc_add(e, c, 3000, NAN);
	is_int(rw_enc_flush(e, &out, NULL), 0, "second batch");
	r = decode(&out);
	ok(r && r->n_timeseries == 2, "second batch: two series");
	if (r && r->n_timeseries == 2) {
		is_double(r->timeseries[0]->samples[0]->value, 0, 0, "0 reads back");
		ok(isnan(r->timeseries[1]->samples[0]->value), "NaN reads back");
	}
	if (r)
		prometheus__write_request__free_unpacked(r, NULL);

	is_int(rw_enc_nfamilies(e), 2, "two families seen");
	is_int(rw_enc_metadata(e, &out), 0, "metadata encoded");
	r = decode(&out);
	ok(r && r->n_metadata == 2 && r->n_timeseries == 0, "metadata request: two families, no series");
	if (r && r->n_metadata == 2) {
		Prometheus__MetricMetadata *g = r->metadata[0], *k = r->metadata[1];

		is_str(g->metric_family_name, "accelerator_memory_used_bytes", "gauge family");
		is_int(g->type, PROMETHEUS__METRIC_METADATA__METRIC_TYPE__GAUGE, "type GAUGE");
		is_str(g->help, "Device memory in use", "help");
		is_str(g->unit, "bytes", "unit bytes (the name ends in it)");
		is_str(k->metric_family_name, "execution_status_total", "counter family");
		is_int(k->type, PROMETHEUS__METRIC_METADATA__METRIC_TYPE__COUNTER, "type COUNTER");
		is_str(k->unit, "", "no unit: the name does not end in _count");
	}
	if (r)
		prometheus__write_request__free_unpacked(r, NULL);
	buf_free(&out);
	rw_enc_free(e);
}

static void test_ext_labels(void)
{
	char err[256];
	const char *bad1[] = { "noequals" }, *bad2[] = { "1x=y" }, *bad3[] = { "__name__=x" };
	const char *twice[] = { "zone=a", "zone=b" };
	struct rw_enc *e;
	uint32_t id;
	struct buf out;
	Prometheus__WriteRequest *r;
	char text[256];

	ok(!rw_enc_new(bad1, 1, err, sizeof(err)), "NAME=VALUE needed: %s", err);
	ok(!rw_enc_new(bad2, 1, err, sizeof(err)), "a name starting with a digit refused: %s", err);
	ok(!rw_enc_new(bad3, 1, err, sizeof(err)), "__ names refused: %s", err);
	e = rw_enc_new(twice, 2, err, sizeof(err));
	buf_init(&out, 1 << 20);
	rw_enc_series(e, &F_G, "", 0, &id);
	rw_enc_add(e, id, 1, 1);
	rw_enc_flush(e, &out, NULL);
	r = decode(&out);
	if (r) {
		labels_text(r->timeseries[0], text, sizeof(text));
		is_str(text, "__name__=accelerator_memory_used_bytes,zone=b", "a later --label replaces an earlier one");
		prometheus__write_request__free_unpacked(r, NULL);
	} else {
		ok(0, "decoded");
	}
	buf_free(&out);
	rw_enc_free(e);
}

static void test_http_rules(void)
{
	is_int(rw_classify(200), RW_SENT, "200 sent");
	is_int(rw_classify(204), RW_SENT, "204 sent");
	is_int(rw_classify(0), RW_RETRY, "no answer: retry");
	is_int(rw_classify(500), RW_RETRY, "500 retry");
	is_int(rw_classify(503), RW_RETRY, "503 retry");
	is_int(rw_classify(429), RW_RETRY, "429 retry");
	is_int(rw_classify(400), RW_DROP, "400 dropped");
	is_int(rw_classify(404), RW_DROP, "404 dropped");
	is_int(rw_classify(413), RW_DROP, "413 dropped");
}

/* A histogram family's series (rw_enc_series_sub): name with its suffix, le among the labels; metadata histogram. */
static void test_histogram(void)
{
	static const struct family F_H = { "accel_model_request_duration_seconds", "Request time", METRIC_HISTOGRAM,
					   "seconds" };
	char err[256], text[512];
	struct rw_enc *e = rw_enc_new(NULL, 0, err, sizeof(err));
	struct buf out;
	uint32_t b, s, c, again;
	Prometheus__WriteRequest *r;

	buf_init(&out, 1 << 26);
	if (!ok(e != NULL, "encoder made"))
		return;
	is_int(rw_enc_series_sub(e, &F_H, "_bucket", "{model=\"m\",le=\"0.5\"}", 20, &b), 0, "a bucket");
	is_int(rw_enc_series_sub(e, &F_H, "_sum", "{model=\"m\"}", 11, &s), 0, "its sum");
	is_int(rw_enc_series_sub(e, &F_H, "_count", "{model=\"m\"}", 11, &c), 0, "its count");
	ok(b != s && s != c, "three series");
	is_int(rw_enc_series_sub(e, &F_H, "_sum", "{model=\"m\"}", 11, &again), 0, "the sum again");
	is_int(again, s, "... the same id");
	rw_enc_add(e, b, 1000, 3);
	rw_enc_add(e, s, 1000, 1.25);
	rw_enc_add(e, c, 1000, 4);
	is_int(rw_enc_flush(e, &out, NULL), 0, "flushed");
	r = decode(&out);
	ok(r && r->n_timeseries == 3, "three series sent");
	if (r && r->n_timeseries == 3) {
		labels_text(r->timeseries[0], text, sizeof(text));
		is_str(text, "__name__=accel_model_request_duration_seconds_bucket,le=0.5,model=m",
		       "the bucket: name_bucket, le sorted among the labels");
		labels_text(r->timeseries[1], text, sizeof(text));
		is_str(text, "__name__=accel_model_request_duration_seconds_sum,model=m", "name_sum");
		labels_text(r->timeseries[2], text, sizeof(text));
		is_str(text, "__name__=accel_model_request_duration_seconds_count,model=m", "name_count");
		is_double(r->timeseries[1]->samples[0]->value, 1.25, 0, "the sum's value");
	}
	if (r)
		prometheus__write_request__free_unpacked(r, NULL);
	is_int(rw_enc_nfamilies(e), 1, "one family for the three");
	is_int(rw_enc_metadata(e, &out), 0, "metadata encoded");
	r = decode(&out);
	ok(r && r->n_metadata == 1, "one metadata entry");
	if (r && r->n_metadata == 1) {
		is_str(r->metadata[0]->metric_family_name, "accel_model_request_duration_seconds", "the family's name");
		is_int(r->metadata[0]->type, PROMETHEUS__METRIC_METADATA__METRIC_TYPE__HISTOGRAM, "type HISTOGRAM");
		is_str(r->metadata[0]->unit, "seconds", "unit seconds");
	}
	if (r)
		prometheus__write_request__free_unpacked(r, NULL);
	buf_free(&out);
	rw_enc_free(e);
}

int main(void)
{
	test_parse_labels();
	test_encode();
	test_histogram();
	test_ext_labels();
	test_http_rules();
	return done_testing();
}
