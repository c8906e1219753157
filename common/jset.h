/* SPDX-License-Identifier: MIT */
/*
 * Members of JSON objects that a collector keeps from cycle to cycle (its
 * devices' and containers' objects), set in place: a member that already
 * holds a value of the same type is changed, not replaced, so a steady
 * cycle allocates nothing; one of another type, or none, is made anew.
 * o is borrowed; k is copied by jansson when a member is made.
 */
#ifndef ACCEL_JSET_H
#define ACCEL_JSET_H

#include <jansson.h>
#include <stdint.h>

#include "util.h"

void jset_int(json_t *o, const char *k, json_int_t v);
void jset_real(json_t *o, const char *k, double v);
/* An unsigned 64-bit count that keeps its value: an integer below 2^63, a real at or above it (never negative). */
void jset_u64(json_t *o, const char *k, uint64_t v);
/* The same, but v == na (a source's "not available") removes the member. */
void jset_u64_na(json_t *o, const char *k, uint64_t v, uint64_t na);
/* A never-wrapping sum (struct u64sum, util.h): as jset_u64 while it fits in 64 bits, a real past 2^64. */
void jset_u64sum(json_t *o, const char *k, const struct u64sum *s);
void jset_bool(json_t *o, const char *k, int v);
/* A string, invalid UTF-8 replaced (utf8_sanitize), at most JSET_STR_MAX bytes. v must not be NULL. */
void jset_str(json_t *o, const char *k, const char *v);
/* The same, but NULL or "" removes the member. */
void jset_str_opt(json_t *o, const char *k, const char *v);
/* The object o[k], made when it is missing or not an object (borrowed). */
json_t *jset_obj(json_t *o, const char *k);

/* New values of the same types, for an object being made (nothing to set in place). New references. */
json_t *json_u64(uint64_t v);
json_t *json_u64sum(const struct u64sum *s);

#define JSET_STR_MAX 511

#endif
