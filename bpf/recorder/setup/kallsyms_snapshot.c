// SPDX-License-Identifier: GPL-2.0
/* /proc/kallsyms, read once per start and shared: the kernel's text bounds
 * (session.c), the attach kinds' function checks (attach/probe.c) and the
 * kernel symbolizer (resolve/symbolize.c) each read it whole. The kernel
 * formats its ~100,000 lines at every read (kernel/kallsyms.c, s_show()):
 * 0.6-0.7 s a read on an emulated machine. The first two share a read
 * before the object loads; the symbolizer's comes after it (session.c), for
 * the loaded programs' own symbols. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "setup/kallsyms_snapshot.h"

static char *text;
static size_t text_len;

static char *read_whole(const char *path, size_t *len)
{
	size_t cap = 1 << 22, n = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0 || !buf) {
		err = fd < 0 ? errno : ENOMEM;
		goto fail;
	}
	for (;;) {
		ssize_t r;

		if (cap - n < (1 << 16)) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				err = ENOMEM;
				goto fail;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			goto fail;
		}
		if (r == 0)
			break;
		n += r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	errno = err;
	return NULL;
}

const char *kallsyms_snapshot(size_t *len)
{
	if (!text && !(text = read_whole("/proc/kallsyms", &text_len)))
		return NULL;
	if (len)
		*len = text_len;
	return text;
}

char *kallsyms_snapshot_take(size_t *len)
{
	char *t;

	if (!kallsyms_snapshot(len))
		return NULL;
	t = text;
	text = NULL;
	text_len = 0;
	return t;
}

void kallsyms_snapshot_drop(void)
{
	free(text);
	text = NULL;
	text_len = 0;
}
