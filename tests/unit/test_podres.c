/* SPDX-License-Identifier: MIT */
/*
 * The kubelet's pod-resources client (monitor/host/podres.c, podres_table.c,
 * monitor/http/grpc.c and http_async's HTTP/2 on a unix socket) against a
 * real gRPC server: tests/helpers/podres_server.py (Debian's python3-grpcio)
 * serving our podres_api.proto on a unix socket in a temporary folder, from
 * a scenario file it reads at every call. The loop, the HTTP client and
 * the decoder are the producer's own.
 *
 * Covered: NVIDIA (UUIDs, indices, "::N" replicas, MIG), Neuron (devices and
 * cores), AMD and Intel allocations, DRA claims, the allocatable table,
 * pods coming and going, the socket missing, permission denied, a server
 * answering after 10 s (timers stay on time), garbage, an answer over the
 * cap, a gRPC error status, a server restart, the v1alpha1 fallback, one
 * log line per distinct failure, a client freed at any stage; and the
 * client's CPU per List of 50 pods x 2 containers x 8 GPUs.
 */
#include "../../common/timeutil.h"
#include "../../monitor/core/loop.h"
#include "../../monitor/host/podres.h"
#include "../../monitor/http/http_async.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[64], sock[128], scen[128], calls[128];
static pid_t server = -1;
static struct loop *l;
static struct http_async *h;

static void scenario(const char *json)
{
	char tmp[160];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", scen);
	f = fopen(tmp, "w");
	fputs(json, f);
	fclose(f);
	rename(tmp, scen); /* the server never reads half a file */
}

static void server_stop(void)
{
	int st;

	if (server <= 0)
		return;
	kill(server, SIGTERM);
	waitpid(server, &st, 0);
	server = -1;
}

/* Start the server on sock; 0 once it serves. */
static int server_start(void)
{
	char ready[160], pydir[128];
	int64_t end = clock_mono_ns() + 30 * NS_PER_S;

	snprintf(ready, sizeof(ready), "%s.ready", sock);
	snprintf(pydir, sizeof(pydir), "%s/py", dir);
	unlink(ready);
	server = fork();
	if (server == 0) {
		execl("/usr/bin/python3", "/usr/bin/python3", "tests/helpers/podres_server.py", "--proto",
		      "monitor/host/podres_api.proto", "--dir", pydir, "--socket", sock, "--scenario", scen, "--log",
		      calls, (char *)NULL);
		_exit(127);
	}
	while (clock_mono_ns() < end) {
		if (!access(ready, F_OK))
			return 0;
		if (waitpid(server, NULL, WNOHANG) == server)
			break;
		usleep(20000);
	}
	return -1;
}

/* Run the loop until p's cycle count passes n (or 20 s). */
static void wait_cycle(struct podres *p, unsigned long n)
{
	int64_t end = clock_mono_ns() + 20 * NS_PER_S;

	while (podres_cycles(p) <= n && clock_mono_ns() < end)
		loop_run_once(l, clock_mono_ns() + 50 * NS_PER_MS, NULL);
}

/* Run the loop for ns. */
static void run_for(int64_t ns)
{
	int64_t end = clock_mono_ns() + ns;

	while (clock_mono_ns() < end)
		loop_run_once(l, end, NULL);
}

/* Kick p and wait for the List the kick asks for. */
static void again(struct podres *p)
{
	unsigned long n = podres_cycles(p);

	podres_kick(p);
	wait_cycle(p, n);
}

static struct podres *client(const char *path, size_t max_bytes, int64_t timeout_ms)
{
	struct podres_opts o = { .socket = path, .refresh_ns = 3600 * NS_PER_S, .kick_min_ns = 10 * NS_PER_MS,
				 .max_bytes = max_bytes, .timeout_ms = timeout_ms };
	struct podres *p = podres_new(h, &o);

	wait_cycle(p, 0);
	return p;
}

/* "ns/pod/container" of the only record of id, or how many there are. */
static const char *who(const struct podres_table *t, const char *id)
{
	static char s[256];
	size_t n;
	const struct podres_alloc *const *a = podres_lookup(t, id, &n);

	if (n != 1)
		snprintf(s, sizeof(s), "%zu records", n);
	else
		snprintf(s, sizeof(s), "%s/%s/%s %s", a[0]->ns, a[0]->pod, a[0]->container, a[0]->resource);
	return s;
}

