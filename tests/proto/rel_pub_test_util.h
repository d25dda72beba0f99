/* SPDX-License-Identifier: BSD-2-Clause */
/* rel_pub_test_util.h - a reliable publisher on a fake clock for tests: NAK/STATUS builders and an
 * action drain that checks every action against the ring. */
#ifndef RDPS_TESTS_REL_PUB_UTIL_H
#define RDPS_TESTS_REL_PUB_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "proto_test_util.h"
#include "rdps_endian.h"
#include "rdps_frame.h"
#include "rdps_rel_pub.h"

#define RP_SESSION 0x5151u
#define RP_TOPIC   0x77u
#define RP_DGRAM   1024u
#define RP_PAYLOAD (RP_DGRAM - RDPS_FRAME_HEADER_LEN)
#define RP_MAX_EV  256

struct rp {
    struct rdps_rel_pub p;
    struct rdps_rel_pub_config cfg;
    uint8_t *mem;
    uint64_t now;
    struct rdps_rel_pub_event ev[RP_MAX_EV];
    struct rdps_source ev_src[RP_MAX_EV];
    unsigned nev;
    bool keep_hb; /* rp_drain returns multicast heartbeats too (skipped otherwise) */
};

static inline void rp_on_event(void *user, const struct rdps_rel_pub_event *ev)
{
    struct rp *f = user;
    if (f->nev < RP_MAX_EV) {
        f->ev_src[f->nev] = *ev->source;
        f->ev[f->nev] = *ev;
        f->ev[f->nev].source = &f->ev_src[f->nev];
        f->nev++;
    }
}

/* Defaults for tests: small ring, a short linger, first sequence near the wrap. */
static inline void rp_config(struct rp *f, size_t ring_bytes)
{
    memset(f, 0, sizeof(*f));
    rdps__rel_pub_config_default(&f->cfg);
    f->cfg.session_id = RP_SESSION;
    f->cfg.topic_id = RP_TOPIC;
    f->cfg.first_seq = 0xFFFFFFF0u;
    f->cfg.max_datagram = RP_DGRAM;
    f->cfg.max_msg_len = 1u << 20;
    f->cfg.ring_bytes = ring_bytes;
    f->cfg.hash_seed = 0x1234;
    f->cfg.on_event = rp_on_event;
    f->cfg.user = f;
    f->now = 1000000000ull;
}

static inline int rp_start(struct rp *f)
{
    f->mem = malloc(f->cfg.ring_bytes);
    if (f->mem == NULL)
        abort();
    memset(f->mem, 0xEE, f->cfg.ring_bytes);
    f->cfg.ring_mem = f->mem;
    return rdps__rel_pub_init(&f->p, &f->cfg);
}

static inline void rp_stop(struct rp *f)
{
    rdps__rel_pub_fini(&f->p);
    free(f->mem);
    f->mem = NULL;
}

/* Appends a pattern message (id = msg_id) of len bytes; returns append's result. */
static inline int rp_append(struct rp *f, size_t len, uint64_t msg_id)
{
    uint8_t *msg = malloc(len ? len : 1);
    if (msg == NULL)
        abort();
    pattern_fill(msg, len, RP_SESSION, msg_id);
    int rc = rdps__rel_pub_append(&f->p, msg, len, f->now, msg_id);
    free(msg);
    return rc;
}

