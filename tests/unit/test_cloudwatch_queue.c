/* SPDX-License-Identifier: MIT */
/*
 * The datum queue (sinks/cloudwatch/cloudwatch_queue.c): order, the bound dropping the
 * oldest and counting it, series shared between datums and freed with the
 * last one.
 */
#include "../../sinks/cloudwatch/cloudwatch_queue.h"
#include "tap.h"

#include <errno.h>
#include <stdio.h>

static struct cw_point pt(const char *name, const char *core, double v, int64_t ts)
{
	struct cw_point p = { .name = name, .unit = "Count", .ndims = 1, .value = v, .ts_ms = ts };

	p.dims[0] = (struct cw_dim){ "NeuronCore", core };
	return p;
}

int main(void)
{
	struct cw_queue q;
	struct cw_datum d[16];
	struct cw_point p;
	char core[8];
	size_t n;
	int dropped = 0;

	cw_queue_init(&q, 3);
	for (int i = 0; i < 5; i++) {
		snprintf(core, sizeof(core), "%d", i % 2);
		p = pt("M", core, i, 1000 + i);
		dropped += cw_queue_push(&q, &p);
	}
	is_int(dropped, 2, "bound 3, five pushes: two dropped");
	is_int(q.dropped, 2, "and counted");
	is_int(q.len, 3, "three queued");
	is_int(q.nseries, 2, "two series (NeuronCore 0 and 1)");
	n = cw_queue_take(&q, d, 16);
	is_int(n, 3, "take returns them");
	ok(d[0].value == 2 && d[1].value == 3 && d[2].value == 4, "the newest three, oldest first");
	ok(d[0].series == d[2].series && d[0].series != d[1].series, "datums of a series share it");
	is_int(d[0].series->refs, 2, "each datum holds a reference");
	is_str(d[1].series->enc_dims[0][0], "NeuronCore", "encoded strings are ready");
	for (size_t i = 0; i < n; i++)
		cw_queue_release(&q, &d[i]);
	is_int(q.nseries, 0, "the last release frees the series");

	/* A name past CloudWatch's limits is refused, not queued. */
	{
		char longname[300];

		memset(longname, 'x', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		p = pt(longname, "0", 1, 1);
		is_int(cw_queue_push(&q, &p), -EINVAL, "a 299-byte metric name is refused");
		p = pt("M", "", 1, 1);
		is_int(cw_queue_push(&q, &p), -EINVAL, "an empty dimension value is refused");
		is_int(q.len, 0, "nothing queued");
	}

	/* Growth past the first ring and through many series. */
	cw_queue_free(&q);
	cw_queue_init(&q, 100000);
	for (int i = 0; i < 50000; i++) {
		snprintf(core, sizeof(core), "%d", i % 700);
		p = pt("M", core, i, i);
		cw_queue_push(&q, &p);
	}
	is_int(q.len, 50000, "50000 queued");
	is_int(q.nseries, 700, "700 series");
	n = cw_queue_take(&q, d, 1);
	is_int((long long)d[0].value, 0, "still oldest first after growing");
	cw_queue_release(&q, &d[0]);
	cw_queue_free(&q);
	return done_testing();
}
