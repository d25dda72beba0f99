/* SPDX-License-Identifier: BSD-2-Clause */
/* test_lat_hist.c - the latency histogram against exact sorted values, coordinated-omission
 * correction against the one-record-per-sample definition, merge, and .hgrm written and read back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lat_hist.h"
#include "mdutil_test_rng.h"

/* ---- helpers ---- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Samples of three shapes: uniform, log-uniform over 1 ns .. 10 s, and a body with outliers. */
static void fill_samples(uint64_t *v, size_t n, int shape, uint64_t seed)
{
    rng_state = seed;
    for (size_t i = 0; i < n; i++) {
        if (shape == 0)
            v[i] = rng_next() % 1000000;
        else if (shape == 1)
            v[i] = (uint64_t)exp(rng_unit() * log(1e10));
        else
            v[i] =
                rng_next() % 100 == 0 ? 1000000 + rng_next() % 100000000 : 2000 + rng_next() % 3000;
    }
}

/* The rank lat_hist_value_at_percentile documents, 1-based. */
static size_t rank_of(double p, size_t n)
{
    size_t r = (size_t)(p / 100.0 * (double)n + 0.5);
    return r < 1 ? 1 : r > n ? n : r;
}

static char *write_hgrm(const struct lat_hist *h, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    assert_non_null(f);
    assert_int_equal(lat_hist_write_hgrm(h, f, 5, 1000.0), 0);
    fclose(f);
    return text;
}

/* ---- layout ---- */

static void test_layout_matches_hdrhistogram(void **state)
{
    (void)state;
    for (int digits = 1; digits <= 4; digits++) {
        struct lat_hist h;
        assert_int_equal(lat_hist_init(&h, digits), 0);
        /* HdrHistogram: the smallest power of two >= 2 * 10^digits sub-buckets; buckets until
         * sub_bucket_count << (buckets - 1) exceeds the highest trackable value. */
        uint64_t need = 2;
        for (int d = 0; d < digits; d++)
            need *= 10;
        uint32_t sub = 1;
        while (sub < need)
            sub *= 2;
        uint32_t buckets = 1;
        while (((uint64_t)sub << (buckets - 1)) <= LAT_HIST_HIGHEST_NS)
            buckets++;
        assert_int_equal(h.sub_bucket_count, sub);
        assert_int_equal(h.bucket_count, buckets);
        assert_int_equal(h.counts_len, (buckets + 1) * (sub / 2));
        /* Every value is in a slot no wider than value / (sub / 2), containing it. */
        rng_state = 7 + (uint64_t)digits;
        for (int i = 0; i < 20000; i++) {
            uint64_t v = rng_next() % (LAT_HIST_HIGHEST_NS >> (rng_next() % 42));
            uint64_t lo = lat_hist_lowest_equivalent(&h, v),
                     hi = lat_hist_highest_equivalent(&h, v);
            assert_true(lo <= v && v <= hi);
            if (v < sub)
                assert_int_equal(hi, lo); /* bucket 0: exact */
            else
                assert_true((hi - lo + 1) * (uint64_t)(sub / 2) <= v);
            lat_hist_record(&h, v);
        }
        uint64_t sum = 0;
        for (uint32_t i = 0; i < h.counts_len; i++)
            sum += h.counts[i];
        assert_int_equal(sum, 20000);
        assert_int_equal(lat_hist_count(&h), 20000);
        lat_hist_fini(&h);
    }
    struct lat_hist h;
    assert_int_equal(lat_hist_init(&h, 0), -EINVAL);
    assert_int_equal(lat_hist_init(&h, 5), -EINVAL);
}

static void test_empty_and_saturated(void **state)
{
    (void)state;
    struct lat_hist h;
    assert_int_equal(lat_hist_init(&h, 2), 0);
    assert_int_equal(lat_hist_count(&h), 0);
    assert_int_equal(lat_hist_min(&h), 0);
    assert_int_equal(lat_hist_max(&h), 0);
    assert_int_equal(lat_hist_value_at_percentile(&h, 50.0), 0);
    assert_true(lat_hist_mean(&h) == 0.0 && lat_hist_stddev(&h) == 0.0);
    lat_hist_record(&h, 0);
    lat_hist_record(&h, LAT_HIST_HIGHEST_NS + 12345);
    lat_hist_record(&h, UINT64_MAX);
    assert_int_equal(lat_hist_count(&h), 3);
    assert_int_equal(h.saturated, 2);
    assert_int_equal(lat_hist_min(&h), 0);
    assert_int_equal(lat_hist_max(&h), LAT_HIST_HIGHEST_NS);
    assert_int_equal(lat_hist_value_at_percentile(&h, 100.0), LAT_HIST_HIGHEST_NS);
    assert_int_equal(lat_hist_value_at_percentile(&h, 0.0), 0);
    assert_int_equal(lat_hist_value_at_percentile(&h, NAN), 0);
    lat_hist_reset(&h);
    assert_int_equal(lat_hist_count(&h), 0);
    assert_int_equal(h.saturated, 0);
    assert_int_equal(lat_hist_max(&h), 0);
    lat_hist_fini(&h);
    lat_hist_fini(&h); /* twice is harmless */
}

