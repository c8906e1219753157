/* SPDX-License-Identifier: MIT */
/*
 * stderr logger. One fprintf per message under flockfile so lines from
 * several threads (the IMDS refresher, HTTP workers) never interleave.
 * A rate-limited message's counts live in its own struct log_limit,
 * updated with atomics.
 */
#include "log.h"

#include <getopt.h>
#include <stdatomic.h>
#include <time.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * The process's one logger, at file scope for the reason a signal
 * handler's flag is: the code that logs holds no handle to reach it
 * through (every module, every thread: the NVML event thread, HTTP
 * workers, library callbacks). log_init sets it at start, before any
 * thread; after that it is only read.
 */
static struct {
	const char *prog; /* the messages' prefix (borrowed: a string that outlives the process's logging) */
	int level;        /* enum log_level */
} logger = { "accel", LOG_LVL_WARN };

void log_init(const char *prog, int level)
{
	if (prog)
		logger.prog = prog;
	if (level < LOG_LVL_SILENT)
		level = LOG_LVL_SILENT;
	if (level > LOG_LVL_TRACE)
		level = LOG_LVL_TRACE;
	logger.level = level;
}

int log_level(void)
{
	return logger.level;
}

int log_verbose_option(const char *prog, int argc, char **argv, int *level)
{
	const char *arg = optarg;

	if (!arg && optind < argc && !strcmp(argv[optind - 1], "--verbose") && argv[optind][0] >= '0' &&
	    argv[optind][0] <= '9')
		arg = argv[optind++];
	if (!arg) {
		(*level)++;
	} else if (strspn(arg, "v") == strlen(arg)) {
		*level += 1 + (int)strlen(arg); /* "-vv": getopt hands over the second "v" as the argument */
	} else if (arg[0] >= '0' && arg[0] <= '4' && !arg[1]) {
		*level = arg[0] - '0';
	} else {
		fprintf(stderr, "%s: --verbose: expected 0 to 4, got \"%s\"\n", prog, arg);
		return -1;
	}
	return 0;
}

void log_at(int level, const char *tag, const char *fmt, ...)
{
	va_list ap;

	if (level > logger.level)
		return;
	flockfile(stderr);
	fprintf(stderr, "%s: %s: ", logger.prog, tag);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}

char *log_quote(char *dst, size_t size, const char *src, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i;

	if (!size)
		return dst;
	if (len == (size_t)-1)
		len = strnlen(src, LOG_QUOTE_MAX + 1);
	for (i = 0; i < len && i < LOG_QUOTE_MAX; i++) {
		unsigned char c = (unsigned char)src[i];
		char e[7];
		size_t n;

		if (c == '"' || c == '\\') {
			e[0] = '\\', e[1] = (char)c, n = 2;
		} else if (c == '\n') {
			e[0] = '\\', e[1] = 'n', n = 2;
		} else if (c == '\t') {
			e[0] = '\\', e[1] = 't', n = 2;
		} else if (c < 0x20 || c == 0x7f) {
			memcpy(e, "\\u00", 4), e[4] = hex[c >> 4], e[5] = hex[c & 15], n = 6;
		} else {
			e[0] = (char)c, n = 1;
		}
		if (o + n + 1 > size)
			break;
		memcpy(dst + o, e, n);
		o += n;
	}
	if (i < len && o + 4 <= size) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = '\0';
	return dst;
}

void log_limited(struct log_limit *lim, const char *fmt, ...)
{
	struct timespec ts;
	long long now, last;
	unsigned long long held = 0;
	int show = 0;
	char msg[1024];
	va_list ap;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	atomic_fetch_add(&lim->total, 1);
	last = atomic_load(&lim->last_ns);
	for (;;) {
		if (last && now - last < LOG_LIMIT_INTERVAL_NS) {
			atomic_fetch_add(&lim->held, 1);
			break;
		}
		/* the thread that moves last_ns on logs, with what was held until then */
		if (atomic_compare_exchange_weak(&lim->last_ns, &last, now ? now : 1)) {
			show = 1;
			held = atomic_exchange(&lim->held, 0);
			break;
		}
	}
	if (!show || LOG_LVL_WARN > logger.level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (held)
		log_at(LOG_LVL_WARN, "warning", "%s (and %llu more like it in the last %lld s)", msg, held,
		       LOG_LIMIT_INTERVAL_NS / 1000000000LL);
	else
		log_at(LOG_LVL_WARN, "warning", "%s", msg);
}
