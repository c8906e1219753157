/* SPDX-License-Identifier: MIT */
/*
 * accel-csv's output files: one write per report batch, whole rows only.
 *
 * A batch is one report's rows. csv_out_write() picks the file it goes to
 * (the -o file, its daily or size-rotated successor, or the next file
 * when the current one lacks a column), writes the header when that file
 * is new or empty, checks it against the batch when the file already has
 * one, and appends header and rows with a single write(2) on an O_APPEND
 * descriptor. All of that happens under an exclusive flock(2) on the
 * file's directory, so concurrent accel-csv runs on the same file (cron)
 * never write two headers, never rotate twice and never interleave rows.
 *
 * File names, for -o DIR/STEM.EXT (EXT: from the last dot of the name):
 *   DIR/STEM.EXT               the first file
 *   DIR/STEM.YYYY-MM-DD.EXT    --rotate daily (the report's UTC date)
 *   DIR/STEM[.DATE].N.EXT      N = 1, 2, ...: the next file after a size
 *                              limit, a header mismatch under --rotate, or
 *                              a new column in the wide format
 * The file written to is always the highest N that exists.
 */
#ifndef ACCEL_CSV_OUT_H
#define ACCEL_CSV_OUT_H

#include "../../common/util.h"

#include <stddef.h>
#include <stdint.h>

enum csv_rotate { CSV_ROTATE_NONE, CSV_ROTATE_DAILY, CSV_ROTATE_SIZE };

struct csv_out_cfg {
	const char *path;       /* NULL: stdout */
	enum csv_rotate rotate; /* needs a path */
	uint64_t max_bytes;     /* CSV_ROTATE_SIZE: a batch that would take a non-empty file past this starts the next one */
	int fsync;              /* fsync(2) the file after every batch (and the directory after creating a file) */
	int continuation;       /* wide format: a batch with columns the file lacks goes on in the next file */
};

/* What a batch needs from the header of the file it is appended to. */
struct csv_schema {
	const char *const *cols; /* the batch's columns, in the order a new file's header gets them */
	size_t ncols;
	size_t nfixed;           /* the first nfixed must equal the file's first nfixed, in order */
	int open_ended;          /* 0: the header must equal cols exactly (long); 1: the file may have other columns
				    after the fixed ones, in any order, as long as it has every one of cols (wide) */
};

/*
 * Render the batch's rows (each ending in "\n") for a file whose header is
 * cols[0..ncols): a superset of the schema's columns, in the file's order.
 * *rows is the renderer's own buffer (borrowed until the next call).
 * 0, or -ENOSPC when the rows do not fit the renderer's cap.
 */
typedef int (*csv_render_fn)(void *ud, const char *const *cols, size_t ncols, const char **rows, size_t *len);

struct csv_batch {
	struct csv_schema schema;
	csv_render_fn render;
	void *ud;
	size_t nrows;
	int64_t report_ms;  /* the report's time (unix ms): dates the file under --rotate daily */
	const char *where;  /* the report's place in the input ("stdin:12"), for messages */
};

struct csv_out;

/*
 * Prepare the output (nothing is created before the first batch).
 * 0, or -errno with the reason logged (e.g. the directory cannot be opened).
 * *out is a new object; free it with csv_out_close().
 */
int csv_out_open(struct csv_out **out, const struct csv_out_cfg *cfg);

/*
 * Append one batch. Returns 0, or (every failure but EPIPE logged, with the
 * file name and the rows written):
 *   -EBADMSG  the file's header does not match the batch and rotation is off: nothing written
 *   -EPIPE    stdout's reader is gone (not logged)
 *   -errno    a write error: the file is cut back to its last whole row when it is a regular file
 * After an error the object may only be closed.
 */
int csv_out_write(struct csv_out *o, const struct csv_batch *b);

/* Rows written by this run, to all files. */
uint64_t csv_out_rows(const struct csv_out *o);

/* Close and free (NULL-safe). 0, or -errno when closing reported a write error (logged). */
int csv_out_close(struct csv_out *o);

#endif
