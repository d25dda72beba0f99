/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_ranges.c - the bounded sorted list of missing-sequence ranges (model: rdps_ranges.h). */
#include "rdps_ranges.h"

#include <string.h>

#include "rdps_seq.h"

void rdps__ranges_init(struct rdps_ranges *l, struct rdps_gap_range *storage, uint16_t cap)
{
    l->r = storage;
    l->count = 0;
    l->cap = cap;
}

int rdps__ranges_find(const struct rdps_ranges *l, uint32_t seq)
{
    for (int i = 0; i < l->count; i++) {
        const struct rdps_gap_range *g = &l->r[i];
        if (seq - g->start < g->count)
            return i;
        if (rdps__seq_lt(seq, g->start))
            return -1; /* sorted: no later range can hold it */
    }
    return -1;
}

int rdps__ranges_append(struct rdps_ranges *l, uint32_t start, uint32_t count, uint64_t now_ns,
                        uint64_t due_ns)
{
    if (l->count > 0) {
        struct rdps_gap_range *last = &l->r[l->count - 1];
        if (rdps__range_end(last) == start && last->tries == 0 && last->lost_reason == 0) {
            last->count += count;
            return l->count - 1;
        }
    }
    if (l->count == l->cap)
        return -1;
    struct rdps_gap_range *g = &l->r[l->count];
    memset(g, 0, sizeof(*g));
    g->start = start;
    g->count = count;
    g->detect_ns = now_ns;
    g->due_ns = due_ns;
    return l->count++;
}

void rdps__ranges_remove(struct rdps_ranges *l, int i)
{
    memmove(&l->r[i], &l->r[i + 1], (size_t)(l->count - i - 1) * sizeof(l->r[0]));
    l->count--;
}

int rdps__ranges_remove_seq(struct rdps_ranges *l, int i, uint32_t seq)
{
    struct rdps_gap_range *g = &l->r[i];
    uint32_t off = seq - g->start;
    if (g->count == 1) {
        rdps__ranges_remove(l, i);
    } else if (off == 0) {
        g->start++;
        g->count--;
    } else if (off == g->count - 1) {
        g->count--;
    } else {
        if (l->count == l->cap)
            return -1;
        memmove(&l->r[i + 2], &l->r[i + 1], (size_t)(l->count - i - 1) * sizeof(l->r[0]));
        l->count++;
        l->r[i + 1] = *g;
        l->r[i + 1].start = seq + 1;
        l->r[i + 1].count = g->count - off - 1;
        g->count = off;
    }
    return 0;
}

void rdps__ranges_trim_below(struct rdps_ranges *l, uint32_t seq)
{
    int drop = 0;
    while (drop < l->count && rdps__seq_le(rdps__range_end(&l->r[drop]), seq))
        drop++;
    if (drop > 0) {
        memmove(&l->r[0], &l->r[drop], (size_t)(l->count - drop) * sizeof(l->r[0]));
        l->count = (uint16_t)(l->count - drop);
    }
    if (l->count > 0 && rdps__seq_lt(l->r[0].start, seq)) {
        l->r[0].count -= seq - l->r[0].start;
        l->r[0].start = seq;
    }
}

bool rdps__ranges_insert(struct rdps_ranges *l, uint32_t start, uint32_t count, uint64_t now_ns,
                         uint64_t due_ns)
{
    int i = 0; /* first range after the new one */
    while (i < l->count && rdps__seq_lt(l->r[i].start, start))
        i++;
    uint32_t end = start + count;
    bool joins_prev = i > 0 && rdps__range_end(&l->r[i - 1]) == start;
    bool joins_next = i < l->count && l->r[i].start == end;
    if (joins_prev && joins_next) {
        l->r[i - 1].count += count + l->r[i].count;
        rdps__ranges_remove(l, i);
    } else if (joins_prev) {
        l->r[i - 1].count += count;
    } else if (joins_next) {
        l->r[i].start = start;
        l->r[i].count += count;
    } else if (l->count < l->cap) {
        memmove(&l->r[i + 1], &l->r[i], (size_t)(l->count - i) * sizeof(l->r[0]));
        l->count++;
        struct rdps_gap_range *g = &l->r[i];
        memset(g, 0, sizeof(*g));
        g->start = start;
        g->count = count;
        g->detect_ns = now_ns;
        g->due_ns = due_ns;
    } else {
        /* Full: widen the nearer neighbour over the sequences in between. */
        uint32_t to_prev = i > 0 ? start - rdps__range_end(&l->r[i - 1]) : UINT32_MAX;
        uint32_t to_next = i < l->count ? l->r[i].start - end : UINT32_MAX;
        if (to_prev <= to_next) {
            l->r[i - 1].count = end - l->r[i - 1].start;
        } else {
            l->r[i].count += l->r[i].start - start;
            l->r[i].start = start;
        }
        return false;
    }
    /* The merged range is due no later than the new part. */
    int j = joins_prev ? i - 1 : i;
    if (due_ns < l->r[j].due_ns)
        l->r[j].due_ns = due_ns;
    return true;
}
