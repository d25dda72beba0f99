/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_stats.c - quantiles of the reliable receiver's repair-latency histograms
 * (rdps_rx_recovery.h). */
#include "rdps_rx_recovery.h"

static int hist_quantile(const uint64_t *hist, unsigned n, double q)
{
    uint64_t total = 0;
    for (unsigned b = 0; b < n; b++)
        total += hist[b];
    if (total == 0)
        return -1;
    uint64_t seen = 0;
    for (unsigned b = 0; b < n; b++) {
        seen += hist[b];
        if ((double)seen >= q * (double)total)
            return (int)b;
    }
    return (int)n - 1;
}

uint64_t rdps__rel_latency_quantile_us(const uint64_t hist[RDPS_REL_LATENCY_BUCKETS], double q)
{
    int b = hist_quantile(hist, RDPS_REL_LATENCY_BUCKETS, q);
    return b < 0 ? 0 : 1ull << b;
}

uint64_t rdps__rel_rtts_quantile_milli(const uint64_t hist[RDPS_REL_RTT_BUCKETS], double q)
{
    int b = hist_quantile(hist, RDPS_REL_RTT_BUCKETS, q);
    if (b < 0)
        return 0;
    if (b < RDPS_REL_RTT_LINEAR)
        return (uint64_t)(b + 1) * 250;
    return (RDPS_REL_RTT_LINEAR * 250ull) << (b - RDPS_REL_RTT_LINEAR + 1);
}
