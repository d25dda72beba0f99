/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rx_track.h - sequence tracking for one stream, reliable or not: what arrived, what is
 * missing, the consumed point and the window offered (layer 2 of the receive engine). */
#ifndef RDPS_PROTO_RX_TRACK_H
#define RDPS_PROTO_RX_TRACK_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rdps_ranges.h"
#include "rdps_seq.h"

/*
 * Model
 * -----
 * One tracker per stream, the same for reliable and unreliable streams; it
 * calls nothing but the range list (rdps_ranges.h) and is all inline: every
 * frame goes through it.
 *
 * next is the newest sequence seen + 1. The window is the RDPS_SEQ_WINDOW
 * sequences [next - WINDOW, next), one bit each (arrived or not, at bit
 * seq % WINDOW). A sequence enters the window as next moves over it
 * (received by push, missing by forget); the one sharing its bit leaves,
 * and if it never arrived and is not before loss_floor (the stream's
 * start or last reset) it is lost: push and forget say so, the caller
 * counts and reports it. gaps holds the missing sequences the stream still
 * acts on (at most its capacity of ranges, with their timers): an
 * unreliable stream reports them after the reorder allowance
 * (rdps_rx_gaps.h), a reliable one NAKs them (rdps_rx_recovery.h).
 *
 * consumed (reliable streams): every sequence before it was released in
 * order (into a delivered message, or into the message being assembled at
 * the head of the stream) or given up. The stream never tracks past
 * consumed + WINDOW - 1, so every sequence leaving the window is before
 * consumed (its bit set: released or given up, never lost), and the
 * window a reliable stream offers (rdps__track_window) is a part of
 * [consumed, consumed + WINDOW).
 *
 * No allocation (the range storage is the caller's), no clock, no
 * callback.
 */

#define RDPS_SEQ_WINDOW       2048 /* sequences tracked per stream; a power of two */
#define RDPS_SEQ_WINDOW_MASK  (RDPS_SEQ_WINDOW - 1u)
#define RDPS_SEQ_WINDOW_WORDS (RDPS_SEQ_WINDOW / 64)
_Static_assert((RDPS_SEQ_WINDOW & (RDPS_SEQ_WINDOW - 1)) == 0, "window is a power of two");
_Static_assert(RDPS_SEQ_WINDOW % 64 == 0, "window is whole 64-bit words");

struct rdps_rx_track {
    uint32_t next;       /* newest sequence seen + 1: the window is [next - WINDOW, next) */
    uint32_t consumed;   /* reliable: every sequence before it released or given up */
    uint32_t loss_floor; /* sequences before the stream's (re)start are never counted lost */
    struct rdps_ranges gaps;
    uint64_t received[RDPS_SEQ_WINDOW_WORDS]; /* bit seq % WINDOW: seq in the window arrived */
};

/* A new stream whose first frame is seq: the window reaches back WINDOW - 1 sequences (frames
 * reordered at the start are admitted), none of them counted as lost. */
static inline void rdps__track_start(struct rdps_rx_track *t, uint32_t seq,
                                     struct rdps_gap_range *storage, uint16_t cap)
{
    memset(t->received, 0, sizeof(t->received));
    t->next = t->consumed = t->loss_floor = seq;
    rdps__ranges_init(&t->gaps, storage, cap);
}

static inline bool rdps__track_test(const struct rdps_rx_track *t, uint32_t seq)
{
    uint32_t bit = seq & RDPS_SEQ_WINDOW_MASK;
    return (t->received[bit / 64] >> (bit % 64)) & 1;
}

static inline void rdps__track_set(struct rdps_rx_track *t, uint32_t seq)
{
    uint32_t bit = seq & RDPS_SEQ_WINDOW_MASK;
    t->received[bit / 64] |= 1ull << (bit % 64);
}

static inline void rdps__track_clear(struct rdps_rx_track *t, uint32_t seq)
{
    uint32_t bit = seq & RDPS_SEQ_WINDOW_MASK;
    t->received[bit / 64] &= ~(1ull << (bit % 64));
}

/* next - WINDOW, sharing next's bit, leaves unreceived: lost unless before the stream's start. */
static inline bool rdps__track_lost_leaving(const struct rdps_rx_track *t)
{
    return rdps__seq_ge(t->next - RDPS_SEQ_WINDOW, t->loss_floor);
}

/* next arrived: it enters the window as received. True when the sequence leaving was lost. */
static inline bool rdps__track_push(struct rdps_rx_track *t)
{
    uint32_t bit = t->next & RDPS_SEQ_WINDOW_MASK;
    uint64_t mask = 1ull << (bit % 64);
    uint64_t *word = &t->received[bit / 64];
    bool lost = false;
    if (!(*word & mask)) {
        lost = rdps__track_lost_leaving(t);
        *word |= mask;
    }
    t->next++;
    return lost;
}

