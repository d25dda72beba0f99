/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_admit.c - the reliable publisher's admission: flow control and ring room for a
 * message, then its frames written into the ring (model: rdps_rel_admit.h). */
#include "rdps_rel_admit.h"

#include <string.h>

#include <rdps/rdps.h>

#include "rdps_endian.h"
#include "rdps_error.h"
#include "rdps_frame.h"

static uint32_t round_pow2(uint64_t v)
{
    uint32_t p = 2;
    while (p < v && p < (1u << 30))
        p <<= 1;
    return p;
}

int rdps__rel_adm_init(struct rdps_rel_admission *adm, const struct rdps_rel_pub_config *cfg,
                       struct rdps_rel_pub_counters *c, struct rdps_rel_flowctl *fc,
                       struct rdps_rel_beat *beat)
{
    adm->cfg = cfg;
    adm->c = c;
    adm->fc = fc;
    adm->beat = beat;
    adm->session_id = cfg->session_id;
    adm->topic_id = cfg->topic_id;
    adm->flow = cfg->flow;
    adm->rate_bytes_per_s = cfg->rate_bytes_per_s;
    uint32_t frames = cfg->ring_frames ? cfg->ring_frames : round_pow2(cfg->ring_bytes / 128);
    int rc = rdps__pub_ring_init(&adm->ring, cfg->ring_mem, cfg->ring_bytes, frames,
                                 cfg->max_inflight ? cfg->max_inflight : 1024, cfg->first_seq);
    if (rc < 0)
        return rc;
    /* With parity, a DATA frame leaves room for its parity datagram's overhead. */
    adm->payload = cfg->max_datagram - RDPS_FRAME_HEADER_LEN -
                   (cfg->parity_k != 0 ? RDPS_FRAME_PARITY_OVERHEAD : 0);
    /* A message fits the ring: its frames laid from the start of the memory (where the ring puts
     * one that fits nowhere else), one slot each. Not the receivers' window: a longer message
     * streams through it (rdps_rel_recv.h), its posts paced by flow control. */
    uint64_t frames_max = adm->ring.cap / rdps__pub_ring_stride(cfg->max_datagram);
    if (frames_max > (uint64_t)adm->ring.slot_mask + 1u)
        frames_max = (uint64_t)adm->ring.slot_mask + 1u;
    uint64_t msg_cap = frames_max * adm->payload;
    adm->max_msg_len = cfg->max_msg_len < msg_cap ? cfg->max_msg_len : (uint32_t)msg_cap;
    adm->post_seq = cfg->first_seq;
    adm->next_ordinal = cfg->first_ordinal;
    adm->ready_seq = cfg->first_seq;
    adm->batching = cfg->batching;
    return 0;
}

void rdps__rel_adm_fini(struct rdps_rel_admission *adm)
{
    rdps__pub_ring_fini(&adm->ring);
}

/* cause: 1 window, 0 ring, -1 missing tagged receivers (nobody to evict: no stall clock). `why`
 * is the application's rdps_last_error_message() (a constant: refusals are frequent). */
static inline int refuse(struct rdps_rel_admission *adm, uint64_t *counter, int by_window,
                         uint64_t now_ns, const char *why)
{
    (*counter)++;
    rdps__set_err_static(RDPS_EAGAIN, why);
    if (rdps__rel_flow_refused(adm->fc, by_window, now_ns))
        rdps__rel_beat_sooner(adm->beat, now_ns, adm->fc->hb_min);
    return RDPS_EAGAIN;
}

/*
 * Admission of n frames (n - 1 of max_datagram bytes, the last of last_len): flow control, then
 * room in the ring, releasing the trail as far as needed. Returns 0 with *plan (where the frames
 * go), RDPS_EAGAIN (refused, counted by cause; nothing changed), RDPS_EMSGSIZE or RDPS_EBUSY (a
 * reservation is outstanding). Shared by append and reserve, so a claimed frame is admitted by the
 * same rules as a copied one.
 */
