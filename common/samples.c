/* SPDX-License-Identifier: MIT */
/*
 * The report -> samples interpreter: it compiles every block's rules
 * (common/rows.h) once per mapper and walks each report with them; see
 * samples.h.
 *
 * A rule's path is a small pattern walked inside one metric group:
 *   name        descend into that key
 *   *           every key of an object (the key becomes a label)
 *   *[f,g]      the same, and the string fields f and g of each member
 *               become labels too (cAdvisor's names); a rule with this
 *               step leaves out every captured label that is empty
 *   [] / [f]    every element of an array (its index, or its field f, becomes a label)
 *   {a,b}       each listed key that is present (the key becomes a label)
 *   {a+b}       the sum of the listed keys (no label)
 *   #           the number of members of the object or array
 *   1           the constant 1 (info families: the labels carry the data)
 * Captured values fill the rule's label names in order. A null value is
 * "not measured" and yields nothing; any other non-number is a bad value.
 *
 * The rules apply in the registry's order (map_rows[], common/all_rows.c). A mapper indexes
 * them by group once, so a report's group finds its rules without a scan of
 * the whole table; within a group they keep that order.
 */
#include "derive.h"
#include "samples_int.h"
#include "timeutil.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const report_format_names[3] = { "accel-monitor", "neuron-monitor 2.x", "neuron-monitor 2020" };

/* ---- walking ------------------------------------------------------------- */

struct walk {
	const struct map_rule *rule;  /* w->c->rule */
	const struct compiled *c;
	const struct map_cb *cb;
	struct sample s;              /* labels filled up to base_labels */
	size_t base_labels;
	const char *caps[CAPS_MAX];   /* borrowed from the report, or capbuf */
	char capbuf[CAPS_MAX][NUM_TEXT_MAX]; /* a number's text: always fits */
	size_t ncaps;
	const char *where;            /* JSON path of the group, for messages */
	const char *trail[STEP_MAX + 2];
	char trailbuf[STEP_MAX + 2][NUM_TEXT_MAX];
	size_t ntrail;
	struct buf *entity;           /* a device's entity, "type:key": any length (the mapper's) */
	json_t *dev;                  /* the device object a device rule walks, else NULL */
	json_t *ids;                  /* the report's "identities" (format 2), else NULL */
	json_t *pidx;                 /* and its index of contained processes (report_pid_index), or NULL */
	json_t *ident;                /* an ident rule: the pod's or container's object its first "*" reached */
	json_t *anchor;               /* the object the last "*" reached (a weight is found from it), or NULL */
	size_t anchor_trail;          /* the length of trail[] at the anchor (messages about a weight) */
	const char *ident_key;        /* and its key (the pod UID or the container id) */
	struct sample_hist hist;      /* a histogram rule's sample's buckets, in the two arrays below */
	double hist_le[SAMPLE_HIST_MAX_BOUNDS], hist_counts[SAMPLE_HIST_MAX_BOUNDS + 1];
};

static void bad(struct walk *w, const char *leaf, const char *why)
{
	char path[512];
	size_t n = (size_t)snprintf(path, sizeof(path), "%s", w->where);

	for (size_t i = 0; i < w->ntrail && n < sizeof(path); i++)
		n += (size_t)snprintf(path + n, sizeof(path) - n, "%s%s", w->trail[i][0] == '[' ? "" : ".", w->trail[i]);
	if (leaf && n < sizeof(path))
		snprintf(path + n, sizeof(path) - n, ".%s", leaf);
	if (w->cb->bad_value)
		w->cb->bad_value(path, why, w->cb->ud);
}

static const char *kind_of(const json_t *v)
{
	return json_is_string(v) ? "a string" : json_is_object(v) ? "an object" : json_is_array(v) ? "an array"
	       : json_is_boolean(v) ? "a boolean" : "null";
}

/* 1: *out set; 0: absent (missing or null); -1: wrong type (reported). */
static int number(struct walk *w, json_t *v, const char *leaf, double *out)
{
	if (!v || json_is_null(v))
		return 0;
	if (w->rule->scale == BOOLEAN && json_is_boolean(v)) {
		*out = json_is_true(v);
		return 1;
	}
	if (!json_is_number(v) || w->rule->scale == BOOLEAN) {
		char why[64];

		snprintf(why, sizeof(why), "expected %s, got %s", w->rule->scale == BOOLEAN ? "a boolean" : "a number",
			 json_is_number(v) ? "a number" : kind_of(v));
		bad(w, leaf, why);
		return -1;
	}
	*out = json_number_value(v);
	return 1;
}

/*
 * The text of a number used as a label value; 0 when v is not a number. An
 * integral real (an integer a reader decoded as a real, such as one >= 2^63)
 * is written like an integer where it fits int64, else with %.17g: never
 * cast out of range.
 */
