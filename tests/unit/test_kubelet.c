/* SPDX-License-Identifier: MIT */
/*
 * The kubelet's pod list (monitor/host/kubelet.c) against a small server on
 * 127.0.0.1 (http_server.h's /pods): a miss fetches, the answer is reduced
 * as the loop's work (off the loop) and a later lookup names the pod and
 * the container from it; a kubelet freed at any point of a fetch (the
 * transfer, the reduction running or done, its after not yet run) loses
 * nothing under ASan.
 */
#include "../../common/timeutil.h"
#include "../../monitor/core/loop.h"
#include "../../monitor/host/kubelet.h"
#include "../../monitor/http/http_async.h"
#include "http_server.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

int main(void)
{
	struct server sv;
	struct loop *l = loop_new();
	struct http_async *h = http_async_new(l);
	struct container_names n;
	struct container_opts o = { .kubelet_refresh_ns = 3600 * NS_PER_S };
	char url[64];
	struct kubelet *k;
	int64_t end;

	if (server_start(&sv)) {
		printf("Bail out! cannot start the server\n");
		return 2;
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", sv.port);
	o.kubelet_url = url;
	k = kubelet_new(h, &o);
	memset(&n, 0, sizeof(n));
	kubelet_names(k, "u1", "abc", clock_mono_ns(), &n);
	ok(!n.pod[0] && kubelet_fetches(k) == 1, "a miss with no answer yet starts a fetch, and names nothing yet");
	end = clock_mono_ns() + 10 * NS_PER_S;
	while (!n.pod[0] && clock_mono_ns() < end) {
		loop_run_once(l, clock_mono_ns() + 50 * NS_PER_MS, NULL);
		kubelet_names(k, "u1", "abc", clock_mono_ns(), &n);
	}
	is_str(n.pod, "p1", "the PodList reduced off the loop names the pod");
	is_str(n.ns, "ns", "... its namespace");
	is_str(n.name, "c1", "... and the container by its id");
	is_str(kubelet_error(k), "", "no error");
	is_int((int)kubelet_fetches(k), 1, "one fetch (the refresh period is an hour)");
	kubelet_free(k);

	/* Freed after 0, 1, 2, ... turns: the fetch's every stage, the reduction's among them */
	size_t left = 0;

	for (int turns = 0; turns < 40; turns++) {
		k = kubelet_new(h, &o);
		memset(&n, 0, sizeof(n));
		kubelet_names(k, "u1", "abc", clock_mono_ns(), &n);
		for (int t = 0; t < turns; t++)
			loop_run_once(l, clock_mono_ns() + 5 * NS_PER_MS, NULL);
		kubelet_free(k);
		left += loop_count(l); /* its transfer, its work posted or its after pending: all taken back */
	}
	is_int((int)left, 0, "a kubelet freed at any stage of a fetch leaves nothing on the loop (and ASan nothing lost)");
	end = clock_mono_ns() + 200 * NS_PER_MS;
	while (clock_mono_ns() < end)
		loop_run_once(l, end, NULL);
	http_async_free(h);
	is_int((int)loop_count(l), 0, "nothing is left on the loop");
	loop_free(l);
	server_stop(&sv);
	return done_testing();
}
