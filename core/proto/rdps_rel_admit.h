/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_rel_admit.h - the reliable publisher's admission: messages into the ring under flow
 * control (append, reserve/commit, pins), the post cursor and the rate limit (rdps_rel_pub.h). */
#ifndef RDPS_PROTO_REL_ADMIT_H
#define RDPS_PROTO_REL_ADMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdps_batch.h"
#include "rdps_pub_ring.h"
#include "rdps_rel_beat.h"
#include "rdps_rel_flow.h"
#include "rdps_rel_pub_types.h"
#include "rdps_seq.h"

/*
 * Model
 * -----
 * Ring (rdps_pub_ring.h, owned here). Append fragments a message into DATA frames (RELIABLE
 * flag) written once into caller memory. Sequences [trail, post) have been handed out, [post,
 * head) are written and wait to be posted: `post_seq` is the post cursor, which the engine
 * advances as it posts (rdps__rel_adm_take_post). Append returns RDPS_EAGAIN before anything is
 * written when flow control (rdps_rel_flow.h: the window, missing tagged receivers, a connecting
 * hold) or the ring cannot take the whole message; it never waits. Reserve and commit append a
 * one-datagram message the caller writes in place (zero copy), admitted by the same rules.
 *
 * The trail moves only when an append needs room, and only over frames that are (a) posted, (b)
 * not in flight (completions are reported in posting order), (c) below flow control's protection
 * point, and (d) below a pinned sequence. Moving it evicts the receivers it passed (LAGGED,
 * rdps_rel_flow.h). Each refusal is counted by cause and reported to flow control (its stall
 * clock); when the window begins to refuse, an idle publisher's heartbeat comes sooner
 * (rdps_rel_beat.h).
 *
 * Batching (cfg.batching): a message that fits a datagram joins the open frame, the newest in
 * the ring, when there is room (rdps_batch.h: the first message is the payload, two or more are
 * records); otherwise the open frame is closed and a new one opens, admitted as a one-datagram
 * append at its largest (so a join needs no admission: its room was admitted). A message of more
 * than a datagram closes the open frame and is fragmented as always. The open frame waits with
 * the frames not posted yet and is closed (header written, shrunk in the ring) when the engine
 * takes it to post: at once when nothing holds the publisher back (a lone message pays nothing),
 * later when the window, the rate limit, the in-flight cap, the send queue or the caller
 * (RDPS_SEND_MORE: it does not ask for posts) holds it, and meanwhile later messages fill it. A
 * lingering open frame (batch_linger_ns) and one holding a reservation are not taken: `ready_seq`
 * stops before them. Each message takes the next ordinal; a frame's header names its first.
 * The default rule (await_sends, without a linger): when the open frame is the next to post and
 * ring frames are in flight (posted, their completion not reported), it waits for them, at most
 * RDPS_BATCH_AWAIT_MAX_NS from its opening: the device's time to send what is ahead of it, which
 * it would wait behind anyway. A completion reported (the caller's poll) or the cap lets it go;
 * rdps__rel_adm_end_await too (the caller's flush, or its going to sleep).
 *
 * Rate limit (rate_bytes_per_s): GCRA over every datagram put on the wire, new data and repairs
 * together: rate_paid_ns is when the bytes charged so far are paid off, and a datagram goes while
 * it is at most RDPS_REL_RATE_BURST_NS ahead of now. Repairs wait for the allowance like new
 * data (ahead of it), so they never put the publisher into debt beyond one burst.
 *
 * Calls flow control, the heartbeat clock and the ring; the engine above decides what to post.
 */

