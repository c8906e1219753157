/* SPDX-License-Identifier: MIT */
/*
 * What the two halves of the interpreter share (samples.c walks reports,
 * samples_rules.c compiles the rows into a mapper): the compiled form of a
 * rule and the mapper. Private to common/samples*.c.
 */
#ifndef ACCEL_SAMPLES_INT_H
#define ACCEL_SAMPLES_INT_H

#include "log.h"
#include "rows.h"
#include "samples.h"
#include "util.h"

/* ---- compiled patterns ----------------------------------------------------- */

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
	int pid_cap;            /* the capture labelled "pid" (its identity: the report's identities), or -1 */
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
	const struct family *f_instance, *f_neuron_hw, *f_allocation; /* the families the mapper yields itself */
	/* The instance labels of the last report that had instance_info (owned copies); host NULL: none yet. */
	struct {
		const char *name[MAP_INSTANCE_LABELS_MAX];
		char *value[MAP_INSTANCE_LABELS_MAX];
		char *host, *node;
		size_t n;
	} last_inst;
	unsigned long long bad_timestamps;
	struct log_limit bad_ts_limit;
	struct buf entity; /* a device's entity, "type:key", reused from report to report */
};

/* The class of the groups a rule of scope sc reads. */
static inline enum group_class group_class(enum map_scope sc)
{
	return sc == SC_SYSTEM ? GC_SYSTEM : sc == SC_RUNTIME ? GC_RUNTIME : sc == SC_MONITOR ? GC_MONITOR : GC_DEVICE;
}


#endif
