/* SPDX-License-Identifier: MIT */
/* A devices block's configured idle power, "idle_power_watts" (config.h; docs/energy.md). */
#include "config.h"
#include "../core/collector.h"

#include "../../common/doc.h"
#include "../../common/log.h"
#include "../../common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct energy_idle {
	double all_w; /* the block's devices' idle power, or -1 when given per device */
	size_t n;
	struct idle_dev {
		char *key; /* an index, a UUID or a PCI bus id */
		double w;
	} *dev;
};

#define IDLE_MAX_W 100000.0

static int idle_watts(const struct cfg_block *b, const char *sub, json_t *v, double *w)
{
	if (!json_is_number(v))
		return cfg_block_error(b, sub, 0, "expected the idle power in watts (a number), got %s", doc_kind(v));
	*w = json_number_value(v);
	if (!(*w >= 0 && *w <= IDLE_MAX_W))
		return cfg_block_error(b, sub, 0, "out of range: 0 to %.0f W", IDLE_MAX_W);
	return 0;
}

int energy_idle_config(const struct cfg_block *b, struct energy_idle **out)
{
	json_t *v = json_object_get(b->obj, ENERGY_IDLE_KEY), *w;
	struct energy_idle *c;
	const char *k;
	char sub[320];

	if (!v)
		return 0;
	c = xcalloc(1, sizeof(*c));
	c->all_w = -1;
	if (!json_is_object(v)) {
		if (idle_watts(b, ENERGY_IDLE_KEY, v, &c->all_w))
			goto fail;
		*out = c;
		return 0;
	}
	if (!json_object_size(v)) {
		cfg_block_error(b, ENERGY_IDLE_KEY, 0,
				"expected W for every device, or {\"<index, uuid or pci_bus_id>\": W}, got an empty object");
		goto fail;
	}
	c->dev = xcalloc(json_object_size(v), sizeof(*c->dev));
	json_object_foreach(v, k, w) {
		snprintf(sub, sizeof(sub), "%s.%s", ENERGY_IDLE_KEY, k);
		if (!k[0]) {
			cfg_block_error(b, sub, 1, "expected a device's index, uuid or pci_bus_id, got an empty key");
			goto fail;
		}
		if (idle_watts(b, sub, w, &c->dev[c->n].w))
			goto fail;
		c->dev[c->n++].key = xstrdup(k);
	}
	*out = c;
	return 0;
fail:
	energy_idle_free(c);
	return -EINVAL;
}

void energy_idle_print(const struct energy_idle *c, json_t *block)
{
	json_t *o;

	if (!c)
		return;
	if (c->all_w >= 0) {
		json_object_set_new(block, ENERGY_IDLE_KEY, json_real(c->all_w));
		return;
	}
	o = json_object();
	for (size_t i = 0; i < c->n; i++)
		json_object_set_new(o, c->dev[i].key, json_real(c->dev[i].w));
	json_object_set_new(block, ENERGY_IDLE_KEY, o);
}

void energy_idle_free(struct energy_idle *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->dev[i].key);
	free(c->dev);
	free(c);
}

/* Does key name the device id? */
static int idle_names(const char *key, const struct energy_dev_id *id)
{
	char ix[16];

	snprintf(ix, sizeof(ix), "%u", id->index);
	return !strcmp(key, ix) || (id->uuid && id->uuid[0] && !strcmp(key, id->uuid)) ||
	       (id->pci && id->pci[0] && !strcasecmp(key, id->pci));
}

int energy_idle_check(const struct energy_idle *c, const struct energy_dev_id *ids, size_t n, json_t *group,
		      const char *type, int *told)
{
	char msg[400];
	size_t k;

	for (size_t i = 0; c && i < c->n; i++) {
		for (k = 0; k < n && !idle_names(c->dev[i].key, &ids[k]); k++)
			;
		if (k < n)
			continue;
		snprintf(msg, sizeof(msg),
			 "%s: %s.%s names no device of the block (an index, uuid or pci_bus_id it has): "
			 "the measured idle power is used",
			 type, ENERGY_IDLE_KEY, c->dev[i].key);
		if (!*told)
			log_warn("%s", msg);
		*told = 1;
		add_error(group, "%s", msg);
		return -ENOENT;
	}
	return 0;
}

double energy_idle_watts(const struct energy_idle *c, unsigned index, const char *uuid, const char *pci)
{
	const struct energy_dev_id id = { index, uuid, pci };

	if (!c)
		return -1;
	if (c->all_w >= 0)
		return c->all_w;
	for (size_t i = 0; i < c->n; i++)
		if (idle_names(c->dev[i].key, &id))
			return c->dev[i].w;
	return -1;
}
