/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_pub.c - reliable publisher: append into the ring, NAK handling, repair and heartbeat
 * scheduling (model: rdps_rel_pub.h; receivers and flow control: rdps_rel_pub_rx.c). */
/* Over 600 lines: one concern, what the publisher sends next (admission, the repair queue and
 * its budgets, heartbeats, the rate limit), whose decisions read and write one scheduler state. */
#include "rdps_rel_pub_internal.h"

#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "rdps_endian.h"
#include "rdps_error.h"
#include "rdps_frag.h"
#include "rdps_reasm.h"
#include "rdps_seq.h"

_Static_assert(RDPS_REL_CREDITS_MAX < RDPS_REASM_WINDOW, "the receivers' credits fit their window");

/* While appends wait on the window, heartbeats back off to at most this many hb_min. */
#define REL_HB_BLOCKED_MULT 8u

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

static uint32_t round_pow2(uint64_t v)
{
    uint32_t p = 2;
    while (p < v && p < (1u << 30))
        p <<= 1;
    return p;
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
    uint32_t frames = cfg->ring_frames ? cfg->ring_frames : round_pow2(cfg->ring_bytes / 128);
    rc = rdps__pub_ring_init(&p->ring, cfg->ring_mem, cfg->ring_bytes, frames,
                             cfg->max_inflight ? cfg->max_inflight : 1024, cfg->first_seq);
    if (rc < 0)
        return rc;
    if (cfg->parity_k != 0 && cfg->parity_k * 4u > p->ring.slot_mask + 1u) {
        rdps__pub_ring_fini(&p->ring);
        return rdps__set_err(RDPS_EINVAL,
                             "rel_pub_init: parity blocks of %u above a quarter "
                             "of the ring's %u slots",
                             cfg->parity_k, p->ring.slot_mask + 1u);
    }
    /* With parity, a DATA frame leaves room for its parity datagram's overhead. */
    p->payload = cfg->max_datagram - RDPS_FRAME_HEADER_LEN -
                 (cfg->parity_k != 0 ? RDPS_FRAME_PARITY_OVERHEAD : 0);
    /* A message fits the ring: its frames laid from the start of the memory (where the ring puts
     * one that fits nowhere else), one slot each. Not the receivers' window: a longer message
     * streams through it (rdps_rel_recv.h), its posts paced by flow control. */
    uint64_t frames_max = p->ring.cap / rdps__pub_ring_stride(cfg->max_datagram);
    if (frames_max > (uint64_t)p->ring.slot_mask + 1u)
        frames_max = (uint64_t)p->ring.slot_mask + 1u;
    uint64_t msg_cap = frames_max * p->payload;
    p->max_msg_len = cfg->max_msg_len < msg_cap ? cfg->max_msg_len : (uint32_t)msg_cap;
    p->post_seq = cfg->first_seq;
    p->marks = calloc((size_t)frames, sizeof(*p->marks));
    p->repairs = calloc(cfg->max_repairs, sizeof(*p->repairs));
    p->owed = calloc(cfg->max_receivers, sizeof(*p->owed));
    p->owed_gen = calloc(cfg->max_receivers, sizeof(*p->owed_gen));
    if (p->marks == NULL || p->repairs == NULL || p->owed == NULL || p->owed_gen == NULL ||
        rdps__rel_rx_init(p) < 0) {
        rdps__rel_pub_fini(p);
        return rdps__set_err(RDPS_ENOMEM, "rel_pub_init: out of memory");
    }
    if ((rc = rdps__rel_parity_init(p)) < 0) {
        rdps__rel_pub_fini(p);
        return rc;
    }
    p->repair_tokens = cfg->repair_budget_bytes;
    p->share_pool = cfg->repair_share_total_bytes;
    p->earned_max =
        cfg->repair_earned_max != 0 ? (int64_t)cfg->repair_earned_max : (int64_t)p->ring.cap;
    /* The floor accumulates: 64 bytes a millisecond is a datagram every 16 ms, 64 KB/s. */
    p->earned_floor =
        cfg->repair_floor_bytes != 0 ? cfg->repair_floor_bytes : cfg->repair_budget_bytes / 4096;
    if (p->earned_floor == 0)
        p->earned_floor = 1;
    if (p->earned_max < (int64_t)cfg->max_datagram)
        p->earned_max = cfg->max_datagram;
    p->hb_min = cfg->heartbeat_min_ns;
    p->linger_ns = cfg->repair_linger_ns;
    p->hb_interval = p->hb_min;
    p->hb_next = 0; /* the first heartbeat goes at once: receivers learn the session */
    p->hb_urgent = cfg->parity_k != 0; /* ... and k, ahead of data */
    p->fc_dirty = true;
    p->rx_next_expiry = UINT64_MAX;
    return 0;
}

void rdps__rel_pub_fini(struct rdps_rel_pub *p)
{
    rdps__pub_ring_fini(&p->ring);
    rdps__rel_rx_fini(p);
    rdps__rel_parity_fini(p);
    free(p->marks);
    free(p->repairs);
    free(p->owed);
    free(p->owed_gen);
    memset(p, 0, sizeof(*p));
}

/* ---- append ---- */

/* cause: 1 window, 0 ring, -1 missing tagged receivers (nobody to evict: no stall clock). `why`
 * is the application's rdps_last_error_message() (a constant: refusals are frequent). */
