/* SPDX-License-Identifier: BSD-2-Clause */
/* lat_hist.c - the log-linear latency histogram: recording, percentiles, .hgrm writer and parser.
 */
#include "lat_hist.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- layout ---- */

static uint32_t bucket_of(const struct lat_hist *h, uint64_t v)
{
    uint64_t low_mask = (uint64_t)h->sub_bucket_count - 1;
    unsigned msb = 63u - (unsigned)__builtin_clzll(v | low_mask);
    return msb - h->sub_bucket_half_bits;
}

static uint32_t index_of(const struct lat_hist *h, uint64_t v)
{
    uint32_t b = bucket_of(h, v);
    uint32_t half = h->sub_bucket_count / 2;
    return b * half + (uint32_t)(v >> b);
}

/* Bucket of slot i: slots [0, 2 half) are bucket 0, then half slots per bucket. */
static uint32_t bucket_of_index(const struct lat_hist *h, uint32_t i)
{
    uint32_t half = h->sub_bucket_count / 2;
    return i < 2 * half ? 0 : i / half - 1;
}

static uint64_t lowest_of_index(const struct lat_hist *h, uint32_t i)
{
    uint32_t half = h->sub_bucket_count / 2;
    uint32_t b = bucket_of_index(h, i);
    uint64_t sub = b == 0 ? i : i - b * half;
    return sub << b;
}

static uint64_t highest_of_index(const struct lat_hist *h, uint32_t i)
{
    return lowest_of_index(h, i) + (1ull << bucket_of_index(h, i)) - 1;
}

static uint64_t middle_of_index(const struct lat_hist *h, uint32_t i)
{
    return lowest_of_index(h, i) + ((1ull << bucket_of_index(h, i)) >> 1);
}

int lat_hist_init(struct lat_hist *h, int significant_digits)
{
    memset(h, 0, sizeof(*h));
    if (significant_digits < LAT_HIST_MIN_DIGITS || significant_digits > LAT_HIST_MAX_DIGITS)
        return -EINVAL;
    uint64_t single_unit_range = 2;
    for (int d = 0; d < significant_digits; d++)
        single_unit_range *= 10;
    uint32_t bits = 0;
    while ((1ull << bits) < single_unit_range)
        bits++;
    h->significant_digits = significant_digits;
    h->sub_bucket_count = 1u << bits;
    h->sub_bucket_half_bits = bits - 1;
    h->bucket_count = bucket_of(h, LAT_HIST_HIGHEST_NS) + 1;
    h->counts_len = (h->bucket_count + 1) * (h->sub_bucket_count / 2);
    h->counts = calloc(h->counts_len, sizeof(*h->counts));
    if (h->counts == NULL)
        return -ENOMEM;
    h->min_value = UINT64_MAX;
    return 0;
}

void lat_hist_fini(struct lat_hist *h)
{
    free(h->counts);
    h->counts = NULL;
    h->counts_len = 0;
}

void lat_hist_reset(struct lat_hist *h)
{
    if (h->counts != NULL)
        memset(h->counts, 0, (size_t)h->counts_len * sizeof(*h->counts));
    h->total_count = 0;
    h->min_value = UINT64_MAX;
    h->max_value = 0;
    h->saturated = 0;
}

/* ---- recording ---- */

static uint64_t saturate(struct lat_hist *h, uint64_t v, uint64_t count)
{
    if (v > LAT_HIST_HIGHEST_NS) {
        h->saturated += count;
        return LAT_HIST_HIGHEST_NS;
    }
    return v;
}

static void note_min_max(struct lat_hist *h, uint64_t lo, uint64_t hi)
{
    if (lo < h->min_value)
        h->min_value = lo;
    if (hi > h->max_value)
        h->max_value = hi;
}

void lat_hist_record_n(struct lat_hist *h, uint64_t value_ns, uint64_t count)
{
    if (count == 0)
        return;
    uint64_t v = saturate(h, value_ns, count);
    h->counts[index_of(h, v)] += count;
    h->total_count += count;
    note_min_max(h, v, v);
}

void lat_hist_record(struct lat_hist *h, uint64_t value_ns)
{
    lat_hist_record_n(h, value_ns, 1);
}

/* Closed loops up to this many missed samples are corrected one record at a time. */
#define CORRECTION_DIRECT_MAX 64

