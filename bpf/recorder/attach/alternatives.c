// SPDX-License-Identifier: GPL-2.0
/* The alternatives table (alternatives.h). A row's programs are the group's
 * handlers with the kind's suffix (kern/ fragments: dio_rw_begin_fentry, ...);
 * the row says why they see the same facts as the group's tracepoints. */
#include <stddef.h>
#include "attach/alternatives.h"

#define K(kind) (1u << ATTACH_##kind)

static const struct rec_alternative rows[] = {
	{ GROUP_DIO, K(FENTRY) | K(KPROBE), { "__iomap_dio_rw", "iomap_dio_complete" },
	  "fs/iomap/direct-io.c: trace_iomap_dio_rw_begin() is the first statement of "
	  "__iomap_dio_rw() with its kiocb and iov_iter, and trace_iomap_dio_complete() is in "
	  "iomap_dio_complete(struct iomap_dio *) with dio->iocb and dio->error (tracepoints "
	  "from v6.5, 3fd41721cd5c); both functions are exported with those arguments from "
	  "v5.10, and iomap_dio_rw() calls one then the other" },
};

const char *const *alternatives_needs(int g, int kind)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].group == (enum rec_group_id)g && (rows[i].kinds & (1u << kind)))
			return rows[i].needs;
	return NULL;
}
