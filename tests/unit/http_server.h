/* SPDX-License-Identifier: MIT */
/*
 * A small HTTP server on 127.0.0.1 for the HTTP client's unit tests
 * (test_http, test_http_async): one thread, one connection at a time, one
 * request per connection; each path is a case (below). It records how many
 * requests came and the last one's head, so a test can tell what went out.
 */
#ifndef ACCEL_TEST_HTTP_SERVER_H
#define ACCEL_TEST_HTTP_SERVER_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

struct server {
	int fd;
	unsigned port;
	pthread_t th;
	int requests;         /* how many came */
	char last[16384];     /* the last request's head */
};

static void send_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		c += w;
		n -= (size_t)w;
	}
}

/*
 * The answer for a path: /ok "hello" (with Retry-After: 3), /gzip a gzipped
 * body, /big 1000 bytes, /redirect a 302 to /ok, /headers 100 KiB of
 * headers, /bigheader one header line of 1 MiB, /pods a PodList, /hang nothing for 1.5 s, anything else 404.
 */
static void answer(int fd, const char *path)
{
	char head[512];

	if (!strcmp(path, "/ok")) {
		const char *r = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nRetry-After: 3\r\n\r\nhello";

		send_all(fd, r, strlen(r));
	} else if (!strcmp(path, "/gzip")) {
		unsigned char z[256];
		uLongf zn = sizeof(z);
		z_stream s;

		memset(&s, 0, sizeof(s));
		deflateInit2(&s, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
		s.next_in = (unsigned char *)"decoded body";
		s.avail_in = 12;
		s.next_out = z;
		s.avail_out = sizeof(z);
		deflate(&s, Z_FINISH);
		zn = sizeof(z) - s.avail_out;
		deflateEnd(&s);
		snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %lu\r\n\r\n",
			 (unsigned long)zn);
		send_all(fd, head, strlen(head));
		send_all(fd, z, zn);
	} else if (!strcmp(path, "/big")) {
		char body[1000];

		memset(body, 'x', sizeof(body));
		snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", sizeof(body));
		send_all(fd, head, strlen(head));
		send_all(fd, body, sizeof(body));
	} else if (!strcmp(path, "/redirect")) {
		const char *r = "HTTP/1.1 302 Found\r\nLocation: /ok\r\nContent-Length: 0\r\n\r\n";

		send_all(fd, r, strlen(r));
	} else if (!strcmp(path, "/headers")) {
		char line[1024];

		send_all(fd, "HTTP/1.1 200 OK\r\n", 17);
		memset(line, 'h', sizeof(line));
		memcpy(line, "X-Big: ", 7);
		memcpy(line + sizeof(line) - 2, "\r\n", 2);
		for (int i = 0; i < 100; i++)
			send_all(fd, line, sizeof(line));
		send_all(fd, "Content-Length: 0\r\n\r\n", 21);
	} else if (!strcmp(path, "/bigheader")) {
		static char line[1 << 20];

		send_all(fd, "HTTP/1.1 200 OK\r\nX-Big: ", 24);
		memset(line, 'h', sizeof(line));
		send_all(fd, line, sizeof(line));
		send_all(fd, "\r\nContent-Length: 0\r\n\r\n", 23);
	} else if (!strcmp(path, "/pods")) {
		const char *b = "{\"kind\": \"PodList\", \"items\": [{\"metadata\": {\"uid\": \"u1\", \"name\": \"p1\", "
				"\"namespace\": \"ns\"}, \"spec\": {\"nodeName\": \"n\"}, \"status\": {\"containerStatuses\": "
				"[{\"name\": \"c1\", \"containerID\": \"containerd://abc\"}]}}]}";

		snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", strlen(b));
		send_all(fd, head, strlen(head));
		send_all(fd, b, strlen(b));
	} else if (!strcmp(path, "/hang")) {
		usleep(1500 * 1000);
	} else {
		const char *r = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";

		send_all(fd, r, strlen(r));
	}
}

/* One connection at a time, one request per connection (Connection: close). */
static void *serve(void *ud)
{
	struct server *sv = ud;

	for (;;) {
		int c = accept(sv->fd, NULL, NULL);
		char req[16384], path[256] = "";
		size_t n = 0;

		if (c < 0)
			return NULL;
		while (n < sizeof(req) - 1) {
			ssize_t r = recv(c, req + n, sizeof(req) - 1 - n, 0);

			if (r <= 0)
				break;
			n += (size_t)r;
			req[n] = '\0';
			if (strstr(req, "\r\n\r\n"))
				break;
		}
		req[n] = '\0';
		if (!strncmp(req, "QUIT", 4)) {
			close(c);
			return NULL;
		}
		sv->requests++;
		memcpy(sv->last, req, n + 1);
		sscanf(req, "%*s %255s", path);
		answer(c, path);
		shutdown(c, SHUT_WR);
		close(c);
	}
}

static int server_start(struct server *sv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);

	memset(sv, 0, sizeof(*sv));
	sv->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sv->fd < 0 || bind(sv->fd, (struct sockaddr *)&a, sizeof(a)) || listen(sv->fd, 8) ||
	    getsockname(sv->fd, (struct sockaddr *)&a, &al))
		return -1;
	sv->port = ntohs(a.sin_port);
	return pthread_create(&sv->th, NULL, serve, sv) ? -1 : 0;
}

static void server_stop(struct server *sv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)sv->port) };
	int c = socket(AF_INET, SOCK_STREAM, 0);

	if (connect(c, (struct sockaddr *)&a, sizeof(a)) == 0)
		send_all(c, "QUIT\r\n\r\n", 8);
	close(c);
	pthread_join(sv->th, NULL);
	close(sv->fd);
}

#endif
