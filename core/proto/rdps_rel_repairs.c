/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_repairs.c - the reliable publisher's repair queue: scheduling NAKed sequences linger by
 * linger, the budget and the shares past it (model: rdps_rel_repairs.h). */
#include "rdps_rel_repairs.h"

#include <stdlib.h>

#include <rdps/rdps.h>

int rdps__rel_rq_init(struct rdps_rel_repairs *rq, const struct rdps_rel_pub_config *cfg,
                      struct rdps_rel_pub_counters *c, const struct rdps_pub_ring *ring,
                      struct rdps_rel_receivers *rxt, const struct rdps_rel_flowctl *fc,
                      const struct rdps_rel_pub_parity *par)
{
    rq->cfg = cfg;
    rq->c = c;
    rq->ring = ring;
    rq->rxt = rxt;
    rq->fc = fc;
    rq->par = par;
    rq->data_per_repair = cfg->data_per_repair;
    rq->marks = calloc((size_t)ring->slot_mask + 1u, sizeof(*rq->marks));
    rq->queue = calloc(cfg->max_repairs, sizeof(*rq->queue));
    if (rq->marks == NULL || rq->queue == NULL)
        return RDPS_ENOMEM;
    rq->tokens = cfg->repair_budget_bytes;
    rq->share_pool = cfg->repair_share_total_bytes;
    rdps__rel_earned_init(&rq->earned, cfg, ring->cap);
    return 0;
}

void rdps__rel_rq_fini(struct rdps_rel_repairs *rq)
{
    free(rq->marks);
    free(rq->queue);
    rq->marks = NULL;
    rq->queue = NULL;
}

bool rdps__rel_rq_queue(struct rdps_rel_repairs *rq, uint32_t start, uint32_t count, int32_t dest,
                        bool parity)
{
    uint32_t gen = dest == RDPS_REL_MULTICAST ? 0 : rq->rxt->rx[dest].gen;
    if (rq->count > 0) {
        struct rdps_rel_repair *last =
            &rq->queue[(rq->head + rq->count - 1) % rq->cfg->max_repairs];
        if (last->dest == dest && last->gen == gen && last->parity == parity &&
            (parity ? last->start == start : last->start + last->count == start) &&
            last->count + count < 0x40000000u) {
            last->count += count;
            return true;
        }
    }
    if (rq->count == rq->cfg->max_repairs)
        return false;
    struct rdps_rel_repair *e = &rq->queue[(rq->head + rq->count++) % rq->cfg->max_repairs];
    e->start = start;
    e->count = count;
    e->sent = 0;
    e->dest = dest;
    e->gen = gen;
    e->parity = parity;
    return true;
}

static void flush_run(struct rdps_rel_repairs *rq, uint32_t start, uint32_t count, int32_t dest,
                      uint32_t *scheduled)
{
    if (count == 0)
        return;
    if (rdps__rel_rq_queue(rq, start, count, dest, false)) {
        *scheduled += count;
        return;
    }
    /* Not scheduled: forget the marks so the receiver's retry is answered. */
    rq->c->repair_queue_full += count;
    for (uint32_t k = 0; k < count; k++)
        rdps__rel_rq_mark(rq, start + k)->linger_until = 0;
}

/* A NAK from a receiver the repair was for (or after a multicast one) is suppressed while the
 * repair is queued or could not have reached the asker before it sent the NAK; later it is a retry
 * (the repair was lost) and answered, so retries need not wait out a linger sized for other
 * receivers' backoff. */
