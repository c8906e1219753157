/* SPDX-License-Identifier: MIT */
/*
 * For the NVIDIA collector's unit tests (test_coll_nvidia.c, test_nvml.c):
 * a devices block's "slow_period" key given through the collector's own
 * config callback, as cfg_load would (docs/nvidia.md, "What each cycle
 * costs"). Include after collector.h; the test declares coll_nvidia_ops.
 */
#ifndef ACCEL_TEST_NVML_CFG_H
#define ACCEL_TEST_NVML_CFG_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * d's "slow_period" becomes v ("period": every read every cycle, as before
 * the slow cadence; or a duration). d->own is the collector's (free it
 * with nvml_cfg_free). 0, or -1 with a TAP bail-out line.
 */
/* Give d the nvidia block's own keys of o (a reference taken); 0, or -1 after a "Bail out!". */
static int nvml_config(struct cfg_device *d, json_t *o)
{
	char *err = NULL, *text = json_dumps(o, JSON_COMPACT);
	struct cfg_block b = { .path = "devices[0]", .obj = o, .err = &err, .own = &d->own, .dev = d };
	int rc;

	coll_nvidia_ops.config_free(d->own);
	d->own = NULL;
	rc = coll_nvidia_ops.config(&b);
	json_decref(o);
	if (rc)
		printf("Bail out! %s: %s\n", text, err ? err : "refused");
	free(text);
	free(err);
	return rc ? -1 : 0;
}

static int nvml_slow_period(struct cfg_device *d, const char *v)
{
	return nvml_config(d, json_pack("{s:s}", "slow_period", v));
}

/* Free what nvml_config gave d. */
static void nvml_cfg_free(struct cfg_device *d)
{
	coll_nvidia_ops.config_free(d->own);
	d->own = NULL;
}

#endif
