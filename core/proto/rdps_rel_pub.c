/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_pub.c - reliable publisher engine: composes its layers (model: rdps_rel_pub.h) into
 * init, NAK and STATUS intake, what goes next and its timers. */
#include "rdps_rel_pub.h"

#include <string.h>

#include <rdps/rdps.h>

#include "rdps_endian.h"
#include "rdps_error.h"
#include "rdps_reasm.h"
#include "rdps_seq.h"

_Static_assert(RDPS_REL_CREDITS_MAX < RDPS_REASM_WINDOW, "the receivers' credits fit their window");

void rdps__rel_pub_config_default(struct rdps_rel_pub_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->max_datagram = 1024;
    cfg->max_msg_len = RDPS_FRAME_DEFAULT_MAX_MSG_LEN;
    cfg->ring_bytes = RDPS_REL_PUB_DEFAULT_RING;
    cfg->max_inflight = 1024;
    cfg->flow = RDPS_REL_FLOW_MAX;
    cfg->max_receivers = 256;
    /* A host runs a few subscriber processes (one receiver id each); one forging host fills no
     * more than an eighth of the table, whatever QPNs and ids it uses. */
    cfg->max_receivers_per_host = 32;
    cfg->max_receivers_per_source = 4;
    cfg->receiver_timeout_ns = 5000000000ull;
    cfg->unannounced_timeout_ns = 1000000000ull;
    cfg->connect_timeout_ns = 1000000000ull;
    cfg->connect_hold_max_ns = 1000000000ull;
    cfg->stall_evict_ns = 2000000000ull;
    cfg->repair_linger_ns = 2000000ull;
    cfg->repair_linger_min_ns = 25000ull;
    cfg->repair_budget_bytes = 256u * 1024u;
    cfg->repair_interval_ns = 1000000ull;
    cfg->repair_share_bytes = 256u * 1024u;
    cfg->repair_share_total_bytes = 1024u * 1024u;
    cfg->data_per_repair = 3;
    /* Eight receivers at 20 % loss NAK single sequences: 64 entries overflowed, and each refused
     * NAK waited for its retry (a simulated 10 Gb/s fabric: 0.04 of line rate). 80 KiB. */
    cfg->max_repairs = 4096;
    cfg->max_frames_per_nak = 1024;
    /* A NAK of an unannounced receiver draws at most 16 datagrams (a forged 48-byte NAK: 16 KiB);
     * a host's NAKs at most the budget and a share per interval, 16 KiB while none of its
     * receivers is announced. */
    cfg->unannounced_nak_frames = 16;
    cfg->host_nak_bytes = 512u * 1024u;
    cfg->unannounced_host_bytes = 16u * 1024u;
    cfg->heartbeat_min_ns = 100000ull;
    cfg->heartbeat_max_ns = 100000000ull;
    /* Repairs at most twice the data over time: eight receivers at 20 % loss asking each its
     * own sequences by unicast draw 1.6 times the data, repairs of lost repairs included ~2. */
    cfg->repair_per_data_permille = 2000;
    cfg->parity_k = 0;                             /* no parity unless asked */
    cfg->parity_max = RDPS_FRAME_PARITY_MAX_INDEX; /* every row GF(2^8) has for k <= 128 */
}

