/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_flow.h - the reliable publisher's flow control over its receivers table: the limit,
 * the position the ring keeps, connecting holds, stalls and their evictions, the RTT-scaled
 * heartbeat and linger (rdps_rel_pub.h). */
#ifndef RDPS_PROTO_REL_FLOW_H
#define RDPS_PROTO_REL_FLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "rdps_pub_ring.h"
#include "rdps_rel_beat.h"
#include "rdps_rel_pub_types.h"
#include "rdps_rel_receivers.h"
#include "rdps_seq.h"

/*
 * Model
 * -----
 * Flow control over ACTIVE receivers (tagged: those carrying flow_tag): limit = max (max mode)
 * or min (min, tagged) of consumed + window; a message of n frames is admitted when head + n <=
 * limit, or when the receiver defining the limit has consumed everything (a message larger than
 * its window must still go), and no frame is posted at or past the limit: a message longer than
 * the window leaves as the receivers' window slides over it (they release its fragments in order
 * as they come, rdps_rel_recv.h), so a message is bounded by the ring, not by the window. No such
 * receiver: no limit. Tagged with fewer than flow_min_receivers tagged receivers: nothing goes.
 * The protection point (the trail may not pass it) is the slowest such receiver's consumed
 * sequence under min and tagged, the fastest's under max: under max the ring wraps over slow
 * receivers, and any whose consumed sequence falls below the trail is evicted (LAGGED).
 *
 * Everything here is recomputed lazily from the receivers table when it `changed`
 * (rdps__rel_flow_fresh): the limit, the protection point, the receiver count (members), the
 * lowest consumed sequence in flow control (lag_min), the largest smoothed RTT (heartbeats tell
 * it), and from the smallest one hb_min (half of it, at least heartbeat_min_ns: a receiver cannot
 * act on a tail loss faster than a round trip) and a lone receiver's linger (1.25 x its RTT
 * within [repair_linger_min_ns, repair_linger_ns]).
 *
 * Connecting receivers. Discovery tells the engine of a reliable receiver before it has reported:
 * until its first STATUS, or connect_timeout_ns, it holds the data it would take part in the
 * flow control of (min: always; tagged: when it carries the tag; max: only while no receiver is
 * ACTIVE, so a publisher does not send a burst its first receiver has no window for): appends
 * are refused (backpressure_connecting), and the next heartbeat goes at once so the receiver
 * learns the session and reports. Without this, a burst sent before the first STATUS overruns the
 * receiver's window and is lost to repair storms (seen on rxe: thousands of frames dropped beyond
 * the window). A host can announce receivers that never report, so holds are bounded
 * (rdps_rel_receivers.h bans such hosts); all holds together spend a bucket of connect_hold_max_ns
 * that refills at 1/RDPS_REL_HOLD_REFILL of real time, so hosts without number stall the publisher
 * at most that much, then that fraction of the time (connect_holds_refused counts what it cut).
 *
 * Stalls (min, tagged): the admission layer reports each refused append (rdps__rel_flow_refused);
 * a refusal by the window or the ring starts a stall clock on the position that refused it (the
 * limit or the protection point), which restarts when that position moves. A stall that lasted
 * stall_evict_ns evicts the receivers at that position (STALLED) and strikes their hosts
 * (rdps__rel_flow_stall_check). window_blocked and ring_blocked say that the last append was
 * refused by the window or the ring and nothing moved since: heartbeats stay quick, and repairs
 * may go past their budget (only they can move the receivers that hold the publisher).
 *
 * Calls the receivers table (evictions, strikes) and reads the ring; nothing above.
 */

