/* SPDX-License-Identifier: MIT */
/*
 * Energy per model (monitor/endpoint/model_energy.c): the split among
 * models by compute time, request time or requests, per request and per
 * token, hand-computed; and the server's energy from the host's ledger,
 * by its processes or by the devices it reports on, over its own periods.
 */
#include "../../monitor/core/energy.h"
#include "../../monitor/endpoint/model_energy.h"
#include "../../monitor/host/host.h"
#include "../../monitor/host/ledger.h"
#include "tap.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static double at(json_t *g, const char *model, const char *key)
{
	json_t *v = json_object_get(json_object_get(json_object_get(json_object_get(g, "models"), model), "1"), key);

	return json_is_number(v) ? json_number_value(v) : -1;
}

/* A group with model versions "<name>" "1" (objects empty) and their records as execution_stats gives them. */
static json_t *group_of(struct infer_model *r, const char *const *names, size_t n, struct infer_stats *st)
{
	json_t *g = json_object(), *models = json_object();

	for (size_t i = 0; i < n; i++) {
		json_t *vs = json_object();

		r[i].obj = json_object();
		json_object_set_new(vs, "1", r[i].obj);
		json_object_set_new(models, names[i], vs);
	}
	json_object_set_new(g, "models", models);
	*st = (struct infer_stats){ r, n, NULL, 0 };
	return g;
}

static void test_split(void)
{
	/* Triton: a 30 requests x 0.2 s of compute_infer = 6 s, b 10 x 0.4 s = 4 s: 60 % and 40 % of 500 J */
	static const char *const ab[] = { "a", "b" }, *const idle[] = { "idle" };
	struct infer_model r[2] = { { NULL, 30, 0.2, 1.0, NAN }, { NULL, 10, 0.4, 0.1, 1000 } };
	struct infer_stats st;
	json_t *g = group_of(r, ab, 2, &st);

	model_energy_split(g, &st, 500, "processes");
	is_str(json_string_value(json_object_get(g, "energy_attribution")), "compute_time", "by compute time");
	is_str(json_string_value(json_object_get(g, "energy_source")), "processes", "source");
	is_double(json_number_value(json_object_get(g, "energy_joules")), 500, 1e-9, "the server's energy");
	is_double(at(g, "a", "energy_joules"), 300, 1e-9, "a: 6 of 10 s of compute: 300 J");
	is_double(at(g, "b", "energy_joules"), 200, 1e-9, "b: 4 of 10 s: 200 J");
	is_double(at(g, "a", "energy_per_request_joules"), 10, 1e-9, "a: 300 J / 30 requests");
	is_double(at(g, "b", "energy_per_request_joules"), 20, 1e-9, "b: 200 J / 10 requests");
	is_double(at(g, "b", "tokens_per_joule"), 5, 1e-9, "b: 1000 generated tokens / 200 J");
	is_double(at(g, "a", "tokens_per_joule"), -1, 0, "a counts no tokens: no tokens_per_joule");

	/* b without compute_infer: request time for both (a 30 s, b 1 s) */
	r[1].compute_s = NAN;
	model_energy_split(g, &st, 310, "devices");
	is_str(json_string_value(json_object_get(g, "energy_attribution")), "request_time", "then by request time");
	is_double(at(g, "a", "energy_joules"), 300, 1e-9, "a: 30 of 31 s");

	/* no times at all: completed requests (30 : 10) */
	r[1].request_s = NAN;
	model_energy_split(g, &st, 400, "devices");
	is_str(json_string_value(json_object_get(g, "energy_attribution")), "requests", "then by requests");
	is_double(at(g, "b", "energy_joules"), 100, 1e-9, "b: 10 of 40 requests");
	json_decref(g);

	r[0] = (struct infer_model){ NULL, 0, NAN, NAN, NAN };
	g = group_of(r, idle, 1, &st);
	model_energy_split(g, &st, 50, "processes");
	ok(!json_object_get(g, "energy_attribution") && at(g, "idle", "energy_joules") < 0,
	   "no request completed: the models get nothing");
	is_double(json_number_value(json_object_get(g, "energy_joules")), 50, 1e-9, "the server's energy stays");
	json_decref(g);

	/* a model without a count (NAN) gets nothing, the others share */
	r[0] = (struct infer_model){ NULL, NAN, 0.5, NAN, NAN };
	r[1] = (struct infer_model){ NULL, 4, 0.5, NAN, NAN };
	g = group_of(r, ab, 2, &st);
	model_energy_split(g, &st, 8, "processes");
	is_double(at(g, "a", "energy_joules"), -1, 0, "no count: no energy");
	is_double(at(g, "b", "energy_joules"), 8, 1e-12, "the counted model: all of it");
	json_decref(g);
}

