/* SPDX-License-Identifier: MIT */
/*
 * A compact JSON writer for hot paths (one report per period, one
 * exposition per report). It writes what jansson's compact dump would, but
 * formats numbers without printf: integers with a digit loop, and reals of
 * magnitude below 1e6 as fixed point with up to 9 decimals, fewer past the
 * integer part's digits (trailing zeros trimmed, at least one: "6.25", "0.0",
 * "1.000397199", "123456.7891"). Larger reals are "%.10g". So no real has
 * more than 10 significant digits, what docs/report-format.md §1 promises,
 * but from 2^63 up, where a real is an integer field past int64: the
 * shortest of "%.15g", "%.16g" and "%.17g" that reads back as the same
 * double (2^63 is 9.223372036854776e+18).
 * Every real keeps a fraction or an exponent, so a reader can tell a float
 * from an integer. An object held in several places of the document
 * (one json_t: a process's identity in each group that names the process)
 * is formatted once and copied where it appears again.
 */
#ifndef ACCEL_JSONW_H
#define ACCEL_JSONW_H

#include <jansson.h>

#include "util.h"

/* Append v to b. 0, or -ENOSPC when b's cap is reached (b then holds a partial document). */
int json_write(const json_t *v, struct buf *b);

/*
 * The bytes json_write writes for the string s of len bytes, quotes
 * included: what it costs in a line (control bytes take 6 each).
 */
size_t json_string_size(const char *s, size_t len);

/*
 * Append the string s of len bytes as a JSON string, quotes included,
 * escaped as json_write escapes (for writers of their own: accel-otlp's
 * OTLP/JSON). 0, or -ENOSPC when b's cap is reached.
 */
int json_write_string(struct buf *b, const char *s, size_t len);

/* Append one real in the format above; dst needs 32 bytes. Returns the length. */
size_t json_format_real(double v, char *dst);
/* Append a real as json_write writes one, or an unsigned integer: for writers of their own. 0, or -ENOSPC. */
int json_write_real(struct buf *b, double v);
int json_write_u64(struct buf *b, uint64_t v);
/* An unsigned count as a report carries one (jset.h's json_u64): an integer up to INT64_MAX, a real past it. */
int json_write_count(struct buf *b, uint64_t v);

#endif