/* Checks one action against the ring: the frame is where it says, and is the frame it says. */
static inline int rp_action_ok(const struct rp *f, const struct rdps_rel_pub_action *a)
{
    if (a->in_ring) {
        if (a->ring_offset + a->len > f->p.adm.ring.cap || a->frame != f->mem + a->ring_offset)
            return 0;
        const struct rdps_pub_ring_slot *s = rdps__pub_ring_find(&f->p.adm.ring, a->seq);
        if (s == NULL || s->len != a->len || s->pos % f->p.adm.ring.cap != a->ring_offset)
            return 0;
        struct rdps_frame_view v;
        if (rdps__frame_decode(a->frame, a->len, NULL, &v) != RDPS_FRAME_OK)
            return 0;
        if (v.hdr.type != RDPS_FRAME_DATA || v.hdr.seq != a->seq ||
            !(v.hdr.flags & RDPS_FRAME_F_RELIABLE))
            return 0;
        bool rtx = (v.hdr.flags & RDPS_FRAME_F_RETRANSMIT) != 0;
        if (rtx != (a->kind == RDPS_REL_PUB_POST_REPAIR))
            return 0;
        for (uint32_t k = 0; k < v.payload_len; k++)
            if (v.payload[k] != pattern_byte(RP_SESSION, v.hdr.timestamp_ns, v.hdr.frag_offset + k))
                return 0;
        return 1;
    }
    struct rdps_frame_view v;
    if (a->kind == RDPS_REL_PUB_POST_PARITY) /* a parity datagram of the block at a->seq */
        return a->len == f->p.par.len &&
               rdps__frame_decode(a->frame, a->len, NULL, &v) == RDPS_FRAME_OK &&
               v.hdr.type == RDPS_FRAME_PARITY && v.hdr.seq == a->seq &&
               v.parity_k == f->cfg.parity_k && v.parity_index < f->cfg.parity_max;
    uint16_t hb_flags = RDPS_FRAME_F_RELIABLE | (f->cfg.parity_k != 0 ? RDPS_FRAME_F_PARITY : 0);
    return a->kind == RDPS_REL_PUB_POST_HEARTBEAT &&
           a->len == (f->cfg.parity_k != 0 ? RDPS_FRAME_HB_PARITY_LEN : RDPS_FRAME_HEADER_LEN) &&
           rdps__frame_decode(a->frame, a->len, NULL, &v) == RDPS_FRAME_OK &&
           v.hdr.type == RDPS_FRAME_HEARTBEAT && v.hdr.flags == hb_flags && v.hdr.seq == a->seq &&
           v.retained == v.hdr.msg_len;
}

/* Heartbeat fields: next sequence and retained count. */
static inline uint32_t rp_hb_seq(const struct rdps_rel_pub_action *a)
{
    return rdps__get_le32(a->frame + RDPS_FRAME_OFF_SEQ);
}
static inline uint32_t rp_hb_retained(const struct rdps_rel_pub_action *a)
{
    return rdps__get_le32(a->frame + RDPS_FRAME_OFF_MSG_LEN);
}

/*
 * Takes up to max actions at the current time into out (may be NULL), reporting each ring
 * action complete at once when `complete`; multicast heartbeats and a window-blocked publisher's
 * pokes (unicast heartbeats asking for a STATUS) are skipped unless keep_hb.
 * Returns the count, or -1 when an action is inconsistent with the ring.
 */
static inline int rp_drain(struct rp *f, struct rdps_rel_pub_action *out, int max, int complete)
{
    int n = 0;
    struct rdps_rel_pub_action a;
    uint64_t poked = f->p.counters.heartbeats_poked;
    while (n < max && rdps__rel_pub_next_action(&f->p, f->now, f->now, &a) == 1) {
        if (!rp_action_ok(f, &a))
            return -1;
        bool poke = f->p.counters.heartbeats_poked != poked;
        poked = f->p.counters.heartbeats_poked;
        if (a.kind == RDPS_REL_PUB_POST_HEARTBEAT && (!a.unicast || poke) && !f->keep_hb)
            continue;
        if (out)
            out[n] = a;
        n++;
        if (complete && a.in_ring)
            rdps__rel_pub_send_done(&f->p, 1);
    }
    return n;
}

/* A NAK with header flags (RETRANSMIT: the repairs were overtaken) through the wire. */
static inline void rp_nak_flags(struct rp *f, uint64_t src, uint32_t receiver_id,
                                const struct rdps_seq_range *ranges, unsigned n, uint16_t flags)
{
    uint8_t buf[RDPS_FRAME_NAK_OFF_RANGES + RDPS_FRAME_NAK_MAX_RANGES * RDPS_FRAME_NAK_RANGE_LEN];
    int len = rdps__frame_encode_nak_flags(buf, sizeof(buf), RP_SESSION, RP_TOPIC, receiver_id,
                                           ranges, n, f->now, flags);
    if (len < 0)
        abort();
    struct rdps_frame_view v;
    if (rdps__frame_decode(buf, (size_t)len, NULL, &v) != RDPS_FRAME_OK)
        abort();
    struct rdps_source s = test_source(src);
    rdps__rel_pub_on_nak(&f->p, &s, &v, f->now);
}

