/* SPDX-License-Identifier: MIT */
/*
 * accel-prom --passthrough: an endpoint runtime's own families, republished.
 *
 * An endpoint runtime configured with "passthrough": true carries the body
 * it scraped in its entry's "exposition" (docs/report-format.md §6.1). This
 * module parses it with the project's one exposition parser
 * (common/expo_parse.h) and serves its families unchanged next to
 * accel-prom's own: names, labels, HELP, TYPE, every sample of a histogram
 * or summary, values as the server wrote them; only the sample timestamps
 * and OpenMetrics' _created samples are left out. In OpenMetrics, whose
 * counters' samples end in _total, a counter named otherwise is typed
 * unknown, so that its samples keep their names in either format. Each sample gains the
 * labels of the runtime entry, as accel-prom's own series carry them
 * (runtime_tag, and pid when the entry has one), so two servers that serve
 * the same family stay two series; a server's own label of that name is
 * kept as exported_<name>, as Prometheus does with honor_labels: false
 * (see below).
 *
 * Every line served is one Prometheus takes: a family whose name is one
 * of accel-prom's (common/samples.c, and accel_prom_*) or is no metric
 * name, or a counter named _total (no family name in OpenMetrics), is
 * dropped, with one warning per name; a sample with a label name that is
 * not one ([a-zA-Z_][a-zA-Z0-9_]*, not beginning with __, so no __name__)
 * or a label name twice (le, quantile) is dropped, with one warning per
 * runtime, family and reason naming the line. A server's label named like
 * one of the runtime's becomes exported_NAME, with exported_ prefixed
 * again until the name is unique, as Prometheus does. A family that two
 * servers serve with different types is served with the first one's, and
 * the other's samples are dropped, with one warning per name. An
 * exposition with a line the parser rejects is not taken: the error is
 * logged with the runtime and the line, and the runtime's last good
 * families stay. A runtime is its configured endpoint (runtime_index and
 * address): a server that restarts under a new pid replaces its old
 * series. Its families leave when its entry reports an error or carries no
 * exposition any more, and when no report has named it for the staleness
 * window.
 *
 * Ownership: prom_pass_new returns a new object that prom_pass_free
 * releases; the report is borrowed. Not thread-safe: accel-prom calls it
 * under its store's lock (prom_store.c).
 */
#ifndef ACCEL_PROM_PASS_H
#define ACCEL_PROM_PASS_H

#include "../util.h"

#include <jansson.h>
#include <stdint.h>

struct prom_pass;

struct prom_pass *prom_pass_new(void);
void prom_pass_free(struct prom_pass *p); /* NULL-safe */

/*
 * Take the expositions of one report's runtime entries. where names the
 * report's line in messages ("stdin:12"); mono_ns (CLOCK_MONOTONIC) dates
 * each runtime for prom_pass_sweep. Every runtime's families together may
 * take at most budget bytes (prom_pass_bytes); an exposition whose
 * families would take more is refused whole, logged (rate-limited), and
 * that runtime's families leave. Returns how many samples were refused.
 */
size_t prom_pass_report(struct prom_pass *p, json_t *report, const char *where, int64_t mono_ns, size_t budget);

/*
 * What the families take now: their lines and names as kept and as
 * copied into both rendered bodies, and their overhead (bytes).
 */
size_t prom_pass_bytes(const struct prom_pass *p);

/* Forget the runtimes that no report has named since now_ns - window_ns. */
void prom_pass_sweep(struct prom_pass *p, int64_t now_ns, int64_t window_ns);

/*
 * Append every family, sorted by name, to text (Prometheus text 0.0.4) and
 * om (OpenMetrics 1.0.0, without its "# EOF"). 0, or -ENOSPC when a buffer
 * reached its cap.
 */
int prom_pass_render(struct prom_pass *p, struct buf *text, struct buf *om);

/* How many runtimes' families it serves now. */
size_t prom_pass_nruntimes(const struct prom_pass *p);

#endif
