// SPDX-License-Identifier: GPL-2.0
/* lockscope-record's messages: one line on stderr, named after the program. */
#include <stdarg.h>
#include <stdio.h>
#include "msg.h"

static void line(const char *fmt, va_list ap)
{
	fputs("lockscope-record: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void msg_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line(fmt, ap);
	va_end(ap);
}

void msg_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line(fmt, ap);
	va_end(ap);
}