static int admit(struct rdps_rel_admission *adm, uint32_t n, uint32_t last_len, uint64_t now_ns,
                 struct rdps_pub_ring_plan *plan)
{
    if (adm->reserved)
        return RDPS_EBUSY; /* the reserved room is the head's: nothing may be placed before it */
    struct rdps_rel_flowctl *fc = adm->fc;
    uint32_t head = adm->ring.head_seq;
    rdps__rel_flow_fresh(fc);
    if (adm->flow == RDPS_REL_FLOW_TAGGED && fc->tagged < adm->cfg->flow_min_receivers)
        return refuse(adm, &adm->c->backpressure_receivers, -1, now_ns,
                      "RDPS_FLOW_TAGGED: fewer tagged receivers than flow_min_receivers are live");
    if (fc->connecting > 0 && rdps__rel_flow_connect_hold(fc, now_ns))
        return refuse(adm, &adm->c->backpressure_connecting, -1, now_ns,
                      "a reliable subscriber discovery announced has not reported its position "
                      "yet (held at most 1 s; poll to hear it)");
    if (fc->limited && rdps__seq_gt(head + n, fc->limit) && fc->limit_consumed != head)
        return refuse(adm, &adm->c->backpressure_window, 1, now_ns,
                      "the flow-control window is closed: receivers have not consumed enough "
                      "(poll to hear their STATUS; with a rate limit, frames wait their turn)");

    int rc =
        rdps__pub_ring_plan(&adm->ring, n, RDPS_FRAME_HEADER_LEN + adm->payload, last_len, plan);
    if (rc < 0)
        return rc;
    if (plan->new_trail != adm->ring.trail_seq) {
        /* The trail may pass neither unposted nor in-flight nor pinned frames nor the protection
         * point. */
        uint32_t allowed = adm->post_seq, inflight;
        if (rdps__pub_ring_inflight_min(&adm->ring, &inflight) && rdps__seq_lt(inflight, allowed))
            allowed = inflight;
        if (fc->protecting && rdps__seq_lt(fc->protect, allowed))
            allowed = fc->protect;
        if (adm->pins > 0 && rdps__seq_lt(adm->pin_seq, allowed))
            allowed = adm->pin_seq;
        if (rdps__seq_gt(plan->new_trail, allowed))
            return refuse(adm, &adm->c->backpressure_ring, 0, now_ns,
                          "the retransmission ring is full: its oldest frames are not yet posted, "
                          "completed or consumed by every receiver (poll, or a larger ring_bytes)");
        rdps__pub_ring_release(&adm->ring, plan->new_trail);
        if (fc->lag_any && rdps__seq_lt(fc->lag_min, plan->new_trail))
            rdps__rel_flow_evict_lagging(fc);
    }
    return 0;
}

/* A message of len bytes is in the ring, in n new frames from seq; `batched`: in the open frame
 * (n is 1 when it opened it), counted when that closes. */
static void appended(struct rdps_rel_admission *adm, uint32_t seq, uint32_t n, size_t len,
                     bool batched)
{
    if (!batched) {
        adm->c->msgs_appended++;
        adm->c->bytes_appended += len;
        adm->next_ordinal++;
    }
    adm->c->frames_appended += n;
    adm->last_seq = seq;
    adm->last_frames = n > 0 ? n : 1;
    if (n > 0)
        rdps__rel_flow_appended(adm->fc);
    rdps__rel_adm_set_ready(adm);
}

void rdps__rel_adm_close(struct rdps_rel_admission *adm)
{
    struct rdps_batch *b = &adm->open;
    if (b->count == 0)
        return;
    /* Its messages count now (the join path appends without counting). */
    adm->c->msgs_appended += b->count;
    adm->c->bytes_appended += rdps__batch_message_bytes(b);
    adm->next_ordinal += b->count;
    if (b->count > 1)
        adm->c->frames_batched++;
    uint32_t flen = rdps__batch_seal(b);
    rdps__frame_put_data_header(b->frame, adm->session_id, adm->topic_id, adm->open_seq, b->used, 0,
                                b->used, adm->open_wall_ns, RDPS_FRAME_F_RELIABLE,
                                adm->open_ordinal, b->count);
    rdps__pub_ring_shrink_head(&adm->ring, flen);
    rdps__batch_reset(b);
    adm->lingering = false;
    adm->await_sends = false;
    rdps__rel_adm_set_ready(adm);
}

/* Whether a message of len bytes goes into an open frame (batching) rather than frames of its
 * own: it fits a datagram as a record. */