static size_t count_lines(const char *path, const char *needle)
{
	char line[1024];
	size_t n = 0;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	if (f)
		fclose(f);
	return n;
}

static const char *const vendors =
	"{\"pods\": ["
	"{\"name\": \"train-0\", \"namespace\": \"ml\", \"containers\": ["
	" {\"name\": \"main\", \"devices\": [{\"resource\": \"nvidia.com/gpu\", \"ids\": [\"GPU-aaaa\", \"GPU-bbbb\"]}]},"
	" {\"name\": \"side\", \"devices\": [{\"resource\": \"nvidia.com/mig-1g.10gb\", \"ids\": [\"MIG-cccc\"]}]}]},"
	"{\"name\": \"share-a\", \"namespace\": \"dev\", \"containers\": ["
	" {\"name\": \"c\", \"devices\": [{\"resource\": \"nvidia.com/gpu\", \"ids\": [\"GPU-dddd::0\"]}]}]},"
	"{\"name\": \"share-b\", \"namespace\": \"dev\", \"containers\": ["
	" {\"name\": \"c\", \"devices\": [{\"resource\": \"nvidia.com/gpu\", \"ids\": [\"GPU-dddd::1\"]}]}]},"
	"{\"name\": \"idx\", \"namespace\": \"ml\", \"containers\": ["
	" {\"name\": \"c\", \"devices\": [{\"resource\": \"nvidia.com/gpu\", \"ids\": [\"3\"]}]}]},"
	"{\"name\": \"inf\", \"namespace\": \"neuron\", \"containers\": ["
	" {\"name\": \"c\", \"devices\": [{\"resource\": \"aws.amazon.com/neuron\", \"ids\": [\"1\"]},"
	"  {\"resource\": \"aws.amazon.com/neuroncore\", \"ids\": [\"4\", \"5\"]}]}]},"
	"{\"name\": \"rocm\", \"namespace\": \"amd\", \"containers\": ["
	" {\"name\": \"c\", \"devices\": [{\"resource\": \"amd.com/gpu\", \"ids\": [\"0000:c1:00.0\"]}]}]},"
	"{\"name\": \"arc\", \"namespace\": \"intel\", \"containers\": ["
	" {\"name\": \"c\", \"devices\": [{\"resource\": \"gpu.intel.com/i915\", \"ids\": [\"card1-0\"]}]}]},"
	"{\"name\": \"dra\", \"namespace\": \"claims\", \"containers\": ["
	" {\"name\": \"c\", \"claims\": [{\"name\": \"gpu-claim\", \"namespace\": \"claims\", \"devices\": ["
	"   {\"driver\": \"gpu.nvidia.com\", \"pool\": \"node-1\", \"device\": \"gpu-7\"}]}]}]},"
	"{\"name\": \"cpu-only\", \"namespace\": \"web\", \"containers\": [{\"name\": \"c\"}]}],"
	"\"allocatable\": [{\"resource\": \"nvidia.com/gpu\", \"ids\": [\"GPU-aaaa\", \"GPU-bbbb\", \"GPU-eeee\"]}]}";

