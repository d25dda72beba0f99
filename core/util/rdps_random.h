/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_random.h - unpredictable numbers for session ids and hash seeds (never on the data path). */
#ifndef RDPS_UTIL_RANDOM_H
#define RDPS_UTIL_RANDOM_H

#include <stdint.h>
#include <sys/random.h>
#include <unistd.h>

#include "rdps_clock.h"

/*
 * 64 random bits from the kernel. Without an entropy source (early boot, seccomp) it falls back
 * to the clock, the pid and an address: unique enough per host, but guessable, so tables keyed
 * by it still bound what a guess can cost.
 */
static inline uint64_t rdps__random_u64(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
        v = (rdps__clock_monotonic_ns() * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)getpid() << 32) ^
            (uint64_t)(uintptr_t)&v;
    return v;
}

#endif /* RDPS_UTIL_RANDOM_H */