static int refuse(struct rdps_rel_pub *p, uint64_t *counter, int by_window, uint64_t now_ns,
                  const char *why)
{
    (*counter)++;
    rdps__set_err_static(RDPS_EAGAIN, why);
    if (by_window == 0)
        p->ring_blocked = true;
    if (by_window == 1 && !p->window_blocked) {
        p->window_blocked = true;
        if (p->hb_interval > p->hb_min * REL_HB_BLOCKED_MULT) { /* idle before: beat sooner */
            p->hb_interval = p->hb_min;
            if (p->hb_next > now_ns + p->hb_min)
                p->hb_next = now_ns + p->hb_min;
        }
    }
    if (p->cfg.flow == RDPS_REL_FLOW_MAX || by_window < 0)
        return RDPS_EAGAIN;
    /* A stall is a position that does not move: the clock restarts when it moved. */
    uint32_t mark = by_window ? p->fc_limit : p->fc_protect;
    if (p->blocked_since == 0 || p->blocked_by_window != by_window || p->blocked_mark != mark) {
        p->blocked_since = now_ns ? now_ns : 1;
        p->blocked_by_window = by_window;
        p->blocked_mark = mark;
    }
    return RDPS_EAGAIN;
}

/*
 * Admission of n frames (n - 1 of max_datagram bytes, the last of last_len): flow control, then
 * room in the ring, releasing the trail as far as needed. Returns 0 with *plan (where the frames
 * go), RDPS_EAGAIN (refused, counted by cause; nothing changed), RDPS_EMSGSIZE or RDPS_EBUSY (a
 * reservation is outstanding). Shared by append and reserve, so a claimed frame is admitted by the
 * same rules as a copied one.
 */
static int admit(struct rdps_rel_pub *p, uint32_t n, uint32_t last_len, uint64_t now_ns,
                 struct rdps_pub_ring_plan *plan)
{
    if (p->reserved)
        return RDPS_EBUSY; /* the reserved room is the head's: nothing may be placed before it */
    uint32_t head = p->ring.head_seq;
    if (p->fc_dirty)
        rdps__rel_fc_recompute(p);
    if (p->cfg.flow == RDPS_REL_FLOW_TAGGED && p->fc_tagged < p->cfg.flow_min_receivers)
        return refuse(p, &p->counters.backpressure_receivers, -1, now_ns,
                      "RDPS_FLOW_TAGGED: fewer tagged receivers than flow_min_receivers are live");
    if (p->fc_connecting > 0 && rdps__rel_connect_hold(p, now_ns))
        return refuse(p, &p->counters.backpressure_connecting, -1, now_ns,
                      "a reliable subscriber discovery announced has not reported its position "
                      "yet (held at most 1 s; poll to hear it)");
    if (p->fc_limited && rdps__seq_gt(head + n, p->fc_limit) && p->fc_limit_consumed != head)
        return refuse(p, &p->counters.backpressure_window, 1, now_ns,
                      "the flow-control window is closed: receivers have not consumed enough "
                      "(poll to hear their STATUS; with a rate limit, frames wait their turn)");

    int rc = rdps__pub_ring_plan(&p->ring, n, RDPS_FRAME_HEADER_LEN + p->payload, last_len, plan);
    if (rc < 0)
        return rc;
    if (plan->new_trail != p->ring.trail_seq) {
        /* The trail may pass neither unposted nor in-flight nor pinned frames nor the protection
         * point. */
        uint32_t allowed = p->post_seq, inflight;
        if (rdps__pub_ring_inflight_min(&p->ring, &inflight) && rdps__seq_lt(inflight, allowed))
            allowed = inflight;
        if (p->fc_protected && rdps__seq_lt(p->fc_protect, allowed))
            allowed = p->fc_protect;
        if (p->pins > 0 && rdps__seq_lt(p->pin_seq, allowed))
            allowed = p->pin_seq;
        if (rdps__seq_gt(plan->new_trail, allowed))
            return refuse(p, &p->counters.backpressure_ring, 0, now_ns,
                          "the retransmission ring is full: its oldest frames are not yet posted, "
                          "completed or consumed by every receiver (poll, or a larger ring_bytes)");
        rdps__pub_ring_release(&p->ring, plan->new_trail);
        if (p->lag_any && rdps__seq_lt(p->lag_min, plan->new_trail))
            rdps__rel_evict_lagging(p);
    }
    return 0;
}

/* A message of n frames and len bytes is in the ring. */
static void appended(struct rdps_rel_pub *p, uint32_t n, size_t len)
{
    p->counters.msgs_appended++;
    p->counters.frames_appended += n;
    p->counters.bytes_appended += len;
    p->blocked_since = 0;
    p->window_blocked = p->ring_blocked = false;
}

int rdps__rel_pub_append(struct rdps_rel_pub *p, const void *msg, size_t len, uint64_t now_ns,
                         uint64_t wall_ns)
{
    if (len > p->max_msg_len)
        return RDPS_EMSGSIZE;
    if (msg == NULL && len > 0)
        return RDPS_EINVAL;
    uint32_t n = len == 0 ? 1 : (uint32_t)((len + p->payload - 1) / p->payload);
    uint32_t last_len = RDPS_FRAME_HEADER_LEN + (uint32_t)(len - (size_t)(n - 1) * p->payload);
    struct rdps_pub_ring_plan plan;
    int rc = admit(p, n, last_len, now_ns, &plan);
    if (rc < 0)
        return rc;

    const uint8_t *src = msg;
    uint64_t pos = plan.start_pos;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t off = i * p->payload;
        uint32_t flen = i + 1 == n ? last_len : RDPS_FRAME_HEADER_LEN + p->payload;
        uint32_t seq = p->ring.head_seq;
        uint8_t *buf = rdps__pub_ring_push(&p->ring, &pos, flen);
        if (flen > RDPS_FRAME_HEADER_LEN)
            memcpy(buf + RDPS_FRAME_HEADER_LEN, src + off, flen - RDPS_FRAME_HEADER_LEN);
        rdps__frame_put_data_header(buf, p->cfg.session_id, p->cfg.topic_id, seq, (uint32_t)len,
                                    off, flen - RDPS_FRAME_HEADER_LEN, wall_ns,
                                    RDPS_FRAME_F_RELIABLE);
    }
    appended(p, n, len);
    return (int)n;
}

