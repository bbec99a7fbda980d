// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "io/randmap.h"

int randmap_init(struct randmap *m, uint64_t nblocks)
{
	memset(m, 0, sizeof(*m));
	m->nblocks = nblocks;
	m->nwords = (nblocks + 63) / 64;
	m->bits = calloc(m->nwords, sizeof(uint64_t));
	m->full = calloc((m->nwords + 63) / 64, sizeof(uint64_t));
	if (!m->bits || !m->full) {
		randmap_free(m);
		return -ENOMEM;
	}
	randmap_reset(m);
	return 0;
}

void randmap_free(struct randmap *m)
{
	free(m->bits);
	free(m->full);
	m->bits = m->full = NULL;
}

/* Bits past nblocks in the last word are marked taken, so they are never chosen. */
static void mark_tail(struct randmap *m)
{
	unsigned rem = (unsigned)(m->nblocks % 64);

	if (rem) {
		m->bits[m->nwords - 1] = ~0ULL << rem;
	}
	if (m->bits[m->nwords - 1] == ~0ULL)
		m->full[(m->nwords - 1) / 64] |= 1ULL << ((m->nwords - 1) % 64);
}

void randmap_reset(struct randmap *m)
{
	memset(m->bits, 0, m->nwords * sizeof(uint64_t));
	memset(m->full, 0, (m->nwords + 63) / 64 * sizeof(uint64_t));
	m->used = 0;
	if (m->nwords)
		mark_tail(m);
}

static uint64_t set_bit(struct randmap *m, uint64_t w, unsigned b)
{
	m->bits[w] |= 1ULL << b;
	if (m->bits[w] == ~0ULL)
		m->full[w / 64] |= 1ULL << (w % 64);
	m->used++;
	return w * 64 + b;
}

/* First word at or after w (wrapping) that has a free bit. */
static uint64_t next_free_word(const struct randmap *m, uint64_t w)
{
	uint64_t nfull = (m->nwords + 63) / 64;
	uint64_t fw = w / 64;
	uint64_t mask = ~m->full[fw] & (~0ULL << (w % 64));

	for (uint64_t step = 0; step <= nfull; step++) {
		if (mask) {
			uint64_t cand = fw * 64 + (uint64_t)__builtin_ctzll(mask);

			if (cand < m->nwords)
				return cand;
		}
		fw = fw + 1 == nfull ? 0 : fw + 1;
		mask = ~m->full[fw];
	}
	return 0; /* unreachable while the map is not full */
}

uint64_t randmap_take(struct randmap *m, uint64_t want)
{
	uint64_t w = want / 64;
	unsigned b = (unsigned)(want % 64);
	uint64_t free_bits;

	if (!(m->bits[w] & (1ULL << b)))
		return set_bit(m, w, b);
	/* the rest of this word first, then the next word with room */
	free_bits = ~m->bits[w] & (b == 63 ? 0 : ~0ULL << (b + 1));
	if (free_bits)
		return set_bit(m, w, (unsigned)__builtin_ctzll(free_bits));
	w = next_free_word(m, w + 1 == m->nwords ? 0 : w + 1);
	return set_bit(m, w, (unsigned)__builtin_ctzll(~m->bits[w]));
}