static int number_text(const json_t *v, char buf[NUM_TEXT_MAX])
{
	double d;

	if (json_is_integer(v)) {
		snprintf(buf, NUM_TEXT_MAX, "%lld", (long long)json_integer_value(v));
		return 1;
	}
	if (!json_is_real(v))
		return 0;
	d = json_real_value(v);
	if (d == trunc(d) && d >= -0x1p63 && d < 0x1p63)
		snprintf(buf, NUM_TEXT_MAX, "%lld", (long long)d);
	else
		snprintf(buf, NUM_TEXT_MAX, "%.17g", d);
	return 1;
}

size_t sample_le_text(double le, char dst[32])
{
	size_t n = double_text(le, dst);

	if (isfinite(le) && !strpbrk(dst, ".e") && n + 2 < 32) {
		memcpy(dst + n, ".0", 3);
		n += 2;
	}
	return n;
}

static const char *str_or(json_t *o, const char *key, const char *dflt);

/*
 * containers: append the labels identity object o gives (NULL: none) to
 * labels[n..], as ident_label_rows says (common/all_rows.c); kind and key
 * are the sum's (IDENT_POD and its UID, IDENT_CONTAINER and its id) when o
 * is a pod's or container's, else IDENT_NONE and NULL. Returns the new count.
 */
static size_t ident_labels(json_t *o, enum map_ident kind, const char *key, struct label *labels, size_t n)
{
	if (!json_is_object(o))
		return n;
	for (size_t i = 0; i < ident_label_count; i++) {
		const struct ident_label *r = &ident_label_rows[i];
		const char *v;

		if (kind != IDENT_NONE && r->not_for == kind)
			continue;
		v = str_or(o, r->field, "");
		if (!*v && r->key_of != IDENT_NONE && r->key_of == kind)
			v = key;
		else if (!*v && r->fallback)
			v = str_or(o, r->fallback, "");
		if (*v)
			labels[n++] = (struct label){ r->label, v };
	}
	return n;
}

/*
 * containers: the identity object (borrowed; NULL: none) of process pid
 * (its decimal text) of device object dev, *cid its container id when the
 * identity is a container's in format 2 (else NULL: the identity has its
 * own "id"): format 1's dev."process_containers" entry when dev has that,
 * else the container whose "pids" has it (pidx, the report's index), else
 * ids."processes"' entry.
 */
static json_t *process_identity(json_t *ids, json_t *pidx, json_t *dev, const char *pid, const char **cid)
{
	json_t *pc = json_object_get(dev, "process_containers"), *e;

	*cid = NULL;
	if (pc) /* format 1: the device's own copy */
		return json_object_get(pc, pid);
	if ((e = json_object_get(pidx, pid))) {
		*cid = json_string_value(e);
		return json_object_get(json_object_get(ids, "containers"), *cid);
	}
	return json_object_get(json_object_get(ids, "processes"), pid);
}

json_t *report_sum_identity(json_t *ids, enum map_ident kind, const char *key, json_t *sum)
{
	json_t *o = json_object_get(json_object_get(ids, kind == IDENT_POD ? "pods" : "containers"), key);

	return json_is_object(o) ? o : sum;
}

static void emit(struct walk *w, double v)
{
	const struct compiled *c = w->c;
	size_t n = w->base_labels;

	if (w->rule->clamp && v > w->rule->clamp)
		v = w->rule->clamp;
	if (w->rule->scale == PERCENT)
		v = v / 100.0;
	else if (w->rule->scale && w->rule->scale != BOOLEAN)
		v *= w->rule->scale;
	/*
	 * A finite reading whose base-unit value is not (1e308 MHz in hertz, a sum
	 * past DBL_MAX): a bad value for every sink, never "inf" in a CSV cell.
	 */
	if (!isfinite(v)) {
		bad(w, NULL, "out of range once converted to base units");
		return;
	}
	/* compile_rule proved that every capture and the fixed label fit (rule_max_labels). */
	for (size_t i = 0; i < w->ncaps && i < c->ncaps; i++)
		if (!c->drop_empty || w->caps[i][0])
			w->s.labels[n++] = (struct label){ c->capnames[i], w->caps[i] };
	if (c->fixed_name)
		w->s.labels[n++] = (struct label){ c->fixed_name, c->fixed_value };
	if (w->ident)
		n = ident_labels(report_sum_identity(w->ids, w->rule->ident, w->ident_key, w->ident), w->rule->ident,
				 w->ident_key, w->s.labels, n);
	else if (c->pid_cap >= 0 && (size_t)c->pid_cap < w->ncaps && w->dev) {
		const char *cid;
		json_t *o = process_identity(w->ids, w->pidx, w->dev, w->caps[c->pid_cap], &cid);

		/* a container's identity in the table is keyed by its id: the key is its "id" */
		n = ident_labels(o, cid ? IDENT_CONTAINER : IDENT_NONE, cid, w->s.labels, n);
	}
	w->s.nlabels = n;
	w->s.fam = w->c->fam;
	w->s.value = v;
	w->cb->sample(&w->s, w->cb->ud);
}

