/* SPDX-License-Identifier: MIT */
/*
 * The producer's descriptor budget (monitor/core/fdbudget.c): the rule
 * (the limit less the core's reserve and a sixteenth), taking and giving
 * back, a cache's share within what is left, an unlimited limit, a limit
 * too small to lend anything.
 */
#include "../../monitor/core/fdbudget.h"
#include "tap.h"

#include <errno.h>
#include <sys/resource.h>

static void test_rule(void)
{
	static const struct {
		size_t limit, available;
	} cases[] = {
		{ 1024, 1024 - FD_BUDGET_CORE - 64 },
		{ 256, 256 - FD_BUDGET_CORE - 16 },
		{ 48, 48 - FD_BUDGET_CORE - 3 },
		{ 34, 0 },
		{ 13, 0 },
		{ (size_t)-1, FD_BUDGET_MAX - FD_BUDGET_CORE - FD_BUDGET_MAX / 16 },
	};
	struct fd_budget b;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fd_budget_init(&b, cases[i].limit);
		ok(b.available == cases[i].available, "limit %zu: %zu to lend (got %zu)", cases[i].limit,
		   cases[i].available, b.available);
	}
}

static void test_take(void)
{
	struct fd_budget b;
	size_t held = 0;

	fd_budget_init(&b, 256); /* 208 to lend */
	is_int(fd_budget_take(&b, 200), 0, "take 200 of 208");
	is_int(fd_budget_take(&b, 9), -EMFILE, "9 more: -EMFILE");
	is_int((long)b.used, 200, "nothing taken by a refusal");
	is_int(fd_budget_take(&b, 8), 0, "the last 8");
	is_int((long)fd_budget_left(&b), 0, "none left");
	fd_budget_give(&b, 3);
	is_int((long)fd_budget_left(&b), 3, "3 given back, 3 left");
	fd_budget_give(&b, 1000);
	is_int((long)b.used, 0, "giving back more than held: none held");
	is_int((long)fd_budget_share(&b, 1, 4), 52, "a quarter of 208");
	is_int((long)fd_budget_share(&b, 1, 8), 26, "an eighth");
	is_int((long)fd_budget_cap(&b, 0, 1, 4), 52, "a cache's cap: its share while plenty is left");
	fd_budget_hold(&b, &held, 40);
	is_int((long)b.used, 40, "a cache holding 40: counted");
	is_int(fd_budget_take(&b, 160), 0, "endpoints take 160");
	is_int((long)fd_budget_cap(&b, held, 1, 4), 48, "the cache's cap: what it holds and what is left (8)");
	fd_budget_hold(&b, &held, 10);
	is_int((long)b.used, 170, "the cache let go of 30");
	is_int((long)held, 10, "... and says it holds 10");
	fd_budget_init(&b, 13);
	is_int(fd_budget_take(&b, 1), -EMFILE, "a limit of 13 lends nothing");
	is_int((long)fd_budget_share(&b, 1, 4), 0, "no share of nothing");
	fd_budget_init(&b, 40); /* 6 to lend */
	is_int((long)fd_budget_share(&b, 1, 8), 1, "a share of a small budget is at least 1");
}

static void test_rlimit(void)
{
	struct rlimit rl;
	struct fd_budget b;

	getrlimit(RLIMIT_NOFILE, &rl);
	fd_budget_init_rlimit(&b);
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > FD_BUDGET_MAX)
		is_int((long)b.limit, FD_BUDGET_MAX, "an unlimited RLIMIT_NOFILE counts as FD_BUDGET_MAX");
	else
		is_int((long)b.limit, (long)rl.rlim_cur, "from RLIMIT_NOFILE's soft limit");
}

int main(void)
{
	test_rule();
	test_take();
	test_rlimit();
	return done_testing();
}
