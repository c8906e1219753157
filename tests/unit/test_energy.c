/* SPDX-License-Identifier: MIT */
/*
 * Energy meters and the split among processes (monitor/core/energy.c):
 * counters with and without a wrap range, power integration, the idle
 * part, and each basis of the split with hand-computed joules.
 */
#include "../../monitor/core/energy.h"
#include "../../common/timeutil.h"
#include "tap.h"

#include <errno.h>

#include <stdint.h>

static void test_counter(void)
{
	struct energy_meter m = { 0 };
	double j;
	json_t *d = json_object();

	energy_meter_json(&m, 0, 0, d);
	ok(!json_object_get(d, "energy_joules"), "no reading yet: no energy field, never 0");
	is_int(energy_meter_counter(&m, 5000000, 0, 1e-6, 0, &j), 0, "first counter reading: the baseline");
	is_int(energy_meter_counter(&m, 7500000, 0, 1e-6, NS_PER_S, &j), 1, "second: a period");
	is_double(j, 2.5, 1e-12, "2.5e6 µJ -> 2.5 J");
	/* powercap: max_energy_range_uj 262143328850, so the counter wraps at 262143328851 */
	energy_meter_reset(&m);
	energy_meter_counter(&m, 262143328850ULL - 1000000, 262143328851ULL, 1e-6, 0, &j);
	is_int(energy_meter_counter(&m, 2000000, 262143328851ULL, 1e-6, NS_PER_S, &j), 1, "across the wrap");
	is_double(j, 3.000001, 1e-9, "wrap: (range - last) + now = 1000001 + 2000000 µJ");
	is_double(m.total_j, 3.000001, 1e-9, "the total adds the wrapped increase");
	/* no range: a counter that went back is a fresh start */
	energy_meter_counter(&m, 500000, 0, 1e-6, 2 * NS_PER_S, &j);
	is_double(j, 0.5, 1e-12, "went back without a range: its value (a fresh start), never negative");
	energy_meter_json(&m, 1, j, d);
	is_double(json_real_value(json_object_get(d, "energy_joules")), 0.5, 1e-12, "energy_joules written");
	is_double(m.total_j, 3.500001, 1e-9, "the meter's total");
	ok(!json_object_get(d, "energy_total_joules"), "the device's own total is its collector's to write");
	json_decref(d);
}

static void test_power(void)
{
	struct energy_meter m = { 0 };
	double j;

	is_int(energy_meter_power(&m, 100, 0, &j), 0, "first power reading: the baseline");
	is_int(energy_meter_power(&m, 300, 2 * NS_PER_S, &j), 1, "second: a period");
	is_double(j, 400.0, 1e-9, "trapezoid (100 + 300) / 2 W x 2 s = 400 J");
	energy_meter_power(&m, 80, 3 * NS_PER_S, &j);
	is_double(j, 190.0, 1e-9, "(300 + 80) / 2 x 1 s");
	is_double(m.total_j, 590.0, 1e-9, "total");
	ok(m.have_min && m.min_w == 80, "the lowest power seen: 80 W");
	energy_meter_power(&m, 90, 2 * NS_PER_S, &j);
	is_double(j, 0, 0, "time went back: no period");
}