/* The n numbers of array a into out, each finite (and >= 0 with nonneg); else why is set. */
static int numbers(json_t *a, double *out, size_t n, int nonneg, const char **why)
{
	for (size_t k = 0; k < n; k++) {
		json_t *x = json_array_get(a, k);

		if (!json_is_number(x) || !isfinite(out[k] = json_number_value(x)) || (nonneg && out[k] < 0)) {
			*why = nonneg ? "expected counts: finite numbers >= 0" : "expected bounds: finite numbers";
			return -1;
		}
	}
	return 0;
}

/*
 * A histogram rule's object (docs/report-format.md §6.5, latency_histograms)
 * into w->hist: {"le": n finite bounds, ascending, at most
 * SAMPLE_HIST_MAX_BOUNDS; "counts": n + 1 finite numbers >= 0, the +Inf
 * bucket last; "sum": a finite number; "count": the counts' sum}. 1 when it
 * is one; 0 when absent or null; -1 when not (reported: nothing yielded).
 */
static int histogram(struct walk *w, json_t *v)
{
	json_t *le = json_object_get(v, "le"), *counts = json_object_get(v, "counts");
	json_t *sum = json_object_get(v, "sum"), *count = json_object_get(v, "count");
	const char *why = NULL;
	double total = 0;
	size_t n = json_array_size(le);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v) || !json_is_array(le) || !json_is_array(counts) || !json_is_number(sum) ||
	    !json_is_number(count))
		why = "expected a histogram: {\"le\": [...], \"counts\": [...], \"sum\": number, \"count\": number}";
	else if (n > SAMPLE_HIST_MAX_BOUNDS)
		why = "more than 512 bounds";
	else if (json_array_size(counts) != n + 1)
		why = "expected one count more than bounds (the +Inf bucket last)";
	else if (!numbers(le, w->hist_le, n, 0, &why) && !numbers(counts, w->hist_counts, n + 1, 1, &why))
		for (size_t k = 0; k < n && !why; k++)
			if (k && !(w->hist_le[k] > w->hist_le[k - 1]))
				why = "expected bounds in ascending order, each once";
	if (!why) {
		for (size_t k = 0; k <= n; k++)
			total += w->hist_counts[k];
		w->hist = (struct sample_hist){ n, w->hist_le, w->hist_counts, json_number_value(sum),
						json_number_value(count) };
		if (!isfinite(w->hist.sum) || !(fabs(total - w->hist.count) <= 1e-9 * fmax(1, total)))
			why = "expected a finite sum and a count that is the counts' sum";
	}
	if (why) {
		bad(w, NULL, why);
		return -1;
	}
	return 1;
}

static void walk(struct walk *w, json_t *node, size_t i);

static void descend(struct walk *w, json_t *child, size_t i, const char *trail, const char *cap)
{
	size_t nc = w->ncaps, nt = w->ntrail;

	if (cap && w->ncaps < CAPS_MAX)
		w->caps[w->ncaps++] = cap;
	if (w->ntrail < STEP_MAX + 2)
		w->trail[w->ntrail++] = trail;
	walk(w, child, i + 1);
	w->ncaps = nc;
	w->ntrail = nt;
}

/*
 * A weighted rule's value times the number at its weight path inside the
 * object the last "*" reached: 1 with *d updated; 0 when that is absent
 * (nothing to yield) or not a number (reported).
 */
static int weigh(struct walk *w, double *d)
{
	json_t *v = w->anchor;
	size_t nt = w->ntrail;
	double f;
	int rc;

	if (!w->c->nweight)
		return 1;
	for (size_t k = 0; k < w->c->nweight && v; k++)
		v = json_object_get(v, w->c->weight[k]);
	w->ntrail = w->anchor_trail; /* a message names the weight's own path */
	rc = number(w, v, w->rule->weight, &f);
	w->ntrail = nt;
	if (rc != 1)
		return 0;
	*d *= f;
	return 1;
}