static void test_vendors(void)
{
	struct podres *p;
	const struct podres_table *t;
	const struct podres_alloc *const *a;
	size_t n;

	truncate(calls, 0);
	scenario(vendors);
	p = client(sock, 0, 0);
	t = podres_current(p);
	is_str(podres_error(p), "", "a List answer decodes without error");
	is_int((int)podres_table_pods(t), 9, "every pod of the answer is counted, one without devices too");
	is_int((int)podres_table_size(t), 12, "one record per device id and per DRA device");
	is_str(who(t, "GPU-aaaa"), "ml/train-0/main nvidia.com/gpu", "a GPU UUID names its pod and container");
	is_str(who(t, "GPU-bbbb"), "ml/train-0/main nvidia.com/gpu", "... every GPU of the container");
	is_str(who(t, "MIG-cccc"), "ml/train-0/side nvidia.com/mig-1g.10gb", "a MIG UUID, another container");
	is_str(who(t, "3"), "ml/idx/c nvidia.com/gpu", "a GPU index");
	a = podres_lookup(t, "GPU-dddd", &n);
	ok(n == 2 && !strcmp(a[0]->pod, "share-a") && !strcmp(a[1]->pod, "share-b") &&
		   !strcmp(a[0]->device_id, "GPU-dddd::0") && !strcmp(a[1]->device_id, "GPU-dddd::1"),
	   "a time-sliced GPU's UUID finds both replicas' pods, each with its ::N id");
	podres_lookup(t, "GPU-dddd::1", &n);
	is_int((int)n, 2, "a replica's id finds every replica of its GPU");
	is_str(who(t, "1"), "neuron/inf/c aws.amazon.com/neuron", "a Neuron device index");
	a = podres_lookup(t, "4", &n);
	ok(n == 1 && !strcmp(a[0]->resource, "aws.amazon.com/neuroncore"), "a NeuronCore index, by its resource");
	is_str(who(t, "0000:c1:00.0"), "amd/rocm/c amd.com/gpu", "an AMD GPU");
	is_str(who(t, "card1-0"), "intel/arc/c gpu.intel.com/i915", "an Intel GPU");
	a = podres_lookup(t, "gpu-7", &n);
	ok(n == 1 && !strcmp(a[0]->claim, "gpu-claim") && !strcmp(a[0]->claim_ns, "claims") &&
		   !strcmp(a[0]->driver, "gpu.nvidia.com") && !strcmp(a[0]->pool, "node-1") &&
		   !strcmp(a[0]->pod, "dra") && !a[0]->device_id[0] && !a[0]->resource[0],
	   "a DRA device: its claim, driver, pool and pod");
	ok(!podres_lookup(t, "GPU-eeee", &n) && n == 0, "an idle GPU is in no pod");
	ok(!podres_lookup(t, "GPU-aaa", &n) && !podres_lookup(t, "", &n), "a prefix or \"\" finds nothing");
	is_int((int)podres_table_size(podres_allocatable(p)), 3, "GetAllocatableResources: the node's 3 GPUs");
	is_int((int)count_lines(calls, "/v1.PodResourcesLister/GetAllocatableResources"), 1,
	       "GetAllocatableResources was asked once, at the start");
	is_str(podres_version(p), "v1", "the v1 service answered");

	/* pods come and go */
	scenario("{\"pods\": [{\"name\": \"new\", \"namespace\": \"ml\", \"containers\": [{\"name\": \"c\", "
		 "\"devices\": [{\"resource\": \"nvidia.com/gpu\", \"ids\": [\"GPU-eeee\"]}]}]}]}");
	again(p);
	t = podres_current(p);
	is_str(who(t, "GPU-eeee"), "ml/new/c nvidia.com/gpu", "a pod that came is found at the next List");
	is_str(who(t, "GPU-aaaa"), "0 records", "a pod that went is gone");
	is_int((int)count_lines(calls, "/v1.PodResourcesLister/GetAllocatableResources"), 1,
	       "GetAllocatableResources is not asked again while the kubelet answers");

	/* an answer over PODRES_DECODE_ON_LOOP_MAX: decoded on a loop worker */
	scenario("{\"pad\": 300000, \"pods\": [{\"name\": \"big\", \"namespace\": \"ml\", \"containers\": [{\"name\": "
		 "\"c\", \"devices\": [{\"resource\": \"nvidia.com/gpu\", \"ids\": [\"GPU-ffff\"]}]}]}]}");
	again(p);
	is_str(podres_error(p), "", "a 300 kB answer (decoded off the loop) has no error");
	is_str(who(podres_current(p), "GPU-ffff"), "ml/big/c nvidia.com/gpu", "... and its table is read");
	podres_free(p);
}

/* A failure on a client that had a good answer keeps it, and says where and what. */
static void expect_failure(struct podres *p, const char *scenario_json, const char *what, const char *name)
{
	char err[600];

	scenario(scenario_json);
	again(p);
	snprintf(err, sizeof(err), "%s", podres_error(p));
	ok(strstr(err, sock) && strstr(err, " /v1.PodResourcesLister/List: ") && strstr(err, what), "%s: \"%s\"", name,
	   err);
	is_str(who(podres_current(p), "GPU-aaaa"), "ml/train-0/main nvidia.com/gpu", "... and the last good table is kept");
}

