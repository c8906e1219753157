/* SPDX-License-Identifier: MIT */
/*
 * Configuration schema and validation; see config.h.
 *
 * The groups (canonical name, neuron-monitor alias, scope) are
 * common/schema.h's; the rest is a handful of keys per object. Unknown keys are errors, so a
 * typo never silently turns into a default.
 */
#include "config.h"
#include "../common/doc.h"
#include "../common/timeutil.h"
#include "../common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const device_types[] = { "nvidia", "amdgpu", "neuron", "ncs2", "hwmon", "auto", NULL };

static void group_known_list(enum group_scope scope, char *dst, size_t size)
{
	size_t n = 0;

	dst[0] = '\0';
	for (int i = 0; i < GROUP_COUNT; i++)
		if (group_scope(i) == scope)
			n += (size_t)snprintf(dst + n, n < size ? size - n : 0, "%s%s", n ? ", " : "",
					      group_name(i));
}

/* Validation context: the document and the first error. */
struct vctx {
	const struct doc *d;
	char **err;
};

#define VFAIL(v, path, at_key, ...)                                    \
	do {                                                            \
		*(v)->err = doc_error((v)->d, (path), (at_key), __VA_ARGS__); \
		return -EINVAL;                                         \
	} while (0)

/* Every key of obj must be one of the NULL-terminated list keys. */
static int check_keys(struct vctx *v, const char *path, json_t *obj, const char *const *keys)
{
	*v->err = doc_check_keys(v->d, path, obj, keys);
	return *v->err ? -EINVAL : 0;
}

/* Parse an optional "period" member of obj into *ms (left alone when absent). */
static int get_period(struct vctx *v, const char *path, json_t *obj, int64_t *ms)
{
	json_t *p = json_object_get(obj, "period");
	char sub[256];
	const char *why = NULL;
	int64_t val;

	if (!p)
		return 0;
	doc_path_key(sub, sizeof(sub), path, "period");
	if (json_is_string(p)) {
		if (duration_parse(json_string_value(p), &val, &why))
			VFAIL(v, sub, 0, "invalid duration \"%s\": %s", json_string_value(p), why);
	} else if (json_is_number(p)) {
		double s = json_number_value(p);

		if (s < 0 || s > 1e9)
			VFAIL(v, sub, 0, "period out of range: %g s", s);
		val = (int64_t)(s * 1000.0 + 0.5);
	} else {
		VFAIL(v, sub, 0, "expected a duration such as \"1s\" or a number of seconds, got %s",
		      doc_kind(p));
	}
	if (val < CFG_MIN_PERIOD_MS)
		VFAIL(v, sub, 0, "period too short: %lld ms; the minimum is 100ms", (long long)val);
	if (val > CFG_MAX_PERIOD_MS)
		VFAIL(v, sub, 0, "period too long; the maximum is 24h");
	*ms = val;
	return 0;
}

static int get_string(struct vctx *v, const char *path, json_t *obj, const char *key, const char **out)
{
	json_t *s = json_object_get(obj, key);
	char sub[256];

	if (!s)
		return 0;
	doc_path_key(sub, sizeof(sub), path, key);
	if (!json_is_string(s))
		VFAIL(v, sub, 0, "expected a string, got %s", doc_kind(s));
	*out = json_string_value(s);
	return 0;
}

