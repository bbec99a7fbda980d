/* SPDX-License-Identifier: GPL-2.0 */
/* Lock holders on the user side: the holder maps read into memory. */
#ifndef LOCKSCOPE_RECORD_HOLDER_H
#define LOCKSCOPE_RECORD_HOLDER_H

#include <stddef.h>
#include "record.h"

struct record_bpf;
struct rec_session;
struct json_out;
struct frames;

struct rec_holder { struct holder_key k; struct holder_val v; };

struct rec_holders {
	struct rec_holder *rows;
	size_t nr;
	struct rec_holder *releasers;   /* key: lock, waker's stack id, waker's pid */
	size_t nr_releasers;
	__u64 counts[HC_MAX];
};

/* The holder maps into h. 0 or a negative errno. */
int holder_read_maps(struct record_bpf *skel, struct rec_holders *h);
void holder_read_free(struct rec_holders *h);
/* A deep copy of src into dst (whose old contents are not freed). */
int holder_read_copy(const struct rec_holders *src, struct rec_holders *dst);



#endif
