/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_stats.c - the reliable receiver's numerics: the NAK backoff draw, the buckets and the
 * quantiles of its repair-latency histograms (rdps_rx_recovery.h). */
#include "rdps_rx_recovery.h"

#include <math.h>

/* The power-of-two bucket of v among n: i for v in [2^(i-1), 2^i), 0 for 0, n - 1 above. */
static unsigned log2_bucket(uint64_t v, unsigned n)
{
    unsigned b = 0;
    while (b + 1 < n && v >= (1ull << b))
        b++;
    return b;
}

void rdps__rel_latency_buckets(uint64_t ns, uint64_t srtt_ns, unsigned *us, unsigned *rtts)
{
    *us = log2_bucket(ns / 1000, RDPS_REL_LATENCY_BUCKETS);
    uint64_t srtt = srtt_ns ? srtt_ns : 1;
    uint64_t quarters = ns < UINT64_MAX / 4 ? ns * 4 / srtt : UINT64_MAX / srtt;
    *rtts = quarters < RDPS_REL_RTT_LINEAR
                ? (unsigned)quarters
                : RDPS_REL_RTT_LINEAR - 1 +
                      log2_bucket(quarters / RDPS_REL_RTT_LINEAR,
                                  RDPS_REL_RTT_BUCKETS - RDPS_REL_RTT_LINEAR + 1);
}

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

static uint64_t rng_next(uint64_t *state) /* splitmix64 */
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t rdps__rel_nak_backoff_ns(uint64_t *rng, uint64_t max_ns, uint32_t receivers)
{
    if (receivers <= 1 || max_ns == 0)
        return 0;
    /* RFC 5401 section 3.5: t = T/lambda * ln(1 + u (e^lambda - 1)), lambda = ln(N) + 1: an
     * increasing exponential density on [0, T], so few receivers fire early. */
    double lambda = log((double)receivers) + 1.0;
    double u = (double)(rng_next(rng) >> 11) * 0x1.0p-53;
    double t = (double)max_ns / lambda * log1p(u * (exp(lambda) - 1.0));
    if (!(t > 0))
        return 0;
    return t >= (double)max_ns ? max_ns : (uint64_t)t;
}
