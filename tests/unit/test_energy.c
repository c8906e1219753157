/* SPDX-License-Identifier: MIT */
/*
 * Energy meters and the split among processes (monitor/core/energy.c):
 * counters with and without a wrap range, power integration, the idle
 * part, and each basis of the split with hand-computed joules; a refused
 * counter's words added to the group's error (add_error).
 */
#include "../../monitor/core/energy.h"
#include "../../monitor/core/collector.h"
#include "../../common/timeutil.h"
#include "tap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <stdint.h>

static void test_counter(void)
{
	struct energy_meter m = { 0 };
	double j;
	json_t *d = json_object();

	energy_meter_json(&m, 0, 0, d);
	ok(!json_object_get(d, "energy_joules"), "no reading yet: no energy field, never 0");
	is_int(energy_meter_counter(&m, 5000000, 0, 1e-6, 0, 0, &j), 0, "first counter reading: the baseline");
	is_int(energy_meter_counter(&m, 7500000, 0, 1e-6, 0, NS_PER_S, &j), 1, "second: a period");
	is_double(j, 2.5, 1e-12, "2.5e6 µJ -> 2.5 J");
	/* powercap: max_energy_range_uj 262143328850, so the counter wraps at 262143328851 */
	energy_meter_reset(&m);
	energy_meter_counter(&m, 262143328850ULL - 1000000, 262143328851ULL, 1e-6, 0, 0, &j);
	is_int(energy_meter_counter(&m, 2000000, 262143328851ULL, 1e-6, 0, NS_PER_S, &j), 1, "across the wrap");
	is_double(j, 3.000001, 1e-9, "wrap: (range - last) + now = 1000001 + 2000000 µJ");
	is_double(m.total_j, 3.000001, 1e-9, "the total adds the wrapped increase");
	/* no range: a counter that went back is a fresh start, and its period has no energy (it was 0.5 J before) */
	is_int(energy_meter_counter(&m, 500000, 0, 1e-6, 0, 2 * NS_PER_S, &j), -1, "went back without a range: refused");
	is_double(j, 0, 0, "went back: the period has no energy");
	ok(strstr(m.why, "went back") != NULL, "went back: the meter says why (%s)", m.why);
	is_int(energy_meter_counter(&m, 1000000, 0, 1e-6, 0, 3 * NS_PER_S, &j), 1, "then afresh from the reading");
	is_double(j, 0.5, 1e-12, "the next period counts from the step back");
	energy_meter_json(&m, 1, j, d);
	is_double(json_real_value(json_object_get(d, "energy_joules")), 0.5, 1e-12, "energy_joules written");
	is_double(m.total_j, 3.500001, 1e-9, "the meter's total");
	ok(!json_object_get(d, "energy_total_joules"), "the device's own total is its collector's to write");
	json_decref(d);
}

/*
 * The plausibility check every counter passes: on af149df a powercap
 * energy_uj read 1 µJ lower counted as a full wrap (262 kJ), a reading
 * above max_energy_range_uj gave 18 TJ, and an NVML counter read 1 J lower
 * counted the whole counter.
 */