struct rdps_rel_admission {
    const struct rdps_rel_pub_config *cfg; /* the engine's */
    struct rdps_rel_pub_counters *c;       /* the engine's */
    struct rdps_rel_flowctl *fc;           /* admits, is told of refusals and successes */
    struct rdps_rel_beat *beat;            /* sooner when the window begins to refuse */
    /* cfg's, read for every message (a copy saves a load on the hot path) */
    uint32_t session_id;
    uint64_t topic_id;
    enum rdps_rel_flow flow;
    uint64_t rate_bytes_per_s;
    struct rdps_pub_ring ring;
    uint32_t post_seq;     /* next frame to post: [trail, post) posted, [post, head) waiting */
    uint32_t next_ordinal; /* the ordinal of the next message appended */
    uint32_t payload;      /* max_datagram - header (- the parity overhead) */
    uint32_t max_msg_len;  /* cfg.max_msg_len capped at what the ring holds */
    /* Zero-copy: room for one datagram reserved at the head (rdps__rel_adm_reserve). */
    bool reserved;
    uint32_t reserve_cap; /* payload bytes it holds */
    uint64_t reserve_pos; /* ring position of the frame */
    /* The trail does not pass pin_seq while pins > 0 (rdps__rel_adm_pin). */
    uint32_t pins, pin_seq;
    /* Batching: the open frame (open.count > 0), sequence open_seq = head_seq - 1. Frames
     * [post_seq, ready_seq) may be posted: ready_seq is head_seq, or open_seq while the open
     * frame lingers (until open_until_ns) or holds a reservation (reserve_joined). */
    bool batching;
    bool lingering;
    bool await_sends; /* the open frame waits for the frames in flight (the default rule) */
    uint64_t await_until_ns;
    bool reserve_joined; /* the reservation is a record of the open frame */
    bool reserve_opened; /* ... which it opened (unreserve takes the frame back) */
    uint32_t ready_seq;
    uint32_t open_seq, open_ordinal;
    uint64_t open_wall_ns, open_until_ns;
    struct rdps_batch open;
    uint8_t *reserve_payload; /* where the reserved message goes */
    /* The last message appended: its first frame and how many it spans (local delivery). */
    uint32_t last_seq, last_frames;
    /* Rate limit (cfg.rate_bytes_per_s): the time the bytes charged so far are paid off; new
     * data goes while it is at most RDPS_REL_RATE_BURST_NS ahead of now (GCRA). */
    uint64_t rate_paid_ns;
    bool rate_waiting; /* new data is waiting for the limit (counted once per wait) */
};

/* The ring over cfg->ring_mem (its slot and in-flight tables: RDPS_EINVAL, RDPS_ENOMEM) and the
 * longest message it takes. */
int rdps__rel_adm_init(struct rdps_rel_admission *adm, const struct rdps_rel_pub_config *cfg,
                       struct rdps_rel_pub_counters *c, struct rdps_rel_flowctl *fc,
                       struct rdps_rel_beat *beat);
void rdps__rel_adm_fini(struct rdps_rel_admission *adm);

/* rdps__rel_pub_append, _reserve, _commit, _unreserve, _pin, _unpin (rdps_rel_pub.h). */
int rdps__rel_adm_append(struct rdps_rel_admission *adm, const void *msg, size_t len,
                         uint64_t now_ns, uint64_t wall_ns);
int rdps__rel_adm_reserve(struct rdps_rel_admission *adm, uint32_t want, uint64_t now_ns,
                          uint64_t wall_ns, uint8_t **payload, uint32_t *capacity);
int rdps__rel_adm_commit(struct rdps_rel_admission *adm, size_t len, uint64_t wall_ns);
void rdps__rel_adm_unreserve(struct rdps_rel_admission *adm);

/* Closes the open frame (batching): its header written with its messages, its ring slot shrunk
 * to them. No-op when none is open. */
void rdps__rel_adm_close(struct rdps_rel_admission *adm);

/* The ordinal the next message appended takes: after the open frame's (counted when it closes). */
static inline uint32_t rdps__rel_adm_next_ordinal(const struct rdps_rel_admission *adm)
{
    return adm->next_ordinal + adm->open.count;
}

