/* SPDX-License-Identifier: MIT */
/*
 * accel-cloudwatch's cost per datum: building PutMetricData form bodies
 * alone, with gzip, and encoded + SigV4-signed by libcurl + sent to a
 * loopback server (a thread here answering 200), next to the same requests
 * unsigned, so the signature's share shows. Prints datums per second and
 * CPU milliseconds per 1000 datums (process CPU: the loopback server's
 * share is included in the two HTTP rows and is the same in both).
 *
 * Usage: cloudwatch_bench [DATUMS]   (default 200000)
 */
#include "../common/gzip.h"
#include "../sinks/cloudwatch/cloudwatch_creds.h"
#include "../sinks/cloudwatch/cloudwatch_deliver.h"
#include "../sinks/cloudwatch/cloudwatch_http.h"
#include "../sinks/cloudwatch/cloudwatch_query.h"
#include "../sinks/cloudwatch/cloudwatch_queue.h"
#include "../common/timeutil.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

static int listen_fd;

/* A minimal keep-alive HTTP/1.1 server: read headers and Content-Length bytes, answer 200. */
static void *server(void *arg)
{
	static char buf[1 << 21];
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nContent-Length: 0\r\n\r\n";

	(void)arg;
	for (;;) {
		int c = accept(listen_fd, NULL, NULL);
		size_t have = 0;

		if (c < 0)
			return NULL;
		for (;;) {
			char *hdr_end, *cl;
			size_t need;
			ssize_t n;

			while (!(hdr_end = memmem(buf, have, "\r\n\r\n", 4))) {
				n = read(c, buf + have, sizeof(buf) - have);
				if (n <= 0)
					goto closed;
				have += (size_t)n;
			}
			cl = memmem(buf, (size_t)(hdr_end - buf), "Content-Length: ", 16);
			need = (size_t)(hdr_end + 4 - buf) + (cl ? strtoul(cl + 16, NULL, 10) : 0);
			if (memmem(buf, (size_t)(hdr_end - buf), "Expect: 100-continue", 20) && have < need)
				if (write(c, "HTTP/1.1 100 Continue\r\n\r\n", 25) < 0)
					goto closed;
			while (have < need) {
				n = read(c, buf + have, sizeof(buf) - have);
				if (n <= 0)
					goto closed;
				have += (size_t)n;
			}
			if (write(c, ok, sizeof(ok) - 1) < 0)
				goto closed;
			memmove(buf, buf + need, have - need);
			have -= need;
		}
closed:
		close(c);
	}
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void row(const char *what, size_t n, int64_t wall_ns, double cpu)
{
	printf("%-44s %10.0f datums/s  %7.3f ms CPU per 1000 datums\n", what, n / (wall_ns / 1e9), cpu * 1e6 / n);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000, members[CW_MAX_DATUMS], nm;
	struct cw_queue q;
	struct cw_datum *d = malloc(n * sizeof(*d));
	struct cw_body_opts o = { "Accel%2FBench", 60, CW_MAX_BODY, CW_MAX_DATUMS };
	struct buf body, z;
	struct cw_creds creds;
	struct cw_http http;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	pthread_t th;
	char url[64], core[16], rt[16];
	int64_t t0;
	double c0;
	size_t bytes = 0, zbytes = 0;

	/* A busy host's datums: 4 runtimes x 8 cores x a few families, the usual dimensions. */
	cw_queue_init(&q, n);
	for (size_t i = 0; i < n; i++) {
		struct cw_point p = { .name = i % 3 ? "NeuronCoreUtilization" : "ExecutionLatencyP99",
				      .unit = i % 3 ? "Percent" : "Seconds", .ndims = 4, .value = (double)(i % 997) / 7,
				      .ts_ms = 1795219200000LL + (int64_t)i };

		snprintf(core, sizeof(core), "%zu", i % 8);
		snprintf(rt, sizeof(rt), "app_%zu", i % 4);
		p.dims[0] = (struct cw_dim){ "InstanceId", "i-0123456789abcdef0" };
		p.dims[1] = (struct cw_dim){ "InstanceType", "trn1.32xlarge" };
		p.dims[2] = (struct cw_dim){ "RuntimeTag", rt };
		p.dims[3] = (struct cw_dim){ "NeuronCore", core };
		cw_queue_push(&q, &p);
	}
	cw_queue_take(&q, d, n);
	buf_init(&body, CW_MAX_BODY);
	buf_init(&z, CW_MAX_BODY + 65536);

	t0 = clock_mono_ns();
	c0 = cpu_s();
	for (size_t i = 0; i < n;) {
		i = cw_body_build(&body, &o, d, i, n, NULL, members, &nm);
		bytes += body.len;
	}
	row("encode form bodies", n, clock_mono_ns() - t0, cpu_s() - c0);

	t0 = clock_mono_ns();
	c0 = cpu_s();
	for (size_t i = 0; i < n;) {
		i = cw_body_build(&body, &o, d, i, n, NULL, members, &nm);
		gzip_compress(body.data, body.len, &z);
		zbytes += z.len;
	}
	row("encode + gzip", n, clock_mono_ns() - t0, cpu_s() - c0);

	listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(listen_fd, 4) ||
	    getsockname(listen_fd, (struct sockaddr *)&sa, &sl)) {
		perror("bench: loopback server");
		return 1;
	}
	pthread_create(&th, NULL, server, NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", ntohs(sa.sin_port));
	curl_global_init(CURL_GLOBAL_DEFAULT);
	memset(&creds, 0, sizeof(creds));
	snprintf(creds.key, sizeof(creds.key), "AKIDBENCH0000000000");
	snprintf(creds.secret, sizeof(creds.secret), "benchSecret00000000000000000000000000000");
	snprintf(creds.token, sizeof(creds.token), "FwoGZXIvYXdzEXAMPLETOKEN");
	for (int signed_ = 0; signed_ < 2; signed_++) {
		struct cw_reply r;

		cw_http_init(&http, url, "us-west-2", &creds);
		http.gzip = 0;
		if (!signed_)
			http.sigv4[0] = '\0'; /* the same requests with libcurl's signing off */
		t0 = clock_mono_ns();
		c0 = cpu_s();
		for (size_t i = 0; i < n;) {
			i = cw_body_build(&body, &o, d, i, n, NULL, members, &nm);
			cw_http_send(&http, &body, nm, &r);
			if (r.outcome != CW_SENT) {
				fprintf(stderr, "bench: %s\n", r.detail);
				return 1;
			}
		}
		row(signed_ ? "encode + SigV4 (libcurl) + POST to loopback" : "encode + POST to loopback, unsigned", n,
		    clock_mono_ns() - t0, cpu_s() - c0);
		cw_http_free(&http);
	}
	printf("bodies: %.0f bytes per datum, %.1f gzipped (x%.1f)\n", (double)bytes / n, (double)zbytes / n,
	       (double)bytes / zbytes);
	for (size_t i = 0; i < n; i++)
		cw_queue_release(&q, &d[i]);
	cw_queue_free(&q);
	free(d);
	buf_free(&body);
	buf_free(&z);
	curl_global_cleanup();
	return 0;
}