uint32_t rdps__rel_rq_schedule(struct rdps_rel_repairs *rq, int32_t slot, uint32_t start,
                               uint32_t count, bool overtaken, bool unicast_only, uint64_t now_ns,
                               int64_t *allowance)
{
    uint32_t scheduled = 0, run_start = start, run_count = 0;
    int32_t run_dest = slot;
    uint64_t until = now_ns + rdps__rel_flow_linger(rq->fc);
    const struct rdps_rel_receiver *asker = &rq->rxt->rx[slot];
    for (uint32_t k = 0; k < count; k++) {
        uint32_t seq = start + k;
        struct rdps_rel_mark *m = rdps__rel_rq_mark(rq, seq);
        int32_t dest = slot;
        /* Queued and not sent yet (sent_ns 0, not forgotten): however long the repair budget
         * makes it wait, a second entry would only send it twice. */
        bool queued = m->sent_ns == 0 && m->linger_until != 0;
        if (m->seq == seq && (queued || now_ns < m->linger_until)) {
            bool answered = m->dest == RDPS_REL_MULTICAST || m->dest == slot;
            /* Overtaken: a repair the asker requested later reached it first, so this one
             * (already sent) was lost; a NAK crossing the repair cannot say that. */
            bool crossing =
                !overtaken && now_ns < m->sent_ns + rdps__rel_flow_asker_linger(rq->fc, slot);
            if (answered && (m->sent_ns == 0 || crossing)) {
                rq->c->nak_seqs_suppressed++;
                flush_run(rq, run_start, run_count, run_dest, &scheduled);
                run_count = 0;
                continue;
            }
            /* A second receiver asked within the linger: one multicast repair serves everyone,
             * when discovery announced both, they are on different hosts and both are receiving
             * (ACTIVE: one host's QPNs and receiver ids, anyone unannounced, or receivers that
             * only NAK, cannot fan repairs out to the group). */
            const struct rdps_rel_receiver *first = m->dest >= 0 ? &rq->rxt->rx[m->dest] : NULL;
            if (!answered && asker->announced && first->announced && first->host != asker->host &&
                asker->state == RDPS_REL_RX_ACTIVE && first->state == RDPS_REL_RX_ACTIVE &&
                !unicast_only)
                dest = RDPS_REL_MULTICAST;
        }
        /* Every repair the host's NAKs schedule spends its allowance for this interval. */
        uint32_t len = rdps__pub_ring_find(rq->ring, seq)->len;
        if (*allowance < (int64_t)len) {
            rq->c->nak_host_limited += count - k;
            break;
        }
        *allowance -= len;
        m->seq = seq;
        m->dest = dest;
        m->linger_until = until;
        m->sent_ns = 0;
        if (run_count > 0 && dest == run_dest && run_start + run_count == seq) {
            run_count++;
            continue;
        }
        flush_run(rq, run_start, run_count, run_dest, &scheduled);
        run_start = seq;
        run_count = 1;
        run_dest = dest;
    }
    flush_run(rq, run_start, run_count, run_dest, &scheduled);
    return scheduled;
}

/* May a unicast repair to `slot` go past the budget? Each host may draw repair_share_bytes per
 * interval that way, all hosts and multicast repairs together repair_share_total_bytes, so one
 * that holds the window and NAKs what it already has (or forges a victim's address, or many QPNs
 * and receiver ids) gets repairs at that pace, not the device's; past its share its repairs spend
 * the shared budget like any other. Compared with a whole datagram whatever the frame's length, so
 * the answer for a host changes once per interval and its repairs keep their order. */
static bool within_share(struct rdps_rel_repairs *rq, int32_t slot)
{
    int64_t *share = rdps__rel_rxt_share(rq->rxt, slot, rq->tokens_at);
    int64_t full = rq->cfg->max_datagram;
    return *share >= full && rq->share_pool >= full;
}

/* A pass visits each entry once, and a receiver's entries move in queue order, so a lone receiver
 * still gets its repairs in the order it asked (it takes a repair that overtakes an earlier one as
 * that one lost). */
