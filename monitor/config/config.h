/* SPDX-License-Identifier: MIT */
/*
 * accel-monitor's configuration: the schema (a superset of neuron-monitor's),
 * its validation with file:line:column errors, period inheritance
 * (root -> runtime -> group, default 5 s), the host block (the host
 * layer's roots and services, each also a command-line option that wins:
 * cfg_override) and the effective configuration printed by --check-config.
 *
 * Ownership: cfg_load fills a struct cfg that the caller releases with
 * cfg_free; nothing in it is shared with the document it came from.
 */
#ifndef ACCEL_CONFIG_H
#define ACCEL_CONFIG_H

#include "../core/config_types.h"
#include "../../common/schema.h"

#include <jansson.h>
#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Does the device block select the device with this index, UUID and serial (either may be NULL)? */
int cfg_device_selects(const struct cfg_device *d, unsigned index, const char *uuid, const char *serial);


/*
 * Is type named by a devices block other than "auto"? "auto" skips such
 * kinds: a kind named explicitly and by "auto" is one block, the explicit one.
 */
int cfg_device_named(const struct cfg *cfg, const char *type);


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

/*
 * The command line's choices over the file's: procfs and sysfs (NULL: not
 * given) and each member cli sets (a string, a refresh > 0, an
 * instance_mode >= 0; a struct cfg_host that is not cfg_free's to free)
 * replace cfg's, copied. cli is borrowed.
 */
void cfg_override(struct cfg *cfg, const char *procfs, const char *sysfs, const struct cfg_host *cli);

/*
 * The configuration used without -c (config/default.json says the same):
 * the system groups vcpu_usage and memory_info, and every group of every
 * device found ("devices": [{"type": "auto"}]), whose per-process figures
 * name the processes' containers and pods; at 5 s. neuron_hw_counters and
 * container_usage need a config file.
 */
void cfg_default(struct cfg *cfg);

/* The effective configuration as a new JSON object (itself a valid config). */
json_t *cfg_effective(const struct cfg *cfg);

void cfg_free(struct cfg *cfg);

/* ---- a configured idle power ("idle_power_watts" of a devices block) ----------------------- */

/*
 * The idle power a devices block gives its devices instead of the measured
 * one (the lowest power seen, which is too high on a GPU busy since start):
 * "idle_power_watts": W for every device of the block, or
 * {"<index, uuid or pci_bus_id>": W, ...} per device (a device no key names
 * keeps its measured idle power). 0 <= W <= 100000.
 */
struct energy_idle;

#define ENERGY_IDLE_KEY "idle_power_watts"

/*
 * Parse the block's "idle_power_watts" into *out (left alone when the key is
 * absent). 0, or -EINVAL after cfg_block_error.
 */
int energy_idle_config(const struct cfg_block *b, struct energy_idle **out);
/* Add it to the block's effective configuration, as parsed. */
void energy_idle_print(const struct energy_idle *c, json_t *block);
void energy_idle_free(struct energy_idle *c); /* NULL-safe */
/*
 * The configured idle power (W) of the device with this index, UUID and PCI
 * bus id (either may be NULL or ""; PCI ids match without regard to case),
 * or -1 when c (may be NULL) gives it none.
 */
double energy_idle_watts(const struct energy_idle *c, unsigned index, const char *uuid, const char *pci);

/* A device as energy_idle_check sees it: its index, UUID and PCI bus id (either may be NULL or ""). */
struct energy_dev_id {
	unsigned index;
	const char *uuid;
	const char *pci;
};

/*
 * Does every per-device key of c (may be NULL) name one of the block's
 * devices ids[0..n)? When one names none (a mistyped UUID, an index that
 * does not exist), say so in group's "error" (added to what is there),
 * naming the key, at each call, and in the log once (*told). 0, or
 * -ENOENT when a key names no device.
 */
int energy_idle_check(const struct energy_idle *c, const struct energy_dev_id *ids, size_t n, json_t *group,
		      const char *type, int *told);

#endif
