/* SPDX-License-Identifier: MIT */
/* The groups' slots, an array scanned linearly; see sched.h. */
#include "sched.h"
#include "../../common/util.h"

#include <stdlib.h>

static int job_less(const struct sched_job *a, const struct sched_job *b)
{
	if (a->next_due != b->next_due)
		return a->next_due < b->next_due;
	return a->order < b->order;
}

void sched_init(struct sched *s)
{
	s->jobs = NULL;
	s->n = s->cap = 0;
	s->added = 0;
}

void sched_free(struct sched *s)
{
	free(s->jobs);
	sched_init(s);
}

void sched_add(struct sched *s, struct sched_job *job, int64_t first_due)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->jobs = xrealloc(s->jobs, s->cap * sizeof(*s->jobs));
	}
	job->next_due = first_due;
	job->order = s->added++;
	job->taken = 0;
	s->jobs[s->n++] = job;
}

int64_t sched_next_due(const struct sched *s)
{
	int64_t due = INT64_MAX;

	for (size_t i = 0; i < s->n; i++)
		if (!s->jobs[i]->taken && s->jobs[i]->next_due < due)
			due = s->jobs[i]->next_due;
	return due;
}

size_t sched_take(struct sched *s, int64_t now, int64_t window, struct sched_job **out, size_t max)
{
	size_t k = 0;

	if (!max)
		return 0;
	for (size_t i = 0; i < s->n; i++) {
		struct sched_job *j = s->jobs[i];
		size_t at;

		if (j->taken || j->next_due > now + window)
			continue;
		if (k == max) { /* full: j displaces the latest, if it is earlier */
			if (!job_less(j, out[max - 1]))
				continue;
			out[max - 1]->taken = 0;
			k--;
		}
		j->taken = 1;
		/* Insertion sort: a handful of jobs. */
		for (at = k++; at > 0 && job_less(j, out[at - 1]); at--)
			out[at] = out[at - 1];
		out[at] = j;
	}
	return k;
}

unsigned sched_requeue(struct sched *s, struct sched_job *job, int64_t now)
{
	unsigned skipped = 0;

	(void)s;
	job->next_due += job->period;
	if (job->next_due <= now) {
		int64_t behind = (now - job->next_due) / job->period + 1;

		job->next_due += behind * job->period;
		skipped = (unsigned)behind;
	}
	job->taken = 0;
	return skipped;
}