/* Parse a "metrics" array of {type, period} for one scope. */
static int parse_groups(struct vctx *v, const char *path, json_t *arr, enum group_scope scope,
			int64_t inherited_ms, struct cfg_group **out, size_t *nout)
{
	static const char *const keys[] = { "type", "period", NULL };
	char sub[256], tpath[256], known[256];
	size_t i;
	json_t *m;

	if (!json_is_array(arr))
		VFAIL(v, path, 0, "expected an array of metric groups, got %s", doc_kind(arr));
	*out = xcalloc(json_array_size(arr), sizeof(**out));
	*nout = 0;
	json_array_foreach(arr, i, m) {
		const char *type = NULL;
		int64_t ms = inherited_ms;
		int id;

		doc_path_index(sub, sizeof(sub), path, i);
		if (!json_is_object(m))
			VFAIL(v, sub, 0, "expected an object like {\"type\": \"...\"}, got %s", doc_kind(m));
		if (check_keys(v, sub, m, keys) || get_string(v, sub, m, "type", &type) ||
		    get_period(v, sub, m, &ms))
			return -EINVAL;
		doc_path_key(tpath, sizeof(tpath), sub, "type");
		if (!type)
			VFAIL(v, sub, 0, "missing \"type\"");
		id = schema_group_lookup(type, scope);
		if (id < 0) {
			group_known_list(scope, known, sizeof(known));
			for (int sc = SCOPE_SYSTEM; sc <= SCOPE_DEVICE; sc++)
				if (sc != (int)scope && schema_group_lookup(type, (enum group_scope)sc) >= 0)
					VFAIL(v, tpath, 0, "\"%s\" is a %s group, not allowed here; known: %s", type,
					      scope_name(sc), known);
			VFAIL(v, tpath, 0, "unknown metric group \"%s\"; known: %s", type, known);
		}
		for (size_t j = 0; j < *nout; j++)
			if ((*out)[j].id == (enum group_id)id)
				VFAIL(v, tpath, 0, "metric group \"%s\" listed twice", group_name(id));
		(*out)[*nout].id = (enum group_id)id;
		(*out)[*nout].period_ms = ms;
		(*nout)++;
	}
	return 0;
}

static int parse_address(struct vctx *v, const char *path, struct cfg_runtime *rt)
{
	char sub[256];
	const char *a = rt->address;

	doc_path_key(sub, sizeof(sub), path, "address");
	if (!strncmp(a, "pid:", 4)) {
		char *end;
		long pid;

		errno = 0;
		pid = strtol(a + 4, &end, 10);
		if (a[4] == '\0' || *end || errno || pid <= 0 || pid > 0x3fffffff)
			VFAIL(v, sub, 0, "invalid address \"%s\": expected pid:N with N a process id", a);
		rt->kind = RT_PID;
		rt->pid = (pid_t)pid;
	} else if (!strncmp(a, "process:", 8)) {
		if (a[8] == '\0' || strchr(a + 8, '/'))
			VFAIL(v, sub, 0, "invalid address \"%s\": expected process:NAME (a command name)", a);
		rt->kind = RT_PROCESS;
		rt->name = xstrdup(a + 8);
	} else if (a[0] == '\0') {
		VFAIL(v, sub, 0, "empty address");
	} else {
		/* Not an error: the runtime's entry in each report says why it is not polled. */
		rt->kind = RT_UNSUPPORTED;
	}
	return 0;
}

static int parse_runtime(struct vctx *v, const char *path, json_t *o, int64_t root_ms, struct cfg_runtime *rt)
{
	static const char *const keys[] = { "address", "tag_filter", "period", "metrics", NULL };
	const char *addr = NULL, *filter = NULL;
	json_t *metrics;
	char sub[256];
	int rc;

	if (!json_is_object(o))
		VFAIL(v, path, 0, "expected a runtime object, got %s", doc_kind(o));
	rt->period_ms = root_ms;
	if (check_keys(v, path, o, keys) || get_string(v, path, o, "address", &addr) ||
	    get_string(v, path, o, "tag_filter", &filter) || get_period(v, path, o, &rt->period_ms))
		return -EINVAL;
	rt->address = xstrdup(addr ? addr : "");
	if (addr) {
		if (parse_address(v, path, rt))
			return -EINVAL;
	} else {
		rt->kind = RT_NEURON;
	}
	if (filter) {
		rc = regcomp(&rt->tag_re, filter, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char msg[128];

			regerror(rc, &rt->tag_re, msg, sizeof(msg));
			doc_path_key(sub, sizeof(sub), path, "tag_filter");
			VFAIL(v, sub, 0, "invalid regular expression \"%s\": %s", filter, msg);
		}
		rt->tag_filter = xstrdup(filter);
	}
	metrics = json_object_get(o, "metrics");
	doc_path_key(sub, sizeof(sub), path, "metrics");
	if (!metrics)
		VFAIL(v, path, 0, "missing \"metrics\": list the groups to collect, e.g. [{\"type\": \"memory_used\"}]");
	return parse_groups(v, sub, metrics, SCOPE_RUNTIME, rt->period_ms, &rt->groups, &rt->ngroups);
}

