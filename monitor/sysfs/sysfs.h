/* SPDX-License-Identifier: MIT */
/*
 * What the sysfs device collectors (coll_amdgpu.c, coll_neuron.c,
 * coll_ncs2.c, coll_hwmon.c) share:
 *
 *  - attribute readers: a file opened relative to a directory fd under
 *    --path.sysfs, its text trimmed, numbers parsed strictly (a file whose
 *    text is not what the kernel writes is -EBADMSG, never a 0);
 *  - per-period counters that never go negative (a counter that went
 *    backwards, after a driver reload or a write-to-clear, starts over);
 *  - a device table that keeps each device's index stable while devices
 *    come and go, and reports a vanished device with an error once in each
 *    of the block's groups before dropping it;
 *  - struct sysfs_coll, the start of each collector's state: the scan's
 *    start, the start of collect and its per-device loop, the error and
 *    close ops, probe;
 *  - a scan of /proc/PID/fd under --path.procfs: which processes hold a
 *    device node open (like fuser).
 *
 * Functions return 0 (or a length) or -errno. Only rd_check logs: once per
 * device and file that holds garbage or may not be read.
 */
#ifndef ACCEL_SYSFS_H
#define ACCEL_SYSFS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../common/jset.h"
#include "../core/collector.h"

/* ---- attribute files ------------------------------------------------------ */

/* Open directory rel under dirfd for use as a dirfd (O_PATH). The fd, or -errno. */
int sysfs_dir(int dirfd, const char *rel);
/*
 * Read rel under dirfd into buf (NUL-terminated, trailing whitespace
 * removed). The length, or -errno (-EFBIG when it does not fit).
 */
ssize_t sysfs_read(int dirfd, const char *rel, char *buf, size_t size);
/* Parse a whole string as an unsigned decimal (or 0x hex) number, blanks around it allowed. 0 or -EBADMSG. */
int sysfs_parse_u64(const char *s, uint64_t *v);
int sysfs_parse_s64(const char *s, int64_t *v);
/* sysfs_read then parse. 0, -errno, or -EBADMSG for text that is not a number. */
int sysfs_u64(int dirfd, const char *rel, uint64_t *v);
int sysfs_s64(int dirfd, const char *rel, int64_t *v);
/*
 * A Neuron-style counter: rel/total when rel is a counter directory
 * (total, present, peak), else the file rel itself.
 */
int sysfs_counter(int dirfd, const char *rel, uint64_t *v);
/*
 * The name of the directory symlink rel leads to ("amdgpu", "0000:03:00.0"):
 * the last component of its target, or, for a target that ends in ".." or
 * "." ("../.."), the last component of the directory it resolves to. Length
 * or -errno (-EINVAL when rel is not a link).
 */
ssize_t sysfs_link_name(int dirfd, const char *rel, char *buf, size_t size);
/*
 * The value of KEY in the uevent file of directory rel ("" or "." for dirfd
 * itself): uevent holds KEY=value lines (DRIVER=amdgpu, PCI_SLOT_NAME=...).
 * Length, -ENOENT when the file or the key is not there, or -errno.
 */
ssize_t sysfs_uevent(int dirfd, const char *rel, const char *key, char *buf, size_t size);
/*
 * The driver a device directory rel is bound to: the name of its driver
 * link, else (a tree copied without links) uevent's DRIVER. Length or -errno.
 */
ssize_t sysfs_driver(int dirfd, const char *rel, char *buf, size_t size);
/*
 * The PCI address of device directory rel ("0000:03:00.0"): the name of
 * the link rel when it is one and names a PCI address, else uevent's
 * PCI_SLOT_NAME. Length, or -ENOENT when it is not a PCI device.
 */
ssize_t sysfs_pci_address(int dirfd, const char *rel, char *buf, size_t size);

/* The entries of a directory, "." and ".." left out, in natural order (card2 before card10). */
struct sysfs_names {
	char *pool;    /* the names, NUL-separated */
	size_t *off;   /* offset of each name in pool */
	size_t n;
	size_t pool_size, pool_alloc, off_alloc;
};
/* List rel under dirfd (rel "" or "." for dirfd itself) into names, reusing its storage. 0 or -errno. */
int sysfs_list(int dirfd, const char *rel, struct sysfs_names *names);
static inline const char *sysfs_name(const struct sysfs_names *names, size_t i)
{
	return names->pool + names->off[i];
}
void sysfs_names_free(struct sysfs_names *names);

/*
 * A sensor's label as a report key: lowercase, runs of other characters as
 * one '_' ("Package id 0" -> "package_id_0"). When nothing is left, or it
 * would start with a digit, the channel ("temp1") is used. Returns dst.
 */
char *sysfs_key(const char *label, const char *channel, char *dst, size_t size);

/* Is s a PCI address such as "0000:03:00.0"? */
bool sysfs_is_pci_address(const char *s);

