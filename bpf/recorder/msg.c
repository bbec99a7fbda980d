// SPDX-License-Identifier: GPL-2.0
/* lockscope-record's messages: one line on stderr, named after the program. */
#include <stdarg.h>
#include <stdio.h>
#include "msg.h"

void msg_error(const char *fmt, ...)
{
	va_list ap;

	fputs("lockscope-record: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
