/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_repairs.h - the reliable publisher's repair queue: what NAKs schedule, per-sequence
 * lingers, the repair budget and the shares past it (rdps_rel_pub.h). */
#ifndef RDPS_PROTO_REL_REPAIRS_H
#define RDPS_PROTO_REL_REPAIRS_H

#include <stdbool.h>
#include <stdint.h>

#include "rdps_pub_ring.h"
#include "rdps_rel_earned.h"
#include "rdps_rel_flow.h"
#include "rdps_rel_pub_parity.h"
#include "rdps_rel_pub_types.h"
#include "rdps_rel_receivers.h"

/*
 * Model
 * -----
 * Lingers. Per sequence (per ring slot) the layer remembers who it was last repaired to and until
 * when that answer lingers (repair_linger_ns; a lone receiver's RTT-scaled linger,
 * rdps_rel_flow.h): a NAK from the same receiver, or any NAK after a multicast repair, within the
 * linger is suppressed (unless the NAK is flagged RETRANSMIT: the receiver saw a repair it asked
 * for later arrive first, so this one was lost, and it is answered once the earlier repair has
 * left); a NAK from an announced receiver of another host within the linger of a unicast repair
 * turns it into a multicast one (askers of one host, or an unannounced asker, get unicast: only
 * distinct hosts that discovery announced and whose receivers are receiving, ACTIVE in flow
 * control, fan a repair out to the group); otherwise the sequence is repaired by unicast to the
 * asker. Every sequence scheduled spends the asking host's NAK
 * allowance (rdps_rel_hosts.h): past it, it is not scheduled (nak_host_limited) and the
 * receiver's retry gets it.
 *
 * The queue. Consecutive sequences with the same destination form one entry (max_repairs
 * entries; when full, the sequences are not marked, counted, and the receiver's retry gets them);
 * a parity entry is `count` symbols of one block (rdps_rel_pub_parity.h).
 *
 * Budget. Repairs spend a token bucket of repair_budget_bytes per repair_interval_ns (its refill
 * time, tokens_at, is the epoch of the hosts' allowances), so they cannot starve new data; the
 * engine sends at most data_per_repair new frames between two repairs when both wait, so new data
 * cannot starve repairs. While the window or the ring holds appends and no new data waits, repairs
 * go past the budget (only they can move the receivers that hold the publisher): unicast ones
 * spend their host's share (repair_share_bytes per interval), multicast ones the shares' pool,
 * both within repair_share_total_bytes for all, and the budget past it, so no receiver, host or
 * multicast asker draws repairs at the device's pace: at most repair_budget_bytes +
 * repair_share_total_bytes per interval. A unicast entry held by its host's share goes to the back
 * of the queue, so it does not hold up other receivers' repairs.
 *
 * Earned. And every repair byte, in every state, spends what new data earned (rdps_rel_earned.h:
 * twice the data per receiver in flow control, plus 64 KB/s, by default): repair volume follows
 * what the publisher sends, whoever asks and from how many addresses. Past it every repair waits;
 * from then until the queue empties hosts take turns (rdps__rel_rq_take_turns).
 *
 * Reads the ring, the receivers table (destinations, hosts' allowances and shares), flow control's
 * lingers and whether a parity block is still whole; the engine turns an entry into an action and
 * reports it sent (rdps__rel_rq_sent).
 */

/* A run of sequences to repair to one destination; `sent` of them went. */
struct rdps_rel_repair {
    uint32_t start, count, sent;
    int32_t dest; /* receiver slot or RDPS_REL_MULTICAST */
    uint32_t gen; /* the receiver's generation when scheduled */
    bool parity;  /* `count` parity symbols of the block starting at `start` */
};

/* Per ring slot: who sequence `seq` was last repaired to, until when that answer lingers, and
 * when the repair left (0: still queued). */
struct rdps_rel_mark {
    uint64_t linger_until;
    uint64_t sent_ns;
    uint32_t seq;
    int32_t dest;
};

