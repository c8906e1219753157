/* SPDX-License-Identifier: MIT */
/*
 * Device records and their serializer (monitor/core/devrec.c): the keys,
 * their order and number types as the report writes them (compared as
 * the report's compact text), a kept object updated in place (the same
 * members, stale ones removed), and the sums a record keeps instead of
 * reading JSON back: a process's bytes over its clients and its engines'
 * percentages.
 */
#include "../../common/jset.h"
#include "../../monitor/core/devrec.h"
#include "../../common/util.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

/* d as the report writes it. */
static char *text(const json_t *d)
{
	return json_dumps(d, JSON_COMPACT | JSON_REAL_PRECISION(10));
}

static void is_json(const json_t *d, const char *want, const char *name)
{
	char *got = text(d);

	is_str(got, want, name);
	free(got);
}

static void test_fields(void)
{
	struct devrec r = { 0 };
	json_t *d = json_object();
	json_t *core;

	devrec_util_json(&r, d);
	devrec_memory_json(&r, d);
	devrec_power_json(&r, d);
	devrec_energy_json(&r, d);
	devrec_temps_json(&r, d);
	devrec_procs_json(&r, DEVREC_PROC_MEMORY, NULL, d);
	is_json(d, "{}", "an empty record writes nothing");

	r.have = DR_CORE_PCT | DR_MEMBW_PCT | DR_MEM_TOTAL | DR_MEM_USED | DR_MEM_FREE | DR_POWER | DR_ENERGY |
		 DR_ENERGY_TOTAL;
	r.core_pct = 45;
	r.membw_pct = 12.5;
	r.mem_total = 17163091968ULL;
	r.mem_used.v = 9223372036854775808ULL; /* 2^63: a real */
	r.mem_free = 0;
	r.power_w = 61.123456789012;
	r.energy_j = 3.5;
	r.energy_total_j = 1e6;
	devrec_util_json(&r, d);
	devrec_memory_json(&r, d);
	devrec_power_json(&r, d);
	devrec_energy_json(&r, d);
	is_json(d,
		"{\"core_percent\":45.0,\"memory_bandwidth_percent\":12.5,\"total_bytes\":17163091968,"
		"\"used_bytes\":9.223372037e18,\"free_bytes\":0,\"power_watts\":61.12345679,\"energy_joules\":3.5,"
		"\"energy_total_joules\":1000000.0}",
		"every field, in the writers' order, with the report's number types");

	core = json_object_get(d, "core_percent");
	r.core_pct = 50;
	r.have &= ~(uint32_t)(DR_MEMBW_PCT | DR_ENERGY | DR_MEM_USED);
	devrec_util_json(&r, d);
	devrec_memory_json(&r, d);
	devrec_power_json(&r, d);
	devrec_energy_json(&r, d);
	ok(json_object_get(d, "core_percent") == core, "a kept member is changed in place, not replaced");
	is_json(d,
		"{\"core_percent\":50.0,\"total_bytes\":17163091968,\"free_bytes\":0,\"power_watts\":61.12345679,"
		"\"energy_total_joules\":1000000.0}",
		"a field not read this cycle is removed from a kept object, never left stale");
	devrec_clear(&r);
	devrec_set_memory(&r, 100, UINT64_MAX, 40, UINT64_MAX);
	devrec_memory_json(&r, d);
	ok(r.have == (DR_MEM_TOTAL | DR_MEM_FREE) && !json_object_get(d, "used_bytes") &&
		   json_integer_value(json_object_get(d, "total_bytes")) == 100,
	   "devrec_set_memory: a value equal to the source's \"not available\" is no field");
	json_decref(d);
	devrec_free(&r);
}

