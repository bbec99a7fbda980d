/* SPDX-License-Identifier: GPL-2.0 */
/* io_uring's hashed io-wq requests in the recorder's document (iowq_json.c). */
#ifndef LOCKSCOPE_RECORD_IOWQ_JSON_H
#define LOCKSCOPE_RECORD_IOWQ_JSON_H

#include <stdbool.h>
#include "json_out.h"
#include "emit/recording.h"
#include "read/read_data.h"

/* Whether the io_uring group and a dio program that sees the kiocb are on. */
bool iowq_json_measured(const struct rec_session *s);

/* The top-level "io_wq_hashed": measured, and why not. */
void iowq_json_write(const struct rec_session *s, struct json_out *j);

/* A dio entry's "io_wq_hashed" (only where measured). */
void iowq_json_file(const struct rec_session *s, struct json_out *j, const struct rec_dio *d);

#endif