struct rdps_rel_repairs {
    const struct rdps_rel_pub_config *cfg; /* the engine's */
    struct rdps_rel_pub_counters *c;       /* the engine's */
    const struct rdps_pub_ring *ring;      /* the frames repaired */
    struct rdps_rel_receivers *rxt;        /* destinations, hosts' allowances and shares */
    const struct rdps_rel_flowctl *fc;     /* lingers */
    const struct rdps_rel_pub_parity *par; /* whole blocks, parity datagram length */
    uint32_t data_per_repair;              /* cfg's, read for every message */
    struct rdps_rel_mark *marks;           /* per ring slot */
    struct rdps_rel_repair *queue;         /* FIFO of max_repairs entries */
    uint32_t head, count;
    int64_t tokens;             /* what is left of the budget this interval */
    int64_t share_pool;         /* what is left of repair_share_total_bytes this interval */
    uint64_t tokens_at;         /* the interval's start (the hosts' allowances' epoch) */
    uint32_t data_since_repair; /* new frames posted since the last repair (to data_per_repair) */
    struct rdps_rel_earned earned; /* what data earned repairs (rdps_rel_earned.h) */
};

/* Allocates the marks (one per ring slot) and the queue (RDPS_ENOMEM). */
int rdps__rel_rq_init(struct rdps_rel_repairs *rq, const struct rdps_rel_pub_config *cfg,
                      struct rdps_rel_pub_counters *c, const struct rdps_pub_ring *ring,
                      struct rdps_rel_receivers *rxt, const struct rdps_rel_flowctl *fc,
                      const struct rdps_rel_pub_parity *par);
void rdps__rel_rq_fini(struct rdps_rel_repairs *rq);

/* Refills the budget and the shares' pool when an interval passed. */
static inline void rdps__rel_rq_refill(struct rdps_rel_repairs *rq, uint64_t now_ns)
{
    if (now_ns < rq->tokens_at + rq->cfg->repair_interval_ns)
        return;
    uint64_t intervals = (now_ns - rq->tokens_at) / rq->cfg->repair_interval_ns;
    rq->tokens_at += intervals * rq->cfg->repair_interval_ns;
    rq->tokens = rq->cfg->repair_budget_bytes; /* the budget does not accumulate */
    rq->share_pool = rq->cfg->repair_share_total_bytes;
    rdps__rel_earned_floor(&rq->earned, intervals);
}
/* When the next refill is due. */
static inline uint64_t rdps__rel_rq_refill_at(const struct rdps_rel_repairs *rq)
{
    return rq->tokens_at + rq->cfg->repair_interval_ns;
}

/* Queues [start, start + count) (parity: count symbols of the block at start) to dest; false
 * (nothing queued) when the queue is full. */
bool rdps__rel_rq_queue(struct rdps_rel_repairs *rq, uint32_t start, uint32_t count, int32_t dest,
                        bool parity);
/* Schedules the sequences [start, start + count) receiver `slot` NAKed (all posted and in the
 * ring), linger by linger, spending *allowance; unicast_only: never fan out to the group (see
 * rdps__rel_pub_set_fanout). Returns the sequences queued (0: suppressed or refused). */
uint32_t rdps__rel_rq_schedule(struct rdps_rel_repairs *rq, int32_t slot, uint32_t start,
                               uint32_t count, bool overtaken, bool unicast_only, uint64_t now_ns,
                               int64_t *allowance);

/* The front repair frame if one can go now (what data earned permitting: rdps_rel_earned.h; and
 * the budget, when `budgeted`; past the budget a unicast one spends its host's share, a multicast
 * one the shares' pool, and the budget when that is spent: *shared says it spends the budget),
 * with its entry; NULL when none can. Drops dead
 * entries (receiver gone, below the trail, a block no longer whole: post is the post cursor). A
 * parity entry's slot is the parity datagram's length only. */
const struct rdps_pub_ring_slot *rdps__rel_rq_next(struct rdps_rel_repairs *rq, bool budgeted,
                                                   uint32_t post, struct rdps_rel_repair **entry,
                                                   bool *shared);
