/* SPDX-License-Identifier: MIT */
/*
 * A pod's Kubernetes labels as Prometheus labels, named as kube-state-metrics
 * names them on kube_pod_labels (its internal/store/utils.go), so that a
 * series joins kube_pod_labels' by the same names: "label_" and the key with
 * every character outside [a-zA-Z0-9_] replaced by "_", then snake case ("_"
 * between a lowercase letter or digit and an uppercase letter) and lowercase:
 * "app.kubernetes.io/name" is label_app_kubernetes_io_name, "appVersion"
 * label_app_version. Keys are taken in sorted order; two keys that come out
 * the same are told apart as kube-state-metrics does: the first becomes
 * "<name>_conflict1", the next "<name>_conflict2", and so on, skipping a
 * name another key has. accel-prom's --kubernetes-enable-pod-labels
 * (prom_store.h) serves them; the report's "labels" of identities.pods
 * (docs/report-format.md §6b) are what they are made of.
 */
#ifndef ACCEL_PROM_KUBE_H
#define ACCEL_PROM_KUBE_H

#include "../samples.h"

#include <jansson.h>
#include <stddef.h>

#define PROM_KUBE_LABELS_MAX 64 /* labels of one pod served (the report's own bound) */
#define PROM_KUBE_NAME_MAX 512  /* bytes of one name: "label_", a 317-byte key in snake case, a conflict suffix */

/* Where the names of one pod's labels are made (the caller's; 64 KiB). */
struct prom_kube_names {
	char name[PROM_KUBE_LABELS_MAX][PROM_KUBE_NAME_MAX]; /* the names handed out */
	char base[PROM_KUBE_LABELS_MAX][PROM_KUBE_NAME_MAX]; /* the names that collided, before their suffix */
};

/* kube-state-metrics' name of key, without conflicts resolved, into dst (truncated to size). */
void prom_kube_label_name(const char *key, char *dst, size_t size);

/*
 * The string members of labels (a pod's "labels" object, borrowed) as at
 * most max (<= PROM_KUBE_LABELS_MAX) Prometheus labels in out, sorted by
 * key, named as above in buf (out's names point into it, its values into
 * labels): the count; keys past max (in the object's order) are left out.
 */
size_t prom_kube_labels(json_t *labels, struct label *out, size_t max, struct prom_kube_names *buf);

#endif
