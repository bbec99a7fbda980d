/* SPDX-License-Identifier: GPL-2.0 */
/* A small streaming JSON writer shared by lockscope's C binaries.
 * It tracks commas per nesting level, so callers only say what comes next. */
#ifndef LOCKSCOPE_JSON_OUT_H
#define LOCKSCOPE_JSON_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json_out {
	FILE *f;
	int depth;
	bool need_comma[JSON_MAX_DEPTH];
	bool after_key;
};

#define JSON_OUT_INIT(file) { .f = (file) }

void json_begin_object(struct json_out *j);
void json_end_object(struct json_out *j);
void json_begin_array(struct json_out *j);
void json_end_array(struct json_out *j);
/* Starts a member; the value written next belongs to it. */
void json_key(struct json_out *j, const char *key);

/* Bare values (array elements, or after json_key). */
void json_value_string(struct json_out *j, const char *s);
void json_value_int(struct json_out *j, int64_t v);
void json_value_uint(struct json_out *j, uint64_t v);
void json_value_double(struct json_out *j, double v);
void json_value_bool(struct json_out *j, bool v);
void json_value_null(struct json_out *j);

/* Members: key and value in one call. */
void json_string(struct json_out *j, const char *key, const char *s);
void json_int(struct json_out *j, const char *key, int64_t v);
void json_uint(struct json_out *j, const char *key, uint64_t v);
void json_double(struct json_out *j, const char *key, double v);
void json_bool(struct json_out *j, const char *key, bool v);
void json_null(struct json_out *j, const char *key);

#endif
