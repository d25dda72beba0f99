/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_reasm_model.h - fuzz_reasm.c's model: what its honest publishers published (a table of
 * messages by source, session, first sequence and ordinal) and the checker of every delivery,
 * gap and loss event the receive engine reports against it. */
#ifndef RDPS_TESTS_FUZZ_REASM_MODEL_H
#define RDPS_TESTS_FUZZ_REASM_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "fuzz_publisher.h"
#include "rdps_endian.h"
#include "rdps_reasm.h"

/*
 * Two honest sources publish through fuzz_publisher.h (several messages per datagram, or one
 * message in several): each message's bytes are a function of (source, session, first
 * sequence, ordinal, length). The fuzzer decides when they publish, how their frames are lost,
 * duplicated and reordered, when time passes, when a publisher's ordinals jump or go backwards,
 * and what four hostile sources send: arbitrary datagrams, well-formed DATA and HEARTBEAT
 * headers with chosen fields (ordinals walking backwards and forwards, counts that do not match
 * the records, valid batches), and copies of honest frames. The hostile sources are chosen to
 * collide with the honest ones (same GID other QPN, same QPN other GID, LID-only). Invariants
 * (abort on violation): streams, sources, partials and arena bytes within the configured caps
 * after every datagram; every message delivered from an honest source was published by it, with
 * exactly its length, bytes and ordinal; none is delivered twice while no stream was dropped.
 *
 * Message counts (while the publisher's ordinals only ever moved forward with what it sent or
 * lost on the way): a gap (session 1) counts only messages the publisher numbered, none twice,
 * none delivered before; a message counted lost is delivered later only by a late frame
 * (late_after_gap); the gaps' message counts add up to the counter gap_msgs. The reliable
 * session (2) delivers messages and reports loss events that tile the ordinals in order: each
 * message's ordinal, or each event's first, is where the previous one ended; when its stream is
 * dropped (the first drop of the input), its last loss event ends after the newest datagram it
 * was sent (what a dropped stream had not delivered is lost, up to what it saw).
 *
 * Session 2 of each honest source is reliable (RELIABLE frames, reliable heartbeats with a
 * fuzzer-chosen retained count and the true ordinal of the oldest retained datagram, repairs
 * with RETRANSMIT): its deliveries and loss events must tile the sequence space in order from
 * the first delivery (no message out of order, none twice, no loss event over a delivered
 * message), until the stream is dropped, and its tracker stay within the window
 * (consumed <= next <= consumed + window). Messages go up to FUZZ_MAX_MSG bytes: in small
 * datagrams (8-byte payloads and less) a reliable message is longer than the sequence window and
 * streams through it. Every NAK and STATUS the engine emits must decode.
 */
#define FUZZ_MAX_MSG   20480u
#define HONEST         2
#define HOSTILE        4
#define SESSIONS       2
#define POOL           64
#define MAX_DGRAM      (RDPS_FRAME_HEADER_LEN + 8 + 8 * 63)
#define MAX_PUBLISHED  4096
#define PUBLISHED_HASH 8192
#define TOPIC          0x99u
#define SEQ_RING       65536u /* datagram ordinals remembered per publisher (heartbeat trails) */

struct published {
    uint8_t source, session;
    uint32_t first_seq, ordinal, len;
    uint32_t delivered;
    uint64_t delivered_epoch; /* streams_dropped() at the last delivery */
    uint64_t gap_epoch;       /* ... when a gap counted it */
    bool lost;                /* inside a loss event */
    bool gap_counted;         /* inside a gap's messages */
};

#define RELIABLE_SESSION 2

struct pooled {
    uint8_t bytes[MAX_DGRAM];
    uint32_t len;
    uint8_t source; /* honest source index */
};

/* What the checker knows of one honest (source, session). */
struct honest {
    struct fuzz_pub pub;
    uint32_t seq0, ord0;     /* the first sequence and ordinal: nothing before was published */
    bool ord_broken;         /* the ordinals jumped or went back: counts are not checkable */
    bool gap_seen;           /* gap_end is valid, for gap_epoch */
    uint32_t gap_end;        /* messages before it were counted by a gap */
    uint64_t gap_epoch;      /* streams_dropped() when gap_end was set */
    uint32_t ring[SEQ_RING]; /* each datagram's ordinal, by seq % SEQ_RING */
};

