/* SPDX-License-Identifier: GPL-2.0 */
/* Lock holders on the user side: read the holder maps, write the "holders"
 * object of the recorder's JSON (docs/recorder-json.md). */
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

struct rec_probe;
/* Before load: the group's maps only when it is on (and it is turned off
 * where the kernel lacks what it needs). */
void holder_tick_configure(struct record_bpf *skel, struct rec_probe *p);
/* The snapshot timer on every CPU (after the probes are attached); 0 or a
 * negative errno, its reason kept for the JSON. */
int holder_tick_attach(struct rec_probe *p, unsigned int period_ms);
/* Detaches the timers; how many there were. */
int holder_tick_detach(void);
/* Detaches them for an "off" phase of --duty: holder_tick_cpus still counts
 * them until they are attached again or detached for good. */
void holder_tick_pause(void);
/* CPUs with a timer; *why: why not, or NULL. */
int holder_tick_cpus(const char **why);

/* The "holders" object. */
void holder_read_json(struct rec_session *s, struct json_out *j);


#endif
