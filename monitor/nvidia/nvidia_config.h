/* SPDX-License-Identifier: MIT */
/*
 * The "nvidia" devices block's own keys (docs/nvidia.md): "library", the
 * NVML library to load; "slow_period", how often the costly reads are
 * made; "energy_period", how often the energy counter is read (the power
 * readings integrated in between); "idle_power_watts", the GPUs' idle power for the energy split
 * (energy.h). The collector's config ops; the parsed block is
 * cfg_device.own, owned by the configuration.
 */
#ifndef ACCEL_NVIDIA_CONFIG_H
#define ACCEL_NVIDIA_CONFIG_H

#include "../core/energy.h"

#include <jansson.h>
#include <stdint.h>

struct cfg_block;

/* What a "nvidia" devices block keeps from its own keys (cfg_device.own). */
struct nv_conf {
	char *library;   /* "library": the NVML library to dlopen */
	int have_slow;   /* "slow_period" was given */
	int64_t slow_ms; /* its value; 0: "period" (every cycle, static values too) */
	int have_energy; /* "energy_period" was given */
	int64_t energy_ms; /* its value; 0: "period" (every cycle) */
	struct energy_idle *idle; /* "idle_power_watts" (energy.h); NULL: measured */
};

#define NV_SLOW_DEFAULT_MS 10000 /* "slow_period" by default */
#define NV_SLOW_MIN_MS 1000     /* the least "slow_period" and "energy_period" */
/* "energy_period" by default ("period" when "slow_period" is): docs/energy.md, "Between counter reads" */
#define NV_ENERGY_DEFAULT_MS 60000

/* The keys of a "nvidia" block beyond every block's (NULL-terminated). */
extern const char *const nv_config_keys[];
/* Parse the block's own keys into *b->own (left NULL when none is given): 0, or -EINVAL after cfg_block_error. */
int nv_config(const struct cfg_block *b);
/* Add them to the block's effective configuration, as parsed. */
void nv_config_print(const void *own, json_t *block);
void nv_config_free(void *own); /* NULL-safe */

#endif
