// SPDX-License-Identifier: GPL-2.0
/* lockscope-record's messages: one line on stderr, named after the program. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
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

void msg_step(const char *name)
{
	static struct timespec last;
	struct timespec now;

	if (!getenv("LOCKSCOPE_START_TIMES"))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (last.tv_sec)
		fprintf(stderr, "start step %s %.1f ms\n", name,
			(now.tv_sec - last.tv_sec) * 1e3 + (now.tv_nsec - last.tv_nsec) / 1e6);
	last = now;
}
