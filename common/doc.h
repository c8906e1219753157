/* SPDX-License-Identifier: MIT */
/*
 * Configuration documents: a JSON or YAML file loaded into a jansson tree,
 * plus where each value stood in the file, so that every error can say
 * "file:line:column: json.path: what was expected".
 *
 * YAML goes through libyaml and lands in the same tree as JSON would, so
 * one schema check serves both. Paths are written the way users read
 * them: "runtimes[0].metrics[2].type"; the root is "".
 */
#ifndef ACCEL_DOC_H
#define ACCEL_DOC_H

#include <jansson.h>
#include <stddef.h>

#define DOC_MAX_BYTES (1 << 20) /* a config file larger than this is refused */

struct doc_pos;

struct doc {
	char *file;          /* name used in messages */
	json_t *root;        /* owned */
	struct doc_pos *pos; /* path -> position table */
	size_t npos, apos;
};

/*
 * Load path; YAML when the name ends in .yaml or .yml, else JSON. path
 * must be a regular file: a FIFO or a directory is an error at once
 * ("file: not a regular file (a FIFO)"), never a wait. On failure returns
 * -errno or -EINVAL and *err is a new string "file:line:column: reason"
 * (caller frees).
 */
int doc_load(const char *path, struct doc *d, char **err);

/* Same, from memory; name is used in messages. */
int doc_load_mem(const char *name, const char *text, size_t len, int yaml, struct doc *d,
		 char **err);

void doc_free(struct doc *d);

/*
 * A new error string for the value at path: "file:line:col: path: msg".
 * With at_key, the position is the member's key (for unknown keys) rather
 * than its value. Unknown positions degrade to "file: path: msg".
 */
char *doc_error(const struct doc *d, const char *path, int at_key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* "an object", "an array", "a string", "a number", "a boolean" or "null": for "expected X, got Y". */
const char *doc_kind(const json_t *j);

/*
 * Every key of obj (at path) must be one of keys (NULL-terminated). NULL when
 * so; otherwise a new error string for the first other key, at that key:
 * "file:line:col: path.key: unknown key "key"; known: a, b, c".
 */
char *doc_check_keys(const struct doc *d, const char *path, json_t *obj, const char *const *keys);

/* Append ".key" or "[i]" to a path held in a caller buffer (truncates safely). */
void doc_path_key(char *dst, size_t size, const char *base, const char *key);
void doc_path_index(char *dst, size_t size, const char *base, size_t i);

#endif
