/* SPDX-License-Identifier: BSD-2-Clause */
/* mdutil_test_rng.h - the seeded generator of the tests/mdutil tests (xorshift64*): reproducible
 * samples, packets and snapshots from a seed. */
#ifndef RDPS_TESTS_MDUTIL_RNG_H
#define RDPS_TESTS_MDUTIL_RNG_H

#include <stdint.h>

static uint64_t rng_state = 1; /* seed: any value but 0 */

static inline uint64_t rng_next(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, 1). */
static inline double rng_unit(void)
{
    return (double)(rng_next() >> 11) / 9007199254740992.0;
}

#endif /* RDPS_TESTS_MDUTIL_RNG_H */
