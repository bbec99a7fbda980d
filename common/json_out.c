// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <inttypes.h>
#include "json_out.h"

static void separate(struct json_out *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
}

static void open_scope(struct json_out *j, char c)
{
	separate(j);
	fputc(c, j->f);
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_scope(struct json_out *j, char c)
{
	if (j->depth > 0)
		j->depth--;
	fputc(c, j->f);
}

void json_begin_object(struct json_out *j) { open_scope(j, '{'); }
void json_end_object(struct json_out *j) { close_scope(j, '}'); }
void json_begin_array(struct json_out *j) { open_scope(j, '['); }
void json_end_array(struct json_out *j) { close_scope(j, ']'); }

static void write_escaped(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (c < 0x20)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

void json_key(struct json_out *j, const char *key)
{
	separate(j);
	write_escaped(j->f, key);
	fputc(':', j->f);
	j->after_key = true;
}

void json_value_string(struct json_out *j, const char *s)
{
	separate(j);
	write_escaped(j->f, s);
}

void json_value_int(struct json_out *j, int64_t v)
{
	separate(j);
	fprintf(j->f, "%" PRId64, v);
}

void json_value_uint(struct json_out *j, uint64_t v)
{
	separate(j);
	fprintf(j->f, "%" PRIu64, v);
}

void json_value_double(struct json_out *j, double v)
{
	separate(j);
	if (isfinite(v))
		fprintf(j->f, "%.15g", v);
	else
		fputs("null", j->f); /* JSON has no NaN or infinity */
}

void json_value_bool(struct json_out *j, bool v)
{
	separate(j);
	fputs(v ? "true" : "false", j->f);
}

void json_value_null(struct json_out *j)
{
	separate(j);
	fputs("null", j->f);
}

void json_string(struct json_out *j, const char *k, const char *s) { json_key(j, k); json_value_string(j, s); }
void json_int(struct json_out *j, const char *k, int64_t v) { json_key(j, k); json_value_int(j, v); }
void json_uint(struct json_out *j, const char *k, uint64_t v) { json_key(j, k); json_value_uint(j, v); }
void json_double(struct json_out *j, const char *k, double v) { json_key(j, k); json_value_double(j, v); }
void json_bool(struct json_out *j, const char *k, bool v) { json_key(j, k); json_value_bool(j, v); }
void json_null(struct json_out *j, const char *k) { json_key(j, k); json_value_null(j); }