static void walk(struct walk *w, json_t *node, size_t i)
{
	const struct step *st;
	const char *key;
	json_t *v;
	double d = 0, sum = 0;
	size_t k;

	if (i == w->c->nsteps) {
		if (w->c->fam->type == METRIC_HISTOGRAM) {
			if (histogram(w, node) == 1) {
				w->s.hist = &w->hist;
				emit(w, w->hist.count);
				w->s.hist = NULL;
			}
		} else if (number(w, node, NULL, &d) == 1 && weigh(w, &d)) {
			emit(w, d);
		}
		return;
	}
	st = &w->c->steps[i];
	switch (st->kind) {
	case ST_KEY:
		if (json_is_object(node) && (v = json_object_get(node, st->names[0])))
			descend(w, v, i, st->names[0], NULL);
		break;
	case ST_ANY:
		if (!json_is_object(node))
			break;
		if (w->rule->ident && !w->ident) {
			/* The pod's or container's object: its identity labels the samples, its key does not. */
			json_object_foreach(node, key, v) {
				w->ident = v;
				w->ident_key = key;
				descend(w, v, i, key, NULL);
				w->ident = NULL;
			}
			break;
		}
		json_object_foreach(node, key, v) {
			size_t nc = w->ncaps;
			json_t *anchor = w->anchor;
			size_t anchor_trail = w->anchor_trail;

			w->anchor = v;
			w->anchor_trail = w->ntrail + 1;
			if (st->nnames && nc + 1 + st->nnames <= CAPS_MAX) {
				/* "*[f,g]": the key, then each listed string field of the member ("" where it has none). */
				w->caps[w->ncaps++] = key;
				for (k = 0; k < st->nnames; k++) {
					json_t *fv = json_object_get(v, st->names[k]);

					w->caps[w->ncaps++] = json_is_string(fv) ? json_string_value(fv) : "";
				}
				descend(w, v, i, key, NULL);
			} else {
				descend(w, v, i, key, key);
			}
			w->ncaps = nc;
			w->anchor = anchor;
			w->anchor_trail = anchor_trail;
		}
		break;
	case ST_KEYS:
		if (json_is_object(node))
			for (k = 0; k < st->nnames; k++)
				if ((v = json_object_get(node, st->names[k])))
					descend(w, v, i, st->names[k], st->names[k]);
		break;
	case ST_ELEM:
		if (!json_is_array(node))
			break;
		json_array_foreach(node, k, v) {
			char *buf = w->capbuf[w->ncaps < CAPS_MAX ? w->ncaps : CAPS_MAX - 1];
			char *tb = w->trailbuf[w->ntrail < STEP_MAX + 2 ? w->ntrail : STEP_MAX + 1];
			json_t *f = st->names[0] ? json_object_get(v, st->names[0]) : NULL;
			const char *cap = buf;

			snprintf(tb, NUM_TEXT_MAX, "[%zu]", k);
			if (st->names[0] && json_is_string(f))
				cap = json_string_value(f); /* borrowed whole, never cut */
			else if (!st->names[0] || !number_text(f, buf))
				snprintf(buf, NUM_TEXT_MAX, "%zu", k);
			descend(w, v, i, tb, cap);
		}
		break;
	case ST_SUM:
		if (!json_is_object(node))
			break;
		for (k = 0; k < st->nnames; k++) {
			int rc = number(w, json_object_get(node, st->names[k]), st->names[k], &d);

			if (rc != 1)
				return; /* absent or bad: no sum */
			sum += d;
		}
		if (i + 1 == w->c->nsteps)
			emit(w, sum);
		break;
	case ST_ONE:
		emit(w, 1);
		break;
	case ST_COUNT:
		if (json_is_object(node))
			emit(w, (double)json_object_size(node));
		else if (json_is_array(node))
			emit(w, (double)json_array_size(node));
		break;
	}
}

/* ---- reports ------------------------------------------------------------- */

static const char *str_or(json_t *o, const char *key, const char *dflt)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : dflt;
}

unsigned long long mapper_bad_timestamps(const struct mapper *m)
{
	return m->bad_timestamps;
}

/*
 * Parse a report's or group's "timestamp"; an invalid one (not ISO 8601 UTC,
 * an impossible date, out of range) is counted and logged (rate-limited),
 * and the caller uses its fallback time. 0 or -EINVAL.
 */
static int parse_ts(struct mapper *m, const char *iso, const char *where, int64_t *ms)
{
	char q[LOG_QUOTE_BUF];
	int64_t ns;

	if (!iso8601_parse(iso, &ns)) {
		*ms = ns / NS_PER_MS;
		return 0;
	}
	m->bad_timestamps++;
	log_limited(&m->bad_ts_limit, "samples: %s.timestamp: invalid time \"%s\"; the time it was read is used instead",
		    where, log_quote(q, sizeof(q), iso, (size_t)-1));
	return -EINVAL;
}

/* The group's collection time: its own "timestamp", else the report's. */
static int64_t group_ts(struct mapper *m, json_t *g, const char *where, const char *root_iso, int64_t root_ms)
{
	const char *iso = str_or(g, "timestamp", NULL);
	int64_t ms = root_ms;

	if (!iso || (root_iso && !strcmp(iso, root_iso)) || parse_ts(m, iso, where, &ms))
		return root_ms;
	return ms;
}

/* Does rule r apply to group g, by the keys g has (its unless and only_with)? */
static int rule_applies(const struct map_rule *r, json_t *g)
{
	return (!r->unless || !json_object_get(g, r->unless)) && (!r->only_with || json_object_get(g, r->only_with));
}

/* The rules of group name in class cls (NULL: none). */
static const struct group_rules *group_rules(const struct mapper *m, enum group_class cls, const char *name)
{
	for (size_t g = 0; g < m->ngroups; g++)
		if (m->groups[g].cls == cls && !strcmp(m->groups[g].name, name))
			return &m->groups[g];
	return NULL;
}

/* Walk g with compiled rule c. */
static void walk_rule(struct walk *w, const struct compiled *c, json_t *g)
{
	w->rule = c->rule;
	w->c = c;
	w->ncaps = w->ntrail = 0;
	walk(w, g, 0);
}