static int check_config(const struct rdps_rel_pub_config *c)
{
    if (c->session_id == 0 || c->topic_id == 0)
        return rdps__set_err(RDPS_EINVAL, "rel_pub_init: zero session or topic id");
    if (c->max_datagram <= RDPS_FRAME_HEADER_LEN || c->max_datagram > 65536)
        return rdps__set_err(RDPS_EINVAL, "rel_pub_init: max_datagram %u out of range",
                             c->max_datagram);
    if (c->ring_mem == NULL || c->ring_bytes < 2u * c->max_datagram)
        return rdps__set_err(RDPS_EINVAL,
                             "rel_pub_init: ring of %zu bytes (need memory and two "
                             "datagrams)",
                             c->ring_bytes);
    if (c->flow > RDPS_REL_FLOW_TAGGED || (c->flow == RDPS_REL_FLOW_TAGGED && c->flow_tag == 0))
        return rdps__set_err(RDPS_EINVAL, "rel_pub_init: bad flow mode or zero flow_tag");
    if (c->max_receivers == 0 || c->max_receivers > (1u << 20) || c->max_repairs == 0 ||
        c->max_repairs > (1u << 20) || c->max_frames_per_nak == 0 ||
        c->unannounced_nak_frames == 0 || c->max_receivers_per_host == 0 ||
        c->max_receivers_per_source == 0)
        return rdps__set_err(RDPS_EINVAL, "rel_pub_init: zero or huge table size");
    if (c->host_nak_bytes < c->max_datagram || c->unannounced_host_bytes < c->max_datagram)
        return rdps__set_err(RDPS_EINVAL,
                             "rel_pub_init: a host's NAK allowance below one datagram");
    if (c->repair_budget_bytes < c->max_datagram || c->repair_share_bytes < c->max_datagram ||
        c->repair_share_total_bytes < c->repair_share_bytes || c->repair_interval_ns == 0 ||
        c->data_per_repair == 0)
        return rdps__set_err(RDPS_EINVAL,
                             "rel_pub_init: repair budget or share below one datagram, shares' "
                             "total below one share, zero interval or zero data_per_repair");
    if (c->rate_bytes_per_s != 0 &&
        (c->rate_bytes_per_s < c->max_datagram || c->rate_bytes_per_s > RDPS_REL_RATE_MAX))
        return rdps__set_err(RDPS_EINVAL,
                             "rel_pub_init: rate limit %llu bytes/s outside one datagram per "
                             "second..%llu",
                             (unsigned long long)c->rate_bytes_per_s, RDPS_REL_RATE_MAX);
    if (c->parity_k != 0 &&
        (c->parity_k < 2 || c->parity_k > RDPS_FRAME_PARITY_MAX_K ||
         (c->parity_k & (c->parity_k - 1)) != 0 || c->parity_max < 1 ||
         c->parity_max > RDPS_FRAME_PARITY_MAX_INDEX ||
         c->max_datagram < RDPS_FRAME_PARITY_MIN_BODY + RDPS_FRAME_PARITY_OVERHEAD +
                               RDPS_FRAME_SYMBOL_OFF + RDPS_FRAME_HEADER_LEN ||
         c->max_datagram - RDPS_FRAME_PARITY_OVERHEAD - RDPS_FRAME_SYMBOL_OFF > 0xFFFFu ||
         c->parity_proactive > c->parity_k || c->parity_proactive > c->parity_max))
        return rdps__set_err(RDPS_EINVAL,
                             "rel_pub_init: parity blocks of %u (a power of two, 2..%u), %u parity "
                             "symbols (1..%u), %u proactive (at most both), datagrams of %u bytes",
                             c->parity_k, RDPS_FRAME_PARITY_MAX_K, c->parity_max,
                             RDPS_FRAME_PARITY_MAX_INDEX, c->parity_proactive, c->max_datagram);
    if (c->parity_k == 0 && c->parity_proactive != 0)
        return rdps__set_err(RDPS_EINVAL, "rel_pub_init: parity_proactive without parity_k");
    if (c->repair_per_data_permille == 0 || c->repair_per_data_permille > 1000000u)
        return rdps__set_err(RDPS_EINVAL,
                             "rel_pub_init: repairs per data %u permille outside 1..1000000",
                             c->repair_per_data_permille);
    if (c->heartbeat_min_ns == 0 || c->heartbeat_max_ns < c->heartbeat_min_ns ||
        c->receiver_timeout_ns == 0 || c->unannounced_timeout_ns == 0 || c->repair_linger_ns == 0)
        return rdps__set_err(RDPS_EINVAL, "rel_pub_init: zero heartbeat, timeout or linger");
    return 0;
}

