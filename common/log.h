/* SPDX-License-Identifier: MIT */
/*
 * Logging to stderr for the producer and every sink.
 *
 * Levels follow neuron-monitor's --verbose: 0 silent, 1 errors and warnings
 * (the default), 2 info, 3 debug, 4 everything. stdout is never touched:
 * it carries the report stream. Messages start with a module prefix
 * ("config: ...", "prom: ...") by convention of the callers.
 */
#ifndef ACCEL_LOG_H
#define ACCEL_LOG_H

#include <stddef.h>

enum log_level {
	LOG_LVL_SILENT = 0,
	LOG_LVL_WARN = 1, /* errors and warnings */
	LOG_LVL_INFO = 2,
	LOG_LVL_DEBUG = 3,
	LOG_LVL_TRACE = 4,
};

/* Set the verbosity (clamped to 0..4) and the program name used as prefix. */
void log_init(const char *prog, int level);
int log_level(void);

/*
 * Handle a -v / --verbose[=N] option inside a getopt_long loop (uses optarg
 * and optind; declare it "v::"): "--verbose=N", "--verbose N" and "-vN" set
 * the level, each "v" of "-v", "-vv", "-vvv" raises it by one. 0, or -1
 * after telling prog's user what was wrong.
 */
int log_verbose_option(const char *prog, int argc, char **argv, int *level);

void log_at(int level, const char *tag, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The most bytes of outside input a message quotes (then "..."). */
#define LOG_QUOTE_MAX 200

/*
 * Quote outside input (a field, a name, a line) for a log message: at most
 * LOG_QUOTE_MAX bytes of src[0..len) (len (size_t)-1: up to its NUL), then
 * "..." when cut; control characters, '"' and '\\' escaped as in JSON (\n,
 * \u001b), so nothing reaches the terminal raw. Writes a NUL-terminated
 * string into dst (size at least LOG_QUOTE_MAX * 6 + 8 never cuts) and
 * returns dst.
 */
char *log_quote(char *dst, size_t size, const char *src, size_t len);
#define LOG_QUOTE_BUF (LOG_QUOTE_MAX * 6 + 8)

/*
 * A warning that may repeat many times (once per sample, per line): the
 * first one is logged, then at most one per interval, each saying how many
 * were left out since the last. Zero-initialise one per kind of message;
 * several threads may share one (its fields are atomic).
 */
struct log_limit {
	_Atomic long long last_ns;       /* CLOCK_MONOTONIC of the last one logged; 0: none yet */
	_Atomic unsigned long long held; /* left out since */
	_Atomic unsigned long long total;
};
#define LOG_LIMIT_INTERVAL_NS (10LL * 1000 * 1000 * 1000)
/* Like log_at at level LOG_LVL_WARN, under the limit; thread-safe. */
void log_limited(struct log_limit *lim, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...) log_at(LOG_LVL_WARN, "error", __VA_ARGS__)
#define log_warn(...) log_at(LOG_LVL_WARN, "warning", __VA_ARGS__)
#define log_info(...) log_at(LOG_LVL_INFO, "info", __VA_ARGS__)
#define log_debug(...) log_at(LOG_LVL_DEBUG, "debug", __VA_ARGS__)
#define log_trace(...) log_at(LOG_LVL_TRACE, "trace", __VA_ARGS__)

#endif
