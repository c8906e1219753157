/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: an HPC job mapping file (monitor/host/jobmap.c). The
 * input's first line is the file's name, the rest its text.
 *
 * Checked: a name jobmap_name takes prints back as itself ("N" or "N.M");
 * jobmap_parse's ids are each non-empty, not blank, at most JOBMAP_MAX_ID
 * bytes of UTF-8 without control characters, a line of the text, and
 * distinct, at most JOBMAP_MAX_JOBS of them; an error says "LINE:COLUMN:"
 * and leaves no id. Then the text is written as GPU 0's file in a
 * directory of its own and read by the run's jobmap (its watch sees the
 * rewrite): its lookup gives what jobmap_parse gave, or its refresh the
 * error and the lookup the last good jobs. A violation aborts, which
 * libFuzzer reports with the input.
 *
 * Build and run: tests/fuzz/run.sh jobmap (make fuzz), or tests/fuzz/build.sh DIR jobmap.
 */
#include "../../common/util.h"
#include "../../monitor/host/jobmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* GPU 0's jobs at the last good refresh (owned), what a bad file must leave in place. */
static char *good[JOBMAP_MAX_JOBS];
static size_t ngood;

/* A directory and its map for the whole run, made at the first input and removed at exit (atexit's). */
static char dir[] = "/tmp/fuzz_jobmap.XXXXXX";
static struct jobmap *map;

static void cleanup(void)
{
	char path[64];

	jobmap_free(map);
	for (size_t i = 0; i < ngood; i++)
		free(good[i]);

	snprintf(path, sizeof(path), "%s/0", dir);
	unlink(path);
	rmdir(dir);
}

static void check_name(const uint8_t *data, size_t n)
{
	char name[64], back[64];
	int gpu, gi;

	if (n >= sizeof(name) || memchr(data, '\0', n))
		return;
	memcpy(name, data, n);
	name[n] = '\0';
	if (!jobmap_name(name, &gpu, &gi))
		return;
	if (gpu < 0 || gi < -1)
		abort();
	if (gi < 0)
		snprintf(back, sizeof(back), "%d", gpu);
	else
		snprintf(back, sizeof(back), "%d.%d", gpu, gi);
	if (strcmp(back, name))
		abort();
}

/* Is id (n bytes) a whole line of text? */
static int is_line(const char *text, size_t len, const char *id, size_t n)
{
	for (size_t pos = 0; pos <= len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - text) - pos : len - pos;

		if (l && text[pos + l - 1] == '\r')
			l--;
		if (l == n && !memcmp(text + pos, id, n))
			return 1;
		if (!nl)
			break;
		pos = (size_t)(nl - text) + 1;
	}
	return 0;
}

static void check_ids(const char *text, size_t len, char **ids, size_t n)
{
	if (n > JOBMAP_MAX_JOBS)
		abort();
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(ids[i]);

		if (!l || l > JOBMAP_MAX_ID || strspn(ids[i], " ") == l || !is_line(text, len, ids[i], l))
			abort();
		for (size_t k = 0; k < l;) {
			uint32_t cp;
			size_t c = utf8_char(ids[i] + k, &cp);

			if (!c || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
				abort();
			k += c;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(ids[i], ids[j]))
				abort();
	}
}

/*
 * The text as GPU 0's file, read by the run's jobmap (one for the run: an
 * inotify instance costs milliseconds to close): the same ids as parsed
 * (n; rc the parse's), or the error with the last good ids kept.
 */
static void check_reader(struct jobmap *jm, const char *text, size_t len, char **ids, size_t n, int rc)
{
	char path[64];
	const char *const *got;
	size_t ngot;
	int fd, r;

	snprintf(path, sizeof(path), "%s/0", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, text, len) || close(fd))
		abort();
	r = jobmap_refresh(jm);
	got = jobmap_lookup(jm, 0, -1, &ngot);
	if (len > JOBMAP_MAX_FILE_BYTES || rc) {
		if (r != (len > JOBMAP_MAX_FILE_BYTES ? -EFBIG : rc) || !jobmap_error(jm) ||
		    !strstr(jobmap_error(jm), "/0:") || ngot != ngood)
			abort();
		for (size_t i = 0; i < ngot; i++)
			if (strcmp(got[i], good[i]))
				abort();
		return;
	}
	if (r || jobmap_error(jm) || ngot != n)
		abort();
	for (size_t i = 0; i < ngood; i++)
		free(good[i]);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(got[i], ids[i]))
			abort();
		good[i] = xstrdup(ids[i]);
	}
	ngood = n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t nname = nl ? (size_t)(nl - data) : size, len = nl ? size - nname - 1 : 0;
	char *text = malloc(len + 1), *ids[JOBMAP_MAX_JOBS], err[256];
	size_t n = 7;
	int rc;

	if (!map) {
		if (!mkdtemp(dir))
			abort();
		map = jobmap_new(dir);
		atexit(cleanup);
	}
	check_name(data, nname);
	memcpy(text, nl ? nl + 1 : data, len);
	text[len] = '\0';
	err[0] = '\0';
	rc = jobmap_parse(text, len, ids, &n, err, sizeof(err));
	if (rc) {
		if (n || (rc != -EINVAL && rc != -E2BIG) || err[0] < '1' || err[0] > '9' || !strchr(err, ':'))
			abort();
	} else {
		check_ids(text, len, ids, n);
	}
	check_reader(map, text, len, ids, n, rc);
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(text);
	return 0;
}