int rdps__rel_pub_init(struct rdps_rel_pub *p, const struct rdps_rel_pub_config *cfg)
{
    int rc;
    memset(p, 0, sizeof(*p));
    if ((rc = check_config(cfg)) < 0)
        return rc;
    p->cfg = *cfg;
    cfg = &p->cfg;
    if ((rc = rdps__rel_adm_init(&p->adm, cfg, &p->counters, &p->fc, &p->hb)) < 0)
        return rc;
    if (cfg->parity_k != 0 && cfg->parity_k * 4u > p->adm.ring.slot_mask + 1u) {
        rdps__rel_adm_fini(&p->adm);
        return rdps__set_err(RDPS_EINVAL,
                             "rel_pub_init: parity blocks of %u above a quarter "
                             "of the ring's %u slots",
                             cfg->parity_k, p->adm.ring.slot_mask + 1u);
    }
    /* Lowest first: each layer is given the ones below it. */
    const struct rdps_pub_ring *ring = &p->adm.ring;
    rc = rdps__rel_rxt_init(&p->rxt, cfg, &p->counters, ring, &p->hb);
    rdps__rel_flow_init(&p->fc, cfg, &p->counters, &p->rxt, ring);
    if (rc < 0 ||
        rdps__rel_rq_init(&p->rq, cfg, &p->counters, ring, &p->rxt, &p->fc, &p->par) < 0) {
        rdps__rel_pub_fini(p);
        return rdps__set_err(RDPS_ENOMEM, "rel_pub_init: out of memory");
    }
    if ((rc = rdps__rel_par_init(&p->par, cfg, &p->counters, ring, &p->fc)) < 0) {
        rdps__rel_pub_fini(p);
        return rc;
    }
    /* The first heartbeat goes at once: receivers learn the session (with parity: and k, ahead of
     * data). */
    rdps__rel_beat_init(&p->hb, p->fc.hb_min, cfg->parity_k != 0);
    return 0;
}

void rdps__rel_pub_fini(struct rdps_rel_pub *p)
{
    rdps__rel_adm_fini(&p->adm);
    rdps__rel_rxt_fini(&p->rxt);
    rdps__rel_par_fini(&p->par);
    rdps__rel_rq_fini(&p->rq);
    memset(p, 0, sizeof(*p));
}

/* ---- admission ---- */

void rdps__rel_pub_set_fanout(struct rdps_rel_pub *p, bool unicast_only)
{
    p->repairs_unicast_only = unicast_only;
}

/* ---- receivers ---- */

int rdps__rel_pub_on_status(struct rdps_rel_pub *p, const struct rdps_source *source,
                            const struct rdps_rel_status *st, uint64_t now_ns, uint64_t wall_ns)
{
    (void)wall_ns; /* RTT comes from the monotonic departure of the echoed heartbeat */
    bool fresh = rdps__rel_rxt_find(&p->rxt, source, st->receiver_id) < 0;
    int rc = rdps__rel_rxt_on_status(&p->rxt, source, st, p->adm.post_seq, now_ns);
    if (fresh && rdps__rel_rxt_find(&p->rxt, source, st->receiver_id) >= 0)
        rdps__rel_beat_announce(&p->hb, now_ns, p->fc.hb_min); /* why: rdps_rel_pub.h */
    return rc;
}

int rdps__rel_pub_receiver_tag(struct rdps_rel_pub *p, const struct rdps_source *source,
                               uint32_t receiver_id, uint32_t tag, uint64_t now_ns)
{
    return rdps__rel_rxt_tag(&p->rxt, source, receiver_id, tag, p->adm.post_seq, now_ns);
}

int rdps__rel_pub_expect_receiver(struct rdps_rel_pub *p, const struct rdps_source *source,
                                  uint32_t receiver_id, uint32_t tag, uint64_t now_ns)
{
    int rc = rdps__rel_rxt_expect(&p->rxt, source, receiver_id, tag, p->adm.post_seq, now_ns);
    if (rc <= 0)
        return rc;
    rdps__rel_beat_announce(&p->hb, now_ns, p->fc.hb_min);
    return 0;
}

int rdps__rel_pub_receiver_gone(struct rdps_rel_pub *p, const struct rdps_source *source,
                                uint32_t receiver_id, bool expired)
{
    return rdps__rel_rxt_gone(&p->rxt, source, receiver_id, expired);
}

