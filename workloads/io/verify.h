/* SPDX-License-Identifier: GPL-2.0 */
/* The verify pattern: every written block starts with a header (magic, the
 * block's own offset, a seed, its length) and the rest is a sequence drawn
 * from (seed, offset). A block therefore proves where it belongs and that its
 * bytes are the ones written, without a record of who wrote it last. */
#ifndef LOAD_VERIFY_H
#define LOAD_VERIFY_H

#include <stddef.h>
#include <stdint.h>
#include "io/files.h"
#include "stats/stats.h"

#define VERIFY_MAGIC 0x3130444f4c534cULL	/* "LSLOD01" */

struct verify_hdr {
	uint64_t magic;
	uint64_t offset;
	uint64_t seed;
	uint32_t len;
	uint32_t hdr_check;	/* catches a torn or shifted header */
};
_Static_assert(sizeof(struct verify_hdr) <= VERIFY_MIN_BS, "a block holds its header");

enum { VERIFY_OK, VERIFY_ZERO, VERIFY_BAD };

void verify_fill(void *buf, uint32_t len, uint64_t offset, uint64_t seed);

/* VERIFY_OK, VERIFY_ZERO (all zero bytes), or VERIFY_BAD with a reason. */
int verify_check(const void *buf, uint32_t len, uint64_t offset, char *reason, size_t rlen);

/* Accounts one block read back: an all-zero block counts as unwritten only if
 * the filesystem says it lies in a hole or unwritten extent (SEEK_DATA). */
void verify_account(struct verify_stats *v, int fd, const void *buf, uint32_t len,
		    uint64_t offset);

/* Reads the file's whole I/O grid back and checks every block. 0, or -errno. */
int verify_file(struct lfile *lf, volatile int *stop);

#endif