/* ---- percentiles against the exact sorted samples ---- */

static void check_against_sorted(int digits, int shape, uint64_t seed)
{
    const size_t n = 100000;
    uint64_t *v = malloc(n * sizeof(*v));
    assert_non_null(v);
    fill_samples(v, n, shape, seed);
    struct lat_hist h;
    assert_int_equal(lat_hist_init(&h, digits), 0);
    double sum = 0.0, sum_sq = 0.0;
    for (size_t i = 0; i < n; i++) {
        lat_hist_record(&h, v[i]);
        sum += (double)v[i];
        sum_sq += (double)v[i] * (double)v[i];
    }
    qsort(v, n, sizeof(*v), cmp_u64);
    assert_int_equal(lat_hist_count(&h), n);
    assert_int_equal(lat_hist_min(&h), v[0]);
    assert_int_equal(lat_hist_max(&h), v[n - 1]);
    double precision = 1.0 / (double)(h.sub_bucket_count / 2); /* relative slot width */
    static const double ps[] = {0.0,  0.1,  1.0,  10.0,  25.0,   50.0, 75.0,
                                90.0, 99.0, 99.9, 99.99, 99.999, 100.0};
    for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
        uint64_t exact = v[rank_of(ps[k], n) - 1];
        uint64_t got = lat_hist_value_at_percentile(&h, ps[k]);
        /* The exact sample's own slot, within what was recorded. */
        uint64_t lo = lat_hist_lowest_equivalent(&h, exact);
        uint64_t hi = lat_hist_highest_equivalent(&h, exact);
        if (hi > v[n - 1])
            hi = v[n - 1];
        if (lo < v[0])
            lo = v[0];
        if (got < lo || got > hi)
            fail_msg("digits %d shape %d p%g: histogram %llu, exact %llu (slot %llu..%llu)", digits,
                     shape, ps[k], (unsigned long long)got, (unsigned long long)exact,
                     (unsigned long long)lo, (unsigned long long)hi);
        assert_true(fabs((double)got - (double)exact) <= precision * (double)exact);
    }
    /* Mean and standard deviation from slot middles: each sample is off by at most half a slot. */
    double mean = sum / (double)n, rms = sqrt(sum_sq / (double)n);
    double sd = sqrt(fmax(0.0, sum_sq / (double)n - mean * mean));
    assert_true(fabs(lat_hist_mean(&h) - mean) <= precision * mean + 1.0);
    assert_true(fabs(lat_hist_stddev(&h) - sd) <= precision * rms + 1.0);
    lat_hist_fini(&h);
    free(v);
}

static void test_percentiles_against_sorted_values(void **state)
{
    (void)state;
    for (int digits = 2; digits <= 3; digits++)
        for (int shape = 0; shape < 3; shape++)
            for (uint64_t seed = 1; seed <= 3; seed++)
                check_against_sorted(digits, shape, seed * 0x9E3779B97F4A7C15ull + (uint64_t)shape);
}

/* Samples at their slots' middles: mean and standard deviation are then exact. */
static void test_mean_stddev_exact_at_slot_middles(void **state)
{
    (void)state;
    struct lat_hist h;
    assert_int_equal(lat_hist_init(&h, 2), 0);
    rng_state = 3;
    double sum = 0.0, sum_sq = 0.0;
    const int n = 10000;
    for (int i = 0; i < n; i++) {
        uint64_t v = (uint64_t)exp(rng_unit() * log(1e9));
        uint64_t lo = lat_hist_lowest_equivalent(&h, v), hi = lat_hist_highest_equivalent(&h, v);
        v = lo + (hi - lo + 1) / 2;
        lat_hist_record(&h, v);
        sum += (double)v;
        sum_sq += (double)v * (double)v;
    }
    double mean = sum / n, sd = sqrt(sum_sq / n - mean * mean);
    assert_true(fabs(lat_hist_mean(&h) - mean) <= 1e-9 * mean);
    assert_true(fabs(lat_hist_stddev(&h) - sd) <= 1e-6 * sd);
    lat_hist_fini(&h);
}