static void test_counter_check(void)
{
	const uint64_t range = 262143328851ULL; /* max_energy_range_uj + 1 */
	struct energy_meter m = { 0 };
	uint64_t inc;
	char why[160];
	double j;

	energy_meter_counter(&m, 100000000000ULL, range, 1e-6, 0, 0, &j);
	is_int(energy_meter_counter(&m, 100000000000ULL - 1, range, 1e-6, 0, NS_PER_S, &j), -1,
	       "powercap 1 µJ lower: not a wrap (262 kJ in 1 s)");
	is_double(j, 0, 0, "... the period has no energy");
	ok(strstr(m.why, "a wrap") != NULL, "... and says it would have been a wrap (%s)", m.why);
	is_int(energy_meter_counter(&m, 100000000000ULL + 50000000, range, 1e-6, 0, 2 * NS_PER_S, &j), 1,
	       "... then counts afresh from it");
	is_double(j, 50.000001, 1e-9, "... 50 J (and the 1 µJ)");
	is_int(energy_meter_counter(&m, range + 5, range, 1e-6, 0, 3 * NS_PER_S, &j), -1, "above the range: refused");
	ok(strstr(m.why, "above the counter's range") != NULL, "... saying so (%s)", m.why);
	is_int(m.have, 0, "... and it is no baseline");
	is_int(energy_meter_counter(&m, 7, range, 1e-6, 0, 4 * NS_PER_S, &j), 0, "the next reading is the baseline");
	is_double(m.total_j, 50.000001, 1e-9, "the total has only the plausible periods");

	/* NVML: mJ; a counter 1 J lower is a step back, not the whole counter */
	is_int(energy_counter_step(5000000000ULL, 5000000000ULL - 1000, 0, 1e-3, 1, 700, &inc, why, sizeof(why)),
	       -ERANGE, "NVML 1 J lower: refused");
	is_int((long)inc, 0, "... no increase");
	/* more than the power limit over the period (with its slack): refused; within it: counted */
	is_int(energy_counter_step(0, 2000000, 0, 1e-3, 1, 1000, &inc, why, sizeof(why)), -ERANGE,
	       "2 kJ in 1 s on a 1 kW device: refused");
	ok(strstr(why, "2000 W") != NULL, "... naming the power it implies (%s)", why);
	is_int(energy_counter_step(0, 1400000, 0, 1e-3, 1, 1000, &inc, why, sizeof(why)), 0,
	       "1.4 kJ in 1 s on a 1 kW device: within the slack");
	is_int(energy_counter_step(0, 200000000000ULL, 0, 1e-3, 1, 0, &inc, why, sizeof(why)), -ERANGE,
	       "no limit known: ENERGY_MAX_W bounds it");
	/* integers near 2^64: a 1 J step is 1000 mJ, not 2.048 J */
	is_int(energy_counter_step(UINT64_MAX - 5000, UINT64_MAX - 4000, 0, 1e-3, 1, 700, &inc, why, sizeof(why)), 0,
	       "near 2^64: plausible");
	is_int((long)inc, 1000, "near 2^64: exactly 1000 mJ");
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

/* A counter refused twice: each reason after the group's error; add_error's joins and its cap. */
static void test_refused(void)
{
	json_t *g = json_pack("{s:f, s:s, s:s}", "period", 1.0, "timestamp", "t", "error", "");
	char *big = malloc(600);
	const char *e;
	int noted = 0;

	energy_counter_refused(g, &noted, "nvidia", "0", "it went back");
	ok(noted, "refused: the caller is told the group has an error");
	is_str(json_string_value(json_object_get(g, "error")),
	       "nvidia: device 0: energy counter not plausible, it went back: the period has no energy and the counter "
	       "starts afresh",
	       "refused: the reason alone when the group had no error");
	energy_counter_refused(g, &noted, "amdgpu", "card1", "a jump of 9 MJ");
	e = json_string_value(json_object_get(g, "error"));
	ok(e && strstr(e, "starts afresh; amdgpu: device card1: energy counter not plausible, a jump of 9 MJ"),
	   "refused again: after the first, joined by \"; \"");
	json_object_del(g, "error");
	add_error(g, "%s", "alone");
	is_str(json_string_value(json_object_get(g, "error")), "alone", "add_error: no error yet: alone");
	memset(big, 'x', 599);
	big[599] = '\0';
	set_error(g, "%s", big);
	add_error(g, "cut");
	e = json_string_value(json_object_get(g, "error"));
	ok(e && strlen(e) == 511 && !strchr(e, ';'), "add_error: an old error that fills the 511 bytes: kept, the part added cut");
	set_error(g, "%.508s", big);
	add_error(g, "\xc3\xa9t\xc3\xa9");
	e = json_string_value(json_object_get(g, "error"));
	ok(e && strlen(e) == 511 && !strcmp(e + 508, "; ?"), "add_error: a character cut at the end: valid UTF-8 (%s)",
	   e ? e + 508 : "(none)");
	free(big);
	json_decref(g);
}

int main(void)
{
	test_counter();
	test_counter_check();
	test_power();
	test_split();
	test_refused();
	return done_testing();
}