int rdps__rel_pub_reserve(struct rdps_rel_pub *p, uint64_t now_ns, uint8_t **payload,
                          uint32_t *capacity)
{
    uint32_t cap = p->payload < p->max_msg_len ? p->payload : p->max_msg_len;
    struct rdps_pub_ring_plan plan;
    int rc = admit(p, 1, RDPS_FRAME_HEADER_LEN + cap, now_ns, &plan);
    if (rc < 0)
        return rc;
    p->reserved = true;
    p->reserve_pos = plan.start_pos;
    p->reserve_cap = cap;
    *payload = p->ring.mem + plan.start_pos % p->ring.cap + RDPS_FRAME_HEADER_LEN;
    *capacity = cap;
    return 0;
}

int rdps__rel_pub_commit(struct rdps_rel_pub *p, size_t len, uint64_t wall_ns)
{
    if (!p->reserved)
        return RDPS_EINVAL;
    if (len > p->reserve_cap)
        return RDPS_EMSGSIZE;
    /* The room reserved holds a whole datagram at reserve_pos, and nothing moved the head or the
     * trail since (admit refuses while reserved): a shorter frame is placed at the same spot. */
    uint64_t pos = p->reserve_pos;
    uint32_t seq = p->ring.head_seq;
    uint8_t *buf = rdps__pub_ring_push(&p->ring, &pos, RDPS_FRAME_HEADER_LEN + (uint32_t)len);
    rdps__frame_put_data_header(buf, p->cfg.session_id, p->cfg.topic_id, seq, (uint32_t)len, 0,
                                (uint32_t)len, wall_ns, RDPS_FRAME_F_RELIABLE);
    p->reserved = false;
    appended(p, 1, len);
    return 1;
}

void rdps__rel_pub_unreserve(struct rdps_rel_pub *p)
{
    p->reserved = false;
}

void rdps__rel_pub_pin(struct rdps_rel_pub *p, uint32_t seq)
{
    if (p->pins++ == 0)
        p->pin_seq = seq;
}

void rdps__rel_pub_unpin(struct rdps_rel_pub *p)
{
    if (p->pins > 0)
        p->pins--;
}

void rdps__rel_pub_set_fanout(struct rdps_rel_pub *p, bool unicast_only)
{
    p->repairs_unicast_only = unicast_only;
}

/* ---- NAK ---- */

static void owe_heartbeat(struct rdps_rel_pub *p, int32_t slot, uint64_t now_ns)
{
    struct rdps_rel_receiver *r = &p->rx[slot];
    if (r->owed || now_ns < r->owed_until || p->owed_count == p->cfg.max_receivers)
        return;
    uint32_t at = (p->owed_head + p->owed_count++) % p->cfg.max_receivers;
    p->owed[at] = (uint32_t)slot;
    p->owed_gen[at] = r->gen;
    r->owed = true;
}

/* Queues [start, start + count) to dest; false (nothing queued) when the queue is full. */
static bool queue_repair(struct rdps_rel_pub *p, uint32_t start, uint32_t count, int32_t dest,
                         bool parity)
{
    uint32_t gen = dest == REL_MULTICAST ? 0 : p->rx[dest].gen;
    if (p->rq_count > 0) {
        struct rdps_rel_repair *last =
            &p->repairs[(p->rq_head + p->rq_count - 1) % p->cfg.max_repairs];
        if (last->dest == dest && last->gen == gen && last->parity == parity &&
            (parity ? last->start == start : last->start + last->count == start) &&
            last->count + count < 0x40000000u) {
            last->count += count;
            return true;
        }
    }
    if (p->rq_count == p->cfg.max_repairs)
        return false;
    struct rdps_rel_repair *e = &p->repairs[(p->rq_head + p->rq_count++) % p->cfg.max_repairs];
    e->start = start;
    e->count = count;
    e->sent = 0;
    e->dest = dest;
    e->gen = gen;
    e->parity = parity;
    return true;
}

static void flush_run(struct rdps_rel_pub *p, uint32_t start, uint32_t count, int32_t dest,
                      uint32_t *scheduled)
{
    if (count == 0)
        return;
    if (queue_repair(p, start, count, dest, false)) {
        *scheduled += count;
        return;
    }
    /* Not scheduled: forget the marks so the receiver's retry is answered. */
    p->counters.repair_queue_full += count;
    for (uint32_t k = 0; k < count; k++)
        p->marks[(start + k) & p->ring.slot_mask].linger_until = 0;
}

/* Per-sequence linger decision for [start, start + count) asked by receiver `slot`. A NAK from a
 * receiver the repair was for (or after a multicast one) is suppressed while the repair is queued
 * or could not have reached the asker before it sent the NAK; later it is a retry (the repair was
 * lost) and answered, so retries need not wait out a linger sized for other receivers' backoff. */