static void test_summary(void **state)
{
    (void)state;
    struct lat_hist h;
    assert_int_equal(lat_hist_init(&h, 3), 0);
    for (uint64_t v = 1; v <= 100000; v++)
        lat_hist_record(&h, v * 10); /* 10 ns .. 1 ms, uniform */
    struct lat_hist_summary s;
    lat_hist_summarize(&h, &s);
    assert_int_equal(s.count, 100000);
    assert_int_equal(s.min, 10);
    assert_int_equal(s.max, 1000000);
    /* Exact ranks: p50 = 50000th = 500000 ns, p99.99 = 99990th = 999900 ns. */
    assert_true(s.p50 >= 500000 && s.p50 <= 500000 + 500000 / 1024);
    assert_true(s.p90 >= 900000 && s.p90 <= 900000 + 900000 / 1024);
    assert_true(s.p99 >= 990000 && s.p99 <= 990000 + 990000 / 1024);
    assert_true(s.p999 >= 999000 && s.p999 <= 1000000);
    assert_true(s.p9999 >= 999900 && s.p9999 <= 1000000);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_int_equal(lat_hist_print_summary(&h, f, "sub1", 1000.0, "us"), 0);
    fclose(f);
    char expect[256];
    snprintf(expect, sizeof(expect),
             "sub1 count 100000 min 0.010 p50 %.3f p90 %.3f p99 %.3f p99.9 %.3f p99.99 %.3f max "
             "1000.000 us\n",
             (double)s.p50 / 1000, (double)s.p90 / 1000, (double)s.p99 / 1000,
             (double)s.p999 / 1000, (double)s.p9999 / 1000);
    assert_string_equal(text, expect);
    free(text);
    lat_hist_fini(&h);
}

/* ---- coordinated omission ---- */

/* The definition: the value, then value - interval, value - 2 interval, ... down to interval. */
static void record_corrected_by_definition(struct lat_hist *h, uint64_t v, uint64_t interval)
{
    lat_hist_record(h, v);
    if (v > LAT_HIST_HIGHEST_NS)
        v = LAT_HIST_HIGHEST_NS;
    if (interval == 0 || v < interval)
        return;
    for (uint64_t missing = v - interval; missing >= interval; missing -= interval)
        lat_hist_record(h, missing);
}

static void assert_same_histogram(const struct lat_hist *a, const struct lat_hist *b)
{
    assert_int_equal(a->total_count, b->total_count);
    assert_int_equal(lat_hist_min(a), lat_hist_min(b));
    assert_int_equal(lat_hist_max(a), lat_hist_max(b));
    assert_int_equal(a->saturated, b->saturated);
    assert_memory_equal(a->counts, b->counts, a->counts_len * sizeof(*a->counts));
}

static void test_corrected_matches_definition(void **state)
{
    (void)state;
    static const uint64_t cases[][2] = {
        {1000, 100},  {1000, 0},          {150, 100},
        {199, 100},   {200, 100},         {6400, 100},
        {6500, 100},  {1000000000, 1000}, {123456789, 977},
        {5000000, 3}, {99999999, 65536},  {LAT_HIST_HIGHEST_NS, 1000000},
        {99, 100},    {12800, 100},       {LAT_HIST_HIGHEST_NS + 5, 3600000000},
    };
    for (int digits = 2; digits <= 3; digits++)
        for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
            struct lat_hist fast, slow;
            assert_int_equal(lat_hist_init(&fast, digits), 0);
            assert_int_equal(lat_hist_init(&slow, digits), 0);
            /* A plain sample first, so min/max bookkeeping is exercised too. */
            lat_hist_record(&fast, 5000);
            lat_hist_record(&slow, 5000);
            lat_hist_record_corrected(&fast, cases[k][0], cases[k][1]);
            record_corrected_by_definition(&slow, cases[k][0], cases[k][1]);
            assert_same_histogram(&fast, &slow);
            lat_hist_fini(&fast);
            lat_hist_fini(&slow);
        }
    /* 1 hour at a 1 ns interval: 3.6e12 missed samples, counted without looping over them. */
    struct lat_hist h;
    assert_int_equal(lat_hist_init(&h, 2), 0);
    lat_hist_record_corrected(&h, UINT64_MAX, 1);
    assert_int_equal(lat_hist_count(&h), LAT_HIST_HIGHEST_NS);
    assert_int_equal(lat_hist_min(&h), 1);
    assert_int_equal(h.saturated, 1);
    lat_hist_fini(&h);
}