void lat_hist_record_corrected(struct lat_hist *h, uint64_t value_ns, uint64_t interval_ns)
{
    lat_hist_record(h, value_ns);
    uint64_t v = value_ns > LAT_HIST_HIGHEST_NS ? LAT_HIST_HIGHEST_NS : value_ns;
    if (interval_ns == 0 || v / interval_ns < 2)
        return;
    /* Missed samples: x_j = v - j * interval for j = 1 .. n, all >= interval. */
    uint64_t n = v / interval_ns - 1;
    if (n <= CORRECTION_DIRECT_MAX) {
        for (uint64_t j = 1; j <= n; j++)
            lat_hist_record(h, v - j * interval_ns);
        return;
    }
    /* Many: count, for each slot from x_n's up to x_1's, the j whose x_j falls in it. */
    uint64_t smallest = v - n * interval_ns;
    uint32_t first = index_of(h, smallest), last = index_of(h, v - interval_ns);
    for (uint32_t i = first; i <= last; i++) {
        uint64_t lo = lowest_of_index(h, i), hi = highest_of_index(h, i);
        /* lo <= v - j I <= hi  <=>  (v - hi) / I <= j <= (v - lo) / I */
        uint64_t j_min = hi >= v ? 1 : (v - hi + interval_ns - 1) / interval_ns;
        uint64_t j_max = (v - lo) / interval_ns;
        if (j_min < 1)
            j_min = 1;
        if (j_max > n)
            j_max = n;
        if (j_max >= j_min) {
            h->counts[i] += j_max - j_min + 1;
            h->total_count += j_max - j_min + 1;
        }
    }
    note_min_max(h, smallest, v - interval_ns);
}

int lat_hist_merge(struct lat_hist *dst, const struct lat_hist *src)
{
    if (dst->significant_digits != src->significant_digits)
        return -EINVAL;
    if (src->total_count == 0)
        return 0;
    for (uint32_t i = 0; i < src->counts_len; i++)
        dst->counts[i] += src->counts[i];
    dst->total_count += src->total_count;
    dst->saturated += src->saturated;
    note_min_max(dst, src->min_value, src->max_value);
    return 0;
}

/* ---- queries ---- */

uint64_t lat_hist_count(const struct lat_hist *h)
{
    return h->total_count;
}

uint64_t lat_hist_min(const struct lat_hist *h)
{
    return h->total_count ? h->min_value : 0;
}

uint64_t lat_hist_max(const struct lat_hist *h)
{
    return h->total_count ? h->max_value : 0;
}

double lat_hist_mean(const struct lat_hist *h)
{
    if (h->total_count == 0)
        return 0.0;
    double sum = 0.0;
    for (uint32_t i = 0; i < h->counts_len; i++)
        if (h->counts[i])
            sum += (double)h->counts[i] * (double)middle_of_index(h, i);
    return sum / (double)h->total_count;
}

double lat_hist_stddev(const struct lat_hist *h)
{
    if (h->total_count == 0)
        return 0.0;
    double mean = lat_hist_mean(h), sum = 0.0;
    for (uint32_t i = 0; i < h->counts_len; i++)
        if (h->counts[i]) {
            double d = (double)middle_of_index(h, i) - mean;
            sum += (double)h->counts[i] * d * d;
        }
    return sqrt(sum / (double)h->total_count);
}

uint64_t lat_hist_lowest_equivalent(const struct lat_hist *h, uint64_t value_ns)
{
    uint32_t b = bucket_of(h, value_ns);
    return (value_ns >> b) << b;
}

uint64_t lat_hist_highest_equivalent(const struct lat_hist *h, uint64_t value_ns)
{
    return lat_hist_lowest_equivalent(h, value_ns) + (1ull << bucket_of(h, value_ns)) - 1;
}

static uint64_t clamp_to_recorded(const struct lat_hist *h, uint64_t v)
{
    if (v < h->min_value)
        return h->min_value;
    if (v > h->max_value)
        return h->max_value;
    return v;
}

uint64_t lat_hist_value_at_percentile(const struct lat_hist *h, double percentile)
{
    if (h->total_count == 0)
        return 0;
    if (!(percentile > 0.0)) /* also NaN */
        return h->min_value;
    if (percentile >= 100.0)
        return h->max_value;
    uint64_t rank = (uint64_t)(percentile / 100.0 * (double)h->total_count + 0.5);
    if (rank < 1)
        rank = 1;
    if (rank > h->total_count)
        rank = h->total_count;
    uint64_t cumulative = 0;
    for (uint32_t i = 0; i < h->counts_len; i++) {
        cumulative += h->counts[i];
        if (cumulative >= rank)
            return clamp_to_recorded(h, highest_of_index(h, i));
    }
    return h->max_value; /* unreachable: the counts sum to total_count */
}

