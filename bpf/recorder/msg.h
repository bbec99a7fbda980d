/* SPDX-License-Identifier: GPL-2.0 */
/* lockscope-record's messages on stderr. */
#ifndef LOCKSCOPE_RECORD_MSG_H
#define LOCKSCOPE_RECORD_MSG_H

/* One-line error on stderr, prefixed with the program name. */
void msg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One-line note on stderr, the same way: what the recorder chose for the
 * caller (nothing failed). */
void msg_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* With LOCKSCOPE_START_TIMES set: "start step NAME MS" on stderr, the time since the
 * last step (bench/recorder_load reads them: an emulated guest's start is seconds). */
void msg_step(const char *name);

#endif