static inline bool batchable(const struct rdps_rel_admission *adm, size_t len)
{
    return adm->batching && len + 2u * RDPS_BATCH_LEN_BYTES < adm->payload;
}

/*
 * Opens a frame at the head for messages to join: admitted as a whole datagram (RDPS_EAGAIN and
 * the rest as append; nothing changes then), pushed at its largest, its first message's ordinal
 * the next one.
 */
static int open_frame(struct rdps_rel_admission *adm, uint64_t now_ns, uint64_t wall_ns)
{
    uint32_t flen = RDPS_FRAME_HEADER_LEN + adm->payload;
    struct rdps_pub_ring_plan plan;
    int rc = admit(adm, 1, flen, now_ns, &plan);
    if (rc < 0)
        return rc;
    uint64_t pos = plan.start_pos;
    adm->open_seq = adm->ring.head_seq;
    uint8_t *frame = rdps__pub_ring_push(&adm->ring, &pos, flen);
    bool joins_off = adm->open.joins_off; /* the caller's (rdps__rel_pub_open_batch) */
    rdps__batch_open(&adm->open, frame, flen);
    adm->open.joins_off = joins_off;
    if (adm->max_msg_len < adm->open.max_record)
        adm->open.max_record = adm->max_msg_len;
    /* The header's ordinal is read before the frame closes (heartbeats name the next one). */
    rdps__put_le32(frame + RDPS_FRAME_OFF_ORDINAL, adm->next_ordinal);
    adm->open_ordinal = adm->next_ordinal;
    adm->open_wall_ns = wall_ns;
    adm->lingering = adm->cfg->batch_linger_ns != 0;
    adm->open_until_ns = now_ns + adm->cfg->batch_linger_ns;
    adm->await_sends = !adm->lingering; /* a linger decides alone */
    adm->await_until_ns = now_ns + RDPS_BATCH_AWAIT_MAX_NS;
    return 0;
}

/* Room for a message of len bytes in the open frame (opened when none is, or closed and another
 * opened when it is full): where its bytes go. 1: a frame was opened for it. */
static int batch_room(struct rdps_rel_admission *adm, uint32_t len, uint64_t now_ns,
                      uint64_t wall_ns, uint8_t **to)
{
    int opened = 0;
    if (adm->open.count > 0 && !rdps__batch_fits(&adm->open, len))
        rdps__rel_adm_close(adm);
    if (adm->open.count == 0) {
        int rc = open_frame(adm, now_ns, wall_ns);
        if (rc < 0)
            return rc;
        opened = 1;
    }
    *to = rdps__batch_add(&adm->open, len);
    return opened;
}

int rdps__rel_adm_append(struct rdps_rel_admission *adm, const void *msg, size_t len,
                         uint64_t now_ns, uint64_t wall_ns)
{
    if (len > adm->max_msg_len)
        return RDPS_EMSGSIZE;
    if (msg == NULL && len > 0)
        return RDPS_EINVAL;
    if (adm->reserved)
        return RDPS_EBUSY; /* the reserved room is the head's: nothing may be placed before it */
    if (batchable(adm, len)) {
        uint8_t *to;
        int opened = batch_room(adm, (uint32_t)len, now_ns, wall_ns, &to);
        if (opened < 0)
            return opened;
        if (len > 0)
            memcpy(to, msg, len);
        appended(adm, adm->open_seq, (uint32_t)opened, len, true);
        return 1;
    }
    rdps__rel_adm_close(adm); /* a message of its own frames comes after the open one */
    uint32_t n = len == 0 ? 1 : (uint32_t)((len + adm->payload - 1) / adm->payload);
    uint32_t last_len = RDPS_FRAME_HEADER_LEN + (uint32_t)(len - (size_t)(n - 1) * adm->payload);
    struct rdps_pub_ring_plan plan;
    int rc = admit(adm, n, last_len, now_ns, &plan);
    if (rc < 0)
        return rc;

    const uint8_t *src = msg;
    uint64_t pos = plan.start_pos;
    uint32_t first = adm->ring.head_seq;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t off = i * adm->payload;
        uint32_t flen = i + 1 == n ? last_len : RDPS_FRAME_HEADER_LEN + adm->payload;
        uint32_t seq = adm->ring.head_seq;
        uint8_t *buf = rdps__pub_ring_push(&adm->ring, &pos, flen);
        if (flen > RDPS_FRAME_HEADER_LEN)
            memcpy(buf + RDPS_FRAME_HEADER_LEN, src + off, flen - RDPS_FRAME_HEADER_LEN);
        rdps__frame_put_data_header(buf, adm->session_id, adm->topic_id, seq, (uint32_t)len, off,
                                    flen - RDPS_FRAME_HEADER_LEN, wall_ns, RDPS_FRAME_F_RELIABLE,
                                    adm->next_ordinal, n == 1 ? 1u : 0u);
    }
    appended(adm, first, n, len, false);
    return (int)n;
}