struct harness {
    struct rdps_reasm r;
    struct rdps_reasm_config cfg;
    struct rdps_source sources[HONEST + HOSTILE];
    uint32_t published_count, pool_count, pool_next;
    uint64_t now;
    uint64_t gap_msgs;               /* sum of every gap's message count */
    uint64_t loss_events, loss_msgs; /* honest sources' loss events and their messages */
    /* The sending context of the honest publishers' emit(). */
    int emit_source;
    uint32_t emit_session;
    bool emit_now;
    /* Reliable session of each honest source: where the next delivery or loss must start. */
    bool rel_tiling[HONEST];
    uint32_t rel_pos[HONEST];      /* next sequence */
    uint32_t rel_ord[HONEST];      /* next ordinal */
    uint32_t rel_last_seq[HONEST]; /* the last delivery's datagram (a batch goes on in it) */
    bool rel_in_batch[HONEST];
    uint64_t rel_dropped[HONEST]; /* streams_dropped() when rel_pos was set */
    /* The newest DATA of each reliable session sent, and the ordinal after it. */
    bool newest_valid[HONEST];
    uint32_t newest_seq[HONEST], newest_after[HONEST];
    /* The datagram being input made newest_after[src] new; before it, prev_after[src]. A stream
     * dropped while it is input (expired or evicted as it arrives) never saw it. */
    int newer_src;
    uint32_t prev_after[HONEST];
    /* A reliable session dropped (the input's first stream dropped): where its last event ended */
    bool drop_pending[HONEST];
    uint32_t drop_end[HONEST];
    uint32_t hostile_ord[HOSTILE];
    int32_t published_hash[PUBLISHED_HASH];
    int32_t ordinal_hash[PUBLISHED_HASH];
    /* Read only below their counts or after init: not cleared per input. */
    struct published published[MAX_PUBLISHED];
    struct pooled pool[POOL];
    struct honest honest[HONEST][SESSIONS];
};

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 32);
}

static uint32_t pub_key(uint32_t source, uint32_t session)
{
    return source * SESSIONS + session;
}

static uint32_t published_slot(uint32_t source, uint32_t session, uint32_t first_seq,
                               uint32_t ordinal)
{
    return (uint32_t)mix64(((uint64_t)source << 40) ^ ((uint64_t)session << 32) ^ first_seq ^
                           ((uint64_t)ordinal << 20)) &
           (PUBLISHED_HASH - 1);
}

static uint32_t ordinal_slot(uint32_t source, uint32_t session, uint32_t ordinal)
{
    return (uint32_t)mix64(((uint64_t)source << 40) ^ ((uint64_t)session << 32) ^ ordinal ^
                           0x5bd1e995u) &
           (PUBLISHED_HASH - 1);
}

static struct published *published_find(struct harness *hx, uint32_t source, uint32_t session,
                                        uint32_t first_seq, uint32_t ordinal)
{
    for (uint32_t i = published_slot(source, session, first_seq, ordinal);;
         i = (i + 1) & (PUBLISHED_HASH - 1)) {
        int32_t p = hx->published_hash[i];
        if (p < 0)
            return NULL;
        struct published *m = &hx->published[p];
        if (m->source == source && m->session == session && m->first_seq == first_seq &&
            m->ordinal == ordinal)
            return m;
    }
}

/* The newest message published with this ordinal (ordinals are unique while not broken). */
static struct published *published_by_ordinal(struct harness *hx, uint32_t source, uint32_t session,
                                              uint32_t ordinal)
{
    for (uint32_t i = ordinal_slot(source, session, ordinal);; i = (i + 1) & (PUBLISHED_HASH - 1)) {
        int32_t p = hx->ordinal_hash[i];
        if (p < 0)
            return NULL;
        struct published *m = &hx->published[p];
        if (m->source == source && m->session == session && m->ordinal == ordinal)
            return m;
    }
}