static inline void rp_nak(struct rp *f, uint64_t src, uint32_t receiver_id,
                          const struct rdps_seq_range *ranges, unsigned n)
{
    rp_nak_flags(f, src, receiver_id, ranges, n, 0);
}

static inline void rp_nak1(struct rp *f, uint64_t src, uint32_t start, uint32_t count)
{
    struct rdps_seq_range r = {start, count};
    rp_nak(f, src, 7, &r, 1);
}

/* A STATUS through the wire: encoded, decoded, handed to rdps__rel_pub_on_frame. */
static inline void rp_status(struct rp *f, uint64_t src, uint32_t consumed, uint32_t window)
{
    uint8_t buf[RDPS_FRAME_STATUS_LEN];
    int len = rdps__frame_encode_status(buf, sizeof(buf), RP_SESSION, RP_TOPIC, 7, consumed, window,
                                        f->now);
    struct rdps_frame_view v;
    if (len < 0 || rdps__frame_decode(buf, (size_t)len, NULL, &v) != RDPS_FRAME_OK)
        abort();
    struct rdps_source s = test_source(src);
    rdps__rel_pub_on_frame(&f->p, &s, &v, f->now, f->now);
}

/* A multicast heartbeat sent now (wall clock = f->now, as rp_drain passes it); returns the
 * timestamp it carries, which a receiver echoes. Other actions due are taken first (completed). */
static inline uint64_t rp_beat(struct rp *f)
{
    struct rdps_rel_pub_action a;
    f->p.hb.next = f->now;
    while (rdps__rel_pub_next_action(&f->p, f->now, f->now, &a) == 1) {
        if (a.in_ring)
            rdps__rel_pub_send_done(&f->p, 1);
        if (a.kind == RDPS_REL_PUB_POST_HEARTBEAT && !a.unicast)
            return rdps__get_le64(a.frame + RDPS_FRAME_OFF_TIMESTAMP_NS);
    }
    abort();
}

/* A STATUS echoing the heartbeat stamped echo_ts, held delay_us by the receiver, through the
 * wire at f->now. */
static inline void rp_status_echo(struct rp *f, uint64_t src, uint32_t consumed, uint32_t window,
                                  uint64_t echo_ts, uint32_t delay_us)
{
    uint8_t buf[RDPS_FRAME_STATUS_LEN];
    int len = rdps__frame_encode_status_echo(buf, sizeof(buf), RP_SESSION, RP_TOPIC, 7, consumed,
                                             window, delay_us, echo_ts);
    struct rdps_frame_view v;
    if (len < 0 || rdps__frame_decode(buf, (size_t)len, NULL, &v) != RDPS_FRAME_OK)
        abort();
    struct rdps_source s = test_source(src);
    rdps__rel_pub_on_frame(&f->p, &s, &v, f->now, f->now);
}

/* Discovery announced receiver (src, 7) from src itself: it may join flow control (no hold).
 * Returns rdps__rel_pub_receiver_tag's result. */
static inline int rp_announce(struct rp *f, uint64_t src)
{
    struct rdps_source s = test_source(src);
    return rdps__rel_pub_receiver_tag(&f->p, &s, 7, 0, f->now);
}

/* rp_status from a receiver announced first (the usual honest receiver). */
static inline void rp_join(struct rp *f, uint64_t src, uint32_t consumed, uint32_t window)
{
    (void)rp_announce(f, src);
    rp_status(f, src, consumed, window);
}

static inline enum rdps_rel_rx_state rp_state(const struct rp *f, uint64_t src)
{
    struct rdps_rel_pub_receiver_info info;
    struct rdps_source s = test_source(src);
    if (rdps__rel_pub_receiver_info(&f->p, &s, 7, &info) < 0)
        return RDPS_REL_RX_FREE;
    return info.state;
}

#endif /* RDPS_TESTS_REL_PUB_UTIL_H */
