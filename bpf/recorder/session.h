/* SPDX-License-Identifier: GPL-2.0 */
/* One recording, with the lifecycle of perf's lock-contention skeleton:
 * prepare (load, attach) -> start (open the window) -> stop -> read -> finish. */
#ifndef LOCKSCOPE_RECORD_SESSION_H
#define LOCKSCOPE_RECORD_SESSION_H

#include "emit/recording.h"

int session_prepare(struct rec_session *s, const struct rec_opts *o, const struct rec_filter *f);
void session_start(struct rec_session *s);
/* While recording: read /proc for new inodes and processes. */
void session_tick(struct rec_session *s);
/* Once a second while recording: the --max-overhead check (it may pause
 * every program for a while; the window stays open). */
void session_overhead_tick(struct rec_session *s);
/* While recording: the --duty phase change, when due; when the next is due
 * (CLOCK_MONOTONIC ns), 0 for never. */
__u64 session_duty_tick(struct rec_session *s);
/* Every --interval-ms while recording: one series interval. */
void session_series_tick(struct rec_session *s);
void session_stop(struct rec_session *s);
int session_read(struct rec_session *s);
void session_finish(struct rec_session *s);


#endif
