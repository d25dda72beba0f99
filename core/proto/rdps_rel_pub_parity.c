/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_pub_parity.c - the reliable publisher's parity repairs: per-block rounds answering
 * parity NAKs, parity datagrams encoded from the ring (model: rdps_rel_pub_parity.h). */
#include "rdps_rel_pub_parity.h"

#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"
#include "rdps_fec.h"

int rdps__rel_par_init(struct rdps_rel_pub_parity *par, const struct rdps_rel_pub_config *cfg,
                       struct rdps_rel_pub_counters *c, const struct rdps_pub_ring *ring,
                       const struct rdps_rel_flowctl *fc)
{
    par->cfg = cfg;
    par->c = c;
    par->ring = ring;
    par->fc = fc;
    uint32_t k = cfg->parity_k;
    if (k == 0)
        return 0;
    uint32_t slots = par->ring->slot_mask + 1u;
    /* A datagram's symbol: the DATA frame from its seq on, at most max_datagram less the
     * parity overhead less the 16 bytes before seq; its parity datagram is max_datagram. */
    uint32_t max_source =
        par->cfg->max_datagram - RDPS_FRAME_PARITY_OVERHEAD - RDPS_FRAME_SYMBOL_OFF;
    par->fec = malloc(sizeof(*par->fec));
    par->blocks = calloc(slots / k, sizeof(*par->blocks));
    par->buf = malloc(par->cfg->max_datagram);
    if (par->fec == NULL || par->blocks == NULL || par->buf == NULL)
        return rdps__set_err(RDPS_ENOMEM, "rel_pub_init: out of memory");
    int rc = rdps__fec_init(par->fec, k, par->cfg->parity_max, max_source);
    if (rc < 0)
        return rc;
    par->block_mask = slots / k - 1u;
    par->len = RDPS_FRAME_HEADER_LEN + par->fec->symbol_len;
    par->slot.len = par->len;
    return 0;
}

void rdps__rel_par_fini(struct rdps_rel_pub_parity *par)
{
    free(par->fec);
    free(par->blocks);
    free(par->buf);
    par->fec = NULL;
    par->blocks = NULL;
    par->buf = NULL;
}

static struct rdps_rel_block *block_of(const struct rdps_rel_pub_parity *par, uint32_t start)
{
    return &par->blocks[(start / par->cfg->parity_k) & par->block_mask];
}

uint32_t rdps__rel_par_nak(struct rdps_rel_pub_parity *par, int32_t slot, int32_t to,
                           struct rdps_seq_range rg, bool overtaken, uint32_t post, uint64_t now_ns,
                           int64_t *allowance, int32_t *dest, bool *unrecoverable)
{
    uint32_t k = par->cfg->parity_k;
    *unrecoverable = false;
    par->c->parity_nak_ranges++;
    if (k == 0 || (rg.start & (k - 1)) != 0 || rg.count == 0 || rg.count > k) {
        par->c->parity_nak_refused++;
        return 0;
    }
    if (rdps__seq_lt(rg.start, par->ring->trail_seq)) {
        *unrecoverable = true; /* its first datagrams are gone: no parity can be made */
        return 0;
    }
    if (!rdps__rel_par_whole(par, rg.start, post)) {
        par->c->parity_nak_refused++; /* not wholly posted: the receiver asks by sequence */
        return 0;
    }
    struct rdps_rel_block *b = block_of(par, rg.start);
    if (!b->used || b->start != rg.start) {
        memset(b, 0, sizeof(*b));
        b->used = true;
        b->start = rg.start;
        b->dest = slot;
    }
    bool answered = b->dest == RDPS_REL_MULTICAST || b->dest == slot;
    bool idle = b->sent == b->target; /* the round's symbols have all gone */
    /* The asker counts what it lacks with what it holds: a NAK that cannot have crossed the
     * round's last symbol counts beyond what was sent (a new round); one that may have crossed
     * it counts from the round's start (the largest count of the round is sent). */
    bool crossing =
        b->sent_ns != 0 && now_ns < b->sent_ns + rdps__rel_flow_asker_linger(par->fc, slot);
    if (!answered || (idle && (overtaken || !crossing))) {
        b->base = b->target; /* a new round: new indices */
        b->dest = to;
    } else if (to == RDPS_REL_MULTICAST && b->dest != RDPS_REL_MULTICAST) {
        b->dest = RDPS_REL_MULTICAST; /* later symbols of the round reach everyone */
    }
    uint32_t want = rg.count > par->cfg->parity_max ? par->cfg->parity_max : rg.count;
    if (b->base + want <= b->target) {
        par->c->parity_nak_suppressed++;
        return 0;
    }
    uint32_t n = b->base + want - b->target;
    int64_t affordable = *allowance / (int64_t)par->len;
    if ((int64_t)n > affordable) {
        par->c->nak_host_limited += n - (uint32_t)affordable;
        n = (uint32_t)affordable;
    }
    *allowance -= (int64_t)n * par->len;
    b->target += n;
    *dest = b->dest;
    return n;
}