/*
 * A closed loop measuring 1 us every 10 us, stalled once for 100 ms: uncorrected, the stall
 * is one sample in 10001 and p99.99 says 1 us; corrected, the 9999 requests an open loop
 * would have sent during the stall are there and p75 is 50 ms.
 */
static void test_corrected_shows_the_stall(void **state)
{
    (void)state;
    struct lat_hist raw, fixed;
    assert_int_equal(lat_hist_init(&raw, 3), 0);
    assert_int_equal(lat_hist_init(&fixed, 3), 0);
    for (int i = 0; i < 10000; i++) {
        lat_hist_record_corrected(&raw, 1000, 0);
        lat_hist_record_corrected(&fixed, 1000, 10000);
    }
    lat_hist_record_corrected(&raw, 100000000, 0);
    lat_hist_record_corrected(&fixed, 100000000, 10000);
    assert_int_equal(lat_hist_count(&raw), 10001);
    assert_int_equal(lat_hist_count(&fixed), 20000);
    assert_int_equal(lat_hist_value_at_percentile(&raw, 99.99), 1000);
    assert_int_equal(lat_hist_value_at_percentile(&fixed, 50.0), 1000);
    uint64_t p75 = lat_hist_value_at_percentile(&fixed, 75.0); /* rank 15000: the 5000th: 50 ms */
    assert_true(p75 >= 50000000 && p75 <= 50000000 + 50000000 / 1024);
    uint64_t p90 = lat_hist_value_at_percentile(&fixed, 90.0); /* rank 18000: 80 ms */
    assert_true(p90 >= 80000000 && p90 <= 80000000 + 80000000 / 1024);
    lat_hist_fini(&raw);
    lat_hist_fini(&fixed);
}

/* ---- merge ---- */

static void test_merge(void **state)
{
    (void)state;
    const size_t n = 50000;
    uint64_t *v = malloc(n * sizeof(*v));
    assert_non_null(v);
    fill_samples(v, n, 1, 42);
    struct lat_hist a, b, all, other;
    assert_int_equal(lat_hist_init(&a, 3), 0);
    assert_int_equal(lat_hist_init(&b, 3), 0);
    assert_int_equal(lat_hist_init(&all, 3), 0);
    assert_int_equal(lat_hist_init(&other, 2), 0);
    for (size_t i = 0; i < n; i++) {
        lat_hist_record(i % 3 ? &a : &b, v[i]);
        lat_hist_record(&all, v[i]);
    }
    lat_hist_record(&b, LAT_HIST_HIGHEST_NS * 2);
    lat_hist_record(&all, LAT_HIST_HIGHEST_NS * 2);
    assert_int_equal(lat_hist_merge(&a, &b), 0);
    assert_same_histogram(&a, &all);
    assert_true(lat_hist_mean(&a) == lat_hist_mean(&all));
    /* Merging an empty one changes nothing; different precisions do not merge. */
    struct lat_hist empty;
    assert_int_equal(lat_hist_init(&empty, 3), 0);
    assert_int_equal(lat_hist_merge(&a, &empty), 0);
    assert_same_histogram(&a, &all);
    assert_int_equal(lat_hist_merge(&a, &other), -EINVAL);
    assert_int_equal(lat_hist_merge(&empty, &all), 0);
    assert_same_histogram(&empty, &all);
    lat_hist_fini(&a);
    lat_hist_fini(&b);
    lat_hist_fini(&all);
    lat_hist_fini(&other);
    lat_hist_fini(&empty);
    free(v);
}

/* ---- .hgrm ---- */

/* HdrHistogram's percentile levels with 5 ticks per half distance, computed independently. */
static double next_level(double level)
{
    double halvings = floor(log2(100.0 / (100.0 - level)));
    return level + 100.0 / (5.0 * pow(2.0, halvings + 1.0));
}

