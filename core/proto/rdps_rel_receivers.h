/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_receivers.h - the reliable publisher's receivers table: receivers and their hosts,
 * caps, states, STATUS, RTT, timeouts, evictions and bans, owed heartbeats (rdps_rel_pub.h). */
#ifndef RDPS_PROTO_REL_RECEIVERS_H
#define RDPS_PROTO_REL_RECEIVERS_H

#include <stdbool.h>
#include <stdint.h>

#include <rdps/rdps.h>

#include "rdps_pub_ring.h"
#include "rdps_rel_beat.h"
#include "rdps_rel_hosts.h"
#include "rdps_rel_pub_types.h"

/*
 * Model
 * -----
 * A table of at most max_receivers entries keyed by (exact source, receiver_id), O(1) lookup by
 * a seeded hash; NAK, STATUS and discovery (expect, tag) create entries. Anyone on the fabric
 * can send a NAK or a STATUS from any number of QPNs and GIDs it owns, so:
 *  - entries are capped per host (the GID, or the LID without a GRH: max_receivers_per_host)
 *    and per source (a host's QPN, the sender's choice: max_receivers_per_source); a new
 *    receiver past a cap, or in a full table, displaces the least recently heard unannounced
 *    receiver of the heaviest host (a new unannounced one only from a host with more receivers
 *    than its own; an announced one also an announced receiver of such a host), else it is
 *    refused (receivers_refused);
 *  - only receivers discovery announced from that same source become ACTIVE: in flow control,
 *    counted as receivers, their RTT pacing heartbeats and lingers; an unannounced one stays
 *    KNOWN whatever it reports and leaves after unannounced_timeout_ns of silence;
 *  - events (EVICTED, RESUMED, TIMED_OUT) are raised only for receivers that were ACTIVE.
 * States: KNOWN (not in flow control), ACTIVE (announced, reported a position at or above the
 * trail and within its window of the live position), EVICTED (its consumed sequence fell below
 * the trail: LAGGED; or it stalled a min/tagged publisher: STALLED, rdps_rel_flow.h). An
 * evicted receiver RESUMES only with a position at or above the trail and past the one it was
 * evicted at, and not before its host's ban ends: a host's second stall eviction (and each later
 * one) within RDPS_REL_STRIKE_DECAY_NS of the previous bans all its receivers from flow control
 * for stall_evict_ns, doubling with each up to RDPS_REL_BAN_MAX_NS (one step forgotten per
 * RDPS_REL_STRIKE_DECAY_NS without one). A receiver unheard for receiver_timeout_ns is removed.
 *
 * STATUS: consumed_seq (never moves back; beyond what was posted is bogus and ignored), window
 * (at most RDPS_REASM_WINDOW - 1, what a receiver can track), and an optional heartbeat echo:
 * the echoed timestamp is looked up among the last RDPS_REL_HB_SENT heartbeats this engine sent
 * (rdps_rel_beat.h), and RTT = now - that heartbeat's departure (monotonic) - echo delay; an echo
 * of anything else gives no sample (so neither a forged echo nor a step of the wall clock makes
 * one), srtt += (sample - srtt) / 8.
 *
 * Connecting: an announced receiver that has not reported holds data (rdps_rel_flow.h) until its
 * first STATUS or connect_timeout_ns; one that never reported bans its host from holding data for
 * RDPS_REL_CONNECT_BAN_NS, doubling likewise.
 *
 * Hosts: records of their own below the table (rdps_rel_hosts.h), which outlive their receivers
 * (so a ban does, too) and keep, for the repair layer, the host's NAK allowance and its share of
 * repairs past the budget.
 *
 * Owed heartbeats: receivers that NAKed below the trail are owed a unicast heartbeat (at most one
 * per linger each), a FIFO the engine drains.
 *
 * The table reads the ring's positions (trail, head: the ring is given at init; the post cursor
 * is passed in) and the heartbeat clock, and calls its host records; no other layer. Every change
 * that flow control must see sets `changed` (rdps_rel_flow.h recomputes and clears it).
 */