/* Every group of a scope at one period (a device block without "metrics"). */
static void all_groups(enum group_scope scope, int64_t ms, struct cfg_group **out, size_t *n)
{
	*out = xcalloc(GROUP_COUNT, sizeof(**out));
	*n = 0;
	for (int i = 0; i < GROUP_COUNT; i++)
		if (group_scope(i) == scope)
			(*out)[(*n)++] = (struct cfg_group){ (enum group_id)i, ms };
}

static int parse_select(struct vctx *v, const char *path, json_t *sel, struct cfg_device *dev)
{
	char sub[256];
	size_t i;
	json_t *e;

	if (!sel || (json_is_string(sel) && !strcmp(json_string_value(sel), "all"))) {
		dev->select_all = 1;
		return 0;
	}
	if (!json_is_array(sel) || json_array_size(sel) == 0)
		VFAIL(v, path, 0, "expected \"all\" or a non-empty list of device indices, UUIDs or serials");
	dev->indices = xcalloc(json_array_size(sel), sizeof(*dev->indices));
	dev->ids = xcalloc(json_array_size(sel), sizeof(*dev->ids));
	json_array_foreach(sel, i, e) {
		doc_path_index(sub, sizeof(sub), path, i);
		if (json_is_integer(e) && json_integer_value(e) >= 0 && json_integer_value(e) < 65536)
			dev->indices[dev->nindices++] = (long)json_integer_value(e);
		else if (json_is_string(e) && *json_string_value(e))
			dev->ids[dev->nids++] = xstrdup(json_string_value(e));
		else
			VFAIL(v, sub, 0, "expected a device index (0, 1, ...), a UUID or a serial, got %s", doc_kind(e));
	}
	return 0;
}

static int parse_device(struct vctx *v, const char *path, json_t *o, int64_t root_ms, struct cfg_device *dev)
{
	static const char *const keys[] = { "type", "select", "period", "metrics", NULL };
	const char *type = NULL;
	char sub[256], known[128];
	json_t *metrics;
	size_t i, n = 0;

	if (!json_is_object(o))
		VFAIL(v, path, 0, "expected a device object like {\"type\": \"nvidia\"}, got %s", doc_kind(o));
	dev->period_ms = root_ms;
	if (check_keys(v, path, o, keys) || get_string(v, path, o, "type", &type) ||
	    get_period(v, path, o, &dev->period_ms))
		return -EINVAL;
	if (!type)
		VFAIL(v, path, 0, "missing \"type\"");
	for (i = 0; device_types[i] && strcmp(device_types[i], type); i++)
		;
	if (!device_types[i]) {
		for (i = 0; device_types[i]; i++)
			n += (size_t)snprintf(known + n, n < sizeof(known) ? sizeof(known) - n : 0, "%s%s", i ? ", " : "",
					      device_types[i]);
		doc_path_key(sub, sizeof(sub), path, "type");
		VFAIL(v, sub, 0, "unknown device type \"%s\"; known: %s", type, known);
	}
	dev->type = xstrdup(type);
	doc_path_key(sub, sizeof(sub), path, "select");
	if (parse_select(v, sub, json_object_get(o, "select"), dev))
		return -EINVAL;
	metrics = json_object_get(o, "metrics");
	if (!metrics) {
		all_groups(SCOPE_DEVICE, dev->period_ms, &dev->groups, &dev->ngroups);
		return 0;
	}
	doc_path_key(sub, sizeof(sub), path, "metrics");
	return parse_groups(v, sub, metrics, SCOPE_DEVICE, dev->period_ms, &dev->groups, &dev->ngroups);
}

