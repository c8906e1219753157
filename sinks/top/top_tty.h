/* SPDX-License-Identifier: MIT */
/*
 * accel-top's interactive view: ncurses on /dev/tty (stdin may carry the
 * stream), one poll loop over the stream, the terminal, a signal pipe and
 * the captured stderr. It redraws on a report, a key, a resize, a message,
 * and once a second for the report's age; nothing else wakes it.
 *
 * The terminal is restored on every way out: q, SIGINT, SIGTERM, the end of
 * the input or a read error (then a message), and a crash signal (SIGSEGV,
 * SIGBUS, SIGFPE, SIGILL, SIGABRT: the saved modes and the terminal's
 * exit-alternate-screen and show-cursor strings are written from the
 * handler, then the signal is raised again).
 */
#ifndef ACCEL_TOP_TTY_H
#define ACCEL_TOP_TTY_H

#include "../../common/util.h"

#include <stddef.h>
#include <stdint.h>

struct top_tty_opts {
	int fd;            /* the stream; -1: url */
	const char *url;   /* accel-prom's /metrics, polled (top_url.h) */
	int64_t interval_ms;
	size_t max_line;
	int64_t history_ms, stale_ms;
	int color, ascii;
};

/* Captured stderr: what came through the pipe, for after the view (fields are top_tty.c's). */
struct top_capture {
	int pipe;         /* the read end; -1: not captured */
	int real_stderr;  /* the stderr from before, to put back; -1: none */
	struct buf kept;  /* what came, up to a cap */
	char last[160];   /* its last line, for the key line */
};

/*
 * Send stderr (this process's and, when called before it starts, a child's)
 * to a pipe that c reads; top_tty_run shows its last line on the key line
 * and writes what came there to the real stderr after the terminal is
 * restored. 0 or -errno (c then captures nothing).
 */
int top_tty_capture_stderr(struct top_capture *c);

/*
 * The view until q, a signal or the end of the input; an exit code. cap:
 * stderr captured by top_tty_capture_stderr (borrowed; released here), or
 * NULL.
 */
int top_tty_run(const struct top_tty_opts *o, struct top_capture *cap);

#endif