static size_t count_at_most(const uint64_t *sorted, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sorted[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void check_hgrm_roundtrip(int digits, int shape, uint64_t seed, size_t n)
{
    uint64_t *v = malloc(n * sizeof(*v));
    assert_non_null(v);
    fill_samples(v, n, shape, seed);
    struct lat_hist h;
    assert_int_equal(lat_hist_init(&h, digits), 0);
    for (size_t i = 0; i < n; i++)
        lat_hist_record(&h, v[i]);
    qsort(v, n, sizeof(*v), cmp_u64);

    size_t len;
    char *text = write_hgrm(&h, &len);
    const char *header = "       Value     Percentile TotalCount 1/(1-Percentile)\n\n";
    assert_memory_equal(text, header, strlen(header));

    struct lat_hgrm_row rows[512];
    size_t n_rows = 0;
    struct lat_hgrm_footer f;
    unsigned bad = 0;
    assert_int_equal(lat_hgrm_parse(text, len, rows, 512, &n_rows, &f, &bad), 0);
    assert_true(n_rows >= 2);

    /* Rows: HdrHistogram's levels in order, each at the first slot that reaches its level. */
    double level = 0.0;
    for (size_t r = 0; r + 1 < n_rows; r++) {
        uint64_t value_ns = (uint64_t)llround(rows[r].value * 1000.0);
        assert_true(fabs(rows[r].percentile - level / 100.0) < 1e-12);
        assert_int_equal(value_ns, lat_hist_highest_equivalent(&h, value_ns));
        assert_int_equal(rows[r].total_count, count_at_most(v, n, value_ns));
        assert_true(100.0 * (double)rows[r].total_count / (double)n >= level);
        uint64_t below = count_at_most(v, n, lat_hist_lowest_equivalent(&h, value_ns) - 1);
        bool same_slot_as_previous = r > 0 && rows[r].value == rows[r - 1].value;
        assert_true(same_slot_as_previous || below == 0 ||
                    100.0 * (double)below / (double)n < level);
        assert_true(fabs(rows[r].inverted - 1.0 / (1.0 - level / 100.0)) <=
                    0.005 + 1e-9 * rows[r].inverted);
        level = next_level(level);
    }
    const struct lat_hgrm_row *last = &rows[n_rows - 1];
    assert_true(last->percentile == 1.0);
    assert_true(isinf(last->inverted));
    assert_int_equal(last->total_count, n);
    assert_int_equal((uint64_t)llround(last->value * 1000.0),
                     lat_hist_highest_equivalent(&h, v[n - 1]));
    assert_int_equal((uint64_t)llround(rows[0].value * 1000.0),
                     lat_hist_highest_equivalent(&h, v[0]));
    assert_true(rows[0].percentile == 0.0);

    assert_true(f.present);
    assert_true(fabs(f.mean - lat_hist_mean(&h) / 1000.0) <= 0.0005 + 1e-12 * f.mean);
    assert_true(fabs(f.stddev - lat_hist_stddev(&h) / 1000.0) <= 0.0005 + 1e-12 * f.stddev);
    assert_true(fabs(f.max - (double)v[n - 1] / 1000.0) <= 0.0005);
    assert_int_equal(f.total_count, n);
    assert_int_equal(f.buckets, h.bucket_count);
    assert_int_equal(f.sub_buckets, h.sub_bucket_count);
    free(text);
    lat_hist_fini(&h);
    free(v);
}

static void test_hgrm_written_and_parsed_back(void **state)
{
    (void)state;
    for (int digits = 2; digits <= 3; digits++)
        for (int shape = 0; shape < 3; shape++)
            check_hgrm_roundtrip(digits, shape, 1000 + (uint64_t)shape, 20000);
    check_hgrm_roundtrip(3, 0, 5, 1); /* one sample: a row at 0 % and the closing row */
}

static void test_hgrm_empty_histogram(void **state)
{
    (void)state;
    struct lat_hist h;
    assert_int_equal(lat_hist_init(&h, 2), 0);
    size_t len;
    char *text = write_hgrm(&h, &len);
    struct lat_hgrm_row rows[4];
    size_t n_rows = 99;
    struct lat_hgrm_footer f;
    assert_int_equal(lat_hgrm_parse(text, len, rows, 4, &n_rows, &f, NULL), 0);
    assert_int_equal(n_rows, 0);
    assert_true(f.present);
    assert_int_equal(f.total_count, 0);
    assert_int_equal(f.sub_buckets, 256);
    FILE *null_out = fopen("/dev/null", "w");
    assert_int_equal(lat_hist_write_hgrm(&h, null_out, 0, 1000.0), -EINVAL);
    assert_int_equal(lat_hist_write_hgrm(&h, null_out, 5, 0.0), -EINVAL);
    fclose(null_out);
    free(text);
    lat_hist_fini(&h);
}

/* Other writers' layouts: HdrHistogram_c ends with "inf", CRLF line ends, no blank line. */
static void test_hgrm_parses_other_writers(void **state)
{
    (void)state;
    const char *c_style = "       Value   Percentile   TotalCount 1/(1-Percentile)\r\n"
                          "\r\n"
                          "       0.016     0.000000            1         1.00\r\n"
                          "       0.980     0.100000        47530         1.11\r\n"
                          "    9428.991     1.000000       475109          inf\r\n"
                          "#[Mean    =       25.048, StdDeviation   =      120.097]\r\n"
                          "#[Max     =     9420.800, Total count    =       475109]\r\n"
                          "#[Buckets =           27, SubBuckets     =         2048]\r\n";
    struct lat_hgrm_row rows[8];
    size_t n = 0;
    struct lat_hgrm_footer f;
    assert_int_equal(lat_hgrm_parse(c_style, strlen(c_style), rows, 8, &n, &f, NULL), 0);
    assert_int_equal(n, 3);
    assert_true(rows[1].value == 0.980 && rows[1].percentile == 0.1 &&
                rows[1].total_count == 47530 && rows[1].inverted == 1.11);
    assert_true(isinf(rows[2].inverted));
    assert_true(f.present && f.mean == 25.048 && f.stddev == 120.097 && f.max == 9420.8);
    assert_true(f.total_count == 475109 && f.buckets == 27 && f.sub_buckets == 2048);
    /* No footer: rows still read, footer absent. */
    const char *bare = "1.000 0.5 3 2.00\n2.000 1.0 6";
    assert_int_equal(lat_hgrm_parse(bare, strlen(bare), rows, 8, &n, &f, NULL), 0);
    assert_int_equal(n, 2);
    assert_false(f.present);
}

static void expect_bad(const char *text, unsigned line)
{
    struct lat_hgrm_row rows[8];
    size_t n;
    unsigned bad = 0;
    assert_int_equal(lat_hgrm_parse(text, strlen(text), rows, 8, &n, NULL, &bad), -EINVAL);
    assert_int_equal(bad, line);
}

static void test_hgrm_rejects_malformed(void **state)
{
    (void)state;
    expect_bad("1.0 0.5 3 2.0\nhello\n", 2);
    expect_bad("1.0 0.5\n", 1);                      /* too few numbers */
    expect_bad("1.0 1.5 3\n", 1);                    /* percentile above 1 */
    expect_bad("1.0 nan 3\n", 1);                    /* percentile NaN */
    expect_bad("-1.0 0.5 3\n", 1);                   /* negative value */
    expect_bad("1.0 0.5 -3\n", 1);                   /* negative count */
    expect_bad("1.0 0.5 3 2.0 7\n", 1);              /* a fifth number */
    expect_bad("1.0 0.5 3x 2.0\n", 1);               /* trailing garbage */
    expect_bad("1.0 0.1 5 1.1\n2.0 0.2 4 1.2\n", 2); /* count decreases */
    expect_bad("#[Mean = 1.0, StdDeviation = x]\n", 1);
    expect_bad("1 0 1 1\n#[Max = 1.0, Total count = 3] extra\n", 2);
    char long_line[400];
    memset(long_line, '1', sizeof(long_line) - 1);
    long_line[sizeof(long_line) - 1] = '\0';
    expect_bad(long_line, 1);
    /* A NUL inside a line, and more rows than the caller holds. */
    const char with_nul[] = "1.0 0.5\0 3\n";
    struct lat_hgrm_row rows[2];
    size_t n;
    assert_int_equal(lat_hgrm_parse(with_nul, sizeof(with_nul) - 1, rows, 2, &n, NULL, NULL),
                     -EINVAL);
    const char *three = "1 0 1 1\n2 0.5 2 2\n3 1 3\n";
    assert_int_equal(lat_hgrm_parse(three, strlen(three), rows, 2, &n, NULL, NULL), -ENOSPC);
    assert_int_equal(n, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_matches_hdrhistogram),
        cmocka_unit_test(test_empty_and_saturated),
        cmocka_unit_test(test_percentiles_against_sorted_values),
        cmocka_unit_test(test_mean_stddev_exact_at_slot_middles),
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_corrected_matches_definition),
        cmocka_unit_test(test_corrected_shows_the_stall),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_hgrm_written_and_parsed_back),
        cmocka_unit_test(test_hgrm_empty_histogram),
        cmocka_unit_test(test_hgrm_parses_other_writers),
        cmocka_unit_test(test_hgrm_rejects_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