/* ---- u64 values in the report ---------------------------------------------- */

/*
 * 2^64-1: what drivers write for "not available" in a u64 attribute. The
 * rd_u64 and rd_counter readers below take it for an absent field.
 */
#define SYSFS_U64_NA UINT64_MAX

/* obj[key] = json_u64(v) (jset.h). */
void json_set_u64(json_t *obj, const char *key, uint64_t v);


/* ---- per-period counters ---------------------------------------------------- */

struct counter {
	uint64_t last; /* the previous sample */
	bool have;     /* last is set */
};

/*
 * Take a sample. Returns true and the increase since the previous sample in
 * *delta; false on the first sample (no baseline yet). A counter that went
 * backwards counts as a fresh start from zero: the increase is its value.
 */
bool counter_step(struct counter *c, uint64_t now, uint64_t *delta);

/* ---- the device table ---------------------------------------------------------- */

/*
 * One device a collector has seen. Its identity is kept here so a device
 * that vanished can still be named in the error that reports it.
 */
struct devslot {
	char key[64];     /* what identifies it across scans: its sysfs name or USB port path */
	unsigned index;   /* the "devices" key */
	bool selected;    /* the block's "select" picks it */
	bool gone;        /* absent from the latest scan */
	uint32_t told;    /* groups (1 << group id) that reported it gone */
	uint64_t seen;    /* generation of the latest scan that saw it */
	char uuid[80], pci[32], model[128]; /* identity; "" when the device has none */
	void *priv;       /* the collector's per-device state; owned by the table */
};

struct devtab {
	struct devslot **slot; /* sorted by index */
	size_t n, alloc;
	uint32_t groups;       /* the block's groups this kind fills, 1 << group id */
	uint64_t gen;          /* scan generation */
	int64_t cycle_ns;      /* the cycle the latest scan belongs to */
	void (*free_priv)(void *priv);
};

/*
 * supported: the groups (1 << group id) the collector has fields for; a
 * vanished device is dropped once each of the block's supported groups has
 * reported it.
 */
void devtab_init(struct devtab *t, const struct cfg_device *cfg, uint32_t supported, void (*free_priv)(void *priv));
#define GROUP_BIT(id) (1u << (id))
/*
 * Does cycle cy need a new scan (the first group collected in a cycle)?
 * Records cy as scanned.
 */
bool devtab_new_cycle(struct devtab *t, const struct cycle *cy);
/* Start a scan: every device is unseen until devtab_see. */
void devtab_begin(struct devtab *t);
/*
 * The slot for key, seen in this scan. A new device (or one that came back
 * after vanishing) gets a fresh slot (*fresh = true, priv NULL) with index
 * hint when hint >= 0 and free, else the lowest free index. The collector
 * then fills its identity, priv and selected. Borrowed.
 */
struct devslot *devtab_see(struct devtab *t, const char *key, long hint, bool *fresh);
/* The slot of key, or NULL. Borrowed. */
struct devslot *devtab_find(const struct devtab *t, const char *key);
/*
 * End a scan: a device not seen becomes gone; a gone device that every
 * group has reported is dropped, freeing its index.
 */
void devtab_end(struct devtab *t);
/* Drop everything (the whole kind became unreadable). */
void devtab_clear(struct devtab *t);
void devtab_free(struct devtab *t);
/* How many selected devices are present. */
size_t devtab_present(const struct devtab *t);

/*
 * Start group's "devices" object ({} even when there is no device) and, for
 * slot s, add its device object with its identity (device_entry). A gone
 * device gets its error here and is marked as reported in group id:
 * returns NULL then, else the device object (borrowed).
 */
void devtab_group(json_t *group);
json_t *devtab_entry(json_t *group, struct devslot *s, enum group_id id);

/* ---- reading one device's files for one group ----------------------------------- */

#define WARN_MAX 24

/* Files of one device already warned about (each is warned about once). */
struct warnset {
	char name[WARN_MAX][48];
	size_t n;
};

/*
 * The reads of one device in one group. A read either succeeds, or the
 * field is left out (not there, not supported, garbage, not permitted:
 * the last two logged once per device and file), or it fails the whole
 * device for this cycle: an errno listed in fatal (amdgpu: EPERM and EBUSY
 * while the GPU resets). After the first failure every read fails at once.
 */
struct rdctx {
	const char *type;       /* "amdgpu": the log prefix */
	const char *key;        /* the device's key ("card1") */
	struct warnset *warned; /* this device's; NULL: never warn */
	const int *fatal;       /* errnos that fail the device, 0-terminated; NULL: none */
	int err;                /* the first fatal errno, or 0 */
	char file[64];          /* the file it came from */
	json_t *group;          /* the group being filled (borrowed): where a note for the group goes */
	int noted;              /* a note went there: the group has an error */
};

/*
 * Classify rc (0 or -errno from a sysfs_* call) of file: 1 read, 0 absent,
 * -1 the device failed. rd_u64 and rd_counter also take SYSFS_U64_NA for
 * absent.
 */