static void test_failures(void)
{
	struct podres *p;

	truncate(calls, 0);
	scenario(vendors);
	p = client(sock, 4096, 1500);
	is_str(podres_error(p), "", "a client with a 4 KiB cap reads a small answer");
	expect_failure(p, "{\"garbage\": \"ffffffff0102\"}", "malformed answer", "garbage bytes");
	expect_failure(p, "{\"pad\": 8000, \"pods\": []}", "over 4101 bytes", "an answer over the cap");
	expect_failure(p, "{\"status\": [7, \"no access for system:anonymous\"]}",
		       "gRPC status 7 (PERMISSION_DENIED): no access for system:anonymous", "a gRPC error status");
	scenario(vendors);
	again(p);
	is_str(podres_error(p), "", "the next good answer clears the error");
	is_int((int)count_lines(calls, "/v1.PodResourcesLister/GetAllocatableResources"), 1,
	       "failures of answers that came do not ask GetAllocatableResources again");
	podres_free(p);
}

/* The socket missing, then the server comes: the next List works, GetAllocatableResources asked again. */
static void test_missing_and_restart(void)
{
	struct podres *p;
	char err[600];

	truncate(calls, 0);
	server_stop();
	unlink(sock);
	scenario(vendors);
	p = client(sock, 0, 0);
	snprintf(err, sizeof(err), "%s", podres_error(p));
	ok(strstr(err, sock) && strstr(err, "/v1.PodResourcesLister/GetAllocatableResources") &&
		   strstr(err, "No such file or directory"),
	   "the socket missing: \"%s\"", err);
	ok(!podres_current(p), "... and no table");
	run_for(300 * NS_PER_MS);
	is_int((int)podres_cycles(p), 1, "a failed cycle waits for the refresh period (no retry at once)");
	if (server_start())
		printf("# cannot start the server again\n");
	again(p);
	is_str(podres_error(p), "", "the server came: the next cycle works");
	is_str(who(podres_current(p), "GPU-aaaa"), "ml/train-0/main nvidia.com/gpu", "... with its table");

	/* restarted under a running client: its kept-alive connection is gone */
	server_stop();
	if (server_start())
		printf("# cannot start the server again\n");
	scenario("{\"pods\": [{\"name\": \"after\", \"namespace\": \"ml\", \"containers\": [{\"name\": \"c\", "
		 "\"devices\": [{\"resource\": \"nvidia.com/gpu\", \"ids\": [\"GPU-aaaa\"]}]}]}]}");
	again(p);
	is_str(podres_error(p), "", "a restarted server: the next List works on a new connection");
	is_str(who(podres_current(p), "GPU-aaaa"), "ml/after/c nvidia.com/gpu", "... and says what the new one says");
	podres_free(p);
}

/*
 * Permission denied on the socket (chmod 000). root's connect() ignores
 * the mode, so as root the client runs in a child that drops to nobody
 * (65534): the error is the real EACCES either way.
 */
static void test_permission(void)
{
	pid_t pid;
	int st = 0;

	chmod(sock, 0);
	pid = fork();
	if (pid == 0) {
		struct loop *cl = loop_new();
		struct http_async *ch;
		struct podres *p;
		int64_t end = clock_mono_ns() + 10 * NS_PER_S;
		struct podres_opts o = { .socket = sock };

		if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
			_exit(3);
		ch = http_async_new(cl);
		p = podres_new(ch, &o);
		while (!podres_cycles(p) && clock_mono_ns() < end)
			loop_run_once(cl, clock_mono_ns() + 50 * NS_PER_MS, NULL);
		fprintf(stderr, "# as uid %d: %s\n", (int)geteuid(), podres_error(p));
		st = strstr(podres_error(p), "Permission denied") && strstr(podres_error(p), sock) ? 0 : 1;
		podres_free(p);
		http_async_free(ch);
		loop_free(cl);
		_exit(st);
	}
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a socket the monitor may not open: \"Permission denied\" with its path");
	chmod(sock, 0777);
}

/* Timers every 20 ms while a List waits for a server that answers after 10 s: how late is the latest? */
struct ticker {
	struct loop_timer t;
	int64_t due, worst;
	unsigned n;
};

static void on_tick(struct loop_timer *t)
{
	struct ticker *k = t->data;
	int64_t late = clock_mono_ns() - k->due;

	if (late > k->worst)
		k->worst = late;
	k->n++;
	k->due = clock_mono_ns() + 20 * NS_PER_MS;
	loop_timer_start(l, &k->t, k->due, on_tick, k);
}

