/* SPDX-License-Identifier: MIT */
/*
 * stderr logger. One fprintf per message under flockfile so lines from
 * several threads (the IMDS refresher, HTTP workers) never interleave.
 */
#include "log.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *log_prog = "accel";
static int log_lvl = LOG_LVL_WARN;

void log_init(const char *prog, int level)
{
	if (prog)
		log_prog = prog;
	if (level < LOG_LVL_SILENT)
		level = LOG_LVL_SILENT;
	if (level > LOG_LVL_TRACE)
		level = LOG_LVL_TRACE;
	log_lvl = level;
}

int log_level(void)
{
	return log_lvl;
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

	if (level > log_lvl)
		return;
	flockfile(stderr);
	fprintf(stderr, "%s: %s: ", log_prog, tag);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}
