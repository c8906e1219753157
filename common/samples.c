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
#include "samples.h"
#include "log.h"
#include "rows.h"
#include "schema.h"
#include "timeutil.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const report_format_names[3] = { "accel-monitor", "neuron-monitor 2.x", "neuron-monitor 2020" };

/* ---- families ------------------------------------------------------------ */

const struct family *map_family_at(size_t i)
{
	for (const struct map_rows *const *b = map_rows; *b; b++) {
		if (i < (*b)->nfamilies)
			return &(*b)->families[i];
		i -= (*b)->nfamilies;
	}
	return NULL;
}

const struct family *map_family(const char *name)
{
	for (const struct map_rows *const *b = map_rows; *b; b++)
		for (size_t i = 0; i < (*b)->nfamilies; i++)
			if (!strcmp((*b)->families[i].name, name))
				return &(*b)->families[i];
	return NULL;
}

static int family_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct family *const *)a)->name, (*(const struct family *const *)b)->name);
}

/* ---- compiled patterns ----------------------------------------------------- */

#define MAP_IDENT_LABELS 6 /* containers: pod, namespace, container, ecs_cluster, ecs_task_family, ecs_task_id */

enum step_kind { ST_KEY, ST_ANY, ST_ELEM, ST_KEYS, ST_SUM, ST_COUNT, ST_ONE };

#define STEP_MAX 8
#define NAMES_MAX 8
#define CAPS_MAX 8
#define NUM_TEXT_MAX 32 /* the text of any JSON integer (int64) or of a real with %.17g */

struct step {
	enum step_kind kind;
	char *names[NAMES_MAX]; /* ST_KEY: names[0]; ST_KEYS/ST_SUM: the list; ST_ELEM: names[0] = label field or NULL */
	size_t nnames;
};

/* One rule, compiled. Its strings point into text, which it owns. */
struct compiled {
	const struct map_rule *rule;
	const struct family *fam;
	struct step steps[STEP_MAX];
	size_t nsteps;
	char *capnames[CAPS_MAX];
	size_t ncaps;
	int pid_cap;            /* the capture labelled "pid" (its identity: process_containers), or -1 */
	int drop_empty;         /* a "*[f,g]" step: captures that are "" are no labels */
	char *fixed_name, *fixed_value;
	char *weight[STEP_MAX]; /* the rule's weight path, split at '.' (nweight keys; 0: none) */
	size_t nweight;
	char *text;             /* the rule's path, labels, fixed label and weight, copied to be split */
};

/* Where a group's rules come from in a report. Device and device-group rules of a group share one list. */
enum group_class { GC_SYSTEM, GC_RUNTIME, GC_DEVICE, GC_MONITOR };

/* The rules of one group of one class, in the order they apply: order[first .. first + n). */
struct group_rules {
	enum group_class cls;
	const char *name;
	size_t first, n;
};

struct mapper {
	struct compiled *rules; /* every block's, in the registry's order */
	size_t nrules;
	size_t *order;          /* indexes into rules, grouped by groups[] */
	struct group_rules *groups;
	size_t ngroups;
	const struct family *f_instance, *f_neuron_hw; /* the families the mapper yields itself */
	/* The instance labels of the last report that had instance_info (owned copies); host NULL: none yet. */
	struct {
		const char *name[MAP_INSTANCE_LABELS_MAX];
		char *value[MAP_INSTANCE_LABELS_MAX];
		char *host;
		size_t n;
	} last_inst;
	unsigned long long bad_timestamps;
	struct log_limit bad_ts_limit;
	struct buf entity; /* a device's entity, "type:key", reused from report to report */
};

static enum group_class group_class(enum map_scope sc)
{
	return sc == SC_SYSTEM ? GC_SYSTEM : sc == SC_RUNTIME ? GC_RUNTIME : sc == SC_MONITOR ? GC_MONITOR : GC_DEVICE;
}

static void split(char *s, char sep, char **out, size_t max, size_t *n)
{
	*n = 0;
	while (s && *s && *n < max) {
		char *e = strchr(s, sep);

		out[(*n)++] = s;
		if (e)
			*e++ = '\0';
		s = e;
	}
}

/*
 * The most labels a sample of rule r can carry: the instance labels, the
 * entry's (runtime: runtime_tag and pid; device: the identity and the index
 * label), the captures and the fixed label.
 */