int cfg_device_selects(const struct cfg_device *d, unsigned index, const char *uuid, const char *serial)
{
	if (d->select_all)
		return 1;
	for (size_t i = 0; i < d->nindices; i++)
		if (d->indices[i] == (long)index)
			return 1;
	for (size_t i = 0; i < d->nids; i++)
		if ((uuid && !strcmp(d->ids[i], uuid)) || (serial && !strcmp(d->ids[i], serial)))
			return 1;
	return 0;
}

int cfg_from_doc(const struct doc *d, struct cfg *cfg, char **err)
{
	static const char *const keys[] = { "period", "runtimes", "neuron_runtimes", "system_metrics",
					    "devices", "procfs", "sysfs", NULL };
	struct vctx v = { d, err };
	json_t *root = d->root, *rts, *sys, *dev, *e;
	const char *rkey = "runtimes", *procfs = NULL, *sysfs = NULL;
	char sub[256];
	size_t i;
	int rc = -EINVAL;

	memset(cfg, 0, sizeof(*cfg));
	cfg->period_ms = CFG_DEFAULT_PERIOD_MS;
	*err = NULL;
	if (!json_is_object(root)) {
		*err = doc_error(d, "", 0, "expected a configuration object, got %s", doc_kind(root));
		goto fail;
	}
	if (check_keys(&v, "", root, keys) || get_period(&v, "", root, &cfg->period_ms) ||
	    get_string(&v, "", root, "procfs", &procfs) || get_string(&v, "", root, "sysfs", &sysfs))
		goto fail;
	cfg->procfs = xstrdup(procfs ? procfs : "/proc");
	cfg->sysfs = xstrdup(sysfs ? sysfs : "/sys");

	rts = json_object_get(root, "runtimes");
	if (json_object_get(root, "neuron_runtimes")) {
		if (rts) {
			*err = doc_error(d, "neuron_runtimes", 1,
					 "\"neuron_runtimes\" is an alias of \"runtimes\"; use only one of them");
			goto fail;
		}
		rkey = "neuron_runtimes";
		rts = json_object_get(root, rkey);
	}
	if (rts) {
		if (!json_is_array(rts)) {
			*err = doc_error(d, rkey, 0, "expected an array of runtimes, got %s", doc_kind(rts));
			goto fail;
		}
		cfg->runtimes = xcalloc(json_array_size(rts), sizeof(*cfg->runtimes));
		json_array_foreach(rts, i, e) {
			doc_path_index(sub, sizeof(sub), rkey, i);
			cfg->nruntimes++;
			if (parse_runtime(&v, sub, e, cfg->period_ms, &cfg->runtimes[i]))
				goto fail;
		}
	}
	sys = json_object_get(root, "system_metrics");
	if (sys && parse_groups(&v, "system_metrics", sys, SCOPE_SYSTEM, cfg->period_ms, &cfg->system,
				&cfg->nsystem))
		goto fail;
	dev = json_object_get(root, "devices");
	if (dev) {
		if (!json_is_array(dev)) {
			*err = doc_error(d, "devices", 0, "expected an array of device objects, got %s",
					 doc_kind(dev));
			goto fail;
		}
		cfg->devices = xcalloc(json_array_size(dev), sizeof(*cfg->devices));
		json_array_foreach(dev, i, e) {
			doc_path_index(sub, sizeof(sub), "devices", i);
			cfg->ndevices++;
			if (parse_device(&v, sub, e, cfg->period_ms, &cfg->devices[i]))
				goto fail;
		}
	}
	return 0;
fail:
	cfg_free(cfg);
	return rc;
}

int cfg_load(const char *path, struct cfg *cfg, char **err)
{
	struct doc d;
	int rc = doc_load(path, &d, err);

	memset(cfg, 0, sizeof(*cfg));
	if (rc)
		return rc;
	rc = cfg_from_doc(&d, cfg, err);
	doc_free(&d);
	return rc;
}

