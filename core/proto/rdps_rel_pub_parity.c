/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_pub_parity.c - the reliable publisher's parity repairs: per-block rounds answering
 * parity NAKs, parity datagrams encoded from the ring (rdps_rel_pub.h, Parity). */
#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"
#include "rdps_fec.h"
#include "rdps_rel_pub_internal.h"
#include "rdps_seq.h"

int rdps__rel_parity_init(struct rdps_rel_pub *p)
{
    uint32_t k = p->cfg.parity_k;
    if (k == 0)
        return 0;
    uint32_t slots = p->ring.slot_mask + 1u;
    /* A datagram's symbol: the DATA frame from its seq on, at most max_datagram less the
     * parity overhead less the 16 bytes before seq; its parity datagram is max_datagram. */
    uint32_t max_source = p->cfg.max_datagram - RDPS_FRAME_PARITY_OVERHEAD - RDPS_FRAME_SYMBOL_OFF;
    p->fec = malloc(sizeof(*p->fec));
    p->blocks = calloc(slots / k, sizeof(*p->blocks));
    p->parity_buf = malloc(p->cfg.max_datagram);
    if (p->fec == NULL || p->blocks == NULL || p->parity_buf == NULL)
        return rdps__set_err(RDPS_ENOMEM, "rel_pub_init: out of memory");
    int rc = rdps__fec_init(p->fec, k, p->cfg.parity_max, max_source);
    if (rc < 0)
        return rc;
    p->block_mask = slots / k - 1u;
    p->parity_len = RDPS_FRAME_HEADER_LEN + p->fec->symbol_len;
    p->parity_slot.len = p->parity_len;
    return 0;
}

void rdps__rel_parity_fini(struct rdps_rel_pub *p)
{
    free(p->fec);
    free(p->blocks);
    free(p->parity_buf);
    p->fec = NULL;
    p->blocks = NULL;
    p->parity_buf = NULL;
}

static struct rdps_rel_block *block_of(const struct rdps_rel_pub *p, uint32_t start)
{
    return &p->blocks[(start / p->cfg.parity_k) & p->block_mask];
}

bool rdps__rel_parity_whole(const struct rdps_rel_pub *p, uint32_t start)
{
    return rdps__seq_ge(start, p->ring.trail_seq) && p->post_seq - start >= p->cfg.parity_k &&
           rdps__seq_lt(start, p->post_seq);
}

uint32_t rdps__rel_parity_nak(struct rdps_rel_pub *p, int32_t slot, struct rdps_seq_range rg,
                              bool overtaken, uint64_t now_ns, int64_t *allowance, int32_t *dest,
                              bool *unrecoverable)
{
    uint32_t k = p->cfg.parity_k;
    *unrecoverable = false;
    p->counters.parity_nak_ranges++;
    if (k == 0 || (rg.start & (k - 1)) != 0 || rg.count == 0 || rg.count > k) {
        p->counters.parity_nak_refused++;
        return 0;
    }
    if (rdps__seq_lt(rg.start, p->ring.trail_seq)) {
        *unrecoverable = true; /* its first datagrams are gone: no parity can be made */
        return 0;
    }
    if (!rdps__rel_parity_whole(p, rg.start)) {
        p->counters.parity_nak_refused++; /* not wholly posted: the receiver asks by sequence */
        return 0;
    }
    const struct rdps_rel_receiver *asker = &p->rx[slot];
    struct rdps_rel_block *b = block_of(p, rg.start);
    if (!b->used || b->start != rg.start) {
        memset(b, 0, sizeof(*b));
        b->used = true;
        b->start = rg.start;
        b->dest = slot;
    }
    /* By multicast only to an announced asker that is receiving (ACTIVE: it reports progress). */
    int32_t to = asker->announced && asker->state == RDPS_REL_RX_ACTIVE && !p->repairs_unicast_only
                     ? REL_MULTICAST
                     : slot;
    bool answered = b->dest == REL_MULTICAST || b->dest == slot;
    bool idle = b->sent == b->target; /* the round's symbols have all gone */
    /* The asker counts what it lacks with what it holds: a NAK that cannot have crossed the
     * round's last symbol counts beyond what was sent (a new round); one that may have crossed
     * it counts from the round's start (the largest count of the round is sent). */
    bool crossing = b->sent_ns != 0 && now_ns < b->sent_ns + asker_linger(p, slot);
    if (!answered || (idle && (overtaken || !crossing))) {
        b->base = b->target; /* a new round: new indices */
        b->dest = to;
    } else if (to == REL_MULTICAST && b->dest != REL_MULTICAST) {
        b->dest = REL_MULTICAST; /* later symbols of the round reach everyone */
    }
    uint32_t want = rg.count > p->cfg.parity_max ? p->cfg.parity_max : rg.count;
    if (b->base + want <= b->target) {
        p->counters.parity_nak_suppressed++;
        return 0;
    }
    uint32_t n = b->base + want - b->target;
    int64_t affordable = *allowance / (int64_t)p->parity_len;
    if ((int64_t)n > affordable) {
        p->counters.nak_host_limited += n - (uint32_t)affordable;
        n = (uint32_t)affordable;
    }
    *allowance -= (int64_t)n * p->parity_len;
    b->target += n;
    *dest = b->dest;
    return n;
}

