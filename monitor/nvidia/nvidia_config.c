/* SPDX-License-Identifier: MIT */
/*
 * The "nvidia" devices block's own keys (nvidia_config.h): "library",
 * "slow_period", "energy_period" and "idle_power_watts", parsed, printed
 * back and freed.
 */
#include "nvidia_config.h"

#include "../config/config.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The keys of a "nvidia" block beyond every block's. */
const char *const nv_config_keys[] = { "library", "slow_period", "energy_period", ENERGY_IDLE_KEY, NULL };

/*
 * A cadence key (key: "slow_period", how often the costly NVML reads are
 * made; "energy_period", how often the energy counter is read): a duration
 * (at least 1 s) or "period" (every cycle). *ms: 0 for "period". 0, 1
 * absent, or -EINVAL after cfg_block_error.
 */
static int nv_config_every(const struct cfg_block *b, const char *key, int64_t *ms)
{
	json_t *v = json_object_get(b->obj, key);
	const char *why = NULL;

	if (!v)
		return 1;
	if (json_is_string(v) && !strcmp(json_string_value(v), "period")) {
		*ms = 0;
		return 0;
	}
	if (json_is_string(v)) {
		if (duration_parse(json_string_value(v), ms, &why))
			return cfg_block_error(b, key, 0, "invalid duration: %s", why);
	} else if (json_is_number(v) && json_number_value(v) >= 0 && json_number_value(v) <= 86400) {
		*ms = (int64_t)(json_number_value(v) * 1000.0 + 0.5);
	} else {
		return cfg_block_error(b, key, 0,
				       "expected a duration such as \"10s\", a number of seconds or \"period\"");
	}
	if (*ms < NV_SLOW_MIN_MS || *ms > 86400 * MS_PER_S)
		return cfg_block_error(b, key, 0, "out of range: 1s to 24h, or \"period\"");
	return 0;
}

/*
 * Config: "library" names the NVML library, a path or a name ld.so searches
 * for; "slow_period" and "energy_period" (above); "idle_power_watts"
 * (energy.h).
 */
int nv_config(const struct cfg_block *b)
{
	const char *lib = NULL;
	struct energy_idle *idle = NULL;
	struct nv_conf *c;
	int64_t slow = 0, energy = 0;
	int r, re;

	if (cfg_block_string(b, "library", "the NVML library's path or file name", &lib))
		return -EINVAL;
	if ((r = nv_config_every(b, "slow_period", &slow)) < 0)
		return r;
	if ((re = nv_config_every(b, "energy_period", &energy)) < 0)
		return re;
	if (energy_idle_config(b, &idle))
		return -EINVAL;
	if (!lib && r && re && !idle)
		return 0;
	c = xcalloc(1, sizeof(*c));
	c->idle = idle;
	c->library = lib ? xstrdup(lib) : NULL;
	c->have_slow = !r;
	c->slow_ms = slow;
	c->have_energy = !re;
	c->energy_ms = energy;
	*b->own = c;
	return 0;
}

/* block[key]: a cadence key as parsed (when have), "period" for 0 ms. */
static void nv_config_every_print(json_t *block, const char *key, int have, int64_t ms)
{
	char d[32];

	if (have && !ms) {
		json_object_set_new(block, key, json_string("period"));
	} else if (have) {
		duration_format(ms, d, sizeof(d));
		json_object_set_new(block, key, json_string(d));
	}
}

void nv_config_print(const void *own, json_t *block)
{
	const struct nv_conf *c = own;

	if (c->library)
		json_object_set_new(block, "library", json_string(c->library));
	nv_config_every_print(block, "slow_period", c->have_slow, c->slow_ms);
	nv_config_every_print(block, "energy_period", c->have_energy, c->energy_ms);
	energy_idle_print(c->idle, block);
}

void nv_config_free(void *own)
{
	struct nv_conf *c = own;

	if (!c)
		return;
	free(c->library);
	energy_idle_free(c->idle);
	free(c);
}