static void test_take(void)
{
	struct host *h = host_new(&(struct host_opts){ .procfs = "/nonexistent" }, NULL);
	struct energy_ledger *l = host_energy(h);
	struct server_energy se = { 0 };
	static const char *const dev[] = { "GPU-a" };
	struct infer_stats st = { NULL, 0, dev, 1 };
	const char *src = NULL;
	double j = -1;

	energy_ledger_add_process(l, 4242, 0, 10, 1);
	energy_ledger_add_process(l, 4343, 0, 99, 1);
	energy_ledger_add_device(l, "GPU-a", 200);
	is_int(server_energy_take(&se, h, 4242, &st, &j, &src), -EAGAIN, "first take: the baseline");
	energy_ledger_add_process(l, 4242, 0, 7.5, 2);
	energy_ledger_add_process(l, 4343, 0, 1, 2);
	energy_ledger_add_device(l, "GPU-a", 30);
	is_int(server_energy_take(&se, h, 4242, &st, &j, &src), 0, "second take");
	is_double(j, 7.5, 1e-12, "the listener's share since the baseline (not the other process's)");
	is_str(src, "processes", "from its processes");
	energy_ledger_add_device(l, "GPU-a", 12);
	is_int(server_energy_take(&se, h, 0, &st, &j, &src), -EAGAIN, "no listener: devices, a new baseline");
	energy_ledger_add_device(l, "GPU-a", 8);
	is_int(server_energy_take(&se, h, 0, &st, &j, &src), 0, "then devices");
	is_double(j, 8, 1e-12, "the device's energy since");
	is_str(src, "devices", "from the devices it reports on");
	st.ndevices = 0;
	is_int(server_energy_take(&se, h, 0, &st, &j, &src), -ENOENT, "neither: no energy");
	server_energy_free(&se);
	host_free(h);
}

/* root/PID/stat of a process started by ppid at start (ticks since boot). */
static void put_stat_at(const char *root, int pid, int ppid, int start)
{
	char path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/stat", root, pid);
	f = fopen(path, "w");
	if (!f) {
		printf("Bail out! cannot write %s\n", path);
		exit(2);
	}
	fprintf(f, "%d (w) S %d %d %d 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 %d 1 1\n", pid, ppid, pid, pid, start);
	fclose(f);
}

/* root/PID/stat of a process started by ppid (its start time: its pid). */
static void put_stat(const char *root, int pid, int ppid)
{
	put_stat_at(root, pid, ppid, pid);
}

/*
 * A server in a container: the processes of its container count, another
 * container's do not (the fixture's 1001 and 1002, two pods). The
 * membership is the identity the host works out (host_container_id).
 */
