/* SPDX-License-Identifier: MIT */
/* The producer's descriptor budget; see fdbudget.h for the rule. */
#include "fdbudget.h"

#include <errno.h>
#include <sys/resource.h>

void fd_budget_init(struct fd_budget *b, size_t limit)
{
	size_t reserve;

	if (limit > FD_BUDGET_MAX)
		limit = FD_BUDGET_MAX;
	reserve = FD_BUDGET_CORE + limit / 16;
	b->limit = limit;
	b->available = limit > reserve ? limit - reserve : 0;
	b->used = 0;
}

void fd_budget_init_rlimit(struct fd_budget *b)
{
	struct rlimit rl;
	size_t limit = 1024; /* the usual soft limit, should getrlimit fail */

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		limit = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > FD_BUDGET_MAX ? FD_BUDGET_MAX : (size_t)rl.rlim_cur;
	fd_budget_init(b, limit);
}

int fd_budget_take(struct fd_budget *b, size_t n)
{
	if (n > fd_budget_left(b))
		return -EMFILE;
	b->used += n;
	return 0;
}

void fd_budget_give(struct fd_budget *b, size_t n)
{
	b->used = n < b->used ? b->used - n : 0;
}

size_t fd_budget_left(const struct fd_budget *b)
{
	return b->used < b->available ? b->available - b->used : 0;
}

size_t fd_budget_share(const struct fd_budget *b, size_t num, size_t den)
{
	size_t s = den ? b->available / den * num + b->available % den * num / den : 0;

	return s || !b->available ? s : 1;
}

void fd_budget_hold(struct fd_budget *b, size_t *held, size_t now)
{
	fd_budget_give(b, *held);
	b->used += now;
	*held = now;
}

size_t fd_budget_cap(const struct fd_budget *b, size_t held, size_t num, size_t den)
{
	size_t share = fd_budget_share(b, num, den), room = fd_budget_left(b) + held;

	return share < room ? share : room;
}