uint32_t rdps__rel_pub_receivers_behind(const struct rdps_rel_pub *p)
{
    return rdps__rel_rxt_behind(&p->rxt);
}

uint32_t rdps__rel_pub_receiver_count(const struct rdps_rel_pub *p)
{
    return p->rxt.rx_count;
}

int rdps__rel_pub_receiver_info(const struct rdps_rel_pub *p, const struct rdps_source *source,
                                uint32_t receiver_id, struct rdps_rel_pub_receiver_info *info)
{
    return rdps__rel_rxt_info(&p->rxt, source, receiver_id, info);
}

/* ---- NAK ---- */

int rdps__rel_pub_on_nak(struct rdps_rel_pub *p, const struct rdps_source *source,
                         const struct rdps_frame_view *v, uint64_t now_ns)
{
    if (v->hdr.type != RDPS_FRAME_NAK || v->hdr.session_id != p->cfg.session_id ||
        v->hdr.topic_id != p->cfg.topic_id) {
        p->counters.foreign_frames++;
        return 0;
    }
    p->counters.naks_received++;
    int32_t slot = rdps__rel_rxt_get(&p->rxt, source, v->receiver_id, false, now_ns);
    if (slot < 0)
        return 0;
    const struct rdps_rel_receiver *r = rdps__rel_rxt_heard(&p->rxt, slot, now_ns);
    bool overtaken = (v->hdr.flags & RDPS_FRAME_F_RETRANSMIT) != 0;
    if (overtaken)
        p->counters.naks_overtaken++;
    rdps__rel_flow_fresh(&p->fc); /* the receiver count and linger */
    rdps__rel_rq_refill(&p->rq, now_ns);
    int64_t *allowance = rdps__rel_rxt_nak_allowance(&p->rxt, slot, p->rq.tokens_at);
    uint32_t budget = p->cfg.max_frames_per_nak;
    if (!r->announced && budget > p->cfg.unannounced_nak_frames)
        budget = p->cfg.unannounced_nak_frames;
    uint32_t trail = p->adm.ring.trail_seq, post = p->adm.post_seq;
    /* Parity to an announced asker that is receiving (ACTIVE: it reports progress) reaches every
     * receiver of the group. */
    int32_t parity_to = r->announced && r->state == RDPS_REL_RX_ACTIVE && !p->repairs_unicast_only
                            ? RDPS_REL_MULTICAST
                            : slot;
    for (unsigned i = 0; i < v->nak_range_count; i++) {
        struct rdps_seq_range rg = rdps__frame_nak_range(v, i);
        uint32_t start = rg.start, count = rg.count;
        p->counters.nak_ranges++;
        if (v->hdr.flags & RDPS_FRAME_F_PARITY) {
            int32_t dest = slot;
            bool gone = false;
            uint32_t n = budget == 0 ? 0
                                     : rdps__rel_par_nak(&p->par, slot, parity_to, rg, overtaken,
                                                         post, now_ns, allowance, &dest, &gone);
            if (gone) {
                p->counters.nak_ranges_unrecoverable++;
                rdps__rel_rxt_owe(&p->rxt, slot, now_ns);
            } else if (n > 0 && rdps__rel_rq_queue(&p->rq, rg.start, n, dest, true)) {
                budget = n < budget ? budget - n : 0;
                p->counters.nak_ranges_answered++;
            } else if (n > 0) {
                p->counters.repair_queue_full += n;
                rdps__rel_par_unqueue(&p->par, rg.start, n);
            }
            continue;
        }
        if (count == 0 || count > RDPS_FRAME_NAK_MAX_RANGE_COUNT)
            continue; /* the decoder refuses these; a caller passing a raw view gets nothing */
        if (rdps__seq_lt(start, trail)) {
            uint32_t below = trail - start;
            p->counters.nak_ranges_unrecoverable++;
            rdps__rel_rxt_owe(&p->rxt, slot, now_ns);
            if (count <= below)
                continue;
            start = trail;
            count -= below;
        }
        if (rdps__seq_ge(start, post)) {
            p->counters.nak_future++;
            continue;
        }
        if (count > post - start) {
            count = post - start;
            p->counters.nak_future++;
        }
        if (r->reported && rdps__seq_lt(start, r->consumed_seq)) {
            /* It reported having everything before consumed_seq. */
            uint32_t have = r->consumed_seq - start;
            p->counters.nak_stale++;
            if (count <= have)
                continue;
            start = r->consumed_seq;
            count -= have;
        }
        if (budget == 0) {
            p->counters.nak_clipped++;
            continue;
        }
        if (count > budget) {
            count = budget;
            p->counters.nak_clipped++;
        }
        budget -= count;
        if (rdps__rel_rq_schedule(&p->rq, slot, start, count, overtaken, p->repairs_unicast_only,
                                  now_ns, allowance) > 0)
            p->counters.nak_ranges_answered++;
        else
            p->counters.nak_ranges_suppressed++;
    }
    return 0;
}

