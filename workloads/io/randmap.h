/* SPDX-License-Identifier: GPL-2.0 */
/* Which blocks a pass has touched, so that random I/O visits every block once
 * per pass (fio's random map). Two levels: a bit per block, and a bit per
 * 64-block word that is full, so finding a free block stays cheap near the end. */
#ifndef LOAD_RANDMAP_H
#define LOAD_RANDMAP_H

#include <stdbool.h>
#include <stdint.h>

struct randmap {
	uint64_t nblocks;
	uint64_t used;
	uint64_t nwords;	/* level 0 words */
	uint64_t *bits;		/* level 0: block taken */
	uint64_t *full;		/* level 1: level-0 word is full */
};

int randmap_init(struct randmap *m, uint64_t nblocks);
void randmap_free(struct randmap *m);
void randmap_reset(struct randmap *m);

static inline bool randmap_full(const struct randmap *m)
{
	return m->used >= m->nblocks;
}

/* Takes the wanted block, or the next free one after it (wrapping).
 * The map must not be full. */
uint64_t randmap_take(struct randmap *m, uint64_t want);

#endif