struct rdps_rel_receiver {
    struct rdps_source source;
    uint32_t receiver_id;
    uint32_t consumed_seq, window, tag;
    uint32_t evict_mark; /* EVICTED: it rejoins only with a position past this one */
    uint64_t last_heard_ns;
    uint64_t srtt_ns;
    uint64_t owed_until; /* no unrecoverable-range heartbeat to it before this */
    uint32_t gen;
    int32_t hash_next;     /* bucket chain, or the free list */
    int32_t host;          /* its host record (rdps_rel_host) */
    uint8_t state;         /* enum rdps_rel_rx_state */
    bool owed;             /* in the owed-heartbeat FIFO */
    bool announced;        /* discovery announced it, from this exact source */
    bool reported;         /* it sent a STATUS: consumed_seq and window are its own */
    bool expected;         /* announced, no STATUS yet: holds flow control until its first one */
    uint64_t expect_until; /* ... or until then (connect_timeout_ns) */
};

struct rdps_rel_receivers {
    const struct rdps_rel_pub_config *cfg; /* the engine's */
    struct rdps_rel_pub_counters *c;       /* the engine's */
    const struct rdps_pub_ring *ring;      /* the trail and head */
    const struct rdps_rel_beat *beat;      /* heartbeats sent (echoes) */
    uint64_t hash_seed;                    /* cfg's, read on every lookup */
    struct rdps_rel_receiver *rx;
    int32_t *rx_buckets;
    uint32_t rx_mask, rx_count, rx_gen;
    int32_t rx_free;
    uint64_t rx_next_expiry;
    struct rdps_rel_hosts hosts; /* its receivers' hosts */
    uint32_t *owed;     /* FIFO of receiver slots owed a unicast heartbeat (NAK below trail) */
    uint32_t *owed_gen; /* ... and their generations (a reused slot is skipped) */
    uint32_t owed_head, owed_count;
    bool changed; /* a change flow control has not seen yet (rdps_rel_flow.h) */
};

/* Allocates the tables (RDPS_ENOMEM). The layers given are read, never called back. */
int rdps__rel_rxt_init(struct rdps_rel_receivers *t, const struct rdps_rel_pub_config *cfg,
                       struct rdps_rel_pub_counters *c, const struct rdps_pub_ring *ring,
                       const struct rdps_rel_beat *beat);
void rdps__rel_rxt_fini(struct rdps_rel_receivers *t);

/* The receiver's slot, created if absent (announced: discovery announced it, which may displace
 * an unannounced receiver); -1 when refused (counted). */
int32_t rdps__rel_rxt_get(struct rdps_rel_receivers *t, const struct rdps_source *source,
                          uint32_t receiver_id, bool announced, uint64_t now_ns);
int32_t rdps__rel_rxt_find(const struct rdps_rel_receivers *t, const struct rdps_source *source,
                           uint32_t receiver_id);
/* Receiver `slot` was heard from now (its NAK): its record. */
static inline const struct rdps_rel_receiver *rdps__rel_rxt_heard(struct rdps_rel_receivers *t,
                                                                  int32_t slot, uint64_t now_ns)
{
    t->rx[slot].last_heard_ns = now_ns;
    return &t->rx[slot];
}

/* A STATUS of this session (post: the post cursor). Returns 0; outcomes counted. */
int rdps__rel_rxt_on_status(struct rdps_rel_receivers *t, const struct rdps_source *source,
                            const struct rdps_rel_status *st, uint32_t post, uint64_t now_ns);
/* Discovery's group tag for a receiver (rdps__rel_pub_receiver_tag). 0 or RDPS_ENOSPC. */
int rdps__rel_rxt_tag(struct rdps_rel_receivers *t, const struct rdps_source *source,
                      uint32_t receiver_id, uint32_t tag, uint32_t post, uint64_t now_ns);
