// SPDX-License-Identifier: GPL-2.0
#include <sys/random.h>
#include <time.h>
#include "io/rng.h"

/* seeds the generator's state words (Vigna's recommendation) */
static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed)
{
	uint64_t st = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&st);
}

uint64_t rng_entropy(void)
{
	uint64_t v = 0;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == sizeof(v))
		return v;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec;
}