/*
 * Enter group g (name, at the JSON path gwhere) of entity: 0 with the
 * walk's group, time and period set; -1 when it is in error (reported: it
 * yields no samples).
 */
static int enter_group(struct mapper *m, struct walk *w, json_t *g, const char *name, const char *entity,
		       const char *gwhere, const char *root_iso, int64_t root_ms)
{
	const char *err = str_or(g, "error", "");
	json_t *per;

	if (*err) {
		if (w->cb->group_error)
			w->cb->group_error(name, entity, err, w->cb->ud);
		return -1;
	}
	w->s.group = name;
	w->s.ts_ms = group_ts(m, g, gwhere, root_iso, root_ms);
	per = json_object_get(g, "period");
	w->s.period = json_is_number(per) ? json_number_value(per) : 0;
	w->where = gwhere;
	return 0;
}

/* Apply every rule of class cls (system or runtime) to each group of the object groups. */
static void map_groups(struct mapper *m, struct walk *w, enum group_class cls, json_t *groups, const char *where,
		       const char *root_iso, int64_t root_ms)
{
	const char *name;
	json_t *g;
	char gwhere[256];

	if (!json_is_object(groups))
		return;
	json_object_foreach(groups, name, g) {
		const struct group_rules *gr;

		if (!json_is_object(g) || !(gr = group_rules(m, cls, name)))
			continue;
		snprintf(gwhere, sizeof(gwhere), "%s.%s", where, name);
		if (enter_group(m, w, g, name, w->s.entity, gwhere, root_iso, root_ms))
			continue;
		for (size_t k = 0; k < gr->n; k++) {
			const struct compiled *c = &m->rules[m->order[gr->first + k]];

			if (rule_applies(c->rule, g))
				walk_rule(w, c, g);
		}
	}
}

/* Does rule r apply to a device of this type, in scope sc? */
static int device_rule(const struct map_rule *r, enum map_scope sc, const char *type)
{
	return r->scope == sc && (!r->device_type || !strcmp(r->device_type, type));
}

/*
 * The schema's device labels of device dkey of kind type (its object dev)
 * into w's labels from base on, in its order: the kind, the key, then the
 * device's own keys (numbuf holds the numbers' text). Returns the next free
 * label's place.
 */
static size_t device_labels(struct walk *w, size_t base, const char *type, const char *dkey, json_t *dev,
			    char numbuf[LBL_COUNT][NUM_TEXT_MAX])
{
	size_t n = base;

	for (size_t l = 0; l < LBL_COUNT; l++) {
		const struct schema_label *sl = &schema_labels[l];

		if (sl->kind != LK_DEVICE)
			continue;
		if (sl->flags & LABEL_OPTIONAL) {
			/* Only on devices that have it (NVIDIA MIG instances' ids and profile). */
			json_t *v = json_object_get(dev, sl->source);

			if (json_is_string(v))
				w->s.labels[n++] = (struct label){ sl->name, json_string_value(v) };
			else if (number_text(v, numbuf[l]))
				w->s.labels[n++] = (struct label){ sl->name, numbuf[l] };
			continue;
		}
		w->s.labels[n++] = (struct label){ sl->name, l == LBL_DEVICE_TYPE ? type
							: l == LBL_DEVICE ? dkey
							: str_or(dev, sl->source, "") };
	}
	return n;
}