void lat_hist_summarize(const struct lat_hist *h, struct lat_hist_summary *s)
{
    s->count = h->total_count;
    s->min = lat_hist_min(h);
    s->p50 = lat_hist_value_at_percentile(h, 50.0);
    s->p90 = lat_hist_value_at_percentile(h, 90.0);
    s->p99 = lat_hist_value_at_percentile(h, 99.0);
    s->p999 = lat_hist_value_at_percentile(h, 99.9);
    s->p9999 = lat_hist_value_at_percentile(h, 99.99);
    s->max = lat_hist_max(h);
    s->mean = lat_hist_mean(h);
    s->stddev = lat_hist_stddev(h);
}

int lat_hist_print_summary(const struct lat_hist *h, FILE *out, const char *label,
                           double value_scale, const char *unit)
{
    struct lat_hist_summary s;
    lat_hist_summarize(h, &s);
    if (!(value_scale > 0.0))
        return -EINVAL;
    int rc = fprintf(out,
                     "%s count %" PRIu64 " min %.3f p50 %.3f p90 %.3f p99 %.3f p99.9 %.3f "
                     "p99.99 %.3f max %.3f %s\n",
                     label, s.count, (double)s.min / value_scale, (double)s.p50 / value_scale,
                     (double)s.p90 / value_scale, (double)s.p99 / value_scale,
                     (double)s.p999 / value_scale, (double)s.p9999 / value_scale,
                     (double)s.max / value_scale, unit);
    return rc < 0 ? -EIO : 0;
}

/* ---- .hgrm writer ---- */

/*
 * HdrHistogram's percentile iteration: the level starts at 0 %; each row is the first slot
 * whose cumulative count reaches the level, after which the level advances by
 * 100 / (ticks * 2^(floor(log2(100 / (100 - level))) + 1)) - ticks steps per halving of the
 * distance to 100 %. When the last sample has been passed, one more row at exactly 100 %.
 */
struct pct_iter {
    const struct lat_hist *h;
    int ticks;
    uint32_t index;      /* current slot */
    bool index_counted;  /* its count is in cumulative */
    uint64_t cumulative; /* samples in slots <= index */
    double level;        /* next percentile to report */
    bool done;
};

struct pct_row {
    uint64_t value; /* slot highest equivalent */
    double percentile;
    uint64_t cumulative;
};

static void advance_level(struct pct_iter *it)
{
    double remaining = 100.0 - it->level;
    if (!(remaining > 0.0)) {
        it->level = 100.0;
        return;
    }
    double halvings = floor(log2(100.0 / remaining));
    it->level += 100.0 / ((double)it->ticks * ldexp(1.0, (int)halvings + 1));
}

static bool pct_next(struct pct_iter *it, struct pct_row *row)
{
    const struct lat_hist *h = it->h;
    if (it->done || h->total_count == 0)
        return false;
    if (it->cumulative < h->total_count) {
        while (it->index < h->counts_len) {
            uint64_t c = h->counts[it->index];
            if (!it->index_counted) {
                it->cumulative += c;
                it->index_counted = true;
            }
            if (c != 0 && 100.0 * (double)it->cumulative / (double)h->total_count >= it->level) {
                row->value = highest_of_index(h, it->index);
                row->percentile = it->level;
                row->cumulative = it->cumulative;
                advance_level(it);
                return true;
            }
            it->index++;
            it->index_counted = false;
        }
    }
    /* Every sample passed: the closing row at 100 %, at the last slot with samples. */
    it->done = true;
    uint32_t last = index_of(h, h->max_value);
    row->value = highest_of_index(h, last);
    row->percentile = 100.0;
    row->cumulative = h->total_count;
    return true;
}

int lat_hist_write_hgrm(const struct lat_hist *h, FILE *out, int ticks_per_half_distance,
                        double value_scale)
{
    if (ticks_per_half_distance < 1 || !(value_scale > 0.0))
        return -EINVAL;
    bool ok = fprintf(out, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount",
                      "1/(1-Percentile)") >= 0;
    struct pct_iter it = {.h = h, .ticks = ticks_per_half_distance};
    struct pct_row row;
    while (ok && pct_next(&it, &row)) {
        double value = (double)row.value / value_scale, p = row.percentile / 100.0;
        if (row.percentile < 100.0)
            ok = fprintf(out, "%12.3f %2.12f %10" PRIu64 " %14.2f\n", value, p, row.cumulative,
                         1.0 / (1.0 - p)) >= 0;
        else
            ok = fprintf(out, "%12.3f %2.12f %10" PRIu64 "\n", value, p, row.cumulative) >= 0;
    }
    if (ok)
        ok = fprintf(out,
                     "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n"
                     "#[Max     = %12.3f, Total count    = %12" PRIu64 "]\n"
                     "#[Buckets = %12" PRIu32 ", SubBuckets     = %12" PRIu32 "]\n",
                     lat_hist_mean(h) / value_scale, lat_hist_stddev(h) / value_scale,
                     (double)lat_hist_max(h) / value_scale, h->total_count, h->bucket_count,
                     h->sub_bucket_count) >= 0;
    return ok ? 0 : -EIO;
}