int rdps__rel_pub_on_frame(struct rdps_rel_pub *p, const struct rdps_source *source,
                           const struct rdps_frame_view *v, uint64_t now_ns, uint64_t wall_ns)
{
    if (v->hdr.type == RDPS_FRAME_NAK)
        return rdps__rel_pub_on_nak(p, source, v, now_ns);
    if (v->hdr.type == RDPS_FRAME_STATUS) {
        struct rdps_rel_status st = {
            .session_id = v->hdr.session_id,
            .topic_id = v->hdr.topic_id,
            .receiver_id = v->receiver_id,
            .consumed_seq = v->consumed_seq,
            .window = v->window,
            .echo_delay_us = v->echo_delay_us,
            .echo_timestamp_ns = v->hdr.timestamp_ns,
        };
        return rdps__rel_pub_on_status(p, source, &st, now_ns, wall_ns);
    }
    p->counters.foreign_frames++;
    return 0;
}

/* ---- actions ---- */

static void fill_dest(const struct rdps_rel_pub *p, struct rdps_rel_pub_action *a, int32_t slot)
{
    const struct rdps_rel_receiver *r = &p->rxt.rx[slot];
    a->unicast = true;
    a->dest = r->source;
    a->receiver_id = r->receiver_id;
    a->receiver_slot = (uint32_t)slot;
    a->receiver_gen = r->gen;
}

static void ring_action(struct rdps_rel_pub *p, struct rdps_rel_pub_action *a,
                        enum rdps_rel_pub_action_kind kind, uint32_t seq,
                        const struct rdps_pub_ring_slot *s)
{
    a->kind = kind;
    a->unicast = false;
    a->in_ring = true;
    a->seq = seq;
    a->len = s->len;
    a->ring_offset = s->pos % p->adm.ring.cap;
    a->frame = p->adm.ring.mem + a->ring_offset;
    rdps__pub_ring_inflight_push(&p->adm.ring, seq);
}

/* The ordinal of the first message of frame seq (in the ring), or of the next one appended. */
static uint32_t ordinal_at(const struct rdps_rel_pub *p, uint32_t seq)
{
    const struct rdps_pub_ring_slot *s = rdps__pub_ring_find(&p->adm.ring, seq);
    if (s == NULL)
        return rdps__rel_adm_next_ordinal(&p->adm);
    return rdps__get_le32(rdps__pub_ring_frame(&p->adm.ring, s) + RDPS_FRAME_OFF_ORDINAL);
}

/* The trail's ordinal for heartbeats: the first message the ring holds whole (past the one the
 * trail frame continues, whose start the ring dropped). */
static uint32_t trail_ordinal(const struct rdps_rel_pub *p)
{
    uint32_t trail = p->adm.ring.trail_seq;
    const struct rdps_pub_ring_slot *s = rdps__pub_ring_find(&p->adm.ring, trail);
    if (s == NULL)
        return rdps__rel_adm_next_ordinal(&p->adm);
    const uint8_t *frame = rdps__pub_ring_frame(&p->adm.ring, s);
    uint32_t ord = rdps__get_le32(frame + RDPS_FRAME_OFF_ORDINAL);
    return (rdps__get_le16(frame + RDPS_FRAME_OFF_FLAGS) & RDPS_FRAME_F_BEGIN) ? ord : ord + 1u;
}