uint32_t rdps__rel_par_proactive(struct rdps_rel_pub_parity *par, uint32_t start)
{
    struct rdps_rel_block *b = block_of(par, start);
    uint32_t n = par->cfg->parity_proactive;
    memset(b, 0, sizeof(*b));
    b->used = true;
    b->start = start;
    b->dest = RDPS_REL_MULTICAST;
    b->target = n; /* a round of n from index 0: a NAK past it starts the next round */
    b->proactive = n;
    return n;
}

void rdps__rel_par_unqueue(struct rdps_rel_pub_parity *par, uint32_t start, uint32_t n)
{
    struct rdps_rel_block *b = block_of(par, start);
    if (b->used && b->start == start && b->target - b->sent >= n) {
        b->target -= n;
        if (b->proactive > b->target)
            b->proactive = b->target;
    }
}

void rdps__rel_par_action(struct rdps_rel_pub_parity *par, uint32_t start, uint64_t now_ns,
                          uint64_t wall_ns, struct rdps_rel_pub_action *a)
{
    uint32_t k = par->cfg->parity_k;
    struct rdps_rel_block *b = block_of(par, start);
    if (!b->used || b->start != start) { /* reused by a later block: its round is lost */
        memset(b, 0, sizeof(*b));
        b->used = true;
        b->start = start;
        b->dest = RDPS_REL_MULTICAST;
    }
    const uint8_t *frames[RDPS_FEC_MAX_K];
    uint32_t lens[RDPS_FEC_MAX_K];
    for (uint32_t i = 0; i < k; i++) {
        const struct rdps_pub_ring_slot *s = rdps__pub_ring_find(par->ring, start + i);
        frames[i] = par->ring->mem + s->pos % par->ring->cap + RDPS_FRAME_SYMBOL_OFF;
        lens[i] = s->len - RDPS_FRAME_SYMBOL_OFF;
    }
    if (b->sent < b->proactive)
        par->c->parity_proactive++;
    uint32_t j = b->sent++ % par->cfg->parity_max;
    if (b->sent > b->target)
        b->target = b->sent;
    /* Cannot fail: the block is whole (the caller checked), every source within max_frame (the
     * fragmenter kept DATA frames under the overhead), j below parity_max. */
    (void)rdps__fec_encode(par->fec, frames, lens, j, par->buf + RDPS_FRAME_HEADER_LEN);
    (void)rdps__frame_put_parity_header(par->buf, par->cfg->session_id, par->cfg->topic_id, start,
                                        k, j, wall_ns);
    b->sent_ns = now_ns;
    a->kind = RDPS_REL_PUB_POST_PARITY;
    a->unicast = false;
    a->in_ring = false;
    a->seq = start;
    a->len = par->len;
    a->ring_offset = 0;
    a->frame = par->buf;
}