static size_t rule_max_labels(const struct map_rule *r, size_t ncaps)
{
	size_t n = MAP_INSTANCE_LABELS_MAX + ncaps + (r->fixed ? 1 : 0);

	switch (r->scope) {
	case SC_RUNTIME:
		n += SCHEMA_RUNTIME_LABELS + MAP_IDENT_LABELS;
		break;
	case SC_DEVICE:
		n += SCHEMA_DEVICE_LABELS + (r->index_label ? 1 : 0) + MAP_IDENT_LABELS;
		break;
	default:
		break;
	}
	return n;
}

/* Split s at sep into out[0..max); -E2BIG (nothing split) when it has more parts than that. */
static int split_checked(char *s, char sep, char **out, size_t max, size_t *n)
{
	size_t parts = 1;

	for (const char *p = s; *p; p++)
		parts += *p == sep;
	if (parts > max)
		return -E2BIG;
	split(s, sep, out, max, n);
	return 0;
}

/* Copy s (NULL: nothing) to *p, NUL-terminated, and advance *p; the copy, or NULL. */
static char *put_text(char **p, const char *s)
{
	char *d = *p;
	size_t n;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	memcpy(d, s, n);
	*p += n;
	return d;
}

/*
 * Compile rule r's pattern into c (c->text: new allocation, also on
 * failure). -E2BIG (with *why) when it has more steps, listed keys or
 * captures than the compiled form holds, or its samples could carry more than
 * SAMPLE_MAX_LABELS labels; -EINVAL when a name it uses is not the schema's.
 */
static int compile_rule(const struct map_rule *r, struct compiled *c, const char **why)
{
	size_t len = strlen(r->path) + strlen(r->labels) + (r->fixed ? strlen(r->fixed) : 0) +
		     (r->weight ? strlen(r->weight) : 0) + 4;
	char *t, *p, *labels, *weight, *segs[STEP_MAX + 1];
	size_t nseg;

	memset(c, 0, sizeof(*c));
	c->rule = r;
	t = c->text = xmalloc(len);
	p = put_text(&t, r->path);
	labels = put_text(&t, r->labels);
	c->fixed_name = put_text(&t, r->fixed);
	weight = put_text(&t, r->weight);
	split(p, '.', segs, STEP_MAX + 1, &nseg);
	if (nseg > STEP_MAX) {
		*why = "more path steps than STEP_MAX";
		return -E2BIG;
	}
	for (size_t i = 0; i < nseg; i++) {
		char *s = segs[i], *br = strchr(s, '[');
		struct step *st;

		if (c->nsteps >= STEP_MAX - (br ? 1 : 0)) {
			*why = "more path steps than STEP_MAX";
			return -E2BIG;
		}
		st = &c->steps[c->nsteps++];
		if (!strcmp(s, "*")) {
			st->kind = ST_ANY;
		} else if (s[0] == '*' && s[1] == '[' && s[strlen(s) - 1] == ']') {
			/* "*[f,g]": every key, with fields of each member as labels too */
			st->kind = ST_ANY;
			c->drop_empty = 1;
			s[strlen(s) - 1] = '\0';
			if (split_checked(s + 2, ',', st->names, NAMES_MAX, &st->nnames)) {
				*why = "more listed keys than NAMES_MAX";
				return -E2BIG;
			}
		} else if (!strcmp(s, "#")) {
			st->kind = ST_COUNT;
		} else if (!strcmp(s, "1")) {
			st->kind = ST_ONE;
		} else if (s[0] == '{') {
			s[strlen(s) - 1] = '\0';
			st->kind = strchr(s, '+') ? ST_SUM : ST_KEYS;
			if (split_checked(s + 1, st->kind == ST_SUM ? '+' : ',', st->names, NAMES_MAX, &st->nnames)) {
				*why = "more listed keys than NAMES_MAX";
				return -E2BIG;
			}
		} else {
			st->kind = ST_KEY;
			st->names[0] = s;
			st->nnames = 1;
			if (br) {
				/* "key[field]": the key, then each element */
				struct step *el = &c->steps[c->nsteps++];

				*br = '\0';
				el->kind = ST_ELEM;
				br[strlen(br + 1)] = '\0';
				el->names[0] = br[1] ? br + 1 : NULL;
			}
		}
	}
	if (labels[0] && split_checked(labels, ',', c->capnames, CAPS_MAX, &c->ncaps)) {
		*why = "more captured labels than CAPS_MAX";
		return -E2BIG;
	}
	c->pid_cap = -1;
	for (size_t i = 0; i < c->ncaps; i++)
		if (r->scope == SC_DEVICE && !strcmp(c->capnames[i], "pid"))
			c->pid_cap = (int)i;
	if (c->fixed_name) {
		c->fixed_value = strchr(c->fixed_name, '=');
		if (!c->fixed_value) {
			*why = "a fixed label without '='";
			return -EINVAL;
		}
		*c->fixed_value++ = '\0';
	}
	/* Its group and labels are the schema's (common/schema.h): a new one is a row there first. */
	if (r->scope == SC_MONITOR ? strcmp(r->group, "monitor") != 0
	    : schema_group_lookup(r->group, r->scope == SC_SYSTEM ? SCOPE_SYSTEM : r->scope == SC_RUNTIME ? SCOPE_RUNTIME
					    : SCOPE_DEVICE) < 0) {
		*why = "its group is not in the schema (SCHEMA_GROUPS)";
		return -EINVAL;
	}
	for (size_t i = 0; i < c->ncaps; i++)
		if (!schema_label(c->capnames[i])) {
			*why = "a captured label is not in the schema (SCHEMA_LABELS)";
			return -EINVAL;
		}
	if ((c->fixed_name && !schema_label(c->fixed_name)) || (r->index_label && !schema_label(r->index_label))) {
		*why = "a fixed or index label is not in the schema (SCHEMA_LABELS)";
		return -EINVAL;
	}
	if (weight) {
		size_t any = 0;

		for (size_t i = 0; i < c->nsteps; i++)
			any += c->steps[i].kind == ST_ANY;
		if (!any) {
			*why = "a weight without a \"*\" step to find it from";
			return -EINVAL;
		}
		if (split_checked(weight, '.', c->weight, STEP_MAX, &c->nweight)) {
			*why = "a weight path longer than STEP_MAX";
			return -E2BIG;
		}
	}
	if (rule_max_labels(r, c->ncaps) > SAMPLE_MAX_LABELS) {
		*why = "its samples could carry more than SAMPLE_MAX_LABELS labels";
		return -E2BIG;
	}
	return 0;
}