void cfg_default(struct cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->period_ms = CFG_DEFAULT_PERIOD_MS;
	cfg->procfs = xstrdup("/proc");
	cfg->sysfs = xstrdup("/sys");
	cfg->nsystem = 2;
	cfg->system = xcalloc(2, sizeof(*cfg->system));
	cfg->system[0] = (struct cfg_group){ GROUP_VCPU_USAGE, CFG_DEFAULT_PERIOD_MS };
	cfg->system[1] = (struct cfg_group){ GROUP_MEMORY_INFO, CFG_DEFAULT_PERIOD_MS };
	cfg->ndevices = 1;
	cfg->devices = xcalloc(1, sizeof(*cfg->devices));
	cfg->devices[0].type = xstrdup("auto");
	cfg->devices[0].select_all = 1;
	cfg->devices[0].period_ms = CFG_DEFAULT_PERIOD_MS;
	all_groups(SCOPE_DEVICE, CFG_DEFAULT_PERIOD_MS, &cfg->devices[0].groups, &cfg->devices[0].ngroups);
}

static json_t *groups_json(const struct cfg_group *g, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:s, s:f}", "type", group_name(g[i].id), "period",
						   (double)g[i].period_ms / 1e3));
	return a;
}

json_t *cfg_effective(const struct cfg *cfg)
{
	json_t *o = json_object(), *rts = json_array(), *devs = json_array();

	json_object_set_new(o, "period", json_real((double)cfg->period_ms / 1e3));
	json_object_set_new(o, "procfs", json_string(cfg->procfs));
	json_object_set_new(o, "sysfs", json_string(cfg->sysfs));
	for (size_t i = 0; i < cfg->nruntimes; i++) {
		const struct cfg_runtime *rt = &cfg->runtimes[i];
		json_t *r = json_object();

		if (rt->kind != RT_NEURON)
			json_object_set_new(r, "address", json_string(rt->address));
		if (rt->tag_filter)
			json_object_set_new(r, "tag_filter", json_string(rt->tag_filter));
		json_object_set_new(r, "period", json_real((double)rt->period_ms / 1e3));
		json_object_set_new(r, "metrics", groups_json(rt->groups, rt->ngroups));
		json_array_append_new(rts, r);
	}
	json_object_set_new(o, "runtimes", rts);
	json_object_set_new(o, "system_metrics", groups_json(cfg->system, cfg->nsystem));
	for (size_t i = 0; i < cfg->ndevices; i++) {
		const struct cfg_device *dv = &cfg->devices[i];
		json_t *sel = dv->select_all ? json_string("all") : json_array();

		for (size_t k = 0; !dv->select_all && k < dv->nindices; k++)
			json_array_append_new(sel, json_integer(dv->indices[k]));
		for (size_t k = 0; !dv->select_all && k < dv->nids; k++)
			json_array_append_new(sel, json_string(dv->ids[k]));
		json_array_append_new(devs, json_pack("{s:s, s:o, s:f, s:o}", "type", dv->type, "select", sel, "period",
						      (double)dv->period_ms / 1e3, "metrics",
						      groups_json(dv->groups, dv->ngroups)));
	}
	json_object_set_new(o, "devices", devs);
	return o;
}

void cfg_free(struct cfg *cfg)
{
	for (size_t i = 0; i < cfg->nruntimes; i++) {
		struct cfg_runtime *rt = &cfg->runtimes[i];

		free(rt->address);
		free(rt->name);
		if (rt->tag_filter) {
			regfree(&rt->tag_re);
			free(rt->tag_filter);
		}
		free(rt->groups);
	}
	for (size_t i = 0; i < cfg->ndevices; i++) {
		struct cfg_device *dv = &cfg->devices[i];

		free(dv->type);
		free(dv->indices);
		for (size_t k = 0; k < dv->nids; k++)
			free(dv->ids[k]);
		free(dv->ids);
		free(dv->groups);
	}
	free(cfg->devices);
	free(cfg->runtimes);
	free(cfg->system);
	free(cfg->procfs);
	free(cfg->sysfs);
	memset(cfg, 0, sizeof(*cfg));
}