/* The front entry is done (or dead). */
static inline void rdps__rel_rq_pop(struct rdps_rel_repairs *rq)
{
    rq->head = (rq->head + 1) % rq->cfg->max_repairs;
    rq->count--;
}

/* The mark of sequence seq's ring slot. */
static inline struct rdps_rel_mark *rdps__rel_rq_mark(const struct rdps_rel_repairs *rq,
                                                      uint32_t seq)
{
    return &rq->marks[seq & rq->ring->slot_mask];
}

/* Charges a repair past the budget to the shares' pool and, unicast (slot >= 0), its host. */
static inline void rdps__rel_rq_charge_share(struct rdps_rel_repairs *rq, int32_t slot,
                                             uint32_t len)
{
    int64_t full = rq->cfg->max_datagram;
    rq->share_pool -= len;
    bool spent = rq->share_pool < full;
    if (slot >= 0) {
        /* Filled this interval: rdps__rel_rq_next asked before the repair went. */
        int64_t *share = rdps__rel_rxt_share(rq->rxt, slot, rq->tokens_at);
        *share -= len;
        spent = spent || *share < full;
    }
    /* Once per host and interval, and once when the total runs out: the share says no after
     * either. */
    if (spent)
        rq->c->repair_share_spent++;
}

/* The host record entry e goes to; -1: multicast. */
static inline int32_t rdps__rel_rq_host(const struct rdps_rel_repairs *rq,
                                        const struct rdps_rel_repair *e)
{
    return e->dest == RDPS_REL_MULTICAST ? -1 : rq->rxt->rx[e->dest].host;
}

/* The next frame of entry e (rdps__rel_rq_next) of len bytes went now: charged (to the budget;
 * to the shares too unless `shared`), its linger starts, the entry advances. Inline: the engine
 * calls it for every repair. */
static inline void rdps__rel_rq_sent(struct rdps_rel_repairs *rq, struct rdps_rel_repair *e,
                                     uint32_t len, bool shared, uint64_t now_ns)
{
    if (!shared)
        rdps__rel_rq_charge_share(rq, e->dest, len);
    if (!e->parity) {
        uint32_t seq = e->start + e->sent;
        struct rdps_rel_mark *m = rdps__rel_rq_mark(rq, seq);
        if (m->seq == seq) { /* the linger counts from the repair's departure */
            m->linger_until = now_ns + rdps__rel_flow_linger(rq->fc);
            m->sent_ns = now_ns;
        }
    }
    rq->c->repair_bytes += len;
    rq->tokens -= len;
    rdps__rel_earned_spend(&rq->earned, len, rdps__rel_rq_host(rq, e));
    rq->data_since_repair = 0;
    if (++e->sent == e->count)
        rdps__rel_rq_pop(rq);
}

static inline bool rdps__rel_rq_empty(const struct rdps_rel_repairs *rq)
{
    return rq->count == 0;
}
/* A new data frame of len bytes went: it earns repairs (rdps_rel_earned.h), and data and repairs
 * alternate when both wait. */
static inline void rdps__rel_rq_data_posted(struct rdps_rel_repairs *rq, uint32_t len)
{
    rdps__rel_earned_data(&rq->earned, len, rq->fc->members);
    if (rq->data_since_repair < rq->data_per_repair)
        rq->data_since_repair++;
}
/* Before the engine asks for the next repair to send: once repairs waited for what data earns
 * (until the queue empties), hosts take turns at the head of the queue. Inline: the engine calls
 * it whenever a repair may go; only a starved queue rotates. */
void rdps__rel_rq_rotate_turn(struct rdps_rel_repairs *rq);
static inline void rdps__rel_rq_take_turns(struct rdps_rel_repairs *rq)
{
    if (rq->count == 0)
        rq->earned.starved = false;
    else if (rq->earned.starved)
        rdps__rel_rq_rotate_turn(rq);
}
/* May a repair go ahead of waiting data (data_per_repair new frames went since the last one)? */
static inline bool rdps__rel_rq_turn(const struct rdps_rel_repairs *rq)
{
    return rq->data_since_repair >= rq->data_per_repair;
}

#endif /* RDPS_PROTO_REL_REPAIRS_H */