struct rdps_rel_flowctl {
    const struct rdps_rel_pub_config *cfg; /* the engine's */
    struct rdps_rel_pub_counters *c;       /* the engine's */
    struct rdps_rel_receivers *rxt;        /* the receivers it is computed from */
    const struct rdps_pub_ring *ring;      /* head and trail */
    /* Recomputed lazily when rxt->changed. */
    bool limited;            /* some receiver limits: sequences below `limit` may be sent */
    uint32_t limit;          /* sequences below it may be sent */
    uint32_t limit_consumed; /* consumed sequence of the receiver defining the limit */
    uint32_t protect;        /* the trail may not pass it (when `protecting`) */
    bool protecting;
    uint32_t tagged;     /* ACTIVE receivers carrying flow_tag */
    uint32_t connecting; /* expected receivers that would hold data (see Connecting) */
    uint32_t members;    /* ACTIVE receivers (any tag): the receiver count */
    bool lag_any;        /* some ACTIVE receiver (any tag) exists */
    uint32_t lag_min;    /* lowest consumed sequence among ACTIVE receivers */
    uint64_t rtt_max;    /* the largest smoothed RTT among ACTIVE receivers (heartbeats tell it) */
    uint64_t hb_min;     /* heartbeat_min_ns, or half the ACTIVE receivers' least smoothed RTT */
    uint64_t linger_ns;  /* one receiver's linger (repair_linger_ns until an RTT sample) */
    /* Connect holds: held time spent (level), refilled since hold_at; the last refusal. */
    uint64_t hold_level_ns, hold_at_ns, hold_last_ns;
    /* Refused appends (the admission layer reports them). */
    uint64_t blocked_since; /* min/tagged: first refused append of the current stall; 0 */
    bool window_blocked;    /* the last append was refused by the window (heartbeats stay quick) */
    bool ring_blocked;      /* ... by the ring (its trail waits on receivers), until one succeeds or
                               the position the ring keeps moves */
    int blocked_by_window;  /* the stall's cause: 1 window, 0 ring */
    int32_t limit_slot;     /* the receiver defining the limit (-1: none) */
    uint64_t poke_at;       /* window-blocked: ask the limiting receiver for a STATUS then ... */
    uint64_t poke_gap;      /* ... and the next time this much later (doubling) */
    uint32_t blocked_mark;  /* limit (window) or protect (ring) when it began */
};

void rdps__rel_flow_init(struct rdps_rel_flowctl *fc, const struct rdps_rel_pub_config *cfg,
                         struct rdps_rel_pub_counters *c, struct rdps_rel_receivers *rxt,
                         const struct rdps_pub_ring *ring);

/* Recomputes everything from the receivers table (see the model). */
void rdps__rel_flow_recompute(struct rdps_rel_flowctl *fc);
/* Up to date with the receivers table. */
static inline void rdps__rel_flow_fresh(struct rdps_rel_flowctl *fc)
{
    if (fc->rxt->changed)
        rdps__rel_flow_recompute(fc);
}

/* May the frame of sequence seq be posted? Never at or past the limit: a message admitted whole
 * because it is longer than the window goes as the window slides. */
static inline bool rdps__rel_flow_may_post(struct rdps_rel_flowctl *fc, uint32_t seq)
{
    rdps__rel_flow_fresh(fc);
    return !fc->limited || rdps__seq_lt(seq, fc->limit);
}

/* Whether connecting receivers may hold data now: the hold bucket has room (a refusal counted). */
bool rdps__rel_flow_connect_hold(struct rdps_rel_flowctl *fc, uint64_t now_ns);

/* How long the window may wait on its receiver before the first poke: two of its round trips, at
 * least heartbeat_min_ns (its STATUS, sent as it could take more, is in flight that long). */
static inline uint64_t rdps__rel_flow_poke_gap(const struct rdps_rel_flowctl *fc)
{
    uint64_t srtt = fc->limit_slot >= 0 ? fc->rxt->rx[fc->limit_slot].srtt_ns : 0;
    return 2 * srtt > fc->cfg->heartbeat_min_ns ? 2 * srtt : fc->cfg->heartbeat_min_ns;
}

/* An append was refused: by_window 1 by the window, 0 by the ring, -1 for missing tagged
 * receivers (nobody to evict: no stall clock). Returns true when the window began to refuse (an
 * idle publisher's heartbeat then comes sooner: rdps__rel_beat_sooner). */
static inline bool rdps__rel_flow_refused(struct rdps_rel_flowctl *fc, int by_window,
                                          uint64_t now_ns)
{
    bool began = false;
    if (by_window == 0)
        fc->ring_blocked = true;
    if (by_window == 1 && !fc->window_blocked) {
        fc->window_blocked = true;
        fc->poke_gap = rdps__rel_flow_poke_gap(fc);
        fc->poke_at = now_ns + fc->poke_gap;
        began = true;
    }
    if (fc->cfg->flow == RDPS_REL_FLOW_MAX || by_window < 0)
        return began;
    /* A stall is a position that does not move: the clock restarts when it moved. */
    uint32_t mark = by_window ? fc->limit : fc->protect;
    if (fc->blocked_since == 0 || fc->blocked_by_window != by_window || fc->blocked_mark != mark) {
        fc->blocked_since = now_ns ? now_ns : 1;
        fc->blocked_by_window = by_window;
        fc->blocked_mark = mark;
    }
    return began;
}
/* An append succeeded: no stall, nothing blocked. */
static inline void rdps__rel_flow_appended(struct rdps_rel_flowctl *fc)
{
    fc->blocked_since = 0;
    fc->window_blocked = fc->ring_blocked = false;
}
/* Are appends held by the window or the ring (and nothing moved since)? */
static inline bool rdps__rel_flow_held(struct rdps_rel_flowctl *fc)
{
    /* A STATUS since the refusal may have opened the window or moved the ring's position. */
    if ((fc->window_blocked || fc->ring_blocked) && fc->rxt->changed)
        rdps__rel_flow_recompute(fc);
    return fc->window_blocked || fc->ring_blocked;
}
/* Is a receiver awaited (appends wait on the window, or a receiver in flow control has not
 * reported everything up to post)? Heartbeats then stay quick. */
