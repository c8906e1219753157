/* SPDX-License-Identifier: MIT */
/*
 * accel-monitor's configuration: the schema (a superset of neuron-monitor's),
 * its validation with file:line:column errors, period inheritance
 * (root -> runtime -> group, default 5 s) and the effective configuration
 * printed by --check-config.
 *
 * Ownership: cfg_load fills a struct cfg that the caller releases with
 * cfg_free; nothing in it is shared with the document it came from.
 */
#ifndef ACCEL_CONFIG_H
#define ACCEL_CONFIG_H

#include "../../common/schema.h"

#include <jansson.h>
#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CFG_DEFAULT_PERIOD_MS 5000
#define CFG_MIN_PERIOD_MS 100
#define CFG_MAX_PERIOD_MS (24 * 3600 * 1000LL)

/* Groups, their scope and names: common/schema.h (SCHEMA_GROUPS). */

struct cfg_group {
	enum group_id id;
	int64_t period_ms; /* resolved */
};

struct cfg_runtime {
	char *address;    /* as written; "" without one (Neuron runtime discovery, neuron-monitor 2.x) */
	/*
	 * The registry name of the runtime collector that polls it, the one
	 * serving the address's scheme (collectors.c; "pid" for "pid:N"), which
	 * parsed the rest of the address. NULL: no collector of this build
	 * polls it (no address, or a scheme such as "unix:"); its report entry
	 * says why.
	 */
	const char *collector;
	pid_t pid;        /* "pid:N" */
	char *name;       /* "process:NAME": comm or argv[0] basename to match */
	char *tag_filter; /* NULL when absent */
	regex_t tag_re;   /* compiled tag_filter (REG_EXTENDED | REG_NOSUB) */
	int64_t period_ms;
	struct cfg_group *groups;
	size_t ngroups;
	/*
	 * What the address's collector kept from its own keys of the block
	 * (collector_ops.keys and .config in collector.h), opaque to the core and
	 * freed through its config_free; NULL when it keeps nothing.
	 */
	void *own;
};

/* A "devices" entry: one kind of device (or every kind found, "auto"). */
struct cfg_device {
	char *type;         /* a device collector's type (collectors.c's registry) or "auto" */
	int select_all;     /* "select": "all" (the default) */
	long *indices;      /* "select": [0, 2, ...] */
	size_t nindices;
	char **ids;         /* "select": ["GPU-...", serial, ...] */
	size_t nids;
	int64_t period_ms;
	struct cfg_group *groups; /* every device group when "metrics" is absent */
	size_t ngroups;
	/*
	 * What the type's collector kept from its own keys (collector_ops.config
	 * and .keys in collector.h), opaque to the core: owned by the collector,
	 * freed by cfg_free through its config_free, read by its open().
	 * NULL when it keeps nothing, and always for "auto" (which has no
	 * collector keys).
	 */
	void *own;
};

/* Does the device block select the device with this index, UUID and serial (either may be NULL)? */
int cfg_device_selects(const struct cfg_device *d, unsigned index, const char *uuid, const char *serial);

struct cfg {
	int64_t period_ms;
	char *procfs, *sysfs;
	struct cfg_runtime *runtimes;
	size_t nruntimes;
	struct cfg_group *system;
	size_t nsystem;
	struct cfg_device *devices;
	size_t ndevices;
};

/*
 * Is type named by a devices block other than "auto"? "auto" skips such
 * kinds: a kind named explicitly and by "auto" is one block, the explicit one.
 */
int cfg_device_named(const struct cfg *cfg, const char *type);

/*
 * A collector's own block while the configuration is validated: what the
 * config callbacks of collector.h get, so that a collector parses its
 * block (collectd's per-plugin config) and the core never knows its rules.
 */
struct doc;
struct cfg_block {
	const struct doc *doc;
	const char *path; /* the block's JSON path, e.g. "devices[1]" */
	json_t *obj;      /* the block (borrowed) */
	char **err;       /* where cfg_block_error puts the error */
	void **own;       /* where its collector puts what it keeps (&rt->own, &dev->own); NULL in a nested block */
	const char *arg;  /* a runtime's block: its address after "scheme:"; else NULL */
	struct cfg_runtime *rt;       /* a runtime's block: what the address parses into (pid, name); else NULL */
	const struct cfg_device *dev; /* a devices block: what the core parsed (type, select, groups); else NULL */
};

/*
 * Set *b->err to a new "file:line:col: path: message" error for the block's
 * member at sub (a key, or "key[i]"; NULL: the block itself), at its key
 * rather than its value when at_key. Returns -EINVAL.
 */
int cfg_block_error(const struct cfg_block *b, const char *sub, int at_key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * The block's member key as a non-empty string (*out borrowed from the
 * block; left alone when the key is absent). 0, or -EINVAL after
 * cfg_block_error at key: "expected WHAT (a non-empty string), got ..." when
 * it is not a string, is empty or holds a NUL character.
 */
int cfg_block_string(const struct cfg_block *b, const char *key, const char *what, const char **out);

/*
 * Load and validate a JSON or YAML file. 0 on success; otherwise -errno or
 * -EINVAL with *err a new "file:line:col: path: reason" string.
 */
int cfg_load(const char *path, struct cfg *cfg, char **err);
/* Validate an already-loaded document (tests use this with doc_load_mem). */
int cfg_from_doc(const struct doc *d, struct cfg *cfg, char **err);

/* The configuration used without -c: every system group and every device found, at 5 s. */
void cfg_default(struct cfg *cfg);

/* The effective configuration as a new JSON object (itself a valid config). */
json_t *cfg_effective(const struct cfg *cfg);

void cfg_free(struct cfg *cfg);

#endif