/* Every device of every group of one device_data entry. */
static void map_device_entry(struct mapper *m, struct walk *w, json_t *ent, size_t idx, const char *root_iso,
			     int64_t root_ms)
{
	const char *type = str_or(ent, "device_type", ""), *gname, *dkey;
	json_t *g, *dev;
	size_t base = w->s.ninstance, ndev = base;
	char gwhere[256], numbuf[LBL_COUNT][NUM_TEXT_MAX]; /* optional device labels' numbers as text */

	if (*str_or(ent, "error", "")) {
		if (w->cb->group_error)
			w->cb->group_error("device", type, str_or(ent, "error", ""), w->cb->ud);
		return;
	}
	json_object_foreach(json_object_get(ent, "report"), gname, g) {
		const struct group_rules *gr = group_rules(m, GC_DEVICE, gname);
		const size_t *order;
		size_t k;

		if (!gr)
			continue;
		order = &m->order[gr->first];
		/* A group with no rule for this kind of device is not looked at (its "error" included). */
		for (k = 0; k < gr->n && !device_rule(m->rules[order[k]].rule, SC_DEVICE, type) &&
			    !device_rule(m->rules[order[k]].rule, SC_DEVICE_GROUP, type);
		     k++)
			;
		if (k == gr->n || !json_is_object(g))
			continue;
		snprintf(gwhere, sizeof(gwhere), "device_data[%zu].report.%s", idx, gname);
		if (enter_group(m, w, g, gname, type, gwhere, root_iso, root_ms))
			continue;
		/* Counts over the kind's devices: instance labels only. */
		w->s.entity = type;
		w->s.device_type = w->s.device = NULL;
		w->base_labels = base;
		for (k = 0; k < gr->n; k++) {
			const struct compiled *c = &m->rules[order[k]];

			if (device_rule(c->rule, SC_DEVICE_GROUP, type) && rule_applies(c->rule, g))
				walk_rule(w, c, g);
		}
		json_object_foreach(json_object_get(g, "devices"), dkey, dev) {
			const char *entity;

			if (!json_is_object(dev))
				continue;
			buf_reset(w->entity);
			if (buf_add(w->entity, type, strlen(type)) || buf_add(w->entity, ":", 1) ||
			    buf_add(w->entity, dkey, strlen(dkey)))
				continue; /* not reached: the cap is the report's own size */
			entity = w->entity->data;
			if (*str_or(dev, "error", "")) {
				if (w->cb->group_error)
					w->cb->group_error(gname, entity, str_or(dev, "error", ""), w->cb->ud);
				continue;
			}
			w->s.entity = entity;
			w->s.device_type = type;
			w->s.device = dkey;
			ndev = device_labels(w, base, type, dkey, dev, numbuf);
			snprintf(gwhere, sizeof(gwhere), "device_data[%zu].report.%s.devices.%s", idx, gname, dkey);
			w->where = gwhere;
			for (k = 0; k < gr->n; k++) {
				const struct compiled *c = &m->rules[order[k]];

				if (!device_rule(c->rule, SC_DEVICE, type) || !rule_applies(c->rule, g))
					continue;
				w->base_labels = ndev;
				if (c->rule->index_label)
					w->s.labels[w->base_labels++] = (struct label){ c->rule->index_label, dkey };
				w->dev = dev;
				walk_rule(w, c, dev);
				w->dev = NULL;
			}
		}
	}
}

/* Device key of kind type in any group of report's device_data (borrowed), or NULL. */
static json_t *report_device(json_t *report, const char *type, const char *key)
{
	json_t *ent, *g, *dev;
	const char *gname;
	size_t i;

	json_array_foreach(json_object_get(report, "device_data"), i, ent) {
		if (strcmp(str_or(ent, "device_type", ""), type))
			continue;
		json_object_foreach(json_object_get(ent, "report"), gname, g)
			if (json_is_object(dev = json_object_get(json_object_get(g, "devices"), key)))
				return dev;
	}
	return NULL;
}

/* The owner keys that are labels, in the order they are added (docs/report-format.md, "Allocations"). */
static const enum label_id owner_labels[] = { LBL_POD, LBL_NAMESPACE, LBL_CONTAINER, LBL_RESOURCE,
					      LBL_DRA_CLAIM_NAME, LBL_DRA_CLAIM_NAMESPACE, LBL_DRA_DRIVER_NAME,
					      LBL_DRA_POOL_NAME, LBL_DRA_DEVICE_NAME, LBL_HPC_JOB };

/*
 * The report's "allocations": accelerator_allocation_info, 1 for each owner
 * of each device (for each of its NeuronCores when it lists them), with the
 * device's labels (as its own series have them) and the owner's.
 */
static void map_allocations(struct mapper *m, struct walk *w, json_t *report, size_t base, int64_t root_ms)
{
	json_t *al = json_object_get(report, "allocations"), *bytype, *owners, *ow, *dev, *cores, *c;
	const char *type, *key;
	char numbuf[LBL_COUNT][NUM_TEXT_MAX], core[NUM_TEXT_MAX];
	size_t i, k;

	if (!json_is_object(al))
		return;
	if (*str_or(al, "error", "") && w->cb->group_error)
		w->cb->group_error("allocations", "allocations", str_or(al, "error", ""), w->cb->ud);
	w->s.group = "allocations";
	w->s.fam = m->f_allocation;
	w->s.ts_ms = root_ms;
	w->s.period = 0;
	w->s.value = 1;
	json_object_foreach(json_object_get(al, "devices"), type, bytype) {
		json_object_foreach(bytype, key, owners) {
			size_t n;

			buf_reset(w->entity);
			if (!json_is_array(owners) || buf_add(w->entity, type, strlen(type)) || buf_add(w->entity, ":", 1) ||
			    buf_add(w->entity, key, strlen(key)))
				continue;
			dev = report_device(report, type, key);
			w->s.entity = w->entity->data;
			w->s.device_type = type;
			w->s.device = key;
			n = device_labels(w, base, type, key, dev, numbuf);
			json_array_foreach(owners, i, ow) {
				size_t nl = n;

				for (k = 0; k < ARRAY_SIZE(owner_labels); k++) {
					const char *v = str_or(ow, schema_labels[owner_labels[k]].name, "");

					if (*v)
						w->s.labels[nl++] = (struct label){ schema_labels[owner_labels[k]].name, v };
				}
				cores = json_object_get(ow, "neuroncores");
				w->s.nlabels = nl;
				/* Its pod's labels, written once in identities.pods (docs/report-format.md §6b). */
				w->s.pod_labels = json_object_get(json_object_get(report, "identities"), "pods");
				w->s.pod_labels = json_object_get(json_object_get(w->s.pod_labels, str_or(ow, "pod_uid", "")),
								  "labels");
				if (!json_array_size(cores)) {
					w->cb->sample(&w->s, w->cb->ud);
					continue;
				}
				w->s.nlabels = nl + 1;
				json_array_foreach(cores, k, c)
					if (number_text(c, core)) {
						w->s.labels[nl] = (struct label){ schema_labels[LBL_NEURONCORE].name, core };
						w->cb->sample(&w->s, w->cb->ud);
					}
			}
		}
	}
	w->s.device_type = w->s.device = NULL;
	w->s.pod_labels = NULL;
}

