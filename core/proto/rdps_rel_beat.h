/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_beat.h - the reliable publisher's heartbeat clock: when the next heartbeat is due, and
 * the heartbeats sent, for RTT echoes (the lowest layer of rdps_rel_pub.h). */
#ifndef RDPS_PROTO_REL_BEAT_H
#define RDPS_PROTO_REL_BEAT_H

#include <stdbool.h>
#include <stdint.h>

#include "rdps_rel_pub_types.h"

/*
 * Model
 * -----
 * A multicast heartbeat goes when idle: hb_min after data, then gaps doubling up to
 * heartbeat_max_ns (at most RDPS_REL_HB_BLOCKED_MULT x hb_min while a receiver is awaited),
 * back to hb_min on new data. hb_min itself is flow control's (rdps_rel_flow.h: half the
 * fastest RTT in flow control, at least heartbeat_min_ns) and is passed in. `urgent` makes the
 * next action a heartbeat ahead of waiting data (a receiver was announced; parity's k every
 * RDPS_REL_PARITY_HB_BLOCKS blocks). The engine encodes and sends the heartbeat; this clock only
 * says when, and remembers the last RDPS_REL_HB_SENT sent (wall timestamp and monotonic
 * departure) so that an echo in a STATUS gives an RTT on the monotonic clock.
 *
 * Admission (data posted, a window refusal), the engine (sends) and the receivers table
 * (echoes) call down into it; it calls nothing.
 */

/* While appends wait on the window, heartbeats back off to at most this many hb_min. */
#define RDPS_REL_HB_BLOCKED_MULT 8u

struct rdps_rel_beat {
    uint64_t next;     /* the next multicast heartbeat is due (0: at once) */
    uint64_t interval; /* the gap after the next one */
    bool urgent;       /* the next action is a heartbeat, ahead of data */
    struct rdps_rel_hb_sent sent[RDPS_REL_HB_SENT]; /* the latest heartbeats, a ring */
    uint32_t sent_count;
};

/* The first heartbeat goes at once: receivers learn the session (urgent: ahead of data). */
static inline void rdps__rel_beat_init(struct rdps_rel_beat *b, uint64_t hb_min, bool urgent)
{
    b->interval = hb_min;
    b->next = 0;
    b->urgent = urgent;
}

/* New data went: the next heartbeat hb_min after it. */
static inline void rdps__rel_beat_data(struct rdps_rel_beat *b, uint64_t now_ns, uint64_t hb_min)
{
    b->interval = hb_min;
    b->next = now_ns + b->interval;
}

/* Appends began to wait on the window: an idle publisher's heartbeat comes sooner (receivers
 * answer it with STATUS). */
static inline void rdps__rel_beat_sooner(struct rdps_rel_beat *b, uint64_t now_ns, uint64_t hb_min)
{
    if (b->interval > hb_min * RDPS_REL_HB_BLOCKED_MULT) { /* idle before: beat sooner */
        b->interval = hb_min;
        if (b->next > now_ns + hb_min)
            b->next = now_ns + hb_min;
    }
}

/* A receiver was announced: it learns the session (and the ring's oldest sequence) now, ahead of
 * waiting data, rather than after the idle heartbeat's backoff. */
static inline void rdps__rel_beat_announce(struct rdps_rel_beat *b, uint64_t now_ns,
                                           uint64_t hb_min)
{
    b->interval = hb_min;
    b->next = now_ns;
    b->urgent = true;
}

/* A heartbeat is wanted ahead of waiting data (parity: receivers learn k from heartbeats). */
static inline void rdps__rel_beat_urge(struct rdps_rel_beat *b)
{
    b->urgent = true;
}

/* The urgent heartbeat went: it is the heartbeat due, the next one an interval later. */
static inline void rdps__rel_beat_urgent_sent(struct rdps_rel_beat *b, uint64_t now_ns)
{
    b->urgent = false;
    b->next = now_ns + b->interval;
}

/* A heartbeat leaves now: remembered for the echo (its RTT is measured on the monotonic clock). */
static inline void rdps__rel_beat_sent(struct rdps_rel_beat *b, uint64_t now_ns, uint64_t wall_ns)
{
    struct rdps_rel_hb_sent *sent = &b->sent[b->sent_count++ % RDPS_REL_HB_SENT];
    sent->wall_ns = wall_ns;
    sent->mono_ns = now_ns;
}

/* The idle heartbeat went: hb_min after data, then gaps doubling to the cap; while `awaited`
 * (appends wait on the window, or a receiver in flow control has not reported everything posted) at
 * most RDPS_REL_HB_BLOCKED_MULT x hb_min: receivers answer a heartbeat with STATUS and learn of
 * tail loss from it, and a lost STATUS or tail otherwise waited for the grown gap. */
static inline void rdps__rel_beat_backoff(struct rdps_rel_beat *b, uint64_t now_ns, uint64_t hb_min,
                                          uint64_t hb_max, bool awaited)
{
    uint64_t cap = hb_max;
    if (awaited && hb_min * RDPS_REL_HB_BLOCKED_MULT < cap)
        cap = hb_min * RDPS_REL_HB_BLOCKED_MULT;
    b->interval = b->interval * 2 > cap ? (b->interval > cap ? b->interval : cap) : b->interval * 2;
    b->next = now_ns + b->interval;
}

/* The RTT a heartbeat echo gives: the heartbeat's departure on the monotonic clock, looked up by
 * the wall-clock timestamp it carried. false: no heartbeat of ours had that timestamp (among the
 * last RDPS_REL_HB_SENT), or it was held longer than the round trip took. */
static inline bool rdps__rel_beat_echo_rtt(const struct rdps_rel_beat *b, uint64_t echoed_ts,
                                           uint64_t held_ns, uint64_t now_ns, uint64_t *rtt_ns)
{
    uint32_t n = b->sent_count < RDPS_REL_HB_SENT ? b->sent_count : RDPS_REL_HB_SENT;
    for (uint32_t k = 1; k <= n; k++) { /* newest first: the echo is usually of the latest */
        const struct rdps_rel_hb_sent *sent = &b->sent[(b->sent_count - k) % RDPS_REL_HB_SENT];
        if (sent->wall_ns != echoed_ts)
            continue;
        if (now_ns < sent->mono_ns || now_ns - sent->mono_ns < held_ns)
            return false; /* held longer than the round trip took */
        *rtt_ns = now_ns - sent->mono_ns - held_ns;
        return true;
    }
    return false;
}

#endif /* RDPS_PROTO_REL_BEAT_H */
