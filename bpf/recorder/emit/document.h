/* SPDX-License-Identifier: GPL-2.0 */
/* The lockscope-record/1 document (docs/recorder-json.md) and its series
 * objects, written from what the session read. */
#ifndef LOCKSCOPE_RECORD_DOCUMENT_H
#define LOCKSCOPE_RECORD_DOCUMENT_H

#include <stdbool.h>
#include <stdio.h>
#include "json_out.h"
#include "emit/recording.h"

/* The whole document. 0 or a negative errno. */
int document_write(struct rec_session *s, FILE *f);

/* One series object (one line, no newline) for the interval [start, end]
 * from delta, and the state of cur (the whole maps now); observed: ns of it
 * the programs were attached (--duty). */
int document_write_interval(struct rec_session *s, struct rec_data *delta,
			    const struct rec_data *cur, __u64 start, __u64 end,
			    __u64 observed, bool reread, FILE *f);

/* One series interval ending at now: cur (cumulative, thread times closed at
 * now) minus the last sample, written and kept (emit/series.h). Takes
 * ownership of cur. */
void document_interval(struct rec_session *s, struct rec_data *cur, __u64 now, bool reread);

/* The recorder's fixed vocabulary, for --list-features: the system calls
 * followed by kind, the DIO write classes of dio[], the inode lock kinds of
 * locks[].kind, and the attach kinds in the order they are tried. */
void document_facts(struct json_out *j);

#endif
