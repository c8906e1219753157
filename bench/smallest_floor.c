/* SPDX-License-Identifier: MIT */
/*
 * smallest_floor: the design floor of the smallest node (vcpu_usage and
 * memory_info once a second), for bench/smallest_node.sh: /proc/stat and
 * /proc/meminfo kept open, one pread of each, a fixed 1,400-byte line
 * written to stdout, woken by ppoll once a period. Nothing is parsed or
 * formatted: what is left of a cycle once the monitor's own work is gone.
 *
 * Usage: smallest_floor [PERIOD_MS]   (default 1000; runs until killed)
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	int stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC), mem_fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	static char buf[65536], line[1400];
	struct timespec next, now, wait;

	if (stat_fd < 0 || mem_fd < 0 || ms <= 0) {
		fprintf(stderr, "smallest_floor: cannot open /proc/stat or /proc/meminfo, or a bad period\n");
		return 2;
	}
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\n';
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		if (pread(stat_fd, buf, sizeof(buf), 0) < 0 || pread(mem_fd, buf, sizeof(buf), 0) < 0 ||
		    write(STDOUT_FILENO, line, sizeof(line)) != (ssize_t)sizeof(line))
			return 1;
		next.tv_nsec += (ms % 1000) * 1000000L;
		next.tv_sec += ms / 1000 + next.tv_nsec / 1000000000L;
		next.tv_nsec %= 1000000000L;
		clock_gettime(CLOCK_MONOTONIC, &now);
		wait.tv_sec = next.tv_sec - now.tv_sec;
		wait.tv_nsec = next.tv_nsec - now.tv_nsec;
		if (wait.tv_nsec < 0) {
			wait.tv_sec--;
			wait.tv_nsec += 1000000000L;
		}
		if (wait.tv_sec >= 0)
			ppoll(NULL, 0, &wait, NULL);
	}
}