static inline bool rdps__rel_flow_awaited(struct rdps_rel_flowctl *fc, uint32_t post)
{
    rdps__rel_flow_fresh(fc);
    return fc->window_blocked || (fc->lag_any && fc->lag_min != post);
}

/* Appends wait on the window and its receiver's STATUS did not come within a poke gap: its STATUS
 * may have been lost (a receiver sends one as it can take more; a window-blocked publisher's
 * multicast heartbeats, which also ask for one, back off to 8 hb_min, and under bursts of loss a
 * quiet uplink lost one after another: 43 % of a 64-receiver run's time on the simulated fabric).
 * Returns that receiver's slot, to be sent a unicast heartbeat now (it answers with a STATUS when
 * it can take more), or -1. The gap doubles up to the multicast heartbeats' (a stalled receiver
 * is not asked every round trip until its eviction). */
static inline bool rdps__rel_flow_poke_due(const struct rdps_rel_flowctl *fc, uint64_t now_ns)
{
    return fc->window_blocked && now_ns >= fc->poke_at;
}
static inline int32_t rdps__rel_flow_poke(struct rdps_rel_flowctl *fc, uint64_t now_ns)
{
    if (!rdps__rel_flow_poke_due(fc, now_ns))
        return -1;
    rdps__rel_flow_fresh(fc);
    if (!fc->window_blocked || !fc->limited || fc->limit_slot < 0)
        return -1;
    uint64_t cap = fc->hb_min * RDPS_REL_HB_BLOCKED_MULT;
    fc->poke_gap = fc->poke_gap * 2 < cap ? fc->poke_gap * 2 : cap;
    fc->poke_at = now_ns + fc->poke_gap;
    return fc->limit_slot;
}

/* ACTIVE receivers (any tag). */
static inline uint32_t rdps__rel_flow_members(struct rdps_rel_flowctl *fc)
{
    rdps__rel_flow_fresh(fc);
    return fc->members;
}

/* The trail moved to the ring's: evicts ACTIVE receivers whose consumed sequence is below it. */
void rdps__rel_flow_evict_lagging(struct rdps_rel_flowctl *fc);
/* min/tagged: evicts the receivers holding a stall that lasted stall_evict_ns; next deadline. */
uint64_t rdps__rel_flow_stall_check(struct rdps_rel_flowctl *fc, uint64_t now_ns);

/* How long a repair answers its sequence: a lone receiver's RTT-scaled linger, else the whole
 * configured linger (other receivers' NAKs come spread over their backoff). Receivers in flow
 * control count; NAKs from anyone else do not make the publisher linger longer. */
static inline uint64_t rdps__rel_flow_linger(const struct rdps_rel_flowctl *fc)
{
    return fc->members <= 1 ? fc->linger_ns : fc->cfg->repair_linger_ns;
}

/* How long after a repair left a NAK from receiver `slot` may still have been sent before the
 * repair reached it: its RTT and a quarter (clamped like a lone receiver's linger) once measured.
 */
static inline uint64_t rdps__rel_flow_asker_linger(const struct rdps_rel_flowctl *fc, int32_t slot)
{
    uint64_t srtt = fc->rxt->rx[slot].srtt_ns;
    if (srtt == 0)
        return rdps__rel_flow_linger(fc);
    uint64_t l = srtt + srtt / 4;
    return l < fc->cfg->repair_linger_min_ns ? fc->cfg->repair_linger_min_ns
           : l > fc->cfg->repair_linger_ns   ? fc->cfg->repair_linger_ns
                                             : l;
}

#endif /* RDPS_PROTO_REL_FLOW_H */