uint32_t rdps__rel_parity_proactive(struct rdps_rel_pub *p, uint32_t start)
{
    struct rdps_rel_block *b = block_of(p, start);
    uint32_t n = p->cfg.parity_proactive;
    memset(b, 0, sizeof(*b));
    b->used = true;
    b->start = start;
    b->dest = REL_MULTICAST;
    b->target = n; /* a round of n from index 0: a NAK past it starts the next round */
    b->proactive = n;
    return n;
}

void rdps__rel_parity_unqueue(struct rdps_rel_pub *p, uint32_t start, uint32_t n)
{
    struct rdps_rel_block *b = block_of(p, start);
    if (b->used && b->start == start && b->target - b->sent >= n) {
        b->target -= n;
        if (b->proactive > b->target)
            b->proactive = b->target;
    }
}

void rdps__rel_parity_action(struct rdps_rel_pub *p, uint32_t start, uint64_t now_ns,
                             uint64_t wall_ns, struct rdps_rel_pub_action *a)
{
    uint32_t k = p->cfg.parity_k;
    struct rdps_rel_block *b = block_of(p, start);
    if (!b->used || b->start != start) { /* reused by a later block: its round is lost */
        memset(b, 0, sizeof(*b));
        b->used = true;
        b->start = start;
        b->dest = REL_MULTICAST;
    }
    const uint8_t *frames[RDPS_FEC_MAX_K];
    uint32_t lens[RDPS_FEC_MAX_K];
    for (uint32_t i = 0; i < k; i++) {
        const struct rdps_pub_ring_slot *s = rdps__pub_ring_find(&p->ring, start + i);
        frames[i] = p->ring.mem + s->pos % p->ring.cap + RDPS_FRAME_SYMBOL_OFF;
        lens[i] = s->len - RDPS_FRAME_SYMBOL_OFF;
    }
    if (b->sent < b->proactive)
        p->counters.parity_proactive++;
    uint32_t j = b->sent++ % p->cfg.parity_max;
    if (b->sent > b->target)
        b->target = b->sent;
    /* Cannot fail: the block is whole (the caller checked), every source within max_frame (the
     * fragmenter kept DATA frames under the overhead), j below parity_max. */
    (void)rdps__fec_encode(p->fec, frames, lens, j, p->parity_buf + RDPS_FRAME_HEADER_LEN);
    (void)rdps__frame_put_parity_header(p->parity_buf, p->cfg.session_id, p->cfg.topic_id, start, k,
                                        j, wall_ns);
    b->sent_ns = now_ns;
    a->kind = RDPS_REL_PUB_POST_PARITY;
    a->unicast = false;
    a->in_ring = false;
    a->seq = start;
    a->len = p->parity_len;
    a->ring_offset = 0;
    a->frame = p->parity_buf;
}