static void test_take_container(void)
{
	const char *t = getenv("ACCEL_TOP");
	char procfs[300];
	struct host *h;
	struct server_energy se = { 0 };
	struct infer_stats st = { 0 };
	const char *src = NULL;
	double j = -1;

	snprintf(procfs, sizeof(procfs), "%s/tests/fixtures/containers/v2-systemd/proc", t && *t ? t : ".");
	h = host_new(&(struct host_opts){ .procfs = procfs }, NULL);
	ok(host_container_id(h, 1001) && !strcmp(host_container_id(h, 1001)->id, "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
										    "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"),
	   "container: 1001's identity from its cgroup");
	ok(!host_container_id(h, 4242), "container: a process that is not there has none");
	host_energy_add(h, 1001, 5, 1);
	host_energy_add(h, 1002, 7, 1);
	is_int(server_energy_take(&se, h, 1001, &st, &j, &src), -EAGAIN, "container: the baseline");
	host_energy_add(h, 1001, 3, 2);
	host_energy_add(h, 1002, 9, 2);
	is_int(server_energy_take(&se, h, 1001, &st, &j, &src), 0, "container: a take");
	is_double(j, 3, 1e-12, "container: the listener's container's 3 J, not the other pod's 9 J");
	server_energy_free(&se);
	host_free(h);
}

/* The end of a take test: what it holds freed, its procfs root removed. */
static void done_take(struct server_energy *se, struct host *h, const char *root)
{
	char cmd[300];

	server_energy_free(se);
	host_free(h);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		printf("# could not remove %s\n", root);
}

/*
 * The attribution every device kind hands its period to: the split into
 * the device object, the device's energy and the processes' shares into
 * the ledger; without a period's energy, the split's fields go. Two
 * devices' observations in one list, each into its own object.
 */
static void test_attribute(void)
{
	struct host *h = host_new(&(struct host_opts){ .procfs = "/nonexistent" }, NULL);
	struct energy_share sh[2] = { { .pid = 10, .util = 3 }, { .pid = 20, .util = 1 } };
	struct energy_share sh2[1] = { { .pid = 30, .memory = 5 } };
	json_t *d = json_object(), *d2 = json_object();
	struct energy_obs ob = { .have = 1, .energy_j = 100, .period_s = 2, .idle_w = 10, .uuid = "GPU-z",
				 .shares = sh, .n = 2, .d = d, .now_ns = 1 };
	struct energy_obs ob2 = { .have = 1, .energy_j = 8, .period_s = 2, .idle_w = -1, .uuid = "GPU-y",
				  .shares = sh2, .n = 1, .d = d2, .now_ns = 1 };
	struct energy_obs_list l = { 0 };
	double j = -1;

	energy_obs_add(&l, &ob);
	energy_obs_add(&l, &ob2);
	host_energy_attribute(h, &l);
	is_int((long)l.n, 0, "attribute: the list is left empty");
	is_double(json_number_value(json_object_get(d, "idle_energy_joules")), 20, 1e-12, "attribute: idle 10 W x 2 s");
	is_double(json_number_value(json_object_get(json_object_get(d, "processes"), "10")), 60, 1e-12,
		  "attribute: 3 of 4 of the 80 J above idle");
	is_double(json_number_value(json_object_get(json_object_get(d2, "processes"), "30")), 8, 1e-12,
		  "attribute: the second device's process, in its own object");
	is_int(energy_ledger_device(host_energy(h), "GPU-z", &j), 0, "attribute: the device is in the ledger");
	is_double(j, 100, 0, "attribute: with its whole energy");
	is_int((long)energy_ledger_count(host_energy(h)), 3, "attribute: the three processes in the ledger");
	is_double(energy_ledger_at(host_energy(h), 1)->j, 20, 1e-12, "attribute: 20 J for pid 20");
	ob.have = 0;
	ob.now_ns = 2;
	energy_obs_add(&l, &ob);
	host_energy_attribute(h, &l);
	ok(!json_object_get(d, "processes") && !json_object_get(d, "idle_energy_joules") &&
	   !json_object_get(d, "energy_attribution"), "attribute: no period's energy, no split fields");
	energy_obs_free(&l);
	json_decref(d);
	json_decref(d2);
	host_free(h);
}

/*
 * A pid with history in the ledger: on af149df a server's new worker that
 * got the pid of a process gone (3,000 J on the GPU) was credited with that
 * past, 3,002 J for a period whose share was 2 J. Now the ledger knows
 * processes by pid and start time and forgets the ones that exit.
 */
