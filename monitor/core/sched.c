/* SPDX-License-Identifier: MIT */
/* Binary min-heap of jobs; see sched.h. */
#include "sched.h"
#include "../../common/util.h"

#include <stdlib.h>

static int job_less(const struct sched_job *a, const struct sched_job *b)
{
	if (a->next_due != b->next_due)
		return a->next_due < b->next_due;
	return a->order < b->order;
}

static void heap_set(struct sched *s, size_t i, struct sched_job *j)
{
	s->heap[i] = j;
	j->slot = i;
}

static void sift_up(struct sched *s, size_t i)
{
	struct sched_job *j = s->heap[i];

	while (i > 0 && job_less(j, s->heap[(i - 1) / 2])) {
		heap_set(s, i, s->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(s, i, j);
}

static void sift_down(struct sched *s, size_t i)
{
	struct sched_job *j = s->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= s->n)
			break;
		if (c + 1 < s->n && job_less(s->heap[c + 1], s->heap[c]))
			c++;
		if (!job_less(s->heap[c], j))
			break;
		heap_set(s, i, s->heap[c]);
		i = c;
	}
	heap_set(s, i, j);
}

void sched_init(struct sched *s)
{
	s->heap = NULL;
	s->n = s->cap = 0;
	s->added = 0;
}

void sched_free(struct sched *s)
{
	free(s->heap);
	sched_init(s);
}

static void push(struct sched *s, struct sched_job *job)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->heap = xrealloc(s->heap, s->cap * sizeof(*s->heap));
	}
	s->heap[s->n++] = job;
	sift_up(s, s->n - 1);
}

void sched_add(struct sched *s, struct sched_job *job, int64_t first_due)
{
	job->next_due = first_due;
	job->order = s->added++;
	push(s, job);
}

int64_t sched_next_due(const struct sched *s)
{
	return s->n ? s->heap[0]->next_due : INT64_MAX;
}

size_t sched_take(struct sched *s, int64_t now, int64_t window, struct sched_job **out, size_t max)
{
	size_t k = 0;

	while (s->n && k < max && s->heap[0]->next_due <= now + window) {
		out[k++] = s->heap[0];
		s->n--;
		if (s->n) {
			heap_set(s, 0, s->heap[s->n]);
			sift_down(s, 0);
		}
	}
	return k;
}

unsigned sched_requeue(struct sched *s, struct sched_job *job, int64_t now)
{
	unsigned skipped = 0;

	job->next_due += job->period;
	if (job->next_due <= now) {
		int64_t behind = (now - job->next_due) / job->period + 1;

		job->next_due += behind * job->period;
		skipped = (unsigned)behind;
	}
	push(s, job);
	return skipped;
}