static void published_add(struct harness *hx, uint32_t source, uint32_t session, uint32_t first_seq,
                          uint32_t ordinal, uint32_t len)
{
    /* A sequence reused after 2^32 would be a second message at the same place: not reached. */
    struct published *m = published_find(hx, source, session, first_seq, ordinal);
    if (m == NULL) {
        if (hx->published_count == MAX_PUBLISHED)
            abort(); /* publish() checks for room first */
        uint32_t i = published_slot(source, session, first_seq, ordinal);
        while (hx->published_hash[i] >= 0)
            i = (i + 1) & (PUBLISHED_HASH - 1);
        hx->published_hash[i] = (int32_t)hx->published_count;
        m = &hx->published[hx->published_count++];
        uint32_t k = ordinal_slot(source, session, ordinal);
        while (hx->ordinal_hash[k] >= 0) {
            const struct published *o = &hx->published[hx->ordinal_hash[k]];
            if (o->source == source && o->session == session && o->ordinal == ordinal)
                break; /* a broken publisher's second message of this ordinal: the newest */
            k = (k + 1) & (PUBLISHED_HASH - 1);
        }
        hx->ordinal_hash[k] = (int32_t)(m - hx->published);
    }
    memset(m, 0, sizeof(*m));
    m->source = (uint8_t)source;
    m->session = (uint8_t)session;
    m->first_seq = first_seq;
    m->ordinal = ordinal;
    m->len = len;
}

static int honest_index(const struct harness *hx, const struct rdps_source *s)
{
    for (int i = 0; i < HONEST; i++)
        if (rdps__source_equal(&hx->sources[i], s))
            return i;
    return -1;
}

static uint64_t streams_dropped(const struct rdps_reasm_counters *c)
{
    return c->sessions_evicted + c->sessions_expired + c->sessions_source_quota;
}

/* [first, first + count) lies among the ordinals publisher h numbered (sent or lost). */
static bool ordinals_published(const struct honest *h, uint32_t first, uint32_t count)
{
    uint32_t span = h->pub.next_ordinal - h->ord0;
    return count <= span && first - h->ord0 <= span - count;
}

/* The reliable session's deliveries tile sequences and ordinals (see the model). */
static void check_rel_delivery(struct harness *hx, int src, const struct rdps_reasm_msg_info *info,
                               const struct published *m, uint64_t dropped)
{
    const struct honest *h = &hx->honest[src][RELIABLE_SESSION - 1];
    if (!info->reliable || (m->lost && dropped == 0))
        abort(); /* delivered after a loss event covered it */
    if (hx->rel_tiling[src] && hx->rel_dropped[src] == dropped) {
        bool next_in_batch = hx->rel_in_batch[src] && info->frag_count == 1 &&
                             info->first_seq == hx->rel_last_seq[src];
        if (info->first_seq != hx->rel_pos[src] && !next_in_batch)
            abort(); /* out of order, or a hole without a loss event */
        if (!h->ord_broken && info->ordinal != hx->rel_ord[src])
            abort(); /* a message skipped, or counted twice by a loss event */
    }
    hx->rel_tiling[src] = true;
    hx->rel_dropped[src] = dropped;
    hx->rel_pos[src] = info->first_seq + info->frag_count;
    hx->rel_ord[src] = info->ordinal + 1;
    hx->rel_last_seq[src] = info->first_seq;
    hx->rel_in_batch[src] = info->frag_count == 1;
}

