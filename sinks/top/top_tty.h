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

/*
 * Send stderr (this process's and, when called before it starts, a child's)
 * to a pipe the view shows on its key line; top_tty_run writes what came
 * there to the real stderr after the terminal is restored. 0 or -errno.
 */
int top_tty_capture_stderr(void);

/* The view until q, a signal or the end of the input; an exit code. */
int top_tty_run(const struct top_tty_opts *o);

#endif
