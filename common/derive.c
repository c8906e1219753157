/* SPDX-License-Identifier: MIT */
/*
 * The reader's side of format 3: see derive.h. Runs once per report in
 * every sink (common/sink.c), before the rows and the DCGM mapping read
 * it; the producer no longer pays for the sums, and the line no longer
 * carries them (on bench/node_bench.py's node, 112 kB of a 400 kB line).
 */
#include "derive.h"

#include "util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const report_pod_names[3] = { "pod", "namespace", "qos" };

int report_format_version(json_t *report)
{
	json_t *mon = json_object_get(report, "monitor");
	json_t *v = json_object_get(mon, "format_version");

	if (!json_is_object(mon))
		return 0;
	return json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) < 1000
		       ? (int)json_integer_value(v) : 1;
}

/* A pid's key text: 1 for a positive integral number (as the producer writes pids), else 0. */
static int pid_text(json_t *p, char buf[24])
{
	double d;

	if (json_is_integer(p) && json_integer_value(p) > 0) {
		snprintf(buf, 24, "%lld", (long long)json_integer_value(p));
		return 1;
	}
	d = json_is_real(p) ? json_real_value(p) : 0;
	if (d > 0 && d < 0x1p53 && d == (double)(int64_t)d) {
		snprintf(buf, 24, "%lld", (long long)d);
		return 1;
	}
	return 0;
}

json_t *report_pid_index(json_t *ids)
{
	json_t *pidx, *c, *p;
	const char *cid;
	size_t i;

	if (!ids)
		return NULL;
	pidx = json_object();
	json_object_foreach(json_object_get(ids, "containers"), cid, c)
		json_array_foreach(json_object_get(c, "pids"), i, p) {
			char buf[24];

			if (pid_text(p, buf))
				json_object_set_new(pidx, buf, json_string(cid));
		}
	return pidx;
}

/* Each identity of table (ids' "containers" or "processes") without its pod's names takes them from pods. */
static void names_from_pods(json_t *table, json_t *pods)
{
	const char *key;
	json_t *o;

	json_object_foreach(table, key, o) {
		const char *uid = json_string_value(json_object_get(o, "pod_uid"));
		json_t *pod = uid ? json_object_get(pods, uid) : NULL;

		if (!json_is_object(o) || !json_is_object(pod))
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(report_pod_names); i++) {
			json_t *v = json_object_get(pod, report_pod_names[i]);

			if (json_is_string(v) && !json_object_get(o, report_pod_names[i]))
				json_object_set(o, report_pod_names[i], v);
		}
	}
}

/* Add v (a number) to o[key]: an integer while both are and the sum fits, else a real. */
static void add_number(json_t *o, const char *key, json_t *v)
{
	json_t *cur = json_object_get(o, key);

	if (!json_is_number(v))
		return;
	if (!cur) {
		json_object_set_new(o, key, json_is_integer(v) ? json_integer(json_integer_value(v))
							 : json_real(json_real_value(v)));
	} else if (json_is_integer(cur) && json_is_integer(v) && json_integer_value(v) >= 0 &&
		   json_integer_value(cur) <= INT64_MAX - json_integer_value(v)) {
		json_integer_set(cur, json_integer_value(cur) + json_integer_value(v));
	} else if (json_is_real(cur)) {
		json_real_set(cur, json_real_value(cur) + json_number_value(v));
	} else {
		json_object_set_new(o, key, json_real(json_number_value(cur) + json_number_value(v)));
	}
}

/* The sum sums[key], made (with its "pids") when missing. */
static json_t *sum_of(json_t *sums, const char *key)
{
	json_t *a = json_object_get(sums, key);

	if (!a) {
		a = json_object();
		json_object_set_new(a, "pids", json_array());
		json_object_set_new(sums, key, a);
	}
	return a;
}

/* Process pid's figure fig into sum a: its pid, and the number under num_key or each engine's percent. */
static void sum_add(json_t *a, long pid, json_t *fig, const char *num_key)
{
	const char *k;
	json_t *v, *eng;

	json_array_append_new(json_object_get(a, "pids"), json_integer(pid));
	if (json_is_number(fig)) {
		add_number(a, num_key, fig);
	} else if (json_is_object(fig)) {
		if (!(eng = json_object_get(a, "engines"))) {
			eng = json_object();
			json_object_set_new(a, "engines", eng);
		}
		json_object_foreach(fig, k, v)
			add_number(eng, k, v);
	}
}

/* A device object's (or MIG device's) "pods" and "containers" sums, from its "processes". */
static void device_sums(json_t *dev, json_t *ids, json_t *pidx)
{
	json_t *procs = json_object_get(dev, "processes"), *fig, *pods, *ctrs;
	/* device_power's processes are joules (the split's "energy_attribution" marks it), the others' bytes */
	const char *num_key = json_object_get(dev, "energy_attribution") ? "energy_joules" : "memory_bytes";
	const char *key;

	if (!json_is_object(procs) || json_object_get(dev, "pods") || json_object_get(dev, "containers"))
		return;
	pods = json_object();
	ctrs = json_object();
	json_object_foreach(procs, key, fig) {
		char *end;
		long pid = strtol(key, &end, 10);
		const char *cid = json_string_value(json_object_get(pidx, key)), *uid;
		json_t *ident;

		if (*end || end == key || pid <= 0 || pid > 0x3fffffff)
			continue;
		ident = cid ? json_object_get(json_object_get(ids, "containers"), cid)
			    : json_object_get(json_object_get(ids, "processes"), key);
		if ((uid = json_string_value(json_object_get(ident, "pod_uid"))))
			sum_add(sum_of(pods, uid), pid, fig, num_key);
		if (cid && ident)
			sum_add(sum_of(ctrs, cid), pid, fig, num_key);
	}
	if (json_object_size(pods))
		json_object_set(dev, "pods", pods);
	if (json_object_size(ctrs))
		json_object_set(dev, "containers", ctrs);
	json_decref(pods);
	json_decref(ctrs);
}

void report_derive(json_t *report)
{
	json_t *ids = json_object_get(report, "identities"), *pidx, *ent, *g, *dev, *mig;
	const char *k, *dk, *mk;
	size_t i;

	if (report_format_version(report) < 3 || !json_is_object(ids))
		return;
	names_from_pods(json_object_get(ids, "containers"), json_object_get(ids, "pods"));
	names_from_pods(json_object_get(ids, "processes"), json_object_get(ids, "pods"));
	pidx = report_pid_index(ids);
	json_array_foreach(json_object_get(report, "device_data"), i, ent)
		json_object_foreach(json_object_get(ent, "report"), k, g)
			json_object_foreach(json_object_get(g, "devices"), dk, dev) {
				if (!json_is_object(dev))
					continue;
				device_sums(dev, ids, pidx);
				json_object_foreach(json_object_get(dev, "mig_devices"), mk, mig)
					if (json_is_object(mig))
						device_sums(mig, ids, pidx);
			}
	json_decref(pidx);
}