void mapper_reset(struct mapper *m)
{
	for (size_t i = 0; i < m->last_inst.n; i++)
		free(m->last_inst.value[i]);
	free(m->last_inst.host);
	free(m->last_inst.node);
	memset(&m->last_inst, 0, sizeof(m->last_inst));
}

/*
 * Keep inst's labels (the schema's instance labels), hostname and node_name for this
 * and later reports; inst NULL: every label empty (no instance_info yet).
 */
static void remember_instance(struct mapper *m, json_t *inst)
{
	mapper_reset(m);
	for (size_t i = 0; i < LBL_COUNT; i++) {
		const struct schema_label *l = &schema_labels[i];

		/* Optional ones (ultraserver_id: Trn2 UltraServers, as the AWS exporter) only when present. */
		if (l->kind != LK_INSTANCE || ((l->flags & LABEL_OPTIONAL) && !json_object_get(inst, l->source)))
			continue;
		m->last_inst.name[m->last_inst.n] = l->name;
		m->last_inst.value[m->last_inst.n++] = xstrdup(str_or(inst, l->source, ""));
	}
	m->last_inst.host = xstrdup(str_or(inst, "hostname", ""));
	m->last_inst.node = xstrdup(str_or(inst, "node_name", ""));
}

static enum report_format detect(json_t *report, json_t **rts)
{
	json_t *first;

	if ((*rts = json_object_get(report, "runtime_data")) || json_object_get(report, "monitor"))
		return FORMAT_ACCEL;
	*rts = json_object_get(report, "neuron_runtime_data");
	first = json_array_get(*rts, 0);
	if (json_object_get(report, "instance_data") || json_object_get(first, "neuron_runtime_index"))
		return FORMAT_NEURON_2020;
	return FORMAT_NEURON_2X;
}

/*
 * Map runtime entry e, the i-th of the report (format fmt), through w, whose
 * first ninst labels are the instance's: its groups, labelled with its tag,
 * its pid and its process's container; an entry with an error gives that
 * error only.
 */
static void map_runtime_entry(struct mapper *m, struct walk *w, json_t *e, size_t i, enum report_format fmt,
			      size_t ninst, const char *root_iso, int64_t root_ms)
{
	const char *tag, *err;
	char where[64], tagbuf[NUM_TEXT_MAX], pidbuf[NUM_TEXT_MAX];
	json_t *pid = json_object_get(e, "pid");

	if (!json_is_object(e))
		return;
	if (fmt == FORMAT_NEURON_2020) {
		if (!number_text(json_object_get(e, "neuron_runtime_index"), tagbuf))
			snprintf(tagbuf, sizeof(tagbuf), "0");
		tag = tagbuf;
	} else {
		tag = str_or(e, fmt == FORMAT_ACCEL ? "runtime_tag" : "neuron_runtime_tag", NULL);
		if ((!tag || !*tag) && number_text(pid, tagbuf)) {
			tag = tagbuf;
		} else if (!tag || !*tag) {
			tag = str_or(e, "address", "");
		}
	}
	w->s.entity = tag;
	w->s.prom_skip = 0;
	err = str_or(e, "error", "");
	if (*err) {
		if (w->cb->group_error)
			w->cb->group_error("runtime", tag, err, w->cb->ud);
		return;
	}
	w->s.labels[ninst] = (struct label){ "runtime_tag", tag };
	w->s.runtime_tag = tag;
	w->base_labels = ninst + 1;
	/*
	 * The pid keeps runtimes apart that share a name (accel-monitor: one entry per process)
	 * or a neuron_runtime_tag. neuron-monitor-prometheus.py has no pid label: accel-prom
	 * leaves it out of neuron-monitor's series (prom_skip) and sums them as it does.
	 */
	if (fmt != FORMAT_NEURON_2020 && number_text(pid, pidbuf)) {
		if (fmt == FORMAT_NEURON_2X)
			w->s.prom_skip = 1u << w->base_labels;
		w->s.labels[w->base_labels++] = (struct label){ "pid", pidbuf };
	}
	/* containers: whose process it is */
	w->base_labels = ident_labels(json_object_get(e, "container"), IDENT_NONE, NULL, w->s.labels, w->base_labels);
	snprintf(where, sizeof(where), "%s[%zu].report", fmt == FORMAT_ACCEL ? "runtime_data" : "neuron_runtime_data", i);
	map_groups(m, w, GC_RUNTIME, json_object_get(e, "report"), where, root_iso, root_ms);
}

