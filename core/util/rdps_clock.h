/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_clock.h - the process's two clocks in nanoseconds: monotonic for timers, realtime for the
 * wire. */
#ifndef RDPS_UTIL_CLOCK_H
#define RDPS_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Timers, deadlines and durations: never jumps. */
static inline uint64_t rdps__clock_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t rdps__clock_monotonic_ms(void)
{
    return rdps__clock_monotonic_ns() / 1000000u;
}

/* Millisecond ticks from the coarse clock: read from the vDSO, never a syscall (busy loops). */
static inline uint64_t rdps__clock_coarse_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The wire's timestamp_ns (rdps_frame.h): comparable across hosts whose clocks are synchronized. */
static inline uint64_t rdps__clock_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* RDPS_UTIL_CLOCK_H */