/* Where frames ready to post end (see Batching). */
static inline void rdps__rel_adm_set_ready(struct rdps_rel_admission *adm)
{
    bool held = adm->open.count > 0 && (adm->lingering || adm->reserve_joined);
    adm->ready_seq = held ? adm->open_seq : adm->ring.head_seq;
}
/* A lingering open frame whose time came, or any (flush): it may be posted now. */
static inline void rdps__rel_adm_linger_due(struct rdps_rel_admission *adm, uint64_t now_ns)
{
    if (adm->lingering && now_ns >= adm->open_until_ns) {
        adm->lingering = false;
        rdps__rel_adm_set_ready(adm);
    }
}
/* When the lingering open frame may go (UINT64_MAX: none lingers). */
static inline uint64_t rdps__rel_adm_linger_until(const struct rdps_rel_admission *adm)
{
    return adm->lingering ? adm->open_until_ns : UINT64_MAX;
}
/* The open frame is the next to post and waits for the frames in flight (see Batching). */
static inline bool rdps__rel_adm_awaiting(const struct rdps_rel_admission *adm)
{
    return adm->await_sends && adm->post_seq == adm->open_seq &&
           rdps__pub_ring_inflight(&adm->ring) > 0;
}
/* An open frame's wait for the frames in flight is over at its cap, or at once (UINT64_MAX). */
static inline void rdps__rel_adm_await_due(struct rdps_rel_admission *adm, uint64_t now_ns)
{
    if (adm->await_sends && now_ns >= adm->await_until_ns)
        adm->await_sends = false;
}
/* When the open frame's wait for the frames in flight ends at the latest (UINT64_MAX: none). */
static inline uint64_t rdps__rel_adm_await_until(const struct rdps_rel_admission *adm)
{
    return rdps__rel_adm_awaiting(adm) ? adm->await_until_ns : UINT64_MAX;
}
/* Frames wait that may be posted (the window and the rate aside). */
static inline bool rdps__rel_adm_unposted(const struct rdps_rel_admission *adm)
{
    return adm->post_seq != adm->ready_seq && !rdps__rel_adm_awaiting(adm);
}
static inline void rdps__rel_adm_pin(struct rdps_rel_admission *adm, uint32_t seq)
{
    if (adm->pins++ == 0)
        adm->pin_seq = seq;
}
static inline void rdps__rel_adm_unpin(struct rdps_rel_admission *adm)
{
    if (adm->pins > 0)
        adm->pins--;
}

/* New data waits in the ring and may be posted (window), rate aside. */
static inline bool rdps__rel_adm_data_waiting(struct rdps_rel_admission *adm)
{
    return rdps__rel_adm_unposted(adm) && rdps__rel_flow_may_post(adm->fc, adm->post_seq);
}
/* Hands out the next waiting frame's sequence (the caller checked it may go), closing it first
 * when it is the open frame. */
static inline uint32_t rdps__rel_adm_take_post(struct rdps_rel_admission *adm)
{
    if (adm->open.count > 0 && adm->post_seq == adm->open_seq)
        rdps__rel_adm_close(adm);
    return adm->post_seq++;
}

/* Rate limit: may a datagram go now? */
static inline bool rdps__rel_adm_rate_allows(const struct rdps_rel_admission *adm, uint64_t now_ns)
{
    return adm->rate_bytes_per_s == 0 || adm->rate_paid_ns <= now_ns + RDPS_REL_RATE_BURST_NS;
}
/* When a datagram may go again (rate_allows is false before). */
static inline uint64_t rdps__rel_adm_rate_ready_ns(const struct rdps_rel_admission *adm)
{
    return adm->rate_paid_ns - RDPS_REL_RATE_BURST_NS;
}
/* New data waits in the ring for the rate limit only (a heartbeat would say nothing new). */
static inline bool rdps__rel_adm_rate_paced(struct rdps_rel_admission *adm, uint64_t now_ns)
{
    return !rdps__rel_adm_rate_allows(adm, now_ns) && rdps__rel_adm_data_waiting(adm);
}
/* May waiting new data go now? Counts each wait for the rate limit once. */
static inline bool rdps__rel_adm_data_may_go(struct rdps_rel_admission *adm, uint64_t now_ns)
{
    if (rdps__rel_adm_rate_allows(adm, now_ns)) {
        adm->rate_waiting = false;
        return true;
    }
    if (!adm->rate_waiting) {
        adm->rate_waiting = true;
        adm->c->rate_waits++;
    }
    return false;
}
/* Charges a datagram of len bytes to the rate limit. */
static inline void rdps__rel_adm_rate_charge(struct rdps_rel_admission *adm, uint32_t len,
                                             uint64_t now_ns)
{
    if (adm->rate_bytes_per_s == 0)
        return;
    if (adm->rate_paid_ns < now_ns)
        adm->rate_paid_ns = now_ns; /* idle time is not saved up beyond the burst */
    adm->rate_paid_ns += (uint64_t)len * 1000000000ull / adm->rate_bytes_per_s;
}

#endif /* RDPS_PROTO_REL_ADMIT_H */