/* The family named name among fams (sorted by name, n of them), or NULL. */
static const struct family *find_family(const struct family **fams, size_t n, const char *name)
{
	const struct family key = { .name = name }, *k = &key, **f;

	f = bsearch(&k, fams, n, sizeof(*fams), family_cmp);
	return f ? *f : NULL;
}

/* Index m's compiled rules by group: order[] and groups[], each group's rules in the registry's order. */
static void index_groups(struct mapper *m)
{
	size_t n = m->nrules ? m->nrules : 1, *gidx = xcalloc(n, sizeof(*gidx)), *count = xcalloc(n, sizeof(*count));
	size_t k = 0;

	m->groups = xcalloc(n, sizeof(*m->groups));
	m->order = xcalloc(n, sizeof(*m->order));
	for (size_t r = 0; r < m->nrules; r++) {
		const struct map_rule *x = m->rules[r].rule;
		size_t g;

		/* Equal group names of one rows file are mostly the same string: the pointer compare is a shortcut. */
		for (g = 0; g < m->ngroups; g++)
			if (m->groups[g].cls == group_class(x->scope) &&
			    (m->groups[g].name == x->group || !strcmp(m->groups[g].name, x->group)))
				break;
		if (g == m->ngroups)
			m->groups[m->ngroups++] = (struct group_rules){ group_class(x->scope), x->group, 0, 0 };
		m->groups[g].n++;
		gidx[r] = g;
	}
	for (size_t g = 0; g < m->ngroups; g++) {
		m->groups[g].first = k;
		k += m->groups[g].n;
	}
	for (size_t r = 0; r < m->nrules; r++)
		m->order[m->groups[gidx[r]].first + count[gidx[r]]++] = r;
	free(gidx);
	free(count);
}

/*
 * Compile every block's rules into m, resolve their families and index them
 * by group. 0, or -E2BIG / -EINVAL with a message in err (m then holds what
 * was compiled, for mapper_free).
 */