static void on_deliver(void *user, const uint8_t *msg, uint32_t len,
                       const struct rdps_reasm_msg_info *info)
{
    struct harness *hx = user;
    if (len != info->msg_len || len > FUZZ_MAX_MSG || info->frag_count == 0 ||
        (len > 0 && msg == NULL))
        abort();
    int src = honest_index(hx, &info->source);
    if (src < 0) {
        /* Hostile: anything goes, but every byte must be readable (ASan). */
        volatile uint8_t sum = 0;
        for (uint32_t i = 0; i < len; i++)
            sum ^= msg[i];
        (void)sum;
        return;
    }
    if (info->topic_id != TOPIC || info->session_id < 1 || info->session_id > SESSIONS)
        abort();
    struct published *m =
        published_find(hx, (uint32_t)src, info->session_id, info->first_seq, info->ordinal);
    if (m == NULL || m->len != len)
        abort(); /* never published: assembled from foreign or stale bytes, or a wrong ordinal */
    static uint8_t expect[FUZZ_MAX_MSG];
    fuzz_msg_fill(expect, pub_key((uint32_t)src, info->session_id), info->first_seq, info->ordinal,
                  len);
    if (len > 0 && memcmp(msg, expect, len) != 0)
        abort();
    const struct rdps_reasm_counters *c = rdps__reasm_counters(&hx->r);
    uint64_t dropped = streams_dropped(c);
    if (m->delivered++ > 0 && dropped == 0)
        abort(); /* delivered twice by a stream that kept its window */
    /* Counted lost by a gap, then delivered: never (a frame that comes after its gap is dropped,
     * late_after_gap), while the stream lives. */
    if (m->gap_counted && m->gap_epoch == dropped)
        abort();
    m->delivered_epoch = dropped;
    if (info->session_id == RELIABLE_SESSION)
        check_rel_delivery(hx, src, info, m, dropped);
}

/* An unreliable stream's gap: its messages were numbered by the publisher, counted once, and
 * none of them had been delivered. */
static void on_gap(void *user, const struct rdps_reasm_gap *gap)
{
    struct harness *hx = user;
    if (gap->count == 0)
        abort();
    hx->gap_msgs += gap->msg_count;
    int src = honest_index(hx, gap->source);
    if (src < 0)
        return;
    if (gap->session_id != 1 || gap->topic_id != TOPIC)
        abort(); /* the reliable session reports loss events, not gaps */
    struct honest *h = &hx->honest[src][0];
    if (h->ord_broken || gap->msg_count == 0)
        return;
    if (!ordinals_published(h, gap->msg_first, gap->msg_count))
        abort(); /* more messages lost than the publisher numbered */
    uint64_t epoch = streams_dropped(rdps__reasm_counters(&hx->r));
    if (h->gap_seen && h->gap_epoch == epoch && (int32_t)(gap->msg_first - h->gap_end) < 0)
        abort(); /* a message counted by two gaps */
    h->gap_seen = true;
    h->gap_epoch = epoch;
    h->gap_end = gap->msg_first + gap->msg_count;
    for (uint32_t i = 0; i < gap->msg_count && i < MAX_PUBLISHED; i++) {
        struct published *m = published_by_ordinal(hx, (uint32_t)src, 1, gap->msg_first + i);
        if (m == NULL)
            continue; /* lost before it reached anyone: a skipped datagram's */
        if (m->delivered > 0 && m->delivered_epoch == epoch)
            abort(); /* a gap counted a message delivered whole */
        m->gap_counted = true;
        m->gap_epoch = epoch;
    }
}

static void on_loss(void *user, const struct rdps_reasm_loss *loss)
{
    struct harness *hx = user;
    if (loss->count == 0 || loss->reason <= RDPS__LOSS_NONE || loss->reason >= RDPS__LOSS_REASONS)
        abort();
    int src = honest_index(hx, loss->source);
    if (src < 0)
        return;
    if (loss->session_id != RELIABLE_SESSION)
        abort(); /* only reliable streams report loss events */
    hx->loss_events++;
    hx->loss_msgs += loss->msg_count;
    const struct honest *h = &hx->honest[src][RELIABLE_SESSION - 1];
    if (!h->ord_broken && loss->msg_count > 0 &&
        !ordinals_published(h, loss->msg_first, loss->msg_count))
        abort(); /* more messages lost than the publisher numbered */
    uint64_t dropped = streams_dropped(rdps__reasm_counters(&hx->r));
    if (dropped != hx->rel_dropped[src]) {
        /* Raised as its stream goes (an earlier loss may end with it, under its reason). */
        if (dropped == 1 && hx->rel_dropped[src] == 0 && !h->ord_broken && hx->newest_valid[src]) {
            hx->drop_pending[src] = true;
            hx->drop_end[src] = loss->msg_first + loss->msg_count;
        }
        hx->rel_tiling[src] = false;
    }
    bool tiling = hx->rel_tiling[src] && hx->rel_dropped[src] == dropped;
    if (tiling && (loss->first_seq != hx->rel_pos[src] ||
                   (!h->ord_broken && loss->msg_first != hx->rel_ord[src])))
        abort();
    for (uint32_t i = 0; i < hx->published_count; i++) {
        struct published *m = &hx->published[i];
        if (m->source != src || m->session != RELIABLE_SESSION ||
            m->first_seq - loss->first_seq >= loss->count)
            continue;
        if (m->delivered > 0 && dropped == 0)
            abort(); /* a loss event over a delivered message */
        m->lost = true;
    }
    if (loss->reason == RDPS_LOSS_SESSION_DROPPED) {
        hx->rel_tiling[src] = false; /* a new stream joins at the live position */
        return;
    }
    hx->rel_tiling[src] = hx->rel_tiling[src] || dropped == hx->rel_dropped[src];
    hx->rel_dropped[src] = dropped;
    hx->rel_pos[src] = loss->first_seq + loss->count;
    hx->rel_ord[src] = loss->msg_first + loss->msg_count;
    hx->rel_in_batch[src] = false;
}