static void test_slow(void)
{
	struct ticker k = { .worst = 0 };
	struct podres *p;
	int64_t t0;
	char err[600];

	scenario(vendors);
	p = client(sock, 0, 1500);
	scenario("{\"delay\": 10}");
	k.due = clock_mono_ns() + 20 * NS_PER_MS;
	loop_timer_start(l, &k.t, k.due, on_tick, &k);
	t0 = clock_mono_ns();
	again(p);
	loop_timer_stop(l, &k.t);
	snprintf(err, sizeof(err), "%s", podres_error(p));
	ok(strstr(err, "timeout after 1.5 s") && strstr(err, sock), "a server that answers after 10 s: \"%s\"", err);
	ok(clock_mono_ns() - t0 < 3 * NS_PER_S, "... the List ends at its timeout (%.2f s)",
	   (double)(clock_mono_ns() - t0) / 1e9);
	/*
	 * A client that blocked the loop would hold a timer for the whole call (1.5 s); a loaded machine's
	 * scheduler can hold one for tens of milliseconds (15 ms failed once beside a benchmark and a suite).
	 */
	ok(k.n >= 50 && k.worst < 150 * NS_PER_MS, "... and the loop's 20 ms timers kept time meanwhile: %u ticks, the "
	   "latest %.2f ms late", k.n, (double)k.worst / 1e6);
	is_str(who(podres_current(p), "GPU-aaaa"), "ml/train-0/main nvidia.com/gpu", "... the last good table is kept");
	podres_free(p);
}

/* A kubelet with v1alpha1 only: List asked in v1alpha1 after v1's UNIMPLEMENTED. */
static void test_v1alpha1(void)
{
	struct podres *p;

	truncate(calls, 0);
	scenario("{\"v1\": false, \"pods\": [{\"name\": \"old\", \"namespace\": \"ml\", \"containers\": [{\"name\": "
		 "\"c\", \"devices\": [{\"resource\": \"nvidia.com/gpu\", \"ids\": [\"GPU-aaaa\"]}]}]}]}");
	p = client(sock, 0, 0);
	is_str(podres_error(p), "", "a v1alpha1 kubelet: no error");
	is_str(podres_version(p), "v1alpha1", "... List is asked in v1alpha1");
	is_str(who(podres_current(p), "GPU-aaaa"), "ml/old/c nvidia.com/gpu", "... and its answer decodes");
	ok(!podres_allocatable(p), "... it has no GetAllocatableResources, and that is no error");
	again(p);
	is_int((int)count_lines(calls, "/v1.PodResourcesLister/List"), 1, "v1's List was asked once");
	is_int((int)count_lines(calls, "/v1alpha1.PodResourcesLister/List"), 2, "v1alpha1's at every List after");
	podres_free(p);
}

/* One log line per distinct failure: stderr into a file for the while. */
static void test_log_once(void)
{
	char path[160];
	int fd, saved = dup(2);
	struct podres *p;

	snprintf(path, sizeof(path), "%s/stderr", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 2);
	scenario("{\"status\": [14, \"kubelet busy\"]}");
	p = client(sock, 0, 0);
	again(p);
	again(p);
	scenario("{\"status\": [13, \"something else\"]}");
	again(p);
	podres_free(p);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	is_int((int)count_lines(path, "kubelet busy"), 1, "a failure that repeats is logged once");
	is_int((int)count_lines(path, "something else"), 1, "a new one is logged");
}

/* Kicks are rate-limited: at most one List per kick_min_ns after the last cycle started. */
static void test_kick_rate(void)
{
	struct podres_opts o = { .socket = sock, .refresh_ns = 3600 * NS_PER_S, .kick_min_ns = 1 * NS_PER_S };
	struct podres *p;
	int64_t t0;

	scenario(vendors);
	p = podres_new(h, &o);
	wait_cycle(p, 0);
	t0 = clock_mono_ns();
	podres_kick(p);
	podres_kick(p);
	run_for(400 * NS_PER_MS);
	is_int((int)podres_lists(p), 1, "kicks within kick_min_ns of the last List wait");
	wait_cycle(p, 1);
	is_int((int)podres_lists(p), 2, "... then one List answers them all");
	ok(clock_mono_ns() - t0 >= 500 * NS_PER_MS, "... not before kick_min_ns after the last (%.2f s)",
	   (double)(clock_mono_ns() - t0) / 1e9);
	run_for(300 * NS_PER_MS);
	is_int((int)podres_lists(p), 2, "... and no more without a kick (the refresh is an hour)");
	podres_free(p);
}

