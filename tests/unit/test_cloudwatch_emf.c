/* SPDX-License-Identifier: MIT */
/*
 * EMF events (sinks/cloudwatch/cloudwatch_emf.c): grouping by time and dimensions, the
 * 100-metrics limit, a repeated metric in its own event, JSON escaping, and
 * the exact text of one event.
 */
#include "../../sinks/cloudwatch/cloudwatch_emf.h"
#include "../../sinks/cloudwatch/cloudwatch_queue.h"
#include "tap.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

int main(void)
{
	struct cw_series *s[250], *q;
	struct cw_datum d[260];
	struct cw_point p = { .unit = "Count", .ndims = 2 };
	char name[32];
	struct buf b;
	int ev;

	p.dims[0] = (struct cw_dim){ "InstanceId", "i-1" };
	p.dims[1] = (struct cw_dim){ "RuntimeTag", "a\"b\\c" };
	for (int i = 0; i < 250; i++) {
		snprintf(name, sizeof(name), "M%03d", i);
		p.name = name;
		s[i] = cw_series_new(&p);
		d[i] = (struct cw_datum){ s[i], i + 0.25, 1795219200000LL };
	}
	buf_init(&b, 1 << 24);
	ev = cw_emf_render(&b, "NS", 60, d, 250);
	is_int(ev, 3, "250 metrics with the same dimensions and time: 3 events");
	{
		json_error_t je;
		char *line = strtok(b.data, "\n");
		int sizes[3], k = 0, valid = 1;

		while (line && k < 3) {
			json_t *j = json_loads(line, 0, &je), *m;

			m = json_object_get(json_array_get(json_object_get(json_object_get(j, "_aws"), "CloudWatchMetrics"), 0),
					    "Metrics");
			sizes[k++] = (int)json_array_size(m);
			valid &= j && !strcmp(json_string_value(json_object_get(j, "RuntimeTag")), "a\"b\\c");
			json_decref(j);
			line = strtok(NULL, "\n");
		}
		ok(k == 3 && sizes[0] == 100 && sizes[1] == 100 && sizes[2] == 50, "100, 100 and 50 metrics");
		ok(valid, "valid JSON, dimension values escaped and intact");
	}

	/* The same metric twice at one time: a second event. A different time: another. */
	buf_reset(&b);
	d[0] = (struct cw_datum){ s[0], 1, 1000 };
	d[1] = (struct cw_datum){ s[0], 2, 1000 };
	d[2] = (struct cw_datum){ s[1], 3, 1000 };
	d[3] = (struct cw_datum){ s[1], 4, 2000 };
	ev = cw_emf_render(&b, "NS", 1, d, 4);
	is_int(ev, 3, "a repeated metric and another time: 3 events");
	is_int(count_lines(b.data), 3, "one a line");
	is_str(strtok(b.data, "\n"),
	       "{\"_aws\":{\"Timestamp\":1000,\"CloudWatchMetrics\":[{\"Namespace\":\"NS\",\"Dimensions\":[[\"InstanceId\","
	       "\"RuntimeTag\"]],\"Metrics\":[{\"Name\":\"M000\",\"Unit\":\"Count\",\"StorageResolution\":1},{\"Name\":"
	       "\"M001\",\"Unit\":\"Count\",\"StorageResolution\":1}]}]},\"InstanceId\":\"i-1\",\"RuntimeTag\":"
	       "\"a\\\"b\\\\c\",\"M000\":1.0,\"M001\":3.0}",
	       "the first event, exactly");

	/* No dimensions at all. */
	p.ndims = 0;
	p.name = "Lonely";
	q = cw_series_new(&p);
	buf_reset(&b);
	d[0] = (struct cw_datum){ q, 1e-05, 5 };
	cw_emf_render(&b, "NS", 60, d, 1);
	is_str(b.data,
	       "{\"_aws\":{\"Timestamp\":5,\"CloudWatchMetrics\":[{\"Namespace\":\"NS\",\"Dimensions\":[[]],\"Metrics\":"
	       "[{\"Name\":\"Lonely\",\"Unit\":\"Count\"}]}]},\"Lonely\":1e-05}\n",
	       "no dimensions: an empty dimension set");
	buf_free(&b);
	cw_series_free(q);
	for (int i = 0; i < 250; i++)
		cw_series_free(s[i]);
	return done_testing();
}