int rd_check(struct rdctx *r, const char *file, int rc);
int rd_u64(struct rdctx *r, int dirfd, const char *file, uint64_t *v);
int rd_s64(struct rdctx *r, int dirfd, const char *file, int64_t *v);
int rd_counter(struct rdctx *r, int dirfd, const char *file, uint64_t *v);
int rd_text(struct rdctx *r, int dirfd, const char *file, char *buf, size_t size);
/*
 * Finish a device object: when a read failed the device, drop every field
 * but its identity and set its error. Returns 0, or -1 when it failed.
 */
int rd_finish(struct rdctx *r, json_t *dev);

/* ---- what every sysfs collector's state starts with ----------------------------- */

/*
 * The first member of each sysfs collector's state, so that what only
 * needs it is written once: opening the sysfs root and listing the kind's
 * directory, the start of collect, the per-device loop, the error op, close.
 */
struct sysfs_coll {
	const struct mon_env *env;
	const struct cfg_device *cfg; /* the block; NULL in probe */
	int sysfd, procfd;            /* --path.sysfs and --path.procfs (O_PATH); -1 until opened */
	struct devtab tab;
	struct sysfs_names names;     /* the latest scan's listing */
	char error[320];              /* why the kind cannot be read; "" when it can */
};

/* Set c up for open(): both fds -1, no error, devtab_init(&c->tab, cfg, supported, free_priv). */
void sysfs_coll_init(struct sysfs_coll *c, const struct mon_env *env, const struct cfg_device *cfg,
		     uint32_t supported, void (*free_priv)(void *priv));
/*
 * The start of a scan: clear the error, open the sysfs root when it is not
 * open yet and list dir under it into names. Returns 1 when dir was listed,
 * 0 when it does not exist (names empty), or -1 when the kind cannot be
 * read: the error says why and the table is cleared.
 */
int sysfs_coll_list(struct sysfs_coll *c, const char *dir);
/*
 * The start of collect: in the first group of a new cycle scan(c) (c is the
 * first member of the state scan takes), then start group's "devices". When
 * the kind cannot be read, set the group's error and return false: the group
 * is done. Else true.
 */
bool sysfs_coll_begin(struct sysfs_coll *c, const struct cycle *cy, json_t *group, void (*scan)(void *state));
/*
 * Fill one device's object d in group id: sl is its slot, r its reader with
 * type, key and fatal set (fill sets r->warned). state is the collector's.
 */
typedef void (*sysfs_fill_fn)(void *state, enum group_id id, const struct cycle *cy, struct devslot *sl,
			      struct rdctx *r, json_t *d);
/*
 * Add each selected device to group id (devtab_entry: a gone one gets its
 * error), call fill for each present one and finish it (rd_finish). type is
 * the log prefix, fatal the errnos that fail a device (0-terminated; NULL:
 * none). Returns 0, or -1 when a fill gave the group an error (r->noted).
 */
int sysfs_coll_fill(struct sysfs_coll *c, enum group_id id, const struct cycle *cy, json_t *group,
		    const char *type, const int *fatal, sysfs_fill_fn fill);
/*
 * The devices op (collector.h) for such a state: the identity of each
 * selected device of the latest scan (its index as key, UUID, bus id).
 * sysfs_coll_devices_each adds one at a time, from *it (0 at first) on, and
 * lends the slot's priv; NULL when there is none left.
 */
void sysfs_coll_devices(void *state, struct dev_list *out);
struct dev_ident *sysfs_coll_devices_each(void *state, struct dev_list *out, void **priv, size_t *it);
/* The error op (collector.h) for a state whose first member is a struct sysfs_coll: its error, NULL when none. */
const char *sysfs_coll_error(void *state);
/*
 * The close op for such a state (NULL-safe): frees the table,
 * the listing, closes the fds and frees the state itself.
 */
void sysfs_coll_free(void *state);
/*
 * The probe op of a kind: does dir under the sysfs root hold an
 * entry that match(sysfd, name) accepts? 1 or 0 (also when dir cannot be
 * listed).
 */
int sysfs_probe(const struct mon_env *env, const char *dir, bool (*match)(int sysfd, const char *name));

/* ---- who holds a device node open --------------------------------------------- */

/*
 * Called for each open fd of a process whose link target starts with the
 * scan's prefix: pid, the /proc/PID directory fd (for fdinfo/N), the fd's
 * name and its target. Return nonzero to stop scanning this process.
 */
typedef int (*procfd_fn)(pid_t pid, int piddir, const char *fd, const char *target, void *ud);

/*
 * Every process under the procfs root procfd. Processes that exit meanwhile
 * or that this user may not look at are skipped. 0, or -errno when the root
 * cannot be listed.
 */
int procfd_scan(int procfd, const char *prefix, procfd_fn fn, void *ud);

#endif