enum report_format mapper_report(struct mapper *m, json_t *report, int64_t now_ms, const struct map_cb *cb)
{
	struct walk w;
	json_t *rts, *inst, *hw, *e;
	const struct group_rules *gr;
	enum report_format fmt;
	const char *root_iso;
	int64_t root_ms = now_ms;
	size_t i, ninst;

	memset(&w, 0, sizeof(w));
	w.cb = cb;
	w.entity = &m->entity;
	fmt = detect(report, &rts);
	w.ids = fmt == FORMAT_ACCEL && json_is_object(json_object_get(report, "identities"))
			? json_object_get(report, "identities") : NULL;
	w.pidx = report_pid_index(w.ids);
	root_iso = str_or(report, "timestamp", NULL);
	/* Invalid: root_ms stays now_ms; a group with the same text gets it too, counted once. */
	if (root_iso)
		(void)parse_ts(m, root_iso, "report", &root_ms);

	/*
	 * Instance labels, on every sample. A report without instance_info keeps
	 * those of the last report that had one: missing is not a change of instance.
	 */
	inst = json_object_get(report, fmt == FORMAT_NEURON_2020 ? "instance_data" : "instance_info");
	if (!inst)
		inst = json_object_get(report, "instance_data");
	if (json_is_object(inst) || !m->last_inst.host)
		remember_instance(m, json_is_object(inst) ? inst : NULL);
	for (i = 0; i < m->last_inst.n; i++)
		w.s.labels[i] = (struct label){ m->last_inst.name[i], m->last_inst.value[i] };
	ninst = w.s.ninstance = m->last_inst.n;
	w.s.host = m->last_inst.host ? m->last_inst.host : "";
	w.s.node = m->last_inst.node ? m->last_inst.node : "";

	/* instance_info and neuron_hardware_info: gauges of 1 carrying labels. */
	w.s.entity = "instance";
	w.s.group = "instance_info";
	w.s.ts_ms = root_ms;
	w.s.period = 0;
	w.s.fam = m->f_instance;
	w.s.value = 1;
	w.s.nlabels = ninst;
	cb->sample(&w.s, cb->ud);
	hw = json_object_get(report, "neuron_hardware_info");
	if (json_is_object(hw) && !*str_or(hw, "error", "")) {
		json_t *dc = json_object_get(hw, "neuron_device_count"), *cc = json_object_get(hw, "neuroncore_per_device_count");
		char dcs[NUM_TEXT_MAX] = "0", ccs[NUM_TEXT_MAX] = "0";

		number_text(dc, dcs);
		number_text(cc, ccs);
		w.s.group = "neuron_hardware_info";
		w.s.fam = m->f_neuron_hw;
		w.s.labels[ninst] = (struct label){ "neuron_device_count", dcs };
		w.s.labels[ninst + 1] = (struct label){ "neuroncore_per_device_count", ccs };
		w.s.nlabels = ninst + 2;
		cb->sample(&w.s, cb->ud);
	} else if (json_is_object(hw) && cb->group_error) {
		cb->group_error("neuron_hardware_info", "instance", str_or(hw, "error", ""), cb->ud);
	}

	/* Runtime entries. */
	json_array_foreach(rts, i, e)
		map_runtime_entry(m, &w, e, i, fmt, ninst, root_iso, root_ms);

	w.s.prom_skip = 0;
	w.s.runtime_tag = NULL;
	json_array_foreach(json_object_get(report, "device_data"), i, e)
		if (json_is_object(e))
			map_device_entry(m, &w, e, i, root_iso, root_ms);

	w.s.prom_skip = 0;
	map_allocations(m, &w, report, ninst, root_ms);

	w.s.device_type = w.s.device = NULL;
	w.s.entity = "system";
	w.base_labels = ninst;
	map_groups(m, &w, GC_SYSTEM, json_object_get(report, "system_data"), "system_data", root_iso, root_ms);

	/* The producer's own figures (self-timing): the "monitor" object, walked as a group of its own. */
	w.s.entity = "monitor";
	e = json_object_get(report, "monitor");
	if (json_is_object(e) && (gr = group_rules(m, GC_MONITOR, "monitor")) &&
	    !enter_group(m, &w, e, "monitor", w.s.entity, "monitor", root_iso, root_ms))
		for (size_t k = 0; k < gr->n; k++)
			walk_rule(&w, &m->rules[m->order[gr->first + k]], e);
	json_decref(w.pidx);
	return fmt;
}

enum report_format map_report(json_t *report, int64_t now_ms, const struct map_cb *cb)
{
	struct mapper *m = mapper_new();
	enum report_format fmt = mapper_report(m, report, now_ms, cb);

	mapper_free(m);
	return fmt;
}
