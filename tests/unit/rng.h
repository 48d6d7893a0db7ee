/* SPDX-License-Identifier: GPL-2.0 */
/* A seeded generator for unit tests: MEVITOP_TEST_SEED=<n> replays a run; the seed in use
 * is printed by rng_seed(). */
#ifndef MEVITOP_TEST_RNG_H
#define MEVITOP_TEST_RNG_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t rng_state;

/* splitmix64: tiny, seedable, good enough to shuffle test inputs */
static inline uint64_t rng_u64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t rng_under(uint64_t n)
{
	return n ? rng_u64() % n : 0;
}

static inline uint64_t rng_seed(const char *test)
{
	const char *env = getenv("MEVITOP_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);

	printf("%s: MEVITOP_TEST_SEED=%" PRIu64 "\n", test, seed);
	rng_state = seed;
	return seed;
}

#endif