static void test_temps(void)
{
	struct devrec r = { 0 };
	json_t *d = json_object();
	char name[32];

	devrec_temp_add(&r, "edge", NULL, 45.0);
	devrec_temp_add(&r, "junction", NULL, 51.25);
	devrec_temp_add(&r, "edge", NULL, 46.0);
	devrec_temp_add(&r, "bad\xff", NULL, 1.0);
	devrec_temps_json(&r, d);
	is_json(d, "{\"temperatures_celsius\":{\"edge\":46.0,\"junction\":51.25,\"bad?\":1.0}}",
		"sensors in the order first added; a name again replaces its value; invalid UTF-8 replaced");

	devrec_clear(&r);
	devrec_temp_add(&r, "cpu", "temp1", 40.0);
	devrec_temp_add(&r, "cpu", "temp2", 41.0);
	devrec_temp_add(&r, "cpu", "temp2", 42.0);
	devrec_temps_json(&r, d);
	is_json(d, "{\"temperatures_celsius\":{\"cpu\":40.0,\"temp2\":42.0}}",
		"a label taken: the sensor keeps its channel name (alt), and that name again replaces its value");

	devrec_clear(&r);
	devrec_temp_whole(&r, "gpu", 45);
	devrec_temp_whole(&r, "memory", 9223372036854775808ULL);
	devrec_temps_json(&r, d);
	is_json(d, "{\"temperatures_celsius\":{\"gpu\":45,\"memory\":9.223372037e18}}",
		"whole-degree sensors (NVML's): integers, a real from 2^63");

	devrec_clear(&r);
	devrec_temp_add(&r, "junction", NULL, 52.0);
	devrec_temps_json(&r, d);
	is_json(d, "{\"temperatures_celsius\":{\"junction\":52.0}}", "a sensor gone from the record is removed");
	devrec_clear(&r);
	devrec_temps_json(&r, d);
	is_json(d, "{}", "no sensor: no temperatures_celsius");

	devrec_clear(&r);
	devrec_temp_add(&r, "a-name-of-63-bytes-as-long-as-a-device-fact-holds-0123456789012", NULL, 1.0);
	devrec_temp_add(&r, "a-name-of-63-bytes-as-long-as-a-device-fact-holds-0123456789012X", NULL, 2.0);
	devrec_temps_json(&r, d);
	is_json(d,
		"{\"temperatures_celsius\":{\"a-name-of-63-bytes-as-long-as-a-device-fact-holds-0123456789012\":2.0}}",
		"a name of DEVREC_NAME - 1 bytes (a device fact's longest) kept whole; a longer one cut to it");

	for (int i = 0; i < DEVREC_TEMPS + 3; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		devrec_temp_add(&r, name, NULL, i);
	}
	is_int(r.ntemp, DEVREC_TEMPS, "sensors past DEVREC_TEMPS are left out");
	json_decref(d);
	devrec_free(&r);
}

/* Parts added up (the first n of add) and the text the sum is written as. */
struct sum_case {
	uint64_t add[3];
	size_t n;
	const char *want;
	const char *name;
};

static void test_bytes(void)
{
	static const struct sum_case cases[] = {
		{ { 1024, 2048 }, 2, "3072", "two clients' bytes summed" },
		{ { 9223372036854775807ULL, 1 }, 2, "9.223372037e18", "a sum reaching 2^63 becomes a real" },
		{ { 18446744073709551615ULL - 1, 5 }, 2, "1.844674407e19", "past 2^64: a real, never a wrapped sum" },
		{ { 0 }, 1, "0", "0 bytes is an integer 0" },
	};

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct devrec_proc p = { 0 };
		json_t *j;
		char *got;

		for (size_t i = 0; i < cases[c].n; i++)
			devrec_proc_mem_add(&p, cases[c].add[i]);
		ok(p.has_mem, "%s: has memory", cases[c].name);
		j = json_u64sum(&p.mem);
		got = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(10) | JSON_ENCODE_ANY);
		is_str(got, cases[c].want, cases[c].name);
		free(got);
		json_decref(j);
	}
}

/*
 * A device's used memory summed from parts (devrec_mem_used_add): exact
 * while it fits in 64 bits (an integer below 2^63, a real from there), a
 * real past 2^64 (never a wrapped sum), on fresh and kept objects alike;
 * devrec_clear and devrec_set_memory start it again.
 */
static void test_mem_used_add(void)
{
	static const struct sum_case cases[] = {
		{ { 1024, 2048, 0 }, 3, "{\"used_bytes\":3072}", "parts summed: an integer" },
		{ { 0 }, 1, "{\"used_bytes\":0}", "one part of 0 bytes: 0, not absent" },
		{ { 9223372036854775807ULL, 1 }, 2, "{\"used_bytes\":9.223372037e18}", "reaching 2^63: a real" },
		{ { 18446744073709551615ULL - 1, 1 }, 2, "{\"used_bytes\":1.844674407e19}", "2^64-1 exactly: a real" },
		{ { 18446744073709551615ULL - 1, 5, 10000000000000000000ULL }, 3, "{\"used_bytes\":2.844674407e19}",
		  "past 2^64: a real, never a wrapped sum, and parts added to it after" },
	};
	struct devrec r;
	json_t *d;

	for (int fresh = 0; fresh < 2; fresh++)
		for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
			r = (struct devrec){ .fresh = fresh };
			d = json_object();
			for (size_t i = 0; i < cases[c].n; i++)
				devrec_mem_used_add(&r, cases[c].add[i]);
			devrec_memory_json(&r, d);
			is_json(d, cases[c].want, cases[c].name);
			json_decref(d);
		}

	r = (struct devrec){ 0 };
	d = json_object();
	devrec_mem_used_add(&r, UINT64_MAX);
	devrec_mem_used_add(&r, UINT64_MAX);
	devrec_memory_json(&r, d);
	ok(r.have == DR_MEM_USED && r.mem_used.big && json_is_real(json_object_get(d, "used_bytes")),
	   "past 2^64: a real");
	devrec_clear(&r);
	devrec_mem_used_add(&r, 7);
	devrec_memory_json(&r, d);
	is_json(d, "{\"used_bytes\":7}", "cleared: the sum starts again at 0, an integer in the kept member's place");
	devrec_mem_used_add(&r, UINT64_MAX);
	devrec_set_memory(&r, UINT64_MAX, 5, UINT64_MAX, UINT64_MAX);
	devrec_memory_json(&r, d);
	is_json(d, "{\"used_bytes\":5}", "devrec_set_memory sets used, past 2^64 or not");
	devrec_clear(&r);
	devrec_memory_json(&r, d);
	is_json(d, "{}", "nothing added: no used_bytes");
	json_decref(d);
}

