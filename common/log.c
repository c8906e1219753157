/* SPDX-License-Identifier: MIT */
/*
 * stderr logger. One fprintf per message under flockfile so lines from
 * several threads (the IMDS refresher, HTTP workers) never interleave.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

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
