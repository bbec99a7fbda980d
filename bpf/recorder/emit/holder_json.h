/* SPDX-License-Identifier: GPL-2.0 */
/* The "holders" object of the recorder's document (holder_json.c). */
#ifndef LOCKSCOPE_RECORD_HOLDER_JSON_H
#define LOCKSCOPE_RECORD_HOLDER_JSON_H

#include "json_out.h"
#include "emit/recording.h"

void holder_json_write(struct rec_session *s, struct json_out *j);

#endif