static void test_procs(void)
{
	static const char *const eng[] = { "gfx", "compute", "dma" };
	struct devrec r = { 0 };
	struct devrec_proc *p;
	json_t *d = json_object(), *po;

	devrec_procs_json(&r, DEVREC_PROC_MEMORY, NULL, d);
	is_json(d, "{}", "processes not listed: no processes member");
	devrec_proc(&r, 77); /* listed, but with no memory */
	devrec_procs_json(&r, DEVREC_PROC_MEMORY, NULL, d);
	is_json(d, "{\"processes\":{}}", "listed with none to show: {}");

	devrec_clear(&r);
	devrec_proc_mem_add(devrec_proc(&r, 2000), 4096);
	devrec_proc_mem_add(devrec_proc(&r, 1000), 100);
	devrec_proc_mem_add(devrec_proc(&r, 2000), 4096);
	devrec_procs_json(&r, DEVREC_PROC_MEMORY, NULL, d);
	is_json(d, "{\"processes\":{\"2000\":8192,\"1000\":100}}", "memory per process, in the order first seen");

	devrec_clear(&r);
	devrec_proc_mem_add(devrec_proc(&r, 1000), 200);
	devrec_procs_json(&r, DEVREC_PROC_MEMORY, NULL, d);
	is_json(d, "{\"processes\":{\"1000\":200}}", "a process gone from the record is removed from a kept object");

	json_object_clear(d);
	devrec_clear(&r);
	p = devrec_proc(&r, 1000);
	devrec_proc_engine_add(p, 1, 30);
	devrec_proc_engine_add(p, 0, 10);
	devrec_proc(&r, 3000); /* a client without engines: not shown */
	p = devrec_proc(&r, 1000);
	devrec_proc_engine_add(p, 1, 80);
	devrec_proc_engine_add(p, 2, 0);
	devrec_procs_json(&r, DEVREC_PROC_ENGINES, eng, d);
	is_json(d, "{\"processes\":{\"1000\":{\"compute\":100.0,\"gfx\":10.0,\"dma\":0.0}}}",
		"engines per process: summed over its clients, held at 100, in the order first added");

	po = json_object_get(json_object_get(d, "processes"), "1000");
	devrec_clear(&r);
	devrec_proc_engine_add(devrec_proc(&r, 1000), 0, 5);
	devrec_procs_json(&r, DEVREC_PROC_ENGINES, eng, d);
	ok(json_object_get(json_object_get(d, "processes"), "1000") == po, "a kept process object is updated in place");
	is_json(d, "{\"processes\":{\"1000\":{\"gfx\":5.0}}}", "an engine gone from the record is removed");

	devrec_clear(&r);
	devrec_procs_json(&r, DEVREC_PROC_ENGINES, eng, d);
	is_json(d, "{}", "processes not listed this cycle: removed");
	json_decref(d);
	devrec_free(&r);
	devrec_free(NULL);
}

/* A fresh record (objects new each cycle) writes the same text as one updating kept objects. */
static void test_fresh(void)
{
	static const char *const eng[] = { "gfx", "compute" };
	struct devrec r[2] = { { .fresh = 0 }, { .fresh = 1 } };
	char *text_of[2];

	for (int f = 0; f < 2; f++) {
		json_t *d = json_object();

		r[f].have = DR_CORE_PCT | DR_MEM_TOTAL | DR_MEM_USED | DR_POWER | DR_ENERGY_TOTAL;
		r[f].core_pct = 12;
		r[f].mem_total = 1ULL << 40;
		r[f].mem_used.v = UINT64_MAX - 1;
		r[f].power_w = 100.25;
		r[f].energy_total_j = 5;
		devrec_temp_add(&r[f], "edge", NULL, 40);
		devrec_temp_add(&r[f], "edge", "temp2", 41);
		devrec_proc_mem_add(devrec_proc(&r[f], 10), 4096);
		devrec_proc_engine_add(devrec_proc(&r[f], 20), 1, 50);
		devrec_util_json(&r[f], d);
		devrec_memory_json(&r[f], d);
		devrec_power_json(&r[f], d);
		devrec_energy_json(&r[f], d);
		devrec_temps_json(&r[f], d);
		devrec_procs_json(&r[f], DEVREC_PROC_MEMORY, NULL, d);
		json_object_set_new(d, "engines", json_object());
		devrec_procs_json(&r[f], DEVREC_PROC_ENGINES, eng, json_object_get(d, "engines"));
		text_of[f] = text(d);
		json_decref(d);
		devrec_free(&r[f]);
	}
	is_str(text_of[1], text_of[0], "fresh: the same members, order and types as in place");
	free(text_of[0]);
	free(text_of[1]);
}

int main(void)
{
	test_fresh();
	test_fields();
	test_temps();
	test_bytes();
	test_mem_used_add();
	test_procs();
	return done_testing();
}