static void heartbeat_action(struct rdps_rel_pub *p, struct rdps_rel_pub_action *a, uint64_t now_ns,
                             uint64_t wall_ns)
{
    rdps__rel_beat_sent(&p->hb, now_ns, wall_ns);
    /* Cannot fail: the buffer holds a header and retained <= ring slots <= 2^30. */
    int len;
    if (p->cfg.parity_k != 0) {
        rdps__rel_flow_fresh(&p->fc);
        uint64_t rtt_us = p->fc.rtt_max / 1000u;
        len = rdps__frame_encode_heartbeat_parity(
            p->hb_buf, sizeof(p->hb_buf), p->cfg.session_id, p->cfg.topic_id, p->adm.post_seq,
            rdps__rel_pub_retained(p), ordinal_at(p, p->adm.post_seq), trail_ordinal(p), wall_ns,
            p->cfg.parity_k, rtt_us > UINT32_MAX ? UINT32_MAX : (uint32_t)rtt_us, p->fc.members);
    } else {
        len = rdps__frame_encode_heartbeat_reliable(
            p->hb_buf, sizeof(p->hb_buf), p->cfg.session_id, p->cfg.topic_id, p->adm.post_seq,
            rdps__rel_pub_retained(p), ordinal_at(p, p->adm.post_seq), trail_ordinal(p), wall_ns);
    }
    a->kind = RDPS_REL_PUB_POST_HEARTBEAT;
    a->unicast = false;
    a->in_ring = false;
    a->seq = p->adm.post_seq;
    a->len = (uint32_t)len;
    a->ring_offset = 0;
    a->frame = p->hb_buf;
}

/* Data frame seq went with parity on (kept out of post_data: its registers cost every post). */
__attribute__((noinline)) static void parity_posted(struct rdps_rel_pub *p, uint32_t seq)
{
    /* Receivers learn k from heartbeats, which a busy publisher does not send; one goes after
     * every RDPS_REL_PARITY_HB_BLOCKS blocks of data. */
    if (((seq + 1u) & (p->cfg.parity_k * RDPS_REL_PARITY_HB_BLOCKS - 1u)) == 0)
        rdps__rel_beat_urge(&p->hb);
    /* Proactive parity: the block is whole with its last datagram; its symbols follow. Not for
     * a lone receiver: it asks by sequence and is repaired by retransmission, so unasked symbols
     * only cost it their bytes (the simulated fabric: its NAKs did not fall, its goodput fell
     * by the share). */
    if (p->cfg.parity_proactive != 0 && ((seq + 1u) & (p->cfg.parity_k - 1u)) == 0 &&
        rdps__rel_flow_members(&p->fc) > 1) {
        uint32_t start = seq + 1u - p->cfg.parity_k, n = rdps__rel_par_proactive(&p->par, start);
        if (!rdps__rel_rq_queue(&p->rq, start, n, RDPS_REL_MULTICAST, true)) {
            p->counters.repair_queue_full += n;
            rdps__rel_par_unqueue(&p->par, start, n);
        }
    }
}

static int post_data(struct rdps_rel_pub *p, struct rdps_rel_pub_action *a, uint64_t now_ns)
{
    uint32_t seq = rdps__rel_adm_take_post(&p->adm);
    ring_action(p, a, RDPS_REL_PUB_POST_DATA, seq, &p->adm.ring.slots[seq & p->adm.ring.slot_mask]);
    if (p->cfg.parity_k != 0)
        parity_posted(p, seq);
    rdps__rel_adm_rate_charge(&p->adm, a->len, now_ns);
    p->counters.data_posted++;
    rdps__rel_rq_data_posted(&p->rq, a->len);
    rdps__rel_beat_data(&p->hb, now_ns, p->fc.hb_min);
    return 1;
}

/* Do repairs spend the budget? It keeps them from starving new data. With none waiting because
 * the window or the ring refused it, only repairs can open them: held to the budget, they stalled
 * eight receivers at 20 % loss on a simulated 10 Gb/s fabric (0.04 of line rate). */