const struct rdps_pub_ring_slot *rdps__rel_rq_next(struct rdps_rel_repairs *rq, bool budgeted,
                                                   uint32_t post, struct rdps_rel_repair **entry,
                                                   bool *shared)
{
    for (uint32_t left = rq->count; left > 0 && rq->count > 0; left--) {
        struct rdps_rel_repair *e = &rq->queue[rq->head];
        bool gone =
            e->dest != RDPS_REL_MULTICAST && rdps__rel_rxt_gone_since(rq->rxt, e->dest, e->gen);
        const struct rdps_pub_ring_slot *s = NULL;
        if (e->parity) {
            /* The block's frames, whole, or its symbols cannot be made. */
            if (!gone && rdps__rel_par_whole(rq->par, e->start, post)) {
                s = &rq->par->slot; /* its len: what the budget is asked for */
            } else {
                rq->c->parity_dropped += e->count - e->sent;
            }
        } else if (!gone) {
            while (e->sent < e->count &&
                   (s = rdps__pub_ring_find(rq->ring, e->start + e->sent)) == NULL) {
                e->sent++; /* fell below the trail since it was scheduled */
                rq->c->repairs_dropped++;
            }
        } else {
            rq->c->repairs_dropped += e->count - e->sent;
            for (uint32_t k = e->sent; k < e->count; k++) { /* no longer queued */
                struct rdps_rel_mark *m = rdps__rel_rq_mark(rq, e->start + k);
                if (m->seq == e->start + k && m->dest == e->dest && m->sent_ns == 0)
                    m->linger_until = 0;
            }
        }
        if (s == NULL) {
            rdps__rel_rq_pop(rq);
            continue;
        }
        /* Every repair spends what data earned: repair volume follows what is sent. */
        if (!rdps__rel_earned_covers(&rq->earned, s->len, rq->c))
            return NULL;
        if (budgeted) {
            if (rq->tokens < (int64_t)s->len)
                return NULL;
            *shared = true;
        } else if (e->dest == RDPS_REL_MULTICAST) {
            /* Multicast repairs reach every subscriber: charged like any other. */
            *shared = rq->share_pool < (int64_t)rq->cfg->max_datagram;
            if (*shared && rq->tokens < (int64_t)s->len)
                return NULL; /* the pool and the budget are spent: every repair waits */
        } else {
            *shared = !within_share(rq, e->dest);
            if (*shared && rq->tokens < (int64_t)rq->cfg->max_datagram) {
                /* The tail slot is free (or, in a full queue, the head itself). */
                rq->queue[(rq->head + rq->count) % rq->cfg->max_repairs] = *e;
                rq->head = (rq->head + 1) % rq->cfg->max_repairs;
                continue;
            }
        }
        *entry = e;
        return s;
    }
    return NULL;
}

/* When the head entry's host had the last repair, the first unicast entry of another host that is
 * its destination's first (a receiver's repairs keep their order) moves to the head, the entries
 * before it one place back. So a host that asks for a lot (forgers draining the allowance) does
 * not hold the queue for its whole runs. A multicast repair serves every host: it takes no turn. */
void rdps__rel_rq_rotate_turn(struct rdps_rel_repairs *rq)
{
    const struct rdps_rel_repair *head = &rq->queue[rq->head];
    if (rq->count < 2 || head->dest == RDPS_REL_MULTICAST ||
        rdps__rel_rq_host(rq, head) != rq->earned.last_host)
        return;
    uint32_t cap = rq->cfg->max_repairs;
    for (uint32_t k = 1; k < rq->count; k++) {
        const struct rdps_rel_repair *o = &rq->queue[(rq->head + k) % cap];
        if (o->dest == RDPS_REL_MULTICAST || rdps__rel_rq_host(rq, o) == rq->earned.last_host)
            continue;
        bool first_of_dest = true;
        for (uint32_t j = 0; j < k && first_of_dest; j++)
            first_of_dest = rq->queue[(rq->head + j) % cap].dest != o->dest;
        if (!first_of_dest)
            continue;
        struct rdps_rel_repair moved = *o;
        for (uint32_t j = k; j > 0; j--)
            rq->queue[(rq->head + j) % cap] = rq->queue[(rq->head + j - 1) % cap];
        rq->queue[rq->head] = moved;
        return;
    }
}
