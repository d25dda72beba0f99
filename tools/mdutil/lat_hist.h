/* SPDX-License-Identifier: BSD-2-Clause */
/* lat_hist.h - latency histogram for the market-data demo: HdrHistogram's log-linear layout,
 * coordinated-omission correction, and its percentile-distribution text format (.hgrm). */
#ifndef RDPS_MDUTIL_LAT_HIST_H
#define RDPS_MDUTIL_LAT_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Model
 * -----
 * Values are nanoseconds from 0 to LAT_HIST_HIGHEST_NS (one hour). The layout is HdrHistogram's
 * with a lowest discernible value of 1 ns: with S significant decimal digits there are
 * sub_bucket_count = 2^k counters per bucket, 2^k the smallest power of two >= 2 * 10^S.
 * Bucket 0 holds 0 .. 2^k - 1 exactly; bucket b >= 1 holds [2^(k-1+b), 2^(k+b)) in 2^(k-1)
 * steps of width 2^b. Every value is thus counted in a slot no wider than 1/2^(k-1) of it
 * (S = 2: 1/128, better than 1 %; S = 3: 1/1024). Slot i of the counts array covers
 * [lowest_equivalent, highest_equivalent]; percentiles report the slot's highest equivalent
 * value (as HdrHistogram does), clamped to the exact min and max recorded.
 *
 * The counts are allocated once by lat_hist_init (S = 2: 36 KiB, S = 3: 264 KiB); recording
 * never allocates and is O(1). A value above one hour is recorded as one hour and counted in
 * `saturated`, so the total count stays the number of samples.
 *
 * Coordinated omission: a measurement loop that waits for each response records one slow
 * sample where an open-loop client would have recorded several (the ones it was prevented
 * from sending). lat_hist_record_corrected(v, interval) adds those: v - interval,
 * v - 2 interval, ... down to interval, as HdrHistogram's recordValueWithExpectedInterval.
 * Rdps's demo measures from the intended send time instead (open loop), which needs no
 * correction; the corrected form is for closed-loop probes such as a reflector's RTT. It
 * costs O(slots spanned), never O(v / interval).
 *
 * Mean and standard deviation are computed from the slots (each count at its slot's middle),
 * like HdrHistogram's: exact to the histogram's precision.
 */

#define LAT_HIST_HIGHEST_NS 3600000000000ull /* 1 hour */
#define LAT_HIST_MIN_DIGITS 1
#define LAT_HIST_MAX_DIGITS 4

struct lat_hist {
    uint64_t *counts;      /* counts_len slots */
    uint32_t counts_len;   /* (bucket_count + 1) * sub_bucket_count / 2 */
    uint32_t bucket_count; /* buckets needed to reach LAT_HIST_HIGHEST_NS */
    uint32_t sub_bucket_count;
    uint32_t sub_bucket_half_bits; /* log2(sub_bucket_count / 2) */
    int significant_digits;
    uint64_t total_count;
    uint64_t min_value; /* UINT64_MAX while empty */
    uint64_t max_value; /* 0 while empty */
    uint64_t saturated; /* samples above LAT_HIST_HIGHEST_NS, recorded as it */
};

/* Allocates the counts for 1..4 significant digits. 0, or -EINVAL / -ENOMEM. */
int lat_hist_init(struct lat_hist *h, int significant_digits);
/* Frees the counts; h may be zeroed or already finished. */
void lat_hist_fini(struct lat_hist *h);
/* Forgets every sample (keeps the allocation): e.g. at the end of a warm-up. */
void lat_hist_reset(struct lat_hist *h);

void lat_hist_record(struct lat_hist *h, uint64_t value_ns);
void lat_hist_record_n(struct lat_hist *h, uint64_t value_ns, uint64_t count);
/* Records value_ns, plus the samples a closed loop with this expected interval missed. */
void lat_hist_record_corrected(struct lat_hist *h, uint64_t value_ns, uint64_t interval_ns);
/* Adds src's samples to dst. -EINVAL when their significant digits differ (nothing added). */
int lat_hist_merge(struct lat_hist *dst, const struct lat_hist *src);

uint64_t lat_hist_count(const struct lat_hist *h);
uint64_t lat_hist_min(const struct lat_hist *h); /* 0 when empty */
uint64_t lat_hist_max(const struct lat_hist *h); /* 0 when empty */
double lat_hist_mean(const struct lat_hist *h);
double lat_hist_stddev(const struct lat_hist *h);
/*
 * The value at or below which `percentile` % (0..100) of the samples lie: the rank
 * round(percentile / 100 * count) (at least 1) in sorted order, reported as its slot's highest
 * equivalent value within [min, max]. 0 when empty; percentile <= 0 gives min, >= 100 max.
 */
uint64_t lat_hist_value_at_percentile(const struct lat_hist *h, double percentile);
/* The range of values counted together with value_ns. */
uint64_t lat_hist_lowest_equivalent(const struct lat_hist *h, uint64_t value_ns);
uint64_t lat_hist_highest_equivalent(const struct lat_hist *h, uint64_t value_ns);

/* The figures a latency report shows, in ns. */
struct lat_hist_summary {
    uint64_t count;
    uint64_t min, p50, p90, p99, p999, p9999, max;
    double mean, stddev;
};
void lat_hist_summarize(const struct lat_hist *h, struct lat_hist_summary *s);
/*
 * One line: "LABEL count N min X p50 X p90 X p99 X p99.9 X p99.99 X max X UNIT", values
 * divided by value_scale (1000.0 with unit "us" for microseconds). 0, or -EIO.
 */
int lat_hist_print_summary(const struct lat_hist *h, FILE *out, const char *label,
                           double value_scale, const char *unit);

/*
 * .hgrm: HdrHistogram's outputPercentileDistribution text, which existing plotters read:
 *
 *            Value     Percentile TotalCount 1/(1-Percentile)
 *   <blank line>
 *        0.612 0.000000000000          1           1.00         "%12.3f %2.12f %10d %14.2f"
 *        ...
 *       31.743 1.000000000000      10000                      last row: no 4th column
 *   #[Mean    =        1.203, StdDeviation   =        0.511]
 *   #[Max     =       31.743, Total count    =        10000]
 *   #[Buckets =           35, SubBuckets     =          256]
 *
 * Rows step through percentiles the way HdrHistogram's percentile iterator does:
 * ticks_per_half_distance rows per halving of the distance to 100 % (HdrHistogram's usual 5),
 * each row the first slot whose cumulative percentile reaches the level, then a final row at
 * 100 %. Values are slot highest-equivalent values divided by value_scale (1000.0: ns to us),
 * with 3 decimals (a nanosecond in microseconds). The footer's Max is the exact largest
 * sample (HdrHistogram prints its slot's highest equivalent value, as the last row does here).
 * An empty histogram writes the header and the footer. 0, or -EINVAL (ticks < 1, scale <= 0)
 * / -EIO.
 */
int lat_hist_write_hgrm(const struct lat_hist *h, FILE *out, int ticks_per_half_distance,
                        double value_scale);

struct lat_hgrm_row {
    double value;
    double percentile; /* 0..1 */
    uint64_t total_count;
    double inverted; /* 1/(1-percentile); INFINITY when the row has none (the last row) */
};

struct lat_hgrm_footer {
    bool present; /* all three footer lines were read */
    double mean, stddev, max;
    uint64_t total_count;
    uint32_t buckets, sub_buckets;
};

/*
 * Reads a .hgrm text (this writer's, HdrHistogram Java's, or HdrHistogram_c's, whose last
 * row says "inf"): the header, rows, footer lines; blank lines are skipped. Rows go to
 * rows[0..max_rows); *n_rows is set to how many. Returns 0; -ENOSPC when there are more rows
 * than max_rows; -EINVAL for a line that is none of these (its 1-based number in *bad_line
 * when bad_line is not NULL): a row needs 3 or 4 numbers, a percentile within 0..1 and
 * non-decreasing counts. footer may be NULL.
 */
int lat_hgrm_parse(const char *text, size_t len, struct lat_hgrm_row *rows, size_t max_rows,
                   size_t *n_rows, struct lat_hgrm_footer *footer, unsigned *bad_line);

#endif /* RDPS_MDUTIL_LAT_HIST_H */