static bool repairs_budgeted(struct rdps_rel_pub *p)
{
    if (rdps__rel_adm_unposted(&p->adm))
        return true;
    return !rdps__rel_flow_held(&p->fc);
}

/* The repair entry e (rdps__rel_rq_next gave it, with its ring slot rs) as action *a. */
static int post_repair(struct rdps_rel_pub *p, struct rdps_rel_pub_action *a,
                       struct rdps_rel_repair *e, const struct rdps_pub_ring_slot *rs, bool shared,
                       uint64_t now_ns, uint64_t wall_ns)
{
    if (e->parity) {
        rdps__rel_par_action(&p->par, e->start, now_ns, wall_ns, a);
        if (e->dest != RDPS_REL_MULTICAST)
            fill_dest(p, a, e->dest);
        p->counters.parity_sent++;
        p->counters.parity_bytes += a->len;
    } else {
        uint32_t seq = e->start + e->sent;
        uint8_t *frame = p->adm.ring.mem + rs->pos % p->adm.ring.cap;
        rdps__put_le16(
            frame + RDPS_FRAME_OFF_FLAGS,
            (uint16_t)(rdps__get_le16(frame + RDPS_FRAME_OFF_FLAGS) | RDPS_FRAME_F_RETRANSMIT));
        ring_action(p, a, RDPS_REL_PUB_POST_REPAIR, seq, rs);
        if (e->dest == RDPS_REL_MULTICAST) {
            p->counters.repairs_multicast++;
        } else {
            fill_dest(p, a, e->dest);
            p->counters.repairs_unicast++;
        }
    }
    rdps__rel_rq_sent(&p->rq, e, a->len, shared, now_ns);
    rdps__rel_adm_rate_charge(&p->adm, a->len, now_ns);
    return 1;
}

int rdps__rel_pub_next_action(struct rdps_rel_pub *p, uint64_t now_ns, uint64_t wall_ns,
                              struct rdps_rel_pub_action *a)
{
    bool room = !rdps__pub_ring_inflight_full(&p->adm.ring);
    rdps__rel_adm_linger_due(&p->adm, now_ns);
    rdps__rel_adm_await_due(&p->adm, now_ns);
    /* Fast paths: new data with no repair waiting; nothing due at all. */
    if (rdps__rel_rq_empty(&p->rq) && !rdps__rel_rxt_owed_any(&p->rxt) && !p->hb.urgent) {
        if (rdps__rel_adm_unposted(&p->adm)) {
            if (room && rdps__rel_flow_may_post(&p->fc, p->adm.post_seq) &&
                rdps__rel_adm_data_may_go(&p->adm, now_ns))
                return post_data(p, a, now_ns);
        } else if (now_ns < p->hb.next && !rdps__rel_flow_poke_due(&p->fc, now_ns)) {
            return 0;
        }
    }
    if (p->hb.urgent) {
        /* A receiver was announced: it learns the session and the ring's oldest sequence now,
         * whatever data waits (a busy publisher sends no idle heartbeat). */
        heartbeat_action(p, a, now_ns, wall_ns);
        rdps__rel_beat_urgent_sent(&p->hb, now_ns);
        p->counters.heartbeats++;
        return 1;
    }
    if (room) {
        rdps__rel_rq_refill(&p->rq, now_ns);
        struct rdps_rel_repair *e = NULL;
        bool shared = true;
        rdps__rel_rq_take_turns(&p->rq);
        /* Repairs wait for the rate limit's allowance like new data (ahead of it): they never
         * put the publisher into debt beyond one burst. */
        const struct rdps_pub_ring_slot *rs =
            rdps__rel_adm_rate_allows(&p->adm, now_ns)
                ? rdps__rel_rq_next(&p->rq, repairs_budgeted(p), p->adm.post_seq, &e, &shared)
                : NULL;
        bool data =
            rdps__rel_adm_data_waiting(&p->adm) && rdps__rel_adm_data_may_go(&p->adm, now_ns);
        if (rs != NULL && (!data || rdps__rel_rq_turn(&p->rq)))
            return post_repair(p, a, e, rs, shared, now_ns, wall_ns);
        if (data)
            return post_data(p, a, now_ns);
    }
    int32_t owed = rdps__rel_rxt_take_owed(&p->rxt, now_ns, rdps__rel_flow_linger(&p->fc));
    if (owed >= 0) {
        heartbeat_action(p, a, now_ns, wall_ns);
        fill_dest(p, a, owed);
        p->counters.heartbeats_unrecoverable++;
        return 1;
    }
    int32_t poked = rdps__rel_flow_poke(&p->fc, now_ns);
    if (poked >= 0) { /* its STATUS was lost: a unicast heartbeat asks it again */
        heartbeat_action(p, a, now_ns, wall_ns);
        fill_dest(p, a, poked);
        p->counters.heartbeats_poked++;
        return 1;
    }
    if (now_ns >= p->hb.next && !rdps__rel_adm_rate_paced(&p->adm, now_ns)) {
        heartbeat_action(p, a, now_ns, wall_ns);
        bool awaited = rdps__rel_flow_awaited(&p->fc, p->adm.post_seq);
        rdps__rel_beat_backoff(&p->hb, now_ns, p->fc.hb_min, p->cfg.heartbeat_max_ns, awaited);
        p->counters.heartbeats++;
        return 1;
    }
    return 0;
}

