/* SPDX-License-Identifier: MIT */
/*
 * Configuration schema and validation; see config.h.
 *
 * The groups (canonical name, neuron-monitor alias, scope) are
 * common/schema.h's; the rest is a handful of keys per object. Unknown keys
 * are errors, so a typo never silently turns into a default. Device types
 * and runtime address schemes come from the collector registry
 * (collectors.c): each collector parses what is its own (its address, its
 * device block and the keys it declares there, which are known for its type
 * only).
 */
#include "config.h"
#include "../../common/doc.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"
#include "../host/container.h"
#include "../host/instance.h"
#include "../host/kubelet_pods.h"
#include "../host/podres.h"
#include "../core/collector.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static void group_known_list(enum group_scope scope, char *dst, size_t size)
{
	size_t n = 0;

	dst[0] = '\0';
	for (int i = 0; i < GROUP_COUNT; i++)
		if (group_scope(i) == scope)
			n += (size_t)snprintf(dst + n, n < size ? size - n : 0, "%s%s", n ? ", " : "",
					      group_name(i));
}

/* Outside input quoted in a message: capped at LOG_QUOTE_MAX bytes, control characters escaped. */
#define QUOTE(buf, s) log_quote((buf), sizeof(buf), (s), (size_t)-1)

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

int cfg_block_error(const struct cfg_block *b, const char *sub, int at_key, const char *fmt, ...)
{
	char path[256], msg[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (sub && sub[0] == '[')
		snprintf(path, sizeof(path), "%s%s", b->path, sub);
	else if (sub)
		doc_path_key(path, sizeof(path), b->path, sub);
	else
		snprintf(path, sizeof(path), "%s", b->path);
	*b->err = doc_error(b->doc, path, at_key, "%s", msg);
	return -EINVAL;
}

int cfg_block_string(const struct cfg_block *b, const char *key, const char *what, const char **out)
{
	json_t *s = json_object_get(b->obj, key);

	if (!s)
		return 0;
	if (!json_is_string(s))
		return cfg_block_error(b, key, 0, "expected %s (a non-empty string), got %s", what, doc_kind(s));
	if (!json_string_length(s))
		return cfg_block_error(b, key, 0, "expected %s (a non-empty string), got an empty string", what);
	if (strlen(json_string_value(s)) != json_string_length(s))
		return cfg_block_error(b, key, 0, "expected %s (a non-empty string), got a string with a NUL character",
				       what);
	*out = json_string_value(s);
	return 0;
}

/* Every key of obj must be one of the NULL-terminated list keys. */
static int check_keys(struct vctx *v, const char *path, json_t *obj, const char *const *keys)
{
	*v->err = doc_check_keys(v->d, path, obj, keys);
	return *v->err ? -EINVAL : 0;
}

/* Is key in the NULL-terminated list keys (which may be NULL)? */
static int key_in(const char *const *keys, const char *key)
{
	for (size_t i = 0; keys && keys[i]; i++)
		if (!strcmp(keys[i], key))
			return 1;
	return 0;
}

/* Names the collector that declares key in dst ("type \"nvidia\""); 0 when none does. */
typedef int (*key_owner_fn)(const char *key, char *dst, size_t size);

/*
 * The keys of a block: every such block's (base), then those its collector
 * declares (own, may be NULL). A key that another collector declares is an
 * error that says whose it is: "unknown key K for WHAT; known: ... (K is a
 * key of OWNER)"; any other unknown key gets doc_check_keys' message.
 */
static int check_owned_keys(struct vctx *v, const char *path, json_t *o, const char *const *base,
			    const char *const *own, const char *what, key_owner_fn owner)
{
	const char **keys, *k;
	size_t n = 0, nbase = 0, nown = 0;
	json_t *val;
	int rc;

	while (base[nbase])
		nbase++;
	while (own && own[nown])
		nown++;
	keys = xcalloc(nbase + nown + 1, sizeof(*keys));
	for (size_t i = 0; i < nbase; i++)
		keys[n++] = base[i];
	for (size_t i = 0; i < nown; i++)
		keys[n++] = own[i];
	json_object_foreach(o, k, val) {
		char sub[256], known[512], q[LOG_QUOTE_BUF], whose[128];
		size_t len = 0;

		if (key_in(keys, k))
			continue;
		if (!owner(k, whose, sizeof(whose)))
			break; /* doc_check_keys' message */
		known[0] = '\0';
		for (size_t i = 0; keys[i]; i++)
			len += (size_t)snprintf(known + len, len < sizeof(known) ? sizeof(known) - len : 0, "%s%s",
						i ? ", " : "", keys[i]);
		doc_path_key(sub, sizeof(sub), path, k);
		*v->err = doc_error(v->d, sub, 1, "unknown key \"%s\" for %s; known: %s (\"%s\" is a key of %s)",
				    QUOTE(q, k), what, known, q, whose);
		free(keys);
		return -EINVAL;
	}
	rc = check_keys(v, path, o, keys);
	free(keys);
	return rc;
}

/*
 * Parse an optional duration member key of obj ("1s", "250ms", or a number
 * of seconds) into *ms, left alone when absent: min_ms (named min_text in
 * the message) to 24 h.
 */
static int get_duration(struct vctx *v, const char *path, json_t *obj, const char *key, int64_t min_ms,
			const char *min_text, int64_t *ms)
{
	json_t *p = json_object_get(obj, key);
	char sub[256], q[LOG_QUOTE_BUF];
	const char *why = NULL;
	int64_t val;

	if (!p)
		return 0;
	doc_path_key(sub, sizeof(sub), path, key);
	if (json_is_string(p)) {
		if (duration_parse(json_string_value(p), &val, &why))
			VFAIL(v, sub, 0, "invalid duration \"%s\": %s", QUOTE(q, json_string_value(p)), why);
	} else if (json_is_number(p)) {
		double s = json_number_value(p);

		if (s < 0 || s > 1e9)
			VFAIL(v, sub, 0, "%s out of range: %g s", key, s);
		val = (int64_t)(s * 1000.0 + 0.5);
	} else {
		VFAIL(v, sub, 0, "expected a duration such as \"1s\" or a number of seconds, got %s",
		      doc_kind(p));
	}
	if (val < min_ms)
		VFAIL(v, sub, 0, "%s too short: %lld ms; the minimum is %s", key, (long long)val, min_text);
	if (val > CFG_MAX_PERIOD_MS)
		VFAIL(v, sub, 0, "%s too long; the maximum is 24h", key);
	*ms = val;
	return 0;
}

/* Parse an optional "period" member of obj into *ms (left alone when absent). */
static int get_period(struct vctx *v, const char *path, json_t *obj, int64_t *ms)
{
	return get_duration(v, path, obj, "period", CFG_MIN_PERIOD_MS, "100ms", ms);
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
	char sub[256], tpath[256], known[256], q[LOG_QUOTE_BUF];
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
					VFAIL(v, tpath, 0, "\"%s\" is a %s group, not allowed here; known: %s", QUOTE(q, type),
					      scope_name(sc), known);
			VFAIL(v, tpath, 0, "unknown metric group \"%s\"; known: %s", QUOTE(q, type), known);
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

/* Append the accepted address schemes ("pid:, process:, unix:") to dst. */
static void scheme_known_list(char *dst, size_t size)
{
	const char *const *un = collector_schemes_unpolled();
	size_t n = collector_schemes_list(dst, size);

	for (size_t i = 0; un[i]; i++)
		n += (size_t)snprintf(dst + n, n < size ? size - n : 0, "%s%s:", n ? ", " : "", un[i]);
}

/* The address's scheme picks the runtime collector (the registry's), which parses the rest. */
static int parse_address(struct vctx *v, const char *path, json_t *o, struct cfg_runtime *rt)
{
	const struct cfg_block b = { .doc = v->d, .path = path, .obj = o, .err = v->err, .own = &rt->own, .rt = rt };
	const struct collector_ops *ops;
	const char *a = rt->address, *colon = strchr(a, ':');
	const char *const *un;
	char scheme[32], known[256], q[LOG_QUOTE_BUF], qs[LOG_QUOTE_BUF];

	if (a[0] == '\0')
		return cfg_block_error(&b, "address", 0, "empty address");
	if (colon && (size_t)(colon - a) < sizeof(scheme)) {
		memcpy(scheme, a, (size_t)(colon - a));
		scheme[colon - a] = '\0';
		ops = collector_scheme(scheme);
		if (ops) {
			struct cfg_block ab = b;

			rt->collector = ops->name;
			ab.arg = colon + 1;
			return ops->config ? ops->config(&ab) : 0;
		}
		for (un = collector_schemes_unpolled(); *un; un++)
			if (!strcmp(*un, scheme))
				return 0; /* not an error: the runtime's entry in each report says why it is not polled */
	}
	scheme_known_list(known, sizeof(known));
	if (!colon)
		return cfg_block_error(&b, "address", 0,
				       "invalid address \"%s\": expected SCHEME:..., with SCHEME one of %s (or no "
				       "address: Neuron runtime discovery)", QUOTE(q, a), known);
	return cfg_block_error(&b, "address", 0,
			       "unknown address scheme \"%s:\" in \"%s\"; known: %s (or no address: Neuron runtime "
			       "discovery)", log_quote(qs, sizeof(qs), a, (size_t)(colon - a)), QUOTE(q, a), known);
}

/* The runtime collector an address names (NULL: none, or not a string): whose keys its block may have. */
static const struct collector_ops *address_ops(json_t *addr)
{
	const char *a = json_string_value(addr), *colon = a ? strchr(a, ':') : NULL;
	char scheme[32];

	if (!colon || (size_t)(colon - a) >= sizeof(scheme))
		return NULL;
	memcpy(scheme, a, (size_t)(colon - a));
	scheme[colon - a] = '\0';
	return collector_scheme(scheme);
}

static int runtime_key_owner(const char *key, char *dst, size_t size)
{
	const struct collector_ops *const *all = collectors();

	for (size_t t = 0; all[t]; t++)
		if (all[t]->scope == COLL_RUNTIME && key_in(all[t]->keys, key)) {
			size_t n = 0;

			for (size_t k = 0; all[t]->schemes[k]; k++)
				n += (size_t)snprintf(dst + n, n < size ? size - n : 0, "%s%s:",
						      k == 0 ? "" : all[t]->schemes[k + 1] ? ", " : " and ",
						      all[t]->schemes[k]);
			snprintf(dst + n, n < size ? size - n : 0, " runtimes");
			return 1;
		}
	return 0;
}

static int parse_runtime(struct vctx *v, const char *path, json_t *o, int64_t root_ms, struct cfg_runtime *rt)
{
	static const char *const keys[] = { "address", "tag_filter", "period", "metrics", NULL };
	const struct collector_ops *ops;
	const char *addr = NULL, *filter = NULL;
	json_t *metrics;
	char sub[256], what[LOG_QUOTE_BUF + 16], qa[LOG_QUOTE_BUF];
	int rc;

	if (!json_is_object(o))
		VFAIL(v, path, 0, "expected a runtime object, got %s", doc_kind(o));
	rt->period_ms = root_ms;
	/* The address's collector owns the block's other keys: known here, parsed by its config callback. */
	ops = address_ops(json_object_get(o, "address"));
	if (json_is_string(json_object_get(o, "address")))
		snprintf(what, sizeof(what), "address \"%s\"", QUOTE(qa, json_string_value(json_object_get(o, "address"))));
	else
		snprintf(what, sizeof(what), "a runtime without an address");
	if (check_owned_keys(v, path, o, keys, ops ? ops->keys : NULL, what, runtime_key_owner) ||
	    get_string(v, path, o, "address", &addr) || get_string(v, path, o, "tag_filter", &filter) ||
	    get_period(v, path, o, &rt->period_ms))
		return -EINVAL;
	rt->address = xstrdup(addr ? addr : "");
	if (addr && parse_address(v, path, o, rt))
		return -EINVAL;
	if (filter) {
		rc = regcomp(&rt->tag_re, filter, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char msg[128], q[LOG_QUOTE_BUF];

			regerror(rc, &rt->tag_re, msg, sizeof(msg));
			doc_path_key(sub, sizeof(sub), path, "tag_filter");
			VFAIL(v, sub, 0, "invalid regular expression \"%s\": %s", QUOTE(q, filter), msg);
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

/* Append the accepted device types (the registry's, then "auto") to dst. */
static void device_known_list(char *dst, size_t size)
{
	const struct collector_ops *const *all = collectors();
	size_t n = 0;

	dst[0] = '\0';
	for (size_t i = 0; all[i]; i++)
		if (all[i]->scope == COLL_DEVICE)
			n += (size_t)snprintf(dst + n, n < size ? size - n : 0, "%s%s", n ? ", " : "", all[i]->name);
	snprintf(dst + n, n < size ? size - n : 0, "%sauto", n ? ", " : "");
}

/* The keys every devices block has; a collector may declare more for its type. */
static const char *const device_keys[] = { "type", "select", "period", "metrics", NULL };

/* "type \"nvidia\"", or "types \"nvidia\", \"amdgpu\"" when several declare key. */
static int device_key_owner(const char *key, char *dst, size_t size)
{
	const struct collector_ops *const *all = collectors();
	char names[256];
	size_t n = 0;
	int found = 0;

	for (size_t t = 0; all[t]; t++)
		if (all[t]->scope == COLL_DEVICE && key_in(all[t]->keys, key)) {
			n += (size_t)snprintf(names + n, n < sizeof(names) ? sizeof(names) - n : 0, "%s\"%s\"",
					      found ? ", " : "", all[t]->name);
			found++;
		}
	if (found)
		snprintf(dst, size, "%s %s", found > 1 ? "types" : "type", names);
	return found > 0;
}

/* The keys of a devices block (ops NULL: "auto", which has none of its own). */
static int check_device_keys(struct vctx *v, const char *path, json_t *o, const char *type,
			     const struct collector_ops *ops)
{
	char what[LOG_QUOTE_BUF + 16], q[LOG_QUOTE_BUF];

	snprintf(what, sizeof(what), "type \"%s\"", QUOTE(q, type));
	return check_owned_keys(v, path, o, device_keys, ops ? ops->keys : NULL, what, device_key_owner);
}

static int parse_device(struct vctx *v, const char *path, json_t *o, int64_t root_ms, struct cfg_device *dev)
{
	const struct cfg_block b = { .doc = v->d, .path = path, .obj = o, .err = v->err, .own = &dev->own, .dev = dev };
	const struct collector_ops *ops = NULL;
	const char *type = NULL;
	char sub[256], known[256], q[LOG_QUOTE_BUF];
	json_t *metrics;

	if (!json_is_object(o))
		VFAIL(v, path, 0, "expected a device object like {\"type\": \"nvidia\"}, got %s", doc_kind(o));
	dev->period_ms = root_ms;
	if (get_string(v, path, o, "type", &type))
		return -EINVAL;
	if (!type) /* a misspelt "type" is the better message */
		return check_keys(v, path, o, device_keys) ? -EINVAL : cfg_block_error(&b, NULL, 0, "missing \"type\"");
	if (strcmp(type, "auto") && !(ops = collector_find(NULL, COLL_DEVICE, type))) {
		device_known_list(known, sizeof(known));
		doc_path_key(sub, sizeof(sub), path, "type");
		VFAIL(v, sub, 0, "unknown device type \"%s\"; known: %s", QUOTE(q, type), known);
	}
	/* The type's collector owns its keys: known here, and parsed by its config callback below. */
	if (check_device_keys(v, path, o, type, ops) || get_period(v, path, o, &dev->period_ms))
		return -EINVAL;
	dev->type = xstrdup(type);
	doc_path_key(sub, sizeof(sub), path, "select");
	if (parse_select(v, sub, json_object_get(o, "select"), dev))
		return -EINVAL;
	metrics = json_object_get(o, "metrics");
	if (!metrics) {
		all_groups(SCOPE_DEVICE, dev->period_ms, &dev->groups, &dev->ngroups);
	} else {
		doc_path_key(sub, sizeof(sub), path, "metrics");
		if (parse_groups(v, sub, metrics, SCOPE_DEVICE, dev->period_ms, &dev->groups, &dev->ngroups))
			return -EINVAL;
	}
	/* The collector's own rules for its block, and its own keys. */
	return ops && ops->config ? ops->config(&b) : 0;
}

int cfg_device_named(const struct cfg *cfg, const char *type)
{
	for (size_t i = 0; i < cfg->ndevices; i++)
		if (strcmp(cfg->devices[i].type, "auto") && !strcmp(cfg->devices[i].type, type))
			return 1;
	return 0;
}

/*
 * Do two blocks select a device in common, as far as the config can tell
 * (the same index, UUID or serial, or "all")? What they share goes to dst.
 */
static int selects_overlap(const struct cfg_device *a, const struct cfg_device *b, char *dst, size_t size)
{
	if (a->select_all || b->select_all) {
		snprintf(dst, size, "\"all\"");
		return 1;
	}
	for (size_t i = 0; i < a->nindices; i++)
		for (size_t k = 0; k < b->nindices; k++)
			if (a->indices[i] == b->indices[k]) {
				snprintf(dst, size, "index %ld", a->indices[i]);
				return 1;
			}
	for (size_t i = 0; i < a->nids; i++)
		for (size_t k = 0; k < b->nids; k++)
			if (!strcmp(a->ids[i], b->ids[k])) {
				char q[LOG_QUOTE_BUF];

				snprintf(dst, size, "\"%s\"", QUOTE(q, a->ids[i]));
				return 1;
			}
	return 0;
}

/*
 * Two blocks of one type (two "nvidia", or two "auto") that select the same
 * device would collect it twice and sinks would add both: an error at the
 * later block's "select" (or its "type" when it has none).
 */
static int check_device_overlap(struct vctx *v, json_t *arr, const struct cfg *cfg)
{
	char what[LOG_QUOTE_BUF + 8], path[64], sub[80];

	for (size_t j = 1; j < cfg->ndevices; j++)
		for (size_t i = 0; i < j; i++) {
			const struct cfg_device *a = &cfg->devices[i], *b = &cfg->devices[j];

			if (strcmp(a->type, b->type) || !selects_overlap(a, b, what, sizeof(what)))
				continue;
			doc_path_index(path, sizeof(path), "devices", j);
			doc_path_key(sub, sizeof(sub), path,
				     json_object_get(json_array_get(arr, j), "select") ? "select" : "type");
			VFAIL(v, sub, 0,
			      "devices[%zu] already collects these \"%s\" devices (both select %s); one block per "
			      "device, or give each block its own \"select\"",
			      i, a->type, what);
		}
	return 0;
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

/* ---- the "host" block --------------------------------------------------------------------------------- */

/* instance_metadata's values (what instance_mode_parse takes), in enum instance_mode's order: for printing. */
static const char *const instance_modes[] = { "auto", "on", "off" };

/* The block's string member key as an http:// or https:// URL (*out left alone when absent). */
static int host_url(const struct cfg_block *b, const char *key, const char **out)
{
	const char *u = NULL;
	char q[LOG_QUOTE_BUF];

	if (cfg_block_string(b, key, "an http:// or https:// URL", &u))
		return -EINVAL;
	if (u && strncmp(u, "https://", 8) && strncmp(u, "http://", 7))
		return cfg_block_error(b, key, 0, "expected an http:// or https:// URL, got \"%s\"", QUOTE(q, u));
	if (u)
		*out = u;
	return 0;
}

/* "ecs_metadata": true, the endpoint the ECS agent names in every container of a task; false: none. */
static int host_ecs_metadata(const struct cfg_block *b, const char **url)
{
	json_t *e = json_object_get(b->obj, "ecs_metadata");
	const char *env;
	char q[LOG_QUOTE_BUF];

	if (!e || json_is_false(e))
		return 0;
	if (!json_is_true(e))
		return cfg_block_error(b, "ecs_metadata", 0, "expected true or false, got %s", doc_kind(e));
	if (json_object_get(b->obj, "ecs_metadata_url"))
		return cfg_block_error(b, "ecs_metadata", 1,
				       "\"ecs_metadata\" and \"ecs_metadata_url\" both name the task metadata "
				       "endpoint; use only one of them");
	env = getenv("ECS_CONTAINER_METADATA_URI_V4");
	if (!env || !*env)
		return cfg_block_error(b, "ecs_metadata", 0,
				       "ECS_CONTAINER_METADATA_URI_V4 is not set (not in an ECS task?); "
				       "\"ecs_metadata_url\" names the endpoint");
	if (strncmp(env, "https://", 8) && strncmp(env, "http://", 7))
		return cfg_block_error(b, "ecs_metadata", 0,
				       "ECS_CONTAINER_METADATA_URI_V4: expected an http:// or https:// URL, got \"%s\"",
				       QUOTE(q, env));
	*url = env;
	return 0;
}

/* The block's member key: a path (what it is, for the error), or "" (none). *out left alone when absent. */
static int host_path_or_none(const struct cfg_block *b, const char *key, const char *what, const char **out)
{
	json_t *e = json_object_get(b->obj, key);

	if (e && !json_is_string(e))
		return cfg_block_error(b, key, 0, "expected %s, or \"\" for none, got %s", what, doc_kind(e));
	if (json_is_string(e) && !json_string_length(e)) {
		*out = "";
		return 0;
	}
	return cfg_block_string(b, key, what, out);
}

/* The "host" block's "kubelet_pod_labels" into *out: an integer from 0 to KUBELET_LABELS_MAX; absent: 0. */
static int host_pod_labels(const struct cfg_block *b, int *out)
{
	json_t *n = json_object_get(b->obj, "kubelet_pod_labels");

	*out = 0;
	if (!n)
		return 0;
	if (!json_is_integer(n))
		return cfg_block_error(b, "kubelet_pod_labels", 0, "expected an integer from 0 (none) to %d, got %s",
				       KUBELET_LABELS_MAX, doc_kind(n));
	if (json_integer_value(n) < 0 || json_integer_value(n) > KUBELET_LABELS_MAX)
		return cfg_block_error(b, "kubelet_pod_labels", 0, "expected an integer from 0 (none) to %d, got %lld",
				       KUBELET_LABELS_MAX, (long long)json_integer_value(n));
	*out = (int)json_integer_value(n);
	return 0;
}

/*
 * The "host" block into h: the host's roots and the services asked for
 * names, each key the command-line option of the same name (--path.rootfs:
 * "rootfs", --kubelet-url: "kubelet_url", ...).
 */
static int parse_host(struct vctx *v, json_t *o, struct cfg_host *h)
{
	static const char *const keys[] = { "rootfs", "run", "cgroupfs", "kubelet_url", "kubelet_token_file",
					     "kubelet_ca_file", "kubelet_refresh", "kubelet_pod_labels", "ecs_agent_url",
					     "ecs_metadata", "ecs_metadata_url", "ecs_refresh", "instance_metadata",
					     "pod_resources_socket", "hpc_job_mapping_dir", NULL };
	static const char *const dirs[] = { "rootfs", "run", "cgroupfs" };
	const struct cfg_block b = { .doc = v->d, .path = "host", .obj = o, .err = v->err };
	const char *s[3] = { NULL }, *kurl = NULL, *ktok = NULL, *kca = NULL, *agent = NULL, *meta = NULL,
		   *mode = NULL, *prs = NULL, *hpc = NULL;
	char q[LOG_QUOTE_BUF];

	if (!json_is_object(o))
		VFAIL(v, "host", 0, "expected an object of host options (\"rootfs\", \"kubelet_url\", ...), got %s",
		      doc_kind(o));
	if (check_keys(v, "host", o, keys))
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		if (cfg_block_string(&b, dirs[i], "a directory", &s[i]))
			return -EINVAL;
	if (host_url(&b, "kubelet_url", &kurl) || cfg_block_string(&b, "kubelet_token_file", "a file", &ktok) ||
	    cfg_block_string(&b, "kubelet_ca_file", "a file", &kca) ||
	    get_duration(v, "host", o, "kubelet_refresh", 1000, "1s", &h->kubelet_refresh_ms) ||
	    host_pod_labels(&b, &h->kubelet_pod_labels) ||
	    host_url(&b, "ecs_agent_url", &agent) || host_url(&b, "ecs_metadata_url", &meta) ||
	    host_ecs_metadata(&b, &meta) ||
	    get_duration(v, "host", o, "ecs_refresh", 1000, "1s", &h->ecs_refresh_ms) ||
	    cfg_block_string(&b, "instance_metadata", "auto, on or off", &mode) ||
	    host_path_or_none(&b, "pod_resources_socket", "a unix socket path", &prs) ||
	    host_path_or_none(&b, "hpc_job_mapping_dir", "a directory", &hpc))
		return -EINVAL;
	if (mode && instance_mode_parse(mode) < 0)
		return cfg_block_error(&b, "instance_metadata", 0, "expected auto, on or off, got \"%s\"", QUOTE(q, mode));
	h->instance_mode = mode ? instance_mode_parse(mode) : INSTANCE_AUTO;
	h->rootfs = s[0] ? xstrdup(s[0]) : NULL;
	h->run = s[1] ? xstrdup(s[1]) : NULL;
	h->cgroupfs = s[2] ? xstrdup(s[2]) : NULL;
	h->kubelet_url = kurl ? xstrdup(kurl) : NULL;
	h->kubelet_token_file = ktok ? xstrdup(ktok) : NULL;
	h->kubelet_ca_file = kca ? xstrdup(kca) : NULL;
	h->ecs_agent_url = agent ? xstrdup(agent) : NULL;
	h->ecs_metadata_url = meta ? xstrdup(meta) : NULL;
	h->pod_resources_socket = prs ? xstrdup(prs) : NULL;
	h->hpc_job_mapping_dir = hpc ? xstrdup(hpc) : NULL;
	return 0;
}

/* The effective "host" block: every key, the defaults filled in (those without one left out). */
static json_t *host_json(const struct cfg_host *h)
{
	const char *root = h->rootfs ? h->rootfs : "/";
	char *run = h->run ? xstrdup(h->run) : container_root_path(root, "run");
	char *cg = h->cgroupfs ? xstrdup(h->cgroupfs) : container_root_path(root, "sys/fs/cgroup");
	json_t *o = json_pack("{s:s, s:s, s:s}", "rootfs", root, "run", run, "cgroupfs", cg);
	const double dflt = (double)CONTAINER_REFRESH_DEFAULT_NS / 1e9;
	char *prs;

	free(run);
	free(cg);
	if (h->kubelet_url)
		json_object_set_new(o, "kubelet_url", json_string(h->kubelet_url));
	if (h->kubelet_token_file)
		json_object_set_new(o, "kubelet_token_file", json_string(h->kubelet_token_file));
	if (h->kubelet_ca_file)
		json_object_set_new(o, "kubelet_ca_file", json_string(h->kubelet_ca_file));
	json_object_set_new(o, "kubelet_refresh",
			    json_real(h->kubelet_refresh_ms ? (double)h->kubelet_refresh_ms / 1e3 : dflt));
	if (h->kubelet_pod_labels > 0) /* 0, none, the default */
		json_object_set_new(o, "kubelet_pod_labels", json_integer(h->kubelet_pod_labels));
	if (h->ecs_agent_url)
		json_object_set_new(o, "ecs_agent_url", json_string(h->ecs_agent_url));
	if (h->ecs_metadata_url)
		json_object_set_new(o, "ecs_metadata_url", json_string(h->ecs_metadata_url));
	json_object_set_new(o, "ecs_refresh", json_real(h->ecs_refresh_ms ? (double)h->ecs_refresh_ms / 1e3 : dflt));
	/* The socket asked, "" when the option turns the client off; left out when no default socket exists. */
	prs = podres_socket_resolve(h->pod_resources_socket, root);
	if (prs || h->pod_resources_socket)
		json_object_set_new(o, "pod_resources_socket", json_string(prs ? prs : ""));
	free(prs);
	if (h->hpc_job_mapping_dir) /* "" when the command line turns the config's off */
		json_object_set_new(o, "hpc_job_mapping_dir", json_string(h->hpc_job_mapping_dir));
	json_object_set_new(o, "instance_metadata",
			    json_string(h->instance_mode >= 0 && (size_t)h->instance_mode < ARRAY_SIZE(instance_modes)
						? instance_modes[h->instance_mode] : "auto"));
	return o;
}

static void cfg_host_free(struct cfg_host *h)
{
	free(h->rootfs);
	free(h->run);
	free(h->cgroupfs);
	free(h->kubelet_url);
	free(h->kubelet_token_file);
	free(h->kubelet_ca_file);
	free(h->ecs_agent_url);
	free(h->ecs_metadata_url);
	free(h->pod_resources_socket);
	free(h->hpc_job_mapping_dir);
	memset(h, 0, sizeof(*h));
}

int cfg_from_doc(const struct doc *d, struct cfg *cfg, char **err)
{
	static const char *const keys[] = { "period", "runtimes", "neuron_runtimes", "system_metrics",
					    "devices", "procfs", "sysfs", "host", NULL };
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
	if (procfs && !*procfs) {
		*err = doc_error(d, "procfs", 0, "expected the path of a procfs mount, got an empty string");
		goto fail;
	}
	if (sysfs && !*sysfs) {
		*err = doc_error(d, "sysfs", 0, "expected the path of a sysfs mount, got an empty string");
		goto fail;
	}
	cfg->procfs = xstrdup(procfs ? procfs : "/proc");
	cfg->sysfs = xstrdup(sysfs ? sysfs : "/sys");
	if (json_object_get(root, "host") && parse_host(&v, json_object_get(root, "host"), &cfg->host))
		goto fail;

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
		if (check_device_overlap(&v, dev, cfg))
			goto fail;
	}
	return 0;
fail:
	cfg_free(cfg);
	return rc;
}

/* *dst (owned) becomes a copy of val, when there is one. */
static void override(char **dst, const char *val)
{
	if (!val)
		return;
	free(*dst);
	*dst = xstrdup(val);
}

void cfg_override(struct cfg *cfg, const char *procfs, const char *sysfs, const struct cfg_host *cli)
{
	struct cfg_host *h = &cfg->host;

	override(&cfg->procfs, procfs);
	override(&cfg->sysfs, sysfs);
	override(&h->rootfs, cli->rootfs);
	override(&h->run, cli->run);
	override(&h->cgroupfs, cli->cgroupfs);
	override(&h->kubelet_url, cli->kubelet_url);
	override(&h->kubelet_token_file, cli->kubelet_token_file);
	override(&h->kubelet_ca_file, cli->kubelet_ca_file);
	override(&h->ecs_agent_url, cli->ecs_agent_url);
	override(&h->ecs_metadata_url, cli->ecs_metadata_url);
	override(&h->pod_resources_socket, cli->pod_resources_socket);
	override(&h->hpc_job_mapping_dir, cli->hpc_job_mapping_dir);
	if (cli->kubelet_refresh_ms > 0)
		h->kubelet_refresh_ms = cli->kubelet_refresh_ms;
	if (cli->kubelet_pod_labels >= 0)
		h->kubelet_pod_labels = cli->kubelet_pod_labels;
	if (cli->ecs_refresh_ms > 0)
		h->ecs_refresh_ms = cli->ecs_refresh_ms;
	if (cli->instance_mode >= 0)
		h->instance_mode = cli->instance_mode;
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
	json_object_set_new(o, "host", host_json(&cfg->host));
	for (size_t i = 0; i < cfg->nruntimes; i++) {
		const struct cfg_runtime *rt = &cfg->runtimes[i];
		const struct collector_ops *ops = rt->own ? collector_find(NULL, COLL_RUNTIME, rt->collector) : NULL;
		json_t *r = json_object();

		if (rt->address[0])
			json_object_set_new(r, "address", json_string(rt->address));
		if (rt->tag_filter)
			json_object_set_new(r, "tag_filter", json_string(rt->tag_filter));
		json_object_set_new(r, "period", json_real((double)rt->period_ms / 1e3));
		json_object_set_new(r, "metrics", groups_json(rt->groups, rt->ngroups));
		if (ops && ops->config_print)
			ops->config_print(rt->own, r); /* the collector's own keys */
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
		json_t *blk = json_pack("{s:s, s:o, s:f, s:o}", "type", dv->type, "select", sel, "period",
					(double)dv->period_ms / 1e3, "metrics", groups_json(dv->groups, dv->ngroups));
		const struct collector_ops *ops = dv->own ? collector_find(NULL, COLL_DEVICE, dv->type) : NULL;

		if (ops && ops->config_print) /* the collector's own keys, as it parsed them */
			ops->config_print(dv->own, blk);
		json_array_append_new(devs, blk);
	}
	json_object_set_new(o, "devices", devs);
	return o;
}

void cfg_free(struct cfg *cfg)
{
	for (size_t i = 0; i < cfg->nruntimes; i++) {
		struct cfg_runtime *rt = &cfg->runtimes[i];
		const struct collector_ops *ops = rt->own ? collector_find(NULL, COLL_RUNTIME, rt->collector) : NULL;

		if (ops && ops->config_free)
			ops->config_free(rt->own);
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
		const struct collector_ops *ops = dv->own ? collector_find(NULL, COLL_DEVICE, dv->type) : NULL;

		if (ops && ops->config_free)
			ops->config_free(dv->own);
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
	cfg_host_free(&cfg->host);
	memset(cfg, 0, sizeof(*cfg));
}