/* Discovery announced a receiver (rdps__rel_pub_expect_receiver). Returns 1 when it starts
 * connecting or its host is banned from holding data (either way the next heartbeat must go at
 * once: rdps__rel_beat_announce), 0, or RDPS_ENOSPC. */
int rdps__rel_rxt_expect(struct rdps_rel_receivers *t, const struct rdps_source *source,
                         uint32_t receiver_id, uint32_t tag, uint32_t post, uint64_t now_ns);
/* Discovery saw the receiver leave (rdps__rel_pub_receiver_gone). 0 or RDPS_ENOENT. */
int rdps__rel_rxt_gone(struct rdps_rel_receivers *t, const struct rdps_source *source,
                       uint32_t receiver_id, bool expired);

/* Receiver i leaves flow control (EVICTED, event). */
void rdps__rel_rxt_evict(struct rdps_rel_receivers *t, int32_t i, rdps_evict_reason reason);
/* A stall eviction of one of host h's receivers: a strike, from the second a ban (counted). */
void rdps__rel_rxt_strike(struct rdps_rel_receivers *t, int32_t h, uint64_t now_ns);
/* Removes receivers unheard for the timeout, ends connects that timed out; returns the next
 * expiry (UINT64_MAX: none). */
uint64_t rdps__rel_rxt_expire(struct rdps_rel_receivers *t, uint64_t now_ns);

/* The NAK allowance of receiver `slot`'s host this interval (rdps_rel_hosts.h). */
static inline int64_t *rdps__rel_rxt_nak_allowance(struct rdps_rel_receivers *t, int32_t slot,
                                                   uint64_t epoch)
{
    return rdps__rel_hosts_nak_allowance(&t->hosts, t->rx[slot].host, epoch);
}

/* The share past the budget of receiver `slot`'s host this interval (rdps_rel_hosts.h). */
static inline int64_t *rdps__rel_rxt_share(struct rdps_rel_receivers *t, int32_t slot,
                                           uint64_t epoch)
{
    return rdps__rel_hosts_share(&t->hosts, t->rx[slot].host, epoch);
}

/* Receiver `slot` NAKed below the trail: it is owed a unicast heartbeat (at most one per linger;
 * not while one is owed). */
void rdps__rel_rxt_owe(struct rdps_rel_receivers *t, int32_t slot, uint64_t now_ns);
/* The next receiver owed a heartbeat (its next one not before now_ns + linger), or -1. */
int32_t rdps__rel_rxt_take_owed(struct rdps_rel_receivers *t, uint64_t now_ns, uint64_t linger);
static inline bool rdps__rel_rxt_owed_any(const struct rdps_rel_receivers *t)
{
    return t->owed_count > 0;
}

/* Is the receiver of a repair scheduled for (slot, gen) gone? */
static inline bool rdps__rel_rxt_gone_since(const struct rdps_rel_receivers *t, int32_t slot,
                                            uint32_t gen)
{
    return t->rx[slot].state == RDPS_REL_RX_FREE || t->rx[slot].gen != gen;
}

/* ACTIVE receivers, and announced KNOWN ones that reported a position, behind the head. */
uint32_t rdps__rel_rxt_behind(const struct rdps_rel_receivers *t);
static inline int rdps__rel_rxt_info(const struct rdps_rel_receivers *t,
                                     const struct rdps_source *source, uint32_t receiver_id,
                                     struct rdps_rel_pub_receiver_info *info)
{
    int32_t i = rdps__rel_rxt_find(t, source, receiver_id);
    if (i < 0)
        return RDPS_ENOENT;
    const struct rdps_rel_receiver *r = &t->rx[i];
    info->source = r->source;
    info->receiver_id = r->receiver_id;
    info->state = (enum rdps_rel_rx_state)r->state;
    info->consumed_seq = r->consumed_seq;
    info->window = r->window;
    info->tag = r->tag;
    info->srtt_ns = r->srtt_ns;
    info->last_heard_ns = r->last_heard_ns;
    return 0;
}

#endif /* RDPS_PROTO_REL_RECEIVERS_H */
