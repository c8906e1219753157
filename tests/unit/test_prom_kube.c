/* SPDX-License-Identifier: MIT */
/*
 * A pod's labels named as kube-state-metrics names them (common/series/prom_kube.c):
 * "label_" + the key sanitized, snake case, lowercase; keys in sorted order; collisions
 * told apart with kube-state-metrics' "_conflictN" suffixes, skipping a name in use.
 */
#include "../../common/series/prom_kube.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

static const struct {
	const char *key, *want;
} names[] = {
	{ "app.kubernetes.io/name", "label_app_kubernetes_io_name" },
	{ "appVersion", "label_app_version" },
	{ "ABC", "label_abc" },
	{ "a1B", "label_a1_b" },
	{ "team", "label_team" },
	{ "x-y_z", "label_x_y_z" },
	{ "h\xc3\xa9llo", "label_h_llo" }, /* one character, one "_" */
	{ "9lives", "label_9lives" },
};

/* labels (JSON text) served: "name=value,..." in out's order. */
static void served(const char *json, char *dst, size_t size)
{
	static struct prom_kube_names buf;
	struct label out[PROM_KUBE_LABELS_MAX];
	json_t *o = json_loads(json, 0, NULL);
	size_t n = prom_kube_labels(o, out, PROM_KUBE_LABELS_MAX, &buf), len = 0;

	dst[0] = 0;
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(dst + len, size - len, "%s%s=%s", i ? "," : "", out[i].name, out[i].value);
	json_decref(o);
}

int main(void)
{
	char got[1024];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		prom_kube_label_name(names[i].key, got, sizeof(got));
		is_str(got, names[i].want, names[i].key);
	}
	served("{\"team\": \"ml\", \"app.kubernetes.io/name\": \"web\", \"n\": 3}", got, sizeof(got));
	is_str(got, "label_app_kubernetes_io_name=web,label_team=ml", "sorted by key, a value that is no string left out");
	served("{\"a.b\": \"2\", \"a-b\": \"1\", \"a_b\": \"3\"}", got, sizeof(got));
	is_str(got, "label_a_b_conflict1=1,label_a_b_conflict2=2,label_a_b_conflict3=3",
	       "three keys of one name: _conflict1 (the first, renamed), _conflict2, _conflict3, as kube-state-metrics");
	served("{\"A_b_conflict1\": \"0\", \"a-b\": \"1\", \"a.b\": \"2\"}", got, sizeof(got));
	is_str(got, "label_a_b_conflict1=0,label_a_b_conflict2=1,label_a_b_conflict3=2",
	       "a suffix another key's name has is skipped");
	served("{}", got, sizeof(got));
	is_str(got, "", "no labels: none");
	return done_testing();
}