/* ---- .hgrm parser ---- */

#define HGRM_LINE_MAX 256

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* A number that must be followed by a space or the end; advances *s. */
static bool take_double(const char **s, double *out)
{
    char *end;
    const char *p = skip_space(*s);
    if (*p == '\0')
        return false;
    *out = strtod(p, &end);
    if (end == p || (*end != '\0' && *end != ' ' && *end != '\t'))
        return false;
    *s = end;
    return true;
}

static bool take_u64(const char **s, uint64_t *out)
{
    char *end;
    const char *p = skip_space(*s);
    if (*p < '0' || *p > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno != 0 || (*end != '\0' && *end != ' ' && *end != '\t'))
        return false;
    *out = v;
    *s = end;
    return true;
}

static bool parse_row(const char *line, struct lat_hgrm_row *row)
{
    const char *s = line;
    if (!take_double(&s, &row->value) || !take_double(&s, &row->percentile) ||
        !take_u64(&s, &row->total_count))
        return false;
    if (!isfinite(row->value) || row->value < 0.0 || !(row->percentile >= 0.0) ||
        row->percentile > 1.0)
        return false;
    row->inverted = INFINITY;
    if (*skip_space(s) != '\0' && !take_double(&s, &row->inverted))
        return false; /* "inf" and "Infinity" are numbers to strtod */
    return *skip_space(s) == '\0';
}

/* The three footer lines; spaces in a scanf format match any run of blanks, also none. */
static bool parse_footer(const char *line, struct lat_hgrm_footer *f, unsigned *seen)
{
    int end = -1;
    if (sscanf(line, "#[Mean = %lf , StdDeviation = %lf ]%n", &f->mean, &f->stddev, &end) == 2 &&
        end > 0 && line[end] == '\0') {
        *seen |= 1;
        return true;
    }
    end = -1;
    if (sscanf(line, "#[Max = %lf , Total count = %" SCNu64 " ]%n", &f->max, &f->total_count,
               &end) == 2 &&
        end > 0 && line[end] == '\0') {
        *seen |= 2;
        return true;
    }
    end = -1;
    if (sscanf(line, "#[Buckets = %" SCNu32 " , SubBuckets = %" SCNu32 " ]%n", &f->buckets,
               &f->sub_buckets, &end) == 2 &&
        end > 0 && line[end] == '\0') {
        *seen |= 4;
        return true;
    }
    return false;
}

static bool is_header(const char *line)
{
    const char *s = skip_space(line);
    return strncmp(s, "Value", 5) == 0 && strstr(s, "Percentile") != NULL &&
           strstr(s, "TotalCount") != NULL;
}

int lat_hgrm_parse(const char *text, size_t len, struct lat_hgrm_row *rows, size_t max_rows,
                   size_t *n_rows, struct lat_hgrm_footer *footer, unsigned *bad_line)
{
    struct lat_hgrm_footer f;
    memset(&f, 0, sizeof(f));
    unsigned footer_seen = 0, line_no = 0;
    size_t n = 0, pos = 0;
    uint64_t last_count = 0;
    int rc = 0;
    *n_rows = 0;
    while (pos < len && rc == 0) {
        const char *start = text + pos, *nl = memchr(start, '\n', len - pos);
        size_t line_len = nl ? (size_t)(nl - start) : len - pos;
        char line[HGRM_LINE_MAX];
        line_no++;
        pos += line_len + (nl ? 1 : 0);
        if (line_len > 0 && start[line_len - 1] == '\r')
            line_len--;
        if (line_len >= sizeof(line) || memchr(start, '\0', line_len) != NULL) {
            rc = -EINVAL;
            break;
        }
        memcpy(line, start, line_len);
        line[line_len] = '\0';
        if (*skip_space(line) == '\0' || is_header(line))
            continue;
        if (line[0] == '#') {
            if (!parse_footer(line, &f, &footer_seen))
                rc = -EINVAL;
            continue;
        }
        struct lat_hgrm_row row;
        if (!parse_row(line, &row) || row.total_count < last_count) {
            rc = -EINVAL;
            break;
        }
        last_count = row.total_count;
        if (n == max_rows) {
            rc = -ENOSPC;
            break;
        }
        rows[n++] = row;
    }
    *n_rows = n;
    if (rc == -EINVAL && bad_line != NULL)
        *bad_line = line_no;
    f.present = footer_seen == 7;
    if (footer != NULL)
        *footer = f;
    return rc;
}