void rdps__rel_pub_send_done(struct rdps_rel_pub *p, uint32_t n)
{
    rdps__pub_ring_inflight_pop(&p->adm.ring, n);
}

/* ---- timers ---- */

uint64_t rdps__rel_pub_tick(struct rdps_rel_pub *p, uint64_t now_ns)
{
    uint64_t next = rdps__rel_rxt_expire(&p->rxt, now_ns);
    uint64_t stall = rdps__rel_flow_stall_check(&p->fc, now_ns);
    if (stall < next)
        next = stall;
    rdps__rel_adm_linger_due(&p->adm, now_ns);
    if (rdps__rel_adm_linger_until(&p->adm) < next) /* a lingering frame goes then */
        next = rdps__rel_adm_linger_until(&p->adm);
    rdps__rel_adm_await_due(&p->adm, now_ns);
    if (rdps__rel_adm_await_until(&p->adm) < next) /* a frame waiting on the device, then */
        next = rdps__rel_adm_await_until(&p->adm);
    bool paced = rdps__rel_adm_rate_paced(&p->adm, now_ns);
    if (p->hb.next < next && !paced) /* paced: data goes next, not a heartbeat */
        next = p->hb.next;
    if (p->fc.window_blocked && p->fc.poke_at < next)
        next = p->fc.poke_at;
    bool room = !rdps__pub_ring_inflight_full(&p->adm.ring);
    if (p->hb.urgent || (room && ((rdps__rel_adm_data_waiting(&p->adm) && !paced) ||
                                  rdps__rel_rxt_owed_any(&p->rxt))))
        return now_ns;
    if (room && paced && rdps__rel_adm_rate_ready_ns(&p->adm) < next)
        next = rdps__rel_adm_rate_ready_ns(&p->adm);
    if (room && !rdps__rel_rq_empty(&p->rq) && !rdps__rel_adm_rate_allows(&p->adm, now_ns)) {
        if (rdps__rel_adm_rate_ready_ns(&p->adm) < next)
            next = rdps__rel_adm_rate_ready_ns(&p->adm); /* repairs wait for the rate limit too */
    } else if (room && !rdps__rel_rq_empty(&p->rq)) {
        rdps__rel_rq_refill(&p->rq, now_ns);
        struct rdps_rel_repair *e;
        bool shared;
        if (rdps__rel_rq_next(&p->rq, repairs_budgeted(p), p->adm.post_seq, &e, &shared) != NULL)
            return now_ns;
        if (!rdps__rel_rq_empty(&p->rq) && rdps__rel_rq_refill_at(&p->rq) < next)
            next = rdps__rel_rq_refill_at(&p->rq);
    }
    return next < now_ns ? now_ns : next;
}
