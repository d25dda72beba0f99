/* SPDX-License-Identifier: BSD-2-Clause */
/* ping_stats.c - RTT sample sorting and nearest-rank percentiles for rdps-ping. */
#include "ping_wire.h"

#include <math.h>
#include <stdlib.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void ping_sort(uint64_t *samples, size_t n)
{
    if (n > 1)
        qsort(samples, n, sizeof(*samples), cmp_u64);
}

uint64_t ping_percentile(const uint64_t *sorted, size_t n, double pct)
{
    if (n == 0)
        return 0;
    /* Nearest rank: the smallest sample with at least pct% of samples at or below it. */
    double rank = ceil(pct / 100.0 * (double)n);
    size_t index = rank < 1.0 ? 0 : (size_t)rank - 1;
    return sorted[index < n ? index : n - 1];
}