static int compile_all(struct mapper *m, char *err, size_t size)
{
	const struct family **fams;
	size_t nfams = 0, nrules = 0, k = 0;
	int rc = 0;

	for (const struct map_rows *const *b = map_rows; *b; b++) {
		nfams += (*b)->nfamilies;
		nrules += (*b)->nrules;
	}
	fams = xcalloc(nfams ? nfams : 1, sizeof(*fams));
	for (const struct map_rows *const *b = map_rows; *b; b++)
		for (size_t i = 0; i < (*b)->nfamilies; i++)
			fams[k++] = &(*b)->families[i];
	qsort(fams, nfams, sizeof(*fams), family_cmp);
	for (size_t i = 1; i < nfams && !rc; i++)
		if (!strcmp(fams[i - 1]->name, fams[i]->name)) {
			snprintf(err, size, "family %s: defined twice", fams[i]->name);
			rc = -EINVAL;
		}
	m->rules = xcalloc(nrules ? nrules : 1, sizeof(*m->rules));
	for (const struct map_rows *const *b = map_rows; *b && !rc; b++)
		for (size_t i = 0; i < (*b)->nrules && !rc; i++) {
			const struct map_rule *r = &(*b)->rules[i];
			struct compiled *c = &m->rules[m->nrules++];
			const char *why = NULL;

			rc = compile_rule(r, c, &why);
			if (!rc && !(c->fam = find_family(fams, nfams, r->family))) {
				why = "its family is defined in no block";
				rc = -EINVAL;
			}
			if (rc)
				snprintf(err, size, "rule %zu of %s (%s: %s): %s", i, (*b)->name, r->group, r->path, why);
		}
	m->f_instance = find_family(fams, nfams, "instance_info");
	m->f_neuron_hw = find_family(fams, nfams, "neuron_hardware_info");
	if (!rc && (!m->f_instance || !m->f_neuron_hw)) {
		snprintf(err, size, "the families instance_info and neuron_hardware_info are defined in no block");
		rc = -EINVAL;
	}
	free(fams);
	if (!rc)
		index_groups(m);
	return rc;
}

struct mapper *mapper_new(void)
{
	struct mapper *m = xcalloc(1, sizeof(*m));
	char err[256];

	if (compile_all(m, err, sizeof(err))) {
		log_err("samples: %s", err);
		abort();
	}
	buf_init(&m->entity, SIZE_MAX / 2);
	return m;
}

void mapper_free(struct mapper *m)
{
	if (!m)
		return;
	mapper_reset(m);
	for (size_t r = 0; r < m->nrules; r++)
		free(m->rules[r].text);
	free(m->rules);
	free(m->order);
	free(m->groups);
	buf_free(&m->entity);
	free(m);
}

int map_rules_check(char *err, size_t size)
{
	struct mapper *m = xcalloc(1, sizeof(*m));
	int rc;

	snprintf(err, size, "%s", "");
	rc = compile_all(m, err, size);
	mapper_free(m);
	return rc;
}

size_t map_max_labels(void)
{
	size_t m = MAP_INSTANCE_LABELS_MAX + 2; /* neuron_hardware_info: the two counts */

	for (const struct map_rows *const *b = map_rows; *b; b++)
		for (size_t i = 0; i < (*b)->nrules; i++) {
			const struct map_rule *r = &(*b)->rules[i];
			size_t ncaps = 0;

			for (const char *l = r->labels; *l; l++)
				ncaps += *l == ',';
			ncaps += r->labels[0] ? 1 : 0;
			if (rule_max_labels(r, ncaps) > m)
				m = rule_max_labels(r, ncaps);
		}
	return m;
}