static void test_take_reused_pid(void)
{
	char root[] = "/tmp/test_model_energy.XXXXXX";
	struct server_energy se = { 0 };
	struct infer_stats st = { 0 };
	const char *src = NULL;
	struct host *h;
	double j = -1;

	if (!mkdtemp(root)) {
		printf("Bail out! mkdtemp\n");
		exit(2);
	}
	put_stat(root, 4242, 1);          /* the listener */
	put_stat_at(root, 5000, 1, 100);  /* someone else's, on the GPU for a while */
	h = host_new(&(struct host_opts){ .procfs = root }, NULL);
	host_snapshot(h, &(struct cycle){ .mono_ns = 1 });
	host_energy_add(h, 5000, 3000, 1);
	host_energy_add(h, 4242, 1, 1);
	is_int(server_energy_take(&se, h, 4242, &st, &j, &src), -EAGAIN, "reused pid: the baseline");
	/* 5000 exits; the server starts a worker that gets pid 5000 */
	put_stat_at(root, 5000, 4242, 900);
	host_snapshot(h, &(struct cycle){ .mono_ns = 2 });
	host_energy_add(h, 5000, 2, 2);
	host_energy_add(h, 4242, 0, 2);
	is_int(server_energy_take(&se, h, 4242, &st, &j, &src), 0, "reused pid: a take");
	is_double(j, 2, 1e-12, "the new worker's 2 J, not the old process's 3,000 J besides");
	host_snapshot(h, &(struct cycle){ .mono_ns = 3 });
	host_energy_add(h, 5000, 1, 3);
	host_energy_add(h, 4242, 0, 3);
	host_snapshot(h, &(struct cycle){ .mono_ns = 4 });
	is_int((long)energy_ledger_count(host_energy(h)), 2, "the process that exited is forgotten");
	is_int(server_energy_take(&se, h, 4242, &st, &j, &src), 0, "reused pid: the next take");
	is_double(j, 1, 1e-12, "the worker's 1 J since");
	done_take(&se, h, root);
}

/*
 * A server on the host whose workers hold the GPU (TorchServe's frontend
 * and its Python workers): the listener's descendants count, another
 * process does not.
 */
static void test_take_children(void)
{
	char root[] = "/tmp/test_model_energy.XXXXXX";
	struct host *h;
	struct energy_ledger *l;
	struct server_energy se = { 0 };
	struct infer_stats st = { 0 };
	const char *src = NULL;
	double j = -1;

	if (!mkdtemp(root)) {
		printf("Bail out! mkdtemp\n");
		exit(2);
	}
	put_stat(root, 4242, 1);    /* the listener */
	put_stat(root, 5000, 4242); /* its worker */
	put_stat(root, 5001, 5000); /* the worker's child */
	put_stat(root, 6000, 1);    /* someone else's */
	h = host_new(&(struct host_opts){ .procfs = root }, NULL);
	l = host_energy(h);
	energy_ledger_add_process(l, 5000, 0, 1, 1);
	energy_ledger_add_process(l, 5001, 0, 1, 1);
	energy_ledger_add_process(l, 6000, 0, 1, 1);
	is_int(server_energy_take(&se, h, 4242, &st, &j, &src), -EAGAIN, "children: the baseline");
	energy_ledger_add_process(l, 5000, 0, 20, 2);
	energy_ledger_add_process(l, 5001, 0, 2.5, 2);
	energy_ledger_add_process(l, 6000, 0, 400, 2);
	is_int(server_energy_take(&se, h, 4242, &st, &j, &src), 0, "children: a take");
	is_double(j, 22.5, 1e-12, "the worker's 20 J and its child's 2.5 J, not the other process's 400 J");
	is_str(src, "processes", "from the server's processes");
	done_take(&se, h, root);
}

int main(void)
{
	test_split();
	test_take();
	test_take_children();
	test_take_reused_pid();
	test_attribute();
	test_take_container();
	return done_testing();
}
