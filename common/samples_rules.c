/* SPDX-License-Identifier: MIT */
/*
 * The interpreter's rules half: every block's rules (common/rows.h)
 * compiled once per mapper into patterns indexed by group, the families
 * they feed, and the checks and the schema dump built on them. samples.c
 * walks reports with what this makes; samples.h says the patterns.
 */
#include "samples_int.h"
#include "schema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		n += SCHEMA_RUNTIME_LABELS + ident_label_count;
		break;
	case SC_DEVICE:
		n += SCHEMA_DEVICE_LABELS + (r->index_label ? 1 : 0) + ident_label_count;
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
	m->f_allocation = find_family(fams, nfams, "accelerator_allocation_info");
	if (!rc && (!m->f_instance || !m->f_neuron_hw || !m->f_allocation)) {
		snprintf(err, size, "the families instance_info, neuron_hardware_info and accelerator_allocation_info are defined in no block");
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
	static const char *const types[] = { "gauge", "counter", "histogram" };
	json_t *s = schema_json(), *o = json_object(), *fl = json_array(), *fams = json_array(), *rs = json_array();
	json_t *il = json_array();

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
	for (size_t i = 0; i < ident_label_count; i++) {
		const struct ident_label *x = &ident_label_rows[i];
		static const char *const kinds[] = { NULL, "pod", "container" };

		json_array_append_new(il, json_pack("{s:s, s:s, s:s?, s:s?, s:s?}", "label", x->label, "field", x->field,
						    "key_of", kinds[x->key_of], "fallback", x->fallback, "not_for",
						    kinds[x->not_for]));
	}
	json_object_set_new(o, "ident_labels", il);
	json_decref(s);
	return o;
}