int rdps__rel_adm_reserve(struct rdps_rel_admission *adm, uint32_t want, uint64_t now_ns,
                          uint64_t wall_ns, uint8_t **payload, uint32_t *capacity)
{
    if (adm->reserved)
        return RDPS_EBUSY;
    uint32_t cap = adm->payload < adm->max_msg_len ? adm->payload : adm->max_msg_len;
    if (want <= cap && batchable(adm, want)) { /* a record of the open frame */
        int opened = batch_room(adm, want, now_ns, wall_ns, &adm->reserve_payload);
        if (opened < 0)
            return opened;
        rdps__batch_hold_joins(&adm->open); /* until the commit says how long it is */
        adm->reserved = adm->reserve_joined = true;
        adm->reserve_opened = opened == 1;
        adm->reserve_cap = want;
        rdps__rel_adm_set_ready(adm); /* the open frame waits for the commit */
        *payload = adm->reserve_payload;
        *capacity = want;
        return 0;
    }
    rdps__rel_adm_close(adm);
    struct rdps_pub_ring_plan plan;
    int rc = admit(adm, 1, RDPS_FRAME_HEADER_LEN + cap, now_ns, &plan);
    if (rc < 0)
        return rc;
    adm->reserved = true;
    adm->reserve_joined = false;
    adm->reserve_pos = plan.start_pos;
    adm->reserve_cap = cap;
    adm->reserve_payload = adm->ring.mem + plan.start_pos % adm->ring.cap + RDPS_FRAME_HEADER_LEN;
    *payload = adm->reserve_payload;
    *capacity = cap;
    return 0;
}

int rdps__rel_adm_commit(struct rdps_rel_admission *adm, size_t len, uint64_t wall_ns)
{
    if (!adm->reserved)
        return RDPS_EINVAL;
    if (len > adm->reserve_cap)
        return RDPS_EMSGSIZE;
    if (adm->reserve_joined) {
        rdps__batch_shrink_last(&adm->open, adm->reserve_cap, (uint32_t)len);
        adm->reserved = adm->reserve_joined = false;
        appended(adm, adm->open_seq, adm->reserve_opened ? 1u : 0u, len, true);
        return 1;
    }
    /* The room reserved holds a whole datagram at reserve_pos, and nothing moved the head or the
     * trail since (admit refuses while reserved): a shorter frame is placed at the same spot. */
    uint64_t pos = adm->reserve_pos;
    uint32_t seq = adm->ring.head_seq;
    uint8_t *buf = rdps__pub_ring_push(&adm->ring, &pos, RDPS_FRAME_HEADER_LEN + (uint32_t)len);
    rdps__frame_put_data_header(buf, adm->session_id, adm->topic_id, seq, (uint32_t)len, 0,
                                (uint32_t)len, wall_ns, RDPS_FRAME_F_RELIABLE, adm->next_ordinal,
                                1);
    adm->reserved = false;
    appended(adm, seq, 1, len, false);
    return 1;
}

void rdps__rel_adm_unreserve(struct rdps_rel_admission *adm)
{
    if (adm->reserved && adm->reserve_joined) {
        rdps__batch_remove_last(&adm->open, adm->reserve_cap);
        if (adm->reserve_opened) { /* the reservation had opened it: take the frame back */
            rdps__pub_ring_unpush(&adm->ring);
            adm->lingering = false;
            adm->await_sends = false;
        }
    }
    adm->reserved = adm->reserve_joined = false;
    rdps__rel_adm_set_ready(adm);
}
