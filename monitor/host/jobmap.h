/* SPDX-License-Identifier: MIT */
/*
 * HPC job mapping: which scheduler jobs run on which GPU, from the
 * directory NVIDIA's dcgm-exporter reads with --hpc-job-mapping-dir. A
 * scheduler's prolog and epilog (Slurm's, typically) keep one file per GPU
 * in it, named by the GPU's index ("0", "1", ...) or, for a MIG device, by
 * the GPU's index and the GPU instance id ("2.0", "3.10"), each holding the
 * ids of the jobs on that GPU, one per line.
 *
 * The rules are dcgm-exporter's (4.x, internal/pkg/transformation/hpc.go),
 * except where said:
 *  - a name that is not "N" or "N.M" (decimal digits) is ignored, as is a
 *    directory; a name with a leading zero ("01", "2.03") or a number past
 *    INT_MAX is ignored too (dcgm-exporter lists it, but keys it by its
 *    text, so it never matches a GPU);
 *  - a line is a job id as written, spaces included (the same hpc_job label
 *    as dcgm-exporter's), less a carriage return at its end (CRLF); the
 *    last line needs no newline; an empty file, or a missing one, is no
 *    job;
 *  - a MIG device's jobs are those of its "N.M" file only, the whole GPU's
 *    those of "N" only (neither inherits the other's);
 *  - differences: a blank line (empty or only spaces) is skipped
 *    (dcgm-exporter makes it a job "", a second unlabelled series); a job
 *    listed twice in a file is there once (dcgm-exporter repeats the
 *    series); a file removed between the listing and its reading is no job
 *    (dcgm-exporter fails the scrape's group);
 *  - differences, for safety: a symbolic link is not followed and a file
 *    that is not a regular file (a FIFO, a socket, a device) is not read:
 *    both are errors (dcgm-exporter follows a link, and hangs on a FIFO);
 *    a file may hold at most JOBMAP_MAX_FILE_BYTES and JOBMAP_MAX_JOBS
 *    jobs, a job id at most JOBMAP_MAX_ID bytes, of UTF-8 without control
 *    characters; the directory at most JOBMAP_MAX_ENTRIES entries, of which
 *    at most JOBMAP_MAX_FILES mapping files;
 *  - differences, on errors: dcgm-exporter fails the whole scrape's group
 *    on an unreadable file, and labels nothing while the directory is
 *    missing. Here a bad file keeps the jobs it had at the last good read
 *    (the other files are read as they are now), and a directory that
 *    cannot be read keeps the whole last good table; either way the
 *    refresh says why (jobmap_error).
 *
 * Cost: an inotify watch on the directory (files made, removed, renamed,
 * written, their modes changed; the directory itself removed or moved)
 * says when to read it again, so a refresh with no change is one read()
 * that finds no event (bench/jobmap_bench: 0.18 us, where the stat() of a
 * directory of 64 files and of each file costs 27 us every cycle). It is
 * also the correct one: two writes within one tick of the file system's
 * coarse clock give a file the same mtime, nanoseconds included, so a
 * rewrite in place with the same size looks unchanged to a stat check,
 * while the watch sees the write. Without a watch (the directory missing,
 * the user's inotify limits reached) and after a refresh with an error,
 * every refresh reads the directory again. (A file changed through a hard
 * link in another directory is not seen until something in this one
 * changes.)
 *
 * Ownership: the map copies its directory's name; every string it returns
 * is borrowed, valid until the next jobmap_refresh or jobmap_free.
 */
#ifndef ACCEL_JOBMAP_H
#define ACCEL_JOBMAP_H

#include <stddef.h>

#define JOBMAP_MAX_ENTRIES 4096    /* directory entries listed, any name */
#define JOBMAP_MAX_FILES 1024      /* mapping files (a GPU's or a MIG device's) */
#define JOBMAP_MAX_FILE_BYTES 16384 /* bytes of one mapping file */
#define JOBMAP_MAX_JOBS 256        /* jobs in one mapping file */
#define JOBMAP_MAX_ID 256          /* bytes of one job id */

struct jobmap;

/* A map of directory dir (copied), empty until the first jobmap_refresh. Never fails. */
struct jobmap *jobmap_new(const char *dir);
void jobmap_free(struct jobmap *jm); /* NULL-safe */

/*
 * Read the directory again when it may have changed since the last read
 * (always, when there is no watch or the last refresh failed). 0; or
 * -errno with jobmap_error saying where and why: the directory cannot be
 * read (-ENOENT, -ENOTDIR, -EACCES, ...; -E2BIG past JOBMAP_MAX_ENTRIES
 * or JOBMAP_MAX_FILES), the whole last good table kept; or a file is bad
 * (-ELOOP a symbolic link; -EINVAL not a regular file, a control character
 * or not UTF-8; -EFBIG past JOBMAP_MAX_FILE_BYTES; -E2BIG an id past
 * JOBMAP_MAX_ID or past JOBMAP_MAX_JOBS jobs; -EACCES, ...), the first
 * bad file's error returned, each bad file's GPU keeping its last good
 * jobs and the other files read as they are now.
 */
int jobmap_refresh(struct jobmap *jm);
/*
 * Why the last refresh failed ("DIR: ...", "DIR/FILE: ...",
 * "DIR/FILE:LINE:COLUMN: ...", with "(and N more files)" when more than
 * one is bad), or NULL when it did not (or none was made). Borrowed.
 */
const char *jobmap_error(const struct jobmap *jm);
/* The directory, as given to jobmap_new. Borrowed. */
const char *jobmap_dir(const struct jobmap *jm);

/*
 * The jobs on GPU gpu (its index), or on its MIG device with GPU instance
 * id gi (gi -1: the whole GPU): *n ids (borrowed), in file order, each
 * once, or NULL and *n 0 when no file names any.
 */
const char *const *jobmap_lookup(const struct jobmap *jm, int gpu, int gi, size_t *n);
/*
 * The table's i-th entry (0 <= i < jobmap_size), sorted by GPU index then
 * GPU instance id (-1 first): its GPU, GPU instance id (-1: the whole GPU)
 * and jobs as jobmap_lookup gives them. A GPU whose file names no job has
 * no entry.
 */
size_t jobmap_size(const struct jobmap *jm);
const char *const *jobmap_at(const struct jobmap *jm, size_t i, int *gpu, int *gi, size_t *n);

/* ---- the file reader (for jobmap.c, its tests and the fuzzer) ---------------------------------------- */

/* Is name a mapping file's? 1 with *gpu and *gi (-1 for "N"), else 0. */
int jobmap_name(const char *name, int *gpu, int *gi);
/*
 * The job ids of one mapping file's text (len bytes, text[len] == '\0'),
 * the rules above: 0 with ids[0..*n) (each a new string of its own, in
 * file order, each once; free them with free), or -EINVAL / -E2BIG with
 * err ("LINE:COLUMN: why") and nothing in ids. ids has room for
 * JOBMAP_MAX_JOBS.
 */
int jobmap_parse(const char *text, size_t len, char **ids, size_t *n, char *err, size_t errsz);

#endif