json_t *map_schema_json(void)
{
	static const char *const scopes[] = { "system", "runtime", "device", "device_group", "monitor" };
	static const char *const types[] = { "gauge", "counter" };
	json_t *s = schema_json(), *o = json_object(), *fl = json_array(), *fams = json_array(), *rs = json_array();

	for (const struct map_rows *const *b = map_rows; *b; b++) {
		for (size_t i = 0; i < (*b)->nfields; i++) {
			const struct map_field *x = &(*b)->fields[i];

			json_array_append_new(fl, json_pack("{s:s, s:s?, s:s, s:s?, s:s?}", "group", group_name(x->group),
							    "device_type", x->device_type, "path", x->path, "kind",
							    x->kind, "not_exported", x->not_exported));
		}
		for (size_t i = 0; i < (*b)->nfamilies; i++) {
			const struct family *f = &(*b)->families[i];

			json_array_append_new(fams, json_pack("{s:s, s:s, s:s, s:s}", "name", f->name, "type",
							      types[f->type], "unit", f->unit, "help", f->help));
		}
		for (size_t i = 0; i < (*b)->nrules; i++) {
			const struct map_rule *x = &(*b)->rules[i];
			json_t *scale = x->scale == PERCENT   ? json_string("percent")
					: x->scale == BOOLEAN ? json_string("boolean")
							      : json_real(x->scale ? x->scale : 1);
			json_t *rule = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s?, s:o, s:f, s:s?, s:s?}", "scope",
						 scopes[x->scope], "group", x->group, "path", x->path, "family",
						 x->family, "labels", x->labels, "fixed", x->fixed, "scale", scale, "clamp",
						 x->clamp, "device_type", x->device_type, "index_label", x->index_label);

			/* containers: only on the rules that have it, so the other rows read as before */
			if (x->ident)
				json_object_set_new(rule, "ident",
						    json_string(x->ident == IDENT_POD ? "pod" : "container"));
			/* endpoint runtimes: the same */
			if (x->unless)
				json_object_set_new(rule, "unless", json_string(x->unless));
			if (x->only_with)
				json_object_set_new(rule, "only_with", json_string(x->only_with));
			if (x->weight)
				json_object_set_new(rule, "weight", json_string(x->weight));
			json_array_append_new(rs, rule);
		}
	}
	/* The order of tests/fixtures/schema.json's keys. */
	json_object_set(o, "groups", json_object_get(s, "groups"));
	json_object_set_new(o, "fields", fl);
	json_object_set(o, "config_aliases", json_object_get(s, "config_aliases"));
	json_object_set(o, "labels", json_object_get(s, "labels"));
	json_object_set_new(o, "families", fams);
	json_object_set_new(o, "rules", rs);
	json_decref(s);
	return o;
}

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
	json_t *ident;                /* an ident rule: the pod's or container's object its first "*" reached */
	json_t *anchor;               /* the object the last "*" reached (a weight is found from it), or NULL */
	size_t anchor_trail;          /* the length of trail[] at the anchor (messages about a weight) */
	const char *ident_key;        /* and its key (the pod UID or the container id) */
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

static const char *str_or(json_t *o, const char *key, const char *dflt);

/*
 * containers: append pod, namespace, container and an ECS task's
 * ecs_cluster, ecs_task_family, ecs_task_id from identity
 * object o (NULL: nothing) to labels[n..]; pod_key/ctr_key are the
 * aggregate's key when it has one. Each only when it has a value; the
 * container label only for a container. Returns the new count.
 */