static uint32_t schedule_range(struct rdps_rel_pub *p, int32_t slot, uint32_t start, uint32_t count,
                               bool overtaken, uint64_t now_ns, int64_t *allowance)
{
    uint32_t scheduled = 0, run_start = start, run_count = 0;
    int32_t run_dest = slot;
    uint64_t until = now_ns + linger_of(p);
    const struct rdps_rel_receiver *asker = &p->rx[slot];
    for (uint32_t k = 0; k < count; k++) {
        uint32_t seq = start + k;
        struct rdps_rel_mark *m = &p->marks[seq & p->ring.slot_mask];
        int32_t dest = slot;
        /* Queued and not sent yet (sent_ns 0, not forgotten): however long the repair budget
         * makes it wait, a second entry would only send it twice. */
        bool queued = m->sent_ns == 0 && m->linger_until != 0;
        if (m->seq == seq && (queued || now_ns < m->linger_until)) {
            bool answered = m->dest == REL_MULTICAST || m->dest == slot;
            /* Overtaken: a repair the asker requested later reached it first, so this one
             * (already sent) was lost; a NAK crossing the repair cannot say that. */
            bool crossing = !overtaken && now_ns < m->sent_ns + asker_linger(p, slot);
            if (answered && (m->sent_ns == 0 || crossing)) {
                p->counters.nak_seqs_suppressed++;
                flush_run(p, run_start, run_count, run_dest, &scheduled);
                run_count = 0;
                continue;
            }
            /* A second receiver asked within the linger: one multicast repair serves everyone,
             * when discovery announced both, they are on different hosts and both are receiving
             * (ACTIVE: one host's QPNs and receiver ids, anyone unannounced, or receivers that
             * only NAK, cannot fan repairs out to the group). */
            const struct rdps_rel_receiver *first = m->dest >= 0 ? &p->rx[m->dest] : NULL;
            if (!answered && asker->announced && first->announced && first->host != asker->host &&
                asker->state == RDPS_REL_RX_ACTIVE && first->state == RDPS_REL_RX_ACTIVE &&
                !p->repairs_unicast_only)
                dest = REL_MULTICAST;
        }
        /* Every repair the host's NAKs schedule spends its allowance for this interval. */
        uint32_t len = rdps__pub_ring_find(&p->ring, seq)->len;
        if (*allowance < (int64_t)len) {
            p->counters.nak_host_limited += count - k;
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
        flush_run(p, run_start, run_count, run_dest, &scheduled);
        run_start = seq;
        run_count = 1;
        run_dest = dest;
    }
    flush_run(p, run_start, run_count, run_dest, &scheduled);
    return scheduled;
}

int rdps__rel_pub_on_nak(struct rdps_rel_pub *p, const struct rdps_source *source,
                         const struct rdps_frame_view *v, uint64_t now_ns)
{
    if (v->hdr.type != RDPS_FRAME_NAK || v->hdr.session_id != p->cfg.session_id ||
        v->hdr.topic_id != p->cfg.topic_id) {
        p->counters.foreign_frames++;
        return 0;
    }
    p->counters.naks_received++;
    int32_t slot = rdps__rel_rx_get(p, source, v->receiver_id, false, now_ns);
    if (slot < 0)
        return 0;
    struct rdps_rel_receiver *r = &p->rx[slot];
    r->last_heard_ns = now_ns;
    bool overtaken = (v->hdr.flags & RDPS_FRAME_F_RETRANSMIT) != 0;
    if (overtaken)
        p->counters.naks_overtaken++;
    if (p->fc_dirty)
        rdps__rel_fc_recompute(p); /* the receiver count and linger */
    rdps__rel_refill(p, now_ns);
    int64_t *allowance = rdps__rel_host_nak_tokens(p, r->host);
    uint32_t budget = p->cfg.max_frames_per_nak;
    if (!r->announced && budget > p->cfg.unannounced_nak_frames)
        budget = p->cfg.unannounced_nak_frames;
    uint32_t trail = p->ring.trail_seq, post = p->post_seq;
    for (unsigned i = 0; i < v->nak_range_count; i++) {
        struct rdps_seq_range rg = rdps__frame_nak_range(v, i);
        uint32_t start = rg.start, count = rg.count;
        p->counters.nak_ranges++;
        if (v->hdr.flags & RDPS_FRAME_F_PARITY) {
            int32_t dest = slot;
            bool gone = false;
            uint32_t n = budget == 0 ? 0
                                     : rdps__rel_parity_nak(p, slot, rg, overtaken, now_ns,
                                                            allowance, &dest, &gone);
            if (gone) {
                p->counters.nak_ranges_unrecoverable++;
                owe_heartbeat(p, slot, now_ns);
            } else if (n > 0 && queue_repair(p, rg.start, n, dest, true)) {
                budget = n < budget ? budget - n : 0;
                p->counters.nak_ranges_answered++;
            } else if (n > 0) {
                p->counters.repair_queue_full += n;
                rdps__rel_parity_unqueue(p, rg.start, n);
            }
            continue;
        }
        if (count == 0 || count > RDPS_FRAME_NAK_MAX_RANGE_COUNT)
            continue; /* the decoder refuses these; a caller passing a raw view gets nothing */
        if (rdps__seq_lt(start, trail)) {
            uint32_t below = trail - start;
            p->counters.nak_ranges_unrecoverable++;
            owe_heartbeat(p, slot, now_ns);
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
        if (schedule_range(p, slot, start, count, overtaken, now_ns, allowance) > 0)
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

/* Rate limit: may new data go now? */
static inline bool rate_allows(const struct rdps_rel_pub *p, uint64_t now_ns)
{
    return p->cfg.rate_bytes_per_s == 0 || p->rate_paid_ns <= now_ns + RDPS_REL_RATE_BURST_NS;
}

/* When new data may go again (rate_allows is false before). */
static inline uint64_t rate_ready_ns(const struct rdps_rel_pub *p)
{
    return p->rate_paid_ns - RDPS_REL_RATE_BURST_NS;
}

static inline bool data_waiting(struct rdps_rel_pub *p);

/* New data waits in the ring for the rate limit only (a heartbeat would say nothing new). */
static inline bool rate_paced(struct rdps_rel_pub *p, uint64_t now_ns)
{
    return !rate_allows(p, now_ns) && data_waiting(p);
}

/* May waiting new data go now? Counts each wait for the rate limit once. */
static inline bool data_may_go(struct rdps_rel_pub *p, uint64_t now_ns)
{
    if (rate_allows(p, now_ns)) {
        p->rate_waiting = false;
        return true;
    }
    if (!p->rate_waiting) {
        p->rate_waiting = true;
        p->counters.rate_waits++;
    }
    return false;
}

/* Charges a frame of len bytes to the rate limit. */
static inline void rate_charge(struct rdps_rel_pub *p, uint32_t len, uint64_t now_ns)
{
    if (p->cfg.rate_bytes_per_s == 0)
        return;
    if (p->rate_paid_ns < now_ns)
        p->rate_paid_ns = now_ns; /* idle time is not saved up beyond the burst */
    p->rate_paid_ns += (uint64_t)len * 1000000000ull / p->cfg.rate_bytes_per_s;
}

/* What the floor (time) or new data earns repairs, up to what may be saved: for each receiver in
 * flow control, `scale` (the receivers that report: each may lose its own datagrams, a repair
 * by unicast each). */
static inline void earn(struct rdps_rel_pub *p, uint64_t bytes, uint32_t scale)
{
    int64_t room = p->earned_max * (int64_t)scale - p->repair_earned;
    if (room > 0)
        p->repair_earned += bytes < (uint64_t)room ? (int64_t)bytes : room;
}

void rdps__rel_refill(struct rdps_rel_pub *p, uint64_t now_ns)
{
    if (now_ns < p->tokens_at + p->cfg.repair_interval_ns)
        return;
    uint64_t intervals = (now_ns - p->tokens_at) / p->cfg.repair_interval_ns;
    p->tokens_at += intervals * p->cfg.repair_interval_ns;
    p->repair_tokens = p->cfg.repair_budget_bytes; /* the budget does not accumulate */
    p->share_pool = p->cfg.repair_share_total_bytes;
    earn(p, intervals < (1u << 20) ? intervals * p->earned_floor : (uint64_t)p->earned_max, 1);
}

/* Do repairs spend the budget? It keeps them from starving new data. With none waiting because
 * the window or the ring refused it, only repairs can open them: held to the budget, they stalled
 * eight receivers at 20 % loss on a simulated 10 Gb/s fabric (0.04 of line rate). */
static bool repairs_budgeted(struct rdps_rel_pub *p)
{
    if (p->post_seq != p->ring.head_seq)
        return true;
    /* A STATUS since the refusal may have opened the window or moved the ring's position. */
    if ((p->window_blocked || p->ring_blocked) && p->fc_dirty)
        rdps__rel_fc_recompute(p);
    return !(p->window_blocked || p->ring_blocked);
}

/* May a unicast repair to `slot` go past the budget? Each host may draw repair_share_bytes per
 * interval that way, all hosts and multicast repairs together repair_share_total_bytes, so one
 * that holds the window and NAKs what it already has (or forges a victim's address, or many QPNs
 * and receiver ids) gets repairs at that pace, not the device's; past its share its repairs spend
 * the shared budget like any other. Compared with a whole datagram whatever the frame's length, so
 * the answer for a host changes once per interval and its repairs keep their order. */
static bool within_share(struct rdps_rel_pub *p, int32_t slot)
{
    struct rdps_rel_host *h = &p->hosts[p->rx[slot].host];
    if (h->share_epoch != p->tokens_at) {
        h->share_epoch = p->tokens_at;
        h->share_tokens = p->cfg.repair_share_bytes;
    }
    int64_t full = p->cfg.max_datagram;
    return h->share_tokens >= full && p->share_pool >= full;
}

/* Charges a repair past the budget to the shares' pool and, unicast (slot >= 0), its host. */
static void charge_share(struct rdps_rel_pub *p, int32_t slot, uint32_t len)
{
    int64_t full = p->cfg.max_datagram;
    p->share_pool -= len;
    bool spent = p->share_pool < full;
    if (slot >= 0) {
        struct rdps_rel_host *h = &p->hosts[p->rx[slot].host];
        h->share_tokens -= len;
        spent = spent || h->share_tokens < full;
    }
    /* Once per host and interval, and once when the total runs out: within_share says no after
     * either. */
    if (spent)
        p->counters.repair_share_spent++;
}

/* The front repair frame if one can go now (budget permitting, when `budgeted`; past the budget
 * a unicast one spends its host's share, a multicast one the shares' pool, and the budget when
 * that is spent: *shared says it spends the budget); drops dead entries. Past the budget, an
 * entry held by its host's share moves to the back, so a host that spent its share does not hold
 * up the others' repairs; a pass visits each entry once, and a receiver's entries move in queue
 * order, so a lone receiver still gets its repairs in the order it asked (it takes a repair that
 * overtakes an earlier one as that one lost). */
static const struct rdps_pub_ring_slot *next_repair(struct rdps_rel_pub *p, bool budgeted,
                                                    struct rdps_rel_repair **entry, bool *shared)
{
    for (uint32_t left = p->rq_count; left > 0 && p->rq_count > 0; left--) {
        struct rdps_rel_repair *e = &p->repairs[p->rq_head];
        bool gone = e->dest != REL_MULTICAST &&
                    (p->rx[e->dest].state == RDPS_REL_RX_FREE || p->rx[e->dest].gen != e->gen);
        const struct rdps_pub_ring_slot *s = NULL;
        if (e->parity) {
            /* The block's frames, whole, or its symbols cannot be made. */
            if (!gone && rdps__rel_parity_whole(p, e->start)) {
                s = &p->parity_slot; /* its len: what the budget is asked for */
            } else {
                p->counters.parity_dropped += e->count - e->sent;
            }
        } else if (!gone) {
            while (e->sent < e->count &&
                   (s = rdps__pub_ring_find(&p->ring, e->start + e->sent)) == NULL) {
                e->sent++; /* fell below the trail since it was scheduled */
                p->counters.repairs_dropped++;
            }
        } else {
            p->counters.repairs_dropped += e->count - e->sent;
            for (uint32_t k = e->sent; k < e->count; k++) { /* no longer queued */
                struct rdps_rel_mark *m = &p->marks[(e->start + k) & p->ring.slot_mask];
                if (m->seq == e->start + k && m->dest == e->dest && m->sent_ns == 0)
                    m->linger_until = 0;
            }
        }
        if (s == NULL) {
            p->rq_head = (p->rq_head + 1) % p->cfg.max_repairs;
            p->rq_count--;
            continue;
        }
        /* Every repair spends what data earned: repair volume follows what is sent. */
        if (p->repair_earned < (int64_t)s->len) {
            if (!p->unearned_waiting)
                p->counters.repairs_unearned++;
            p->unearned_waiting = true;
            p->earn_starved = true; /* hosts take turns until the queue empties */
            return NULL;
        }
        p->unearned_waiting = false;
        if (budgeted) {
            if (p->repair_tokens < (int64_t)s->len)
                return NULL;
            *shared = true;
        } else if (e->dest == REL_MULTICAST) {
            /* Multicast repairs reach every subscriber: charged like any other. */
            *shared = p->share_pool < (int64_t)p->cfg.max_datagram;
            if (*shared && p->repair_tokens < (int64_t)s->len)
                return NULL; /* the pool and the budget are spent: every repair waits */
        } else {
            *shared = !within_share(p, e->dest);
            if (*shared && p->repair_tokens < (int64_t)p->cfg.max_datagram) {
                /* The tail slot is free (or, in a full queue, the head itself). */
                p->repairs[(p->rq_head + p->rq_count) % p->cfg.max_repairs] = *e;
                p->rq_head = (p->rq_head + 1) % p->cfg.max_repairs;
                continue;
            }
        }
        *entry = e;
        return s;
    }
    return NULL;
}

static void fill_dest(struct rdps_rel_pub *p, struct rdps_rel_pub_action *a, int32_t slot)
{
    const struct rdps_rel_receiver *r = &p->rx[slot];
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
    a->ring_offset = s->pos % p->ring.cap;
    a->frame = p->ring.mem + a->ring_offset;
    rdps__pub_ring_inflight_push(&p->ring, seq);
}

static void heartbeat_action(struct rdps_rel_pub *p, struct rdps_rel_pub_action *a, uint64_t now_ns,
                             uint64_t wall_ns)
{
    /* Remembered for the echo: its RTT is measured on the monotonic clock. */
    struct rdps_rel_hb_sent *sent = &p->hb_sent[p->hb_sent_count++ % RDPS_REL_HB_SENT];
    sent->wall_ns = wall_ns;
    sent->mono_ns = now_ns;
    /* Cannot fail: the buffer holds a header and retained <= ring slots <= 2^30. */
    int len;
    if (p->cfg.parity_k != 0) {
        if (p->fc_dirty)
            rdps__rel_fc_recompute(p);
        uint64_t rtt_us = p->fc_rtt_max / 1000u;
        len = rdps__frame_encode_heartbeat_parity(
            p->hb_buf, sizeof(p->hb_buf), p->cfg.session_id, p->cfg.topic_id, p->post_seq,
            rdps__rel_pub_retained(p), wall_ns, p->cfg.parity_k,
            rtt_us > UINT32_MAX ? UINT32_MAX : (uint32_t)rtt_us, p->fc_members);
    } else {
        len = rdps__frame_encode_heartbeat_reliable(p->hb_buf, sizeof(p->hb_buf), p->cfg.session_id,
                                                    p->cfg.topic_id, p->post_seq,
                                                    rdps__rel_pub_retained(p), wall_ns);
    }
    a->kind = RDPS_REL_PUB_POST_HEARTBEAT;
    a->unicast = false;
    a->in_ring = false;
    a->seq = p->post_seq;
    a->len = (uint32_t)len;
    a->ring_offset = 0;
    a->frame = p->hb_buf;
}

/* May the next frame waiting in the ring be posted? Never at or past the flow-control limit: a
 * message admitted whole because it is longer than the window goes as the window slides. */
static inline bool post_within_window(struct rdps_rel_pub *p)
{
    if (p->fc_dirty)
        rdps__rel_fc_recompute(p);
    return !p->fc_limited || rdps__seq_lt(p->post_seq, p->fc_limit);
}

/* New data waits in the ring and may be posted (window), rate aside. */
static inline bool data_waiting(struct rdps_rel_pub *p)
{
    return p->post_seq != p->ring.head_seq && post_within_window(p);
}

static int post_data(struct rdps_rel_pub *p, struct rdps_rel_pub_action *a, uint64_t now_ns)
{
    uint32_t seq = p->post_seq++;
    ring_action(p, a, RDPS_REL_PUB_POST_DATA, seq, &p->ring.slots[seq & p->ring.slot_mask]);
    /* Parity: receivers learn k from heartbeats, which a busy publisher does not send; one
     * goes after every RDPS_REL_PARITY_HB_BLOCKS blocks of data. */
    if (p->cfg.parity_k != 0 &&
        ((seq + 1u) & (p->cfg.parity_k * RDPS_REL_PARITY_HB_BLOCKS - 1u)) == 0)
        p->hb_urgent = true;
    /* Proactive parity: the block is whole with its last datagram; its symbols follow. */
    if (p->cfg.parity_proactive != 0 && ((seq + 1u) & (p->cfg.parity_k - 1u)) == 0) {
        uint32_t start = seq + 1u - p->cfg.parity_k, n = rdps__rel_parity_proactive(p, start);
        if (!queue_repair(p, start, n, REL_MULTICAST, true)) {
            p->counters.repair_queue_full += n;
            rdps__rel_parity_unqueue(p, start, n);
        }
    }
    rate_charge(p, a->len, now_ns);
    /* Each receiver in flow control (reporting) earns the ratio: 64 receivers at 5 % loss each
     * ask their own 5 % of the data. Announced askers that never report earn nothing. */
    uint32_t members = p->fc_members > 0 ? p->fc_members : 1;
    earn(p, (uint64_t)a->len * p->cfg.repair_per_data_permille / 1000u * members, members);
    p->counters.data_posted++;
    if (p->data_since_repair < p->cfg.data_per_repair)
        p->data_since_repair++;
    p->hb_interval = p->hb_min;
    p->hb_next = now_ns + p->hb_interval;
    return 1;
}

static int32_t repair_host(const struct rdps_rel_pub *p, const struct rdps_rel_repair *e)
{
    return e->dest == REL_MULTICAST ? -1 : p->rx[e->dest].host;
}

/*
 * Once repairs waited for what data earns (until the queue empties), hosts take turns: when the
 * head entry's host had the last
 * repair, the first unicast entry of another host that is its destination's first (a receiver's
 * repairs keep their order) moves to the head, the entries before it one place back. So a host that
 * asks for a lot (forgers draining the allowance) does not hold the queue for its whole runs.
 */
static void repair_turns(struct rdps_rel_pub *p)
{
    const struct rdps_rel_repair *head = &p->repairs[p->rq_head];
    if (!p->earn_starved || p->rq_count < 2 || head->dest == REL_MULTICAST ||
        repair_host(p, head) != p->last_repair_host)
        return; /* a multicast repair serves every host: it takes no turn */
    uint32_t cap = p->cfg.max_repairs;
    for (uint32_t k = 1; k < p->rq_count; k++) {
        const struct rdps_rel_repair *o = &p->repairs[(p->rq_head + k) % cap];
        if (o->dest == REL_MULTICAST || repair_host(p, o) == p->last_repair_host)
            continue;
        bool first_of_dest = true;
        for (uint32_t j = 0; j < k && first_of_dest; j++)
            first_of_dest = p->repairs[(p->rq_head + j) % cap].dest != o->dest;
        if (!first_of_dest)
            continue;
        struct rdps_rel_repair moved = *o;
        for (uint32_t j = k; j > 0; j--)
            p->repairs[(p->rq_head + j) % cap] = p->repairs[(p->rq_head + j - 1) % cap];
        p->repairs[p->rq_head] = moved;
        return;
    }
}

int rdps__rel_pub_next_action(struct rdps_rel_pub *p, uint64_t now_ns, uint64_t wall_ns,
                              struct rdps_rel_pub_action *a)
{
    bool room = !rdps__pub_ring_inflight_full(&p->ring);
    /* Fast paths: new data with no repair waiting; nothing due at all. */
    if (p->rq_count == 0 && p->owed_count == 0 && !p->hb_urgent) {
        if (p->post_seq != p->ring.head_seq) {
            if (room && post_within_window(p) && data_may_go(p, now_ns))
                return post_data(p, a, now_ns);
        } else if (now_ns < p->hb_next) {
            return 0;
        }
    }
    if (p->hb_urgent) {
        /* A receiver was announced: it learns the session and the ring's oldest sequence now,
         * whatever data waits (a busy publisher sends no idle heartbeat). */
        p->hb_urgent = false;
        heartbeat_action(p, a, now_ns, wall_ns);
        p->hb_next = now_ns + p->hb_interval; /* it is the heartbeat due */
        p->counters.heartbeats++;
        return 1;
    }
    if (room) {
        rdps__rel_refill(p, now_ns);
        struct rdps_rel_repair *e = NULL;
        bool shared = true;
        if (p->rq_count == 0)
            p->earn_starved = false;
        repair_turns(p);
        /* Repairs wait for the rate limit's allowance like new data (ahead of it): they never
         * put the publisher into debt beyond one burst. */
        const struct rdps_pub_ring_slot *rs =
            rate_allows(p, now_ns) ? next_repair(p, repairs_budgeted(p), &e, &shared) : NULL;
        bool data = data_waiting(p) && data_may_go(p, now_ns);
        if (rs != NULL && (!data || p->data_since_repair >= p->cfg.data_per_repair) && e->parity) {
            rdps__rel_parity_action(p, e->start, now_ns, wall_ns, a);
            if (e->dest != REL_MULTICAST)
                fill_dest(p, a, e->dest);
            if (!shared)
                charge_share(p, e->dest, a->len);
            p->counters.parity_sent++;
            p->counters.parity_bytes += a->len;
            p->counters.repair_bytes += a->len;
            p->repair_tokens -= a->len;
            p->repair_earned -= a->len;
            p->last_repair_host = repair_host(p, e);
            rate_charge(p, a->len, now_ns);
            p->data_since_repair = 0;
            if (++e->sent == e->count) {
                p->rq_head = (p->rq_head + 1) % p->cfg.max_repairs;
                p->rq_count--;
            }
            return 1;
        }
        if (rs != NULL && (!data || p->data_since_repair >= p->cfg.data_per_repair)) {
            uint32_t seq = e->start + e->sent;
            uint8_t *frame = p->ring.mem + rs->pos % p->ring.cap;
            rdps__put_le16(
                frame + RDPS_FRAME_OFF_FLAGS,
                (uint16_t)(rdps__get_le16(frame + RDPS_FRAME_OFF_FLAGS) | RDPS_FRAME_F_RETRANSMIT));
            ring_action(p, a, RDPS_REL_PUB_POST_REPAIR, seq, rs);
            if (e->dest == REL_MULTICAST) {
                p->counters.repairs_multicast++;
                if (!shared)
                    charge_share(p, REL_MULTICAST, rs->len);
            } else {
                fill_dest(p, a, e->dest);
                p->counters.repairs_unicast++;
                if (!shared)
                    charge_share(p, e->dest, rs->len);
            }
            struct rdps_rel_mark *m = &p->marks[seq & p->ring.slot_mask];
            if (m->seq == seq) { /* the linger counts from the repair's departure */
                m->linger_until = now_ns + linger_of(p);
                m->sent_ns = now_ns;
            }
            p->counters.repair_bytes += rs->len;
            p->repair_tokens -= rs->len;
            p->repair_earned -= rs->len;
            p->last_repair_host = repair_host(p, e);
            rate_charge(p, rs->len, now_ns);
            p->data_since_repair = 0;
            if (++e->sent == e->count) {
                p->rq_head = (p->rq_head + 1) % p->cfg.max_repairs;
                p->rq_count--;
            }
            return 1;
        }
        if (data)
            return post_data(p, a, now_ns);
    }
    while (p->owed_count > 0) {
        uint32_t slot = p->owed[p->owed_head], gen = p->owed_gen[p->owed_head];
        p->owed_head = (p->owed_head + 1) % p->cfg.max_receivers;
        p->owed_count--;
        struct rdps_rel_receiver *r = &p->rx[slot];
        if (r->state == RDPS_REL_RX_FREE || r->gen != gen || !r->owed)
            continue;
        r->owed = false;
        r->owed_until = now_ns + linger_of(p);
        heartbeat_action(p, a, now_ns, wall_ns);
        fill_dest(p, a, (int32_t)slot);
        p->counters.heartbeats_unrecoverable++;
        return 1;
    }
    if (now_ns >= p->hb_next && !rate_paced(p, now_ns)) {
        heartbeat_action(p, a, now_ns, wall_ns);
        /* hb_min after data, then gaps doubling to the cap; while appends wait on the window,
         * or a receiver in flow control has not reported everything posted, at most
         * REL_HB_BLOCKED_MULT x hb_min: receivers answer a heartbeat with STATUS and learn of
         * tail loss from it, and a lost STATUS or tail otherwise waited for the grown gap. */
        if (p->fc_dirty)
            rdps__rel_fc_recompute(p);
        bool awaited = p->window_blocked || (p->lag_any && p->lag_min != p->post_seq);
        uint64_t cap = p->cfg.heartbeat_max_ns;
        if (awaited && p->hb_min * REL_HB_BLOCKED_MULT < cap)
            cap = p->hb_min * REL_HB_BLOCKED_MULT;
        p->hb_interval = p->hb_interval * 2 > cap ? (p->hb_interval > cap ? p->hb_interval : cap)
                                                  : p->hb_interval * 2;
        p->hb_next = now_ns + p->hb_interval;
        p->counters.heartbeats++;
        return 1;
    }
    return 0;
}

void rdps__rel_pub_send_done(struct rdps_rel_pub *p, uint32_t n)
{
    rdps__pub_ring_inflight_pop(&p->ring, n);
}

/* ---- timers ---- */

uint64_t rdps__rel_pub_tick(struct rdps_rel_pub *p, uint64_t now_ns)
{
    uint64_t next = rdps__rel_rx_expire(p, now_ns);
    uint64_t stall = rdps__rel_stall_check(p, now_ns);
    if (stall < next)
        next = stall;
    bool paced = rate_paced(p, now_ns);
    if (p->hb_next < next && !paced) /* paced: data goes next, not a heartbeat */
        next = p->hb_next;
    bool room = !rdps__pub_ring_inflight_full(&p->ring);
    if (p->hb_urgent || (room && ((data_waiting(p) && !paced) || p->owed_count > 0)))
        return now_ns;
    if (room && paced && rate_ready_ns(p) < next)
        next = rate_ready_ns(p);
    if (room && p->rq_count > 0 && !rate_allows(p, now_ns)) {
        if (rate_ready_ns(p) < next)
            next = rate_ready_ns(p); /* repairs wait for the rate limit too */
    } else if (room && p->rq_count > 0) {
        rdps__rel_refill(p, now_ns);
        struct rdps_rel_repair *e;
        bool shared;
        if (next_repair(p, repairs_budgeted(p), &e, &shared) != NULL)
            return now_ns;
        if (p->rq_count > 0 && p->tokens_at + p->cfg.repair_interval_ns < next)
            next = p->tokens_at + p->cfg.repair_interval_ns;
    }
    return next < now_ns ? now_ns : next;
}
