/* SPDX-License-Identifier: MIT */
/* The host's energy ledger (monitor/host/ledger.c): processes by (pid, start time), devices by UUID. */
#include "../../monitor/host/ledger.h"
#include "tap.h"

#include <errno.h>
#include <stdint.h>

/* A process's joules in the ledger, or -1 when it is not there. */
static double ledger_j(const struct energy_ledger *l, uint32_t pid, uint64_t start)
{
	for (size_t i = 0; i < energy_ledger_count(l); i++)
		if (energy_ledger_at(l, i)->pid == pid && energy_ledger_at(l, i)->start == start)
			return energy_ledger_at(l, i)->j;
	return -1;
}

/* energy_ledger_forget's question, for the tests: the processes alive are those of pid 7 (start 70) and 100. */
static int test_alive(void *ud, uint32_t pid, uint64_t start)
{
	(void)ud;
	return (pid == 7 && start == 70) || pid == 100;
}

/*
 * The ledger: joules summed by (pid, start time), found by hash, devices
 * by UUID; a process that exited is forgotten, a reused pid starts from 0
 * (on af149df the ledger was keyed by pid alone: a new process with an old
 * pid inherited its past, and nothing was forgotten until the ledger was
 * full).
 */
static void test_ledger(void)
{
	struct energy_ledger *l = energy_ledger_new();
	double j = -1;
	uint64_t s0;

	for (uint32_t pid = 1; pid <= 16; pid++)
		energy_ledger_add_process(l, pid, pid * 10, pid, 1);
	energy_ledger_add_process(l, 7, 70, 0.5, 2);
	is_int((long)energy_ledger_count(l), 16, "ledger: 16 processes");
	is_double(ledger_j(l, 7, 70), 7.5, 0, "ledger: process 7's joules summed (7 + 0.5)");
	for (size_t i = 1; i < energy_ledger_count(l); i++)
		ok(energy_ledger_at(l, i)->serial > energy_ledger_at(l, i - 1)->serial, "ledger: in serial order (%zu)", i);
	/* pid 7 again, another process (another start time): its own entry, from 0 */
	s0 = energy_ledger_next_serial(l);
	energy_ledger_add_process(l, 7, 99, 2, 3);
	is_double(ledger_j(l, 7, 99), 2, 0, "ledger: a reused pid starts from 0, not the old process's 7.5 J");
	is_double(ledger_j(l, 7, 70), 7.5, 0, "ledger: the old process keeps its own");
	ok(energy_ledger_at(l, energy_ledger_count(l) - 1)->serial >= s0, "ledger: the new one has a newer serial");
	/* only 7 (start 70) and 100 alive; 7 (start 99) was added at the last add, so it is kept whatever alive says */
	energy_ledger_add_process(l, 100, 1000, 3, 4);
	energy_ledger_add_process(l, 7, 99, 1, 4);
	energy_ledger_forget(l, test_alive, NULL);
	is_int((long)energy_ledger_count(l), 3, "ledger: the exited processes are forgotten");
	is_double(ledger_j(l, 7, 70), 7.5, 0, "ledger: 7 (alive) kept");
	is_double(ledger_j(l, 7, 99), 3, 0, "ledger: 7 (on a device at the last add) kept");
	is_double(ledger_j(l, 100, 1000), 3, 0, "ledger: 100 found again after the others were forgotten");
	energy_ledger_add_process(l, 100, 1000, 4, 5);
	is_double(ledger_j(l, 100, 1000), 7, 0, "ledger: the hash finds it after forgetting");
	energy_ledger_add_process(l, 3, 30, 2, 6);
	is_double(ledger_j(l, 3, 30), 2, 0, "ledger: a process that returns after being forgotten counts afresh");
	is_int(energy_ledger_device(l, "GPU-x", &j), -ENOENT, "ledger: a device never added");
	energy_ledger_add_device(l, "GPU-x", 5);
	energy_ledger_add_device(l, "GPU-x", 6);
	is_int(energy_ledger_device(l, "GPU-x", &j), 0, "ledger: a device added to");
	is_double(j, 11, 0, "ledger: its joules summed");
	energy_ledger_free(l);
}

int main(void)
{
	test_ledger();
	return done_testing();
}