static size_t ident_labels(json_t *o, const char *pod_key, const char *ctr_key, struct label *labels, size_t n)
{
	const char *pod, *ns, *ctr;

	if (!json_is_object(o))
		return n;
	pod = str_or(o, "pod", "");
	if (!*pod)
		pod = pod_key ? pod_key : str_or(o, "pod_uid", "");
	ns = str_or(o, "namespace", "");
	ctr = "";
	if (!pod_key) {
		ctr = str_or(o, "name", "");
		if (!*ctr)
			ctr = ctr_key ? ctr_key : str_or(o, "id", "");
	}
	if (*pod)
		labels[n++] = (struct label){ "pod", pod };
	if (*ns)
		labels[n++] = (struct label){ "namespace", ns };
	if (*ctr)
		labels[n++] = (struct label){ "container", ctr };
	/* An ECS task's containers: the task (a pod has none). */
	if (!pod_key)
		for (size_t i = 0; i < 3; i++) {
			static const char *const ecs[] = { "ecs_cluster", "ecs_task_family", "ecs_task_id" };
			const char *v = str_or(o, ecs[i], "");

			if (*v)
				labels[n++] = (struct label){ ecs[i], v };
		}
	return n;
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
		n = ident_labels(w->ident, w->rule->ident == IDENT_POD ? w->ident_key : NULL,
				 w->rule->ident == IDENT_CONTAINER ? w->ident_key : NULL, w->s.labels, n);
	else if (c->pid_cap >= 0 && (size_t)c->pid_cap < w->ncaps && w->dev)
		n = ident_labels(json_object_get(json_object_get(w->dev, "process_containers"), w->caps[c->pid_cap]),
				 NULL, NULL, w->s.labels, n);
	w->s.nlabels = n;
	w->s.fam = w->c->fam;
	w->s.value = v;
	w->cb->sample(&w->s, w->cb->ud);
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
		if (number(w, node, NULL, &d) == 1 && weigh(w, &d))
			emit(w, d);
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
			/* The schema's device labels, in its order: the kind, the key, then the device's own keys. */
			ndev = base;
			for (size_t l = 0; l < LBL_COUNT; l++) {
				const struct schema_label *sl = &schema_labels[l];

				if (sl->kind != LK_DEVICE)
					continue;
				if (sl->flags & LABEL_OPTIONAL) {
					/* Only on devices that have it (NVIDIA MIG instances' ids and profile). */
					json_t *v = json_object_get(dev, sl->source);

					if (json_is_string(v))
						w->s.labels[ndev++] = (struct label){ sl->name, json_string_value(v) };
					else if (number_text(v, numbuf[l]))
						w->s.labels[ndev++] = (struct label){ sl->name, numbuf[l] };
					continue;
				}
				w->s.labels[ndev++] = (struct label){ sl->name, l == LBL_DEVICE_TYPE ? type
									: l == LBL_DEVICE ? dkey
									: str_or(dev, sl->source, "") };
			}
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

void mapper_reset(struct mapper *m)
{
	for (size_t i = 0; i < m->last_inst.n; i++)
		free(m->last_inst.value[i]);
	free(m->last_inst.host);
	memset(&m->last_inst, 0, sizeof(m->last_inst));
}

/*
 * Keep inst's labels (the schema's instance labels) and hostname for this
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

enum report_format mapper_report(struct mapper *m, json_t *report, int64_t now_ms, const struct map_cb *cb)
{
	struct walk w;
	json_t *rts, *inst, *hw, *e;
	const struct group_rules *gr;
	enum report_format fmt;
	const char *root_iso;
	int64_t root_ms = now_ms;
	char where[64], tagbuf[NUM_TEXT_MAX], pidbuf[NUM_TEXT_MAX];
	size_t i, ninst;

	memset(&w, 0, sizeof(w));
	w.cb = cb;
	w.entity = &m->entity;
	fmt = detect(report, &rts);
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
	json_array_foreach(rts, i, e) {
		const char *tag, *err;
		json_t *pid = json_object_get(e, "pid");

		if (!json_is_object(e))
			continue;
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
		w.s.entity = tag;
		w.s.prom_skip = 0;
		err = str_or(e, "error", "");
		if (*err) {
			if (cb->group_error)
				cb->group_error("runtime", tag, err, cb->ud);
			continue;
		}
		w.s.labels[ninst] = (struct label){ "runtime_tag", tag };
		w.s.runtime_tag = tag;
		w.base_labels = ninst + 1;
		/*
		 * The pid keeps runtimes apart that share a name (accel-monitor: one entry per process)
		 * or a neuron_runtime_tag. neuron-monitor-prometheus.py has no pid label: accel-prom
		 * leaves it out of neuron-monitor's series (prom_skip) and sums them as it does.
		 */
		if (fmt != FORMAT_NEURON_2020 && number_text(pid, pidbuf)) {
			if (fmt == FORMAT_NEURON_2X)
				w.s.prom_skip = 1u << w.base_labels;
			w.s.labels[w.base_labels++] = (struct label){ "pid", pidbuf };
		}
		/* containers: whose process it is */
		w.base_labels = ident_labels(json_object_get(e, "container"), NULL, NULL, w.s.labels, w.base_labels);
		snprintf(where, sizeof(where), "%s[%zu].report", fmt == FORMAT_ACCEL ? "runtime_data" : "neuron_runtime_data", i);
		map_groups(m, &w, GC_RUNTIME, json_object_get(e, "report"), where, root_iso, root_ms);
	}

	w.s.prom_skip = 0;
	w.s.runtime_tag = NULL;
	json_array_foreach(json_object_get(report, "device_data"), i, e)
		if (json_is_object(e))
			map_device_entry(m, &w, e, i, root_iso, root_ms);

	w.s.prom_skip = 0;
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
	return fmt;
}

enum report_format map_report(json_t *report, int64_t now_ms, const struct map_cb *cb)
{
	struct mapper *m = mapper_new();
	enum report_format fmt = mapper_report(m, report, now_ms, cb);

	mapper_free(m);
	return fmt;
}
