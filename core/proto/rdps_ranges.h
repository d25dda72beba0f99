/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_ranges.h - a bounded, sorted list of missing-sequence ranges (gap tracking) with per-range
 * timers, in serial arithmetic. */
#ifndef RDPS_PROTO_RANGES_H
#define RDPS_PROTO_RANGES_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Model
 * -----
 * A stream's missing sequences as at most `cap` disjoint ranges, sorted in
 * sequence order (serial arithmetic: every range lies within 2^31 of the
 * first, which the reassembler's sequence window guarantees). Each
 * range carries the timers its owner needs: when it was detected, when it is
 * next due (unreliable: reported as a gap; reliable: NAKed), when it was
 * last NAKed, how many NAKs went, and why it was given up. The storage is
 * the caller's (no allocation); operations are O(cap), cap is small (32).
 *
 * A split that would exceed cap fails (the caller decides: report the
 * oldest range early, or keep the range whole and over-ask); an insert into
 * a full list merges with the nearest neighbour (the merged range may then
 * cover received sequences: a NAK for them costs a duplicate, never a loss).
 */

struct rdps_gap_range {
    uint32_t start, count; /* [start, start + count) */
    uint64_t detect_ns;    /* when its first sequence was found missing */
    uint64_t due_ns;       /* next action: report (unreliable) or NAK (reliable) */
    uint64_t nak_ns;       /* last NAK sent for it; 0 = never */
    uint16_t tries;        /* NAKs sent for it */
    uint8_t lost_reason;   /* reliable: nonzero = given up (rdps_loss_reason) */
    uint8_t suppressed;    /* a repair seen for it was counted as a suppression */
    uint8_t overtaken;     /* reliable: a repair asked for after it arrived first: ask now */
    uint8_t held;          /* reliable: its retry waits for the receive queue to be processed */
    /* Unreliable: the message ordinals it may hold, [ord_lo, ord_hi) (rdps_rx_gaps.h). */
    uint32_t ord_lo, ord_hi;
};

struct rdps_ranges {
    struct rdps_gap_range *r; /* caller storage, cap entries */
    uint16_t count, cap;
};

void rdps__ranges_init(struct rdps_ranges *l, struct rdps_gap_range *storage, uint16_t cap);

/* Index of the range holding seq, or -1. */
int rdps__ranges_find(const struct rdps_ranges *l, uint32_t seq);

/*
 * Appends [start, start + count) after the last range (start must not be
 * before its end); extends the last range when contiguous. Returns its
 * index, or -1 when the list is full (nothing changed).
 */
int rdps__ranges_append(struct rdps_ranges *l, uint32_t start, uint32_t count, uint64_t now_ns,
                        uint64_t due_ns);

/*
 * Removes seq from range i (which holds it): shrinks it, drops it, or splits
 * it in two (both halves keep the timers). Returns 0, or -1 if the split
 * needs a slot the list does not have (nothing changed).
 */
int rdps__ranges_remove_seq(struct rdps_ranges *l, int i, uint32_t seq);

/* Removes range i. */
void rdps__ranges_remove(struct rdps_ranges *l, int i);

/* Drops every sequence before seq (ranges wholly before go, one straddling is trimmed). */
void rdps__ranges_trim_below(struct rdps_ranges *l, uint32_t seq);

/*
 * Inserts [start, start + count) (disjoint from every range) in order,
 * merging with contiguous neighbours; when full, merges it into the nearest
 * range instead. Returns false when a merge had to cover sequences that were
 * not missing (counted by the caller).
 */
bool rdps__ranges_insert(struct rdps_ranges *l, uint32_t start, uint32_t count, uint64_t now_ns,
                         uint64_t due_ns);

static inline uint32_t rdps__range_end(const struct rdps_gap_range *g)
{
    return g->start + g->count;
}

#endif /* RDPS_PROTO_RANGES_H */