/* Freed after 0, 1, 2, ... turns: every stage of a cycle; nothing left on the loop, nothing lost (ASan). */
static void test_free_any_stage(void)
{
	struct podres_opts o = { .socket = sock };
	size_t left = 0;

	scenario(vendors);
	for (int turns = 0; turns < 30; turns++) {
		struct podres *p = podres_new(h, &o);

		for (int t = 0; t < turns; t++)
			loop_run_once(l, clock_mono_ns() + 5 * NS_PER_MS, NULL);
		podres_free(p);
		left += loop_count(l);
	}
	is_int((int)left, 0, "a client freed at any stage leaves nothing on the loop");
}

/* The client's CPU per List of 50 pods x 2 containers x 8 GPUs (the server is another process). */
static void bench(void)
{
	struct buf b;
	struct podres *p;
	struct timespec a, z;
	const int rounds = 50;
	unsigned long n0;
	double ms;

	buf_init(&b, (size_t)1 << 20);
	buf_printf(&b, "{\"pods\": [");
	for (int i = 0; i < 50; i++) {
		buf_printf(&b, "%s{\"name\": \"pod-%d\", \"namespace\": \"team-%d\", \"containers\": [", i ? "," : "", i, i % 7);
		for (int c = 0; c < 2; c++) {
			buf_printf(&b, "%s{\"name\": \"worker-%d\", \"devices\": [{\"resource\": \"nvidia.com/gpu\", \"ids\": [",
				 c ? "," : "", c);
			for (int g = 0; g < 8; g++)
				buf_printf(&b, "%s\"GPU-%08x-1234-5678-9abc-%012d\"", g ? "," : "", i, c * 8 + g);
			buf_printf(&b, "]}]}");
		}
		buf_printf(&b, "]}");
	}
	buf_printf(&b, "]}");
	scenario(b.data);
	buf_free(&b);
	p = client(sock, 0, 0);
	is_int((int)podres_table_size(podres_current(p)), 800, "the bench's answer: 800 allocations");
	n0 = podres_updates(p);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (int i = 0; i < rounds; i++)
		again(p);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &z);
	ms = ((double)(z.tv_sec - a.tv_sec) * 1e3 + (double)(z.tv_nsec - a.tv_nsec) / 1e6) / rounds;
	is_int((int)(podres_updates(p) - n0), rounds, "every List of the bench was answered");
	printf("# client CPU per List of 50 pods x 2 containers x 8 GPUs: %.3f ms\n", ms);
	ok(ms < 20, "the client's CPU per List stays small (%.3f ms)", ms);
	podres_free(p);
}

int main(void)
{
	int64_t end;

	signal(SIGPIPE, SIG_IGN);
	snprintf(dir, sizeof(dir), "/tmp/test_podres.XXXXXX");
	if (!mkdtemp(dir) || chmod(dir, 0755)) {
		printf("Bail out! cannot make a folder\n");
		return 2;
	}
	snprintf(sock, sizeof(sock), "%s/kubelet.sock", dir);
	snprintf(scen, sizeof(scen), "%s/scenario.json", dir);
	snprintf(calls, sizeof(calls), "%s/calls.log", dir);
	scenario(vendors);
	if (server_start()) {
		printf("Bail out! cannot start tests/helpers/podres_server.py (python3-grpcio, python3-grpc-tools)\n");
		return 2;
	}
	l = loop_new();
	h = http_async_new(l);
	test_vendors();
	test_failures();
	test_v1alpha1();
	test_log_once();
	test_slow();
	test_permission();
	test_missing_and_restart();
	test_kick_rate();
	test_free_any_stage();
	bench();
	end = clock_mono_ns() + 200 * NS_PER_MS;
	while (clock_mono_ns() < end)
		loop_run_once(l, end, NULL);
	http_async_free(h);
	is_int((int)loop_count(l), 0, "nothing is left on the loop");
	loop_free(l);
	server_stop();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			printf("# cannot remove %s\n", dir);
	}
	return done_testing();
}