/* rdps__track_push unless it would push a lost sequence out: then nothing changes and false (a
 * caller that cannot report it now takes another path). */
static inline bool rdps__track_push_quiet(struct rdps_rx_track *t)
{
    uint32_t bit = t->next & RDPS_SEQ_WINDOW_MASK;
    uint64_t mask = 1ull << (bit % 64);
    uint64_t *word = &t->received[bit / 64];
    if (!(*word & mask)) {
        if (rdps__track_lost_leaving(t))
            return false;
        *word |= mask;
    }
    t->next++;
    return true;
}

/* next enters the window missing. True when the sequence leaving was lost. */
static inline bool rdps__track_forget(struct rdps_rx_track *t)
{
    uint32_t bit = t->next & RDPS_SEQ_WINDOW_MASK;
    uint64_t mask = 1ull << (bit % 64);
    uint64_t *word = &t->received[bit / 64];
    bool lost = false;
    if (*word & mask)
        *word &= ~mask;
    else
        lost = rdps__track_lost_leaving(t);
    t->next++;
    return lost;
}

/* The window restarts at seq with every earlier sequence taken as received (nothing from before
 * is admitted again) and nothing missing: a stream reset, or a reliable stream that gave up
 * everything before seq past next. */
static inline void rdps__track_restart(struct rdps_rx_track *t, uint32_t seq)
{
    memset(t->received, 0xFF, sizeof(t->received));
    t->gaps.count = 0;
    t->next = t->consumed = t->loss_floor = seq;
}

/* Bits set in w, branch-free and inline: without -mpopcnt (a generic x86-64 build)
 * __builtin_popcountll is a libgcc call, 11 % of the receive side's instructions at 5 % loss. */
static inline uint32_t rdps__popcount64(uint64_t w)
{
    w = w - ((w >> 1) & 0x5555555555555555ull);
    w = (w & 0x3333333333333333ull) + ((w >> 2) & 0x3333333333333333ull);
    w = (w + (w >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (uint32_t)((w * 0x0101010101010101ull) >> 56);
}

/* Sequences of [from, from + n) that arrived (n <= WINDOW). */
static inline uint32_t rdps__track_received_count(const struct rdps_rx_track *t, uint32_t from,
                                                  uint32_t n)
{
    uint32_t count = 0;
    while (n > 0) {
        uint32_t bit = from & RDPS_SEQ_WINDOW_MASK, within = bit % 64;
        uint32_t take = 64 - within < n ? 64 - within : n;
        uint64_t word = t->received[bit / 64] >> within;
        if (take < 64)
            word &= (1ull << take) - 1;
        count += rdps__popcount64(word);
        from += take;
        n -= take;
    }
    return count;
}

/* ---- the window a reliable stream offers its publisher ------------------------------------- */

/*
 * The credits past the newest sequence received, the sequence window, and what the stream may
 * park. The credits bound what is in flight to this receiver and not yet taken off its receive
 * queue, so they count from next, not from the consumed point: frames parked behind a hole were
 * taken off the queue. `share` is the free room of the stream's share of its host's quotas
 * (partial slots, arena chunks; the fewer): every sequence of the window not received yet may
 * need one more slot when it comes, so the parking bound is the sequences received past the
 * consumed point plus the share. A hole thus costs one slot, not the stretch behind it.
 * `head_need` (0: none) is what the message at the consumed point needs to complete or, for a
 * message longer than the window, to stream on: the window stretches to it whatever the share
 * (a stream whose share is smaller than one message stalled for good), within the sequence
 * window.
 */
static inline uint32_t rdps__track_window(const struct rdps_rx_track *t, uint32_t credits,
                                          uint32_t share, uint32_t head_need)
{
    uint32_t w = credits;
    uint32_t held = t->next - t->consumed;
    if (held != 0 && rdps__seq_gt(t->next, t->consumed)) {
        share += rdps__track_received_count(t, t->consumed,
                                            held < RDPS_SEQ_WINDOW ? held : RDPS_SEQ_WINDOW);
        w += held;
    }
    if (w > RDPS_SEQ_WINDOW - 1)
        w = RDPS_SEQ_WINDOW - 1;
    if (share == 0)
        share = 1;
    if (head_need > share)
        share = head_need < RDPS_SEQ_WINDOW - 1 ? head_need : RDPS_SEQ_WINDOW - 1;
    return w < share ? w : share;
}

/* A floor of rdps__track_window without counting the received stretch (the window only adds to
 * it): most frames' questions are settled by it, without a popcount over the window. */
static inline uint32_t rdps__track_window_floor(uint32_t credits, uint32_t share)
{
    if (share == 0)
        share = 1;
    if (credits > RDPS_SEQ_WINDOW - 1)
        credits = RDPS_SEQ_WINDOW - 1;
    return credits < share ? credits : share;
}

#endif /* RDPS_PROTO_RX_TRACK_H */