static void test_split(void)
{
	struct energy_share p[3] = { { .pid = 10, .util = 60, .memory = 100 },
				     { .pid = 20, .util = 20, .memory = 300 },
				     { .pid = 30, .util = 0, .memory = 0 } };
	struct energy_split sp;
	json_t *d;

	/* 1000 J over 5 s, idle 80 W: idle 400 J, active 600 J shared 3:1:0 */
	sp = energy_split(1000, 5, 80, p, 3);
	is_int(sp.basis, ENERGY_BY_UTILIZATION, "utilization when any process has some");
	is_double(sp.idle_j, 400, 1e-9, "idle = 80 W x 5 s");
	is_double(sp.active_j, 600, 1e-9, "active = 1000 - 400");
	is_double(p[0].joules, 450, 1e-9, "60 of 80: 450 J");
	is_double(p[1].joules, 150, 1e-9, "20 of 80: 150 J");
	is_double(p[2].joules, 0, 0, "no utilization: 0 J");

	p[0].util = p[1].util = 0;
	sp = energy_split(1000, 5, 80, p, 3);
	is_int(sp.basis, ENERGY_BY_MEMORY, "no utilization: device memory");
	is_double(p[0].joules, 150, 1e-9, "100 of 400 bytes: 150 J");
	is_double(p[1].joules, 450, 1e-9, "300 of 400 bytes: 450 J");

	p[0].memory = p[1].memory = 0;
	sp = energy_split(1000, 5, 80, p, 3);
	is_int(sp.basis, ENERGY_BY_EQUAL, "neither: equal shares");
	is_double(p[2].joules, 200, 1e-9, "600 / 3");

	sp = energy_split(300, 5, 80, p, 3);
	is_double(sp.idle_j, 300, 1e-9, "idle at most the energy");
	is_double(sp.active_j, 0, 0, "nothing active");

	sp = energy_split(1000, 5, -1, NULL, 0);
	is_int(sp.basis, ENERGY_BY_NONE, "no process: nobody's");
	is_double(sp.active_j, 1000, 1e-9, "idle unknown: all active");

	p[0].util = 1;
	sp = energy_split(1000, 5, 80, p, 1);
	d = json_object();
	json_object_set_new(d, "processes", json_pack("{s:i}", "999", 1));
	energy_split_json(&sp, 80, p, 1, d);
	is_str(json_string_value(json_object_get(d, "energy_attribution")), "utilization", "energy_attribution");
	is_double(json_real_value(json_object_get(d, "idle_energy_joules")), 400, 1e-9, "idle_energy_joules");
	is_double(json_real_value(json_object_get(d, "idle_power_watts")), 80, 1e-9, "idle_power_watts");
	is_double(json_real_value(json_object_get(json_object_get(d, "processes"), "10")), 600, 1e-9,
		  "processes: pid 10 has all 600 active J");
	ok(!json_object_get(json_object_get(d, "processes"), "999"), "the old processes replaced");
	json_decref(d);
}

/*
 * The ledger: joules summed by pid (found by hash), devices by UUID; a
 * process not added to for ENERGY_LEDGER_KEEP_NS makes room for a new one.
 */
static void test_ledger(void)
{
	struct energy_ledger *l = energy_ledger_new();
	double j = -1, sum = 0;
	int found = 0;

	for (uint32_t pid = 1; pid <= 16; pid++)
		energy_ledger_add_process(l, pid, pid, 1);
	energy_ledger_add_process(l, 7, 0.5, 2);
	is_int((long)energy_ledger_count(l), 16, "ledger: 16 processes");
	for (size_t i = 0; i < energy_ledger_count(l); i++)
		if (energy_ledger_at(l, i, &j) == 7)
			found = j == 7.5;
	ok(found, "ledger: process 7's joules summed (7 + 0.5)");
	/* Ten minutes on, only process 7 was seen lately: a new one takes the others' room. */
	energy_ledger_add_process(l, 7, 1, ENERGY_LEDGER_KEEP_NS);
	energy_ledger_add_process(l, 100, 3, ENERGY_LEDGER_KEEP_NS + 2);
	energy_ledger_add_process(l, 100, 4, ENERGY_LEDGER_KEEP_NS + 3);
	is_int((long)energy_ledger_count(l), 2, "ledger: the processes not seen for ENERGY_LEDGER_KEEP_NS are gone");
	for (size_t i = 0; i < energy_ledger_count(l); i++) {
		uint32_t pid = energy_ledger_at(l, i, &j);

		sum += pid == 7 ? j * 1000 : pid == 100 ? j : -1e9;
	}
	is_double(sum, 8500 + 7, 1e-9, "ledger: 7 kept (8.5 J), 100 found again after the room was made (7 J)");
	energy_ledger_add_process(l, 3, 2, ENERGY_LEDGER_KEEP_NS + 4);
	for (size_t i = 0; i < energy_ledger_count(l); i++)
		if (energy_ledger_at(l, i, &j) == 3)
			is_double(j, 2, 0, "ledger: a pid that returns counts afresh");
	is_int(energy_ledger_device(l, "GPU-x", &j), -ENOENT, "ledger: a device never added");
	energy_ledger_add_device(l, "GPU-x", 5);
	energy_ledger_add_device(l, "GPU-x", 6);
	is_int(energy_ledger_device(l, "GPU-x", &j), 0, "ledger: a device added to");
	is_double(j, 11, 0, "ledger: its joules summed");
	energy_ledger_free(l);
}

int main(void)
{
	test_counter();
	test_power();
	test_split();
	test_ledger();
	return done_testing();
}