static void on_rel_send(void *user, const struct rdps_source *dest, uint32_t session_id,
                        const uint8_t *frame, size_t len)
{
    (void)user;
    (void)dest;
    struct rdps_frame_view v;
    if (rdps__frame_decode(frame, len, NULL, &v) != RDPS_FRAME_OK ||
        v.hdr.session_id != session_id ||
        (v.hdr.type != RDPS_FRAME_NAK && v.hdr.type != RDPS_FRAME_STATUS))
        abort();
}

static void check_bounds(const struct harness *hx)
{
    const struct rdps_reasm *r = &hx->r;
    if (rdps__reasm_stream_count(r) > hx->cfg.max_sessions ||
        rdps__reasm_source_count(r) > hx->cfg.max_sessions ||
        rdps__reasm_partial_count(r) > hx->cfg.max_partials ||
        rdps__reasm_arena_used(r) > hx->cfg.reasm_cap_bytes)
        abort();
    for (int src = 0; src < HONEST; src++) {
        struct rdps_rel_stream_info in;
        if (rdps__reasm_rel_stream_info(r, &hx->sources[src], RELIABLE_SESSION, &in) < 0)
            continue;
        uint32_t held = in.next_seq - in.consumed_seq;
        if (held >= RDPS_REASM_WINDOW)
            abort(); /* the window slid over an unreleased sequence, or next went backwards */
    }
}

/* A dropped reliable session's loss reached the newest datagram it was sent (see the model). */
static void check_drops(struct harness *hx)
{
    for (int src = 0; src < HONEST; src++) {
        if (!hx->drop_pending[src])
            continue;
        hx->drop_pending[src] = false;
        uint32_t seen_after = hx->newer_src == src ? hx->prev_after[src] : hx->newest_after[src];
        if ((int32_t)(hx->drop_end[src] - seen_after) < 0)
            abort(); /* messages the dropped stream saw, neither delivered nor counted lost */
    }
}

/* Remembers the newest honest reliable DATA sent, and the ordinal after it. */
static void note_sent(struct harness *hx, int source, const uint8_t *dgram, size_t len)
{
    struct rdps_frame_view v;
    if (source >= HONEST || rdps__frame_decode(dgram, len, NULL, &v) != RDPS_FRAME_OK ||
        v.hdr.type != RDPS_FRAME_DATA || v.hdr.session_id != RELIABLE_SESSION)
        return;
    if (hx->newest_valid[source] && !rdps__seq_gt(v.hdr.seq, hx->newest_seq[source]))
        return;
    if (hx->newest_valid[source]) {
        hx->newer_src = source;
        hx->prev_after[source] = hx->newest_after[source];
    }
    hx->newest_valid[source] = true;
    hx->newest_seq[source] = v.hdr.seq;
    hx->newest_after[source] = rdps__frame_ordinal_after(&v.hdr);
}

#endif /* RDPS_TESTS_FUZZ_REASM_MODEL_H */
