/* SPDX-License-Identifier: GPL-2.0 */
/* lockscope-record's messages on stderr. */
#ifndef LOCKSCOPE_RECORD_MSG_H
#define LOCKSCOPE_RECORD_MSG_H

/* One-line error on stderr, prefixed with the program name. */
void msg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
