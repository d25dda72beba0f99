/* SPDX-License-Identifier: BSD-2-Clause */
/* publisher_batch.c - unreliable publishers' batching: small messages join an open datagram that
 * goes when full, when nothing holds it any more, or at a flush (rdps.h, RDPS_SEND_MORE). */
#include "publisher_internal.h"

#include <string.h>

#include "rdps_clock.h"
#include "rdps_error.h"
#include "rdps_log.h"

/*
 * The default rule. A message goes at once, in a datagram of its own, unless a send posted
 * earlier on the ctx's queue has a completion still to be seen (rdps_tx_progress: awaited >
 * seen); then it opens a datagram the next messages join, held until that completion is seen.
 * That is the device's time to send what was queued before the message (which a datagram of its
 * own would have waited behind) plus the time to the poll that reaps it. A back-pressured queue
 * always awaits a completion (the transport requests one when room runs low): held as well.
 *
 * What sends a datagram held for the device: a completion seen at a poll (before and after it
 * handles what arrived) or at a later message's send; a message that does not fit (the full one
 * goes); rdps_ctx_flush(); rdps_ctx_arm() and rdps_ctx_wait() (the application goes to sleep);
 * and RDPS_BATCH_AWAIT_MAX_NS after the first poll that found it held, whatever the device does.
 *
 * Completions are seen when reaped, by a poll or by the transport making room. A sender that
 * does not poll would see none: a message that comes more than RDPS_BATCH_LOOK_NS after the
 * publisher's last post reaps them itself before it decides (the application paused: its lone
 * messages go at once), one sooner joins (it is sending fast: full datagrams). What such a
 * sender leaves held goes with its next send that finds it full, or its next poll or flush.
 */
void rdps__ctx_set_batch_look(rdps_ctx_t *handle, uint64_t ns)
{
    rdps__ctx_of_handle(handle)->batch_look_ns = ns;
}

/* The send a datagram opened now waits for (an rdps_tx_progress position), 0: none. ts: this
 * message's wall clock (a step back counts as a long pause); posted: a full datagram of this
 * publisher was posted for it just now. */
static uint64_t awaited_send(rdps_pub_t *pub, uint64_t ts, bool posted)
{
    rdps_ctx_t *ctx = pub->ctx;
    const struct rdps_tx_progress *tx = ctx->tx;
    if (posted)
        pub->last_post_ts = ts;
    if (!rdps__tx_awaited(tx))
        return 0;
    if (ts - pub->last_post_ts > ctx->batch_look_ns) {
        (void)rdps__ctx_reap_sends(ctx); /* a failure shows at the next poll */
        if (!rdps__tx_awaited(tx))
            return 0;
    }
    return tx->awaited;
}

/* Still held for the device: its awaited completion not seen. */
static inline bool awaiting(const rdps_pub_t *pub)
{
    return pub->open_await != 0 && pub->ctx->tx->seen < pub->open_await;
}

/* Takes a send buffer for a new open datagram whose first message is first_len bytes (nothing
 * changes on failure); await: the send it waits for (awaited_send). */
static int batch_open(rdps_pub_t *pub, uint64_t ts, uint64_t await, uint32_t first_len)
{
    rdps_ctx_t *ctx = pub->ctx;
    struct rdps_transport *t = ctx->transport;
    int rc = t->ops->claim(t, &pub->open_buf);
    if (rc == RDPS_EAGAIN)
        rc = rdps__ctx_claim(ctx, &pub->open_buf); /* flushes and reaps first */
    if (rc < 0)
        return rc;
    uint32_t cap =
        pub->open_buf.capacity < ctx->max_datagram ? pub->open_buf.capacity : ctx->max_datagram;
    /* Opened to be held: its first message is a record at once (rdps_batch.h), unless it leaves
     * no room for another: then it is the payload, as a lone message always is. */
    if (first_len + 2u * RDPS_BATCH_LEN_BYTES <= rdps__batch_capacity(cap) &&
        first_len <= RDPS_BATCH_MAX_RECORD)
        rdps__batch_open_records(&pub->open, pub->open_buf.data, cap);
    else
        rdps__batch_open(&pub->open, pub->open_buf.data, cap);
    if (ctx->cfg.max_message_size < pub->open.max_record)
        pub->open.max_record = (uint32_t)ctx->cfg.max_message_size;
    pub->open.joins_off = pub->local_subs;
    pub->open_seq = pub->next_seq++;
    pub->open_ts = ts;
    pub->open_await = pub->linger_ns != 0 ? 0 : await; /* a linger decides alone */
    pub->open_await_until_ns = 0;
    pub->open_more = false;
    pub->open_deadline_ns = 0;
    pub->open_hold = pub->open_await != 0 || pub->linger_ns != 0;
    pub->open.join_flags = pub->open_hold ? RDPS_SEND_MORE : 0; /* held: no flag needed to join */
    if (pub->linger_ns != 0) {
        pub->open_deadline_ns = rdps__ctx_now(ctx) + pub->linger_ns;
        rdps__ctx_timer_at(ctx, pub->open_deadline_ns); /* the poll that sends it */
    }
    ctx->open_batches++;
    return 0;
}

/* The open datagram's messages are taken: counted as sent and their ordinals used (they are
 * counted here rather than one by one: the join path stays short). */
static void batch_taken(rdps_pub_t *pub, const struct rdps_batch *b)
{
    uint32_t bytes = rdps__batch_message_bytes(b);
    pub->counters.msgs_sent += b->count;
    pub->counters.bytes_sent += bytes;
    pub->next_ordinal += b->count;
}

int rdps__pub_batch_post(rdps_pub_t *pub, unsigned flags)
{
    struct rdps_batch *b = &pub->open;
    if (b->count == 0)
        return 0;
    rdps_ctx_t *ctx = pub->ctx;
    struct rdps_transport *t = ctx->transport;
    const struct rdps_topic *topic = pub->topic;
    uint32_t n = topic->ndests;
    if (n == 0) { /* nobody beyond this ctx (unicast topic, no subscriber yet): delivered already */
        t->ops->abort(t, &pub->open_buf);
        batch_taken(pub, b);
        rdps__batch_reset(b);
        ctx->open_batches--;
        return 0;
    }
    /* The messages were accepted: when the send queue has no room, the datagram waits (the next
     * send gets RDPS_EAGAIN, a poll retries it); submit would drop it. */
    int rc = n > 1 ? rdps__pub_fanout_room_copies(ctx, n)
                   : (rdps__transport_send_room(t) >= 1 ? 0 : RDPS_EAGAIN);
    if (rc < 0)
        return rc;
    rdps__batch_seal(b);
    uint32_t flen =
        rdps__frame_put_data_header(b->frame, pub->session_id, topic->id, pub->open_seq, b->used, 0,
                                    b->used, pub->open_ts, 0, pub->next_ordinal, b->count);
    rc = t->ops->submit(t, &pub->open_buf, flen, topic->dests, n); /* takes the buffer */
    if (rc == 0)
        rc = rdps__pub_post_unless_more(ctx, flags);
    uint32_t count = b->count;
    batch_taken(pub, b);
    rdps__batch_reset(b);
    ctx->open_batches--;
    if (rc < 0)
        return rc; /* refused by the device: lost, counted by the transport */
    pub->counters.frames_sent++;
    pub->counters.frame_bytes_sent += flen;
    pub->counters.unicast_copies += topic->ndests_unicast;
    if (count > 1)
        pub->counters.frames_batched++;
    pub->last_post_ts = pub->open_ts; /* about now: a claim's commit, a flush */
    rdps__pub_sent_data(pub);
    return 0;
}

void rdps__pub_batch_drop(rdps_pub_t *pub)
{
    pub->join = &pub->open; /* a reliable publisher's ring is not joined any more */
    if (pub->open.count == 0)
        return;
    rdps_ctx_t *ctx = pub->ctx;
    int rc = rdps__pub_batch_post(pub, 0);
    if (rc == RDPS_EAGAIN) { /* the send queue is full: make room once */
        ctx->transport->ops->flush(ctx->transport);
        rdps__ctx_reap_sends(ctx);
        rc = rdps__pub_batch_post(pub, 0);
    }
    if (pub->open.count > 0) { /* still refused: dropped with the publisher, and counted */
        RDPS_LOG_WRN("publisher of '%s' destroyed with %u messages the device did not take",
                     pub->topic->name, pub->open.count);
        pub->counters.send_backpressure++;
        /* Their ordinals are used all the same: the last tail heartbeat names them, so its
         * subscribers count them lost (as any datagram the device refused). */
        pub->next_ordinal += pub->open.count;
        ctx->transport->ops->abort(ctx->transport, &pub->open_buf);
        rdps__batch_reset(&pub->open);
        ctx->open_batches--;
    }
}

/* The message just added (len bytes at data, in datagram open_seq): delivered to this ctx's
 * subscribers (before the datagram goes: a claimed message is read from it), and the datagram
 * sent when full or when nothing holds it any more. */
static int batch_added(rdps_pub_t *pub, const void *data, size_t len, unsigned flags)
{
    pub->open_more = (flags & RDPS_SEND_MORE) != 0;
    if (pub->topic->live_subs > 0) {
        uint32_t ordinal = pub->next_ordinal + pub->open.count - 1;
        int rc = rdps__pub_deliver_local(pub, data, len, pub->open_seq, pub->open_ts, 1, ordinal);
        if (rc < 0)
            return rc; /* a callback destroyed the ctx */
    }
    /* Callbacks may have sent on this publisher meanwhile: decide on the datagram as it is. */
    const struct rdps_batch *b = &pub->open;
    if (b->count == 0 || (rdps__batch_room(b) != 0 &&
                          (pub->open_more || pub->open_deadline_ns != 0 || awaiting(pub))))
        return 0;
    int rc = rdps__pub_batch_post(pub, 0);
    /* Not sent now (the send queue is full): it waits, sent by a later send or poll. A datagram
     * the device refused is lost like any send it refuses; the message was taken. */
    return rc == RDPS_EAGAIN ? 0 : rc;
}

/* Makes room for a message of len bytes (fits a datagram): the open datagram when it fits, else
 * the open one goes and a new one opens. *send_now: no datagram is open and nothing would hold
 * one: the message goes in a datagram of its own (the lone-message path, no batching state). */
static int batch_place(rdps_pub_t *pub, uint32_t len, unsigned flags, bool *send_now, uint64_t *ts)
{
    *send_now = false;
    bool posted = false;
    if (pub->open.count > 0) {
        if (rdps__batch_fits(&pub->open, len))
            return 0;
        /* Full: it goes now, its doorbell with the chain when RDPS_SEND_MORE holds this message
         * (one post for the run, as for datagrams of their own). */
        int rc = rdps__pub_batch_post(pub, flags & RDPS_SEND_MORE);
        if (rc < 0)
            return rc;
        posted = true;
    }
    *ts = rdps__clock_realtime_ns();
    uint64_t await = awaited_send(pub, *ts, posted);
    if (await == 0 && !(flags & RDPS_SEND_MORE) && pub->linger_ns == 0) {
        *send_now = true;
        pub->last_post_ts = *ts;
        return 0;
    }
    return batch_open(pub, *ts, await, len);
}

int rdps__pub_batch_send(rdps_pub_t *pub, const void *data, size_t len, unsigned flags)
{
    struct rdps_batch *b = &pub->open;
    /* The batching fast path: the message joins the open datagram. */
    if (b->count > 0 && rdps__batch_fits(b, (uint32_t)len)) {
        memcpy(rdps__batch_add(b, (uint32_t)len), data, len);
        return batch_added(pub, data, len, flags);
    }
    bool send_now;
    uint64_t ts = 0;
    int rc = batch_place(pub, (uint32_t)len, flags, &send_now, &ts);
    if (rc < 0)
        return rdps__pub_refuse(pub, rc);
    if (send_now)
        return rdps__pub_send_direct(pub, data, len, flags, ts);
    memcpy(rdps__batch_add(b, (uint32_t)len), data, len);
    return batch_added(pub, data, len, flags);
}

int rdps__pub_batch_claim(rdps_pub_t *pub, size_t len, void **data)
{
    /* A claim always writes into an open datagram: its commit decides whether it waits. */
    if (pub->open.count == 0 || !rdps__batch_fits(&pub->open, (uint32_t)len)) {
        int rc = rdps__pub_batch_post(pub, 0);
        if (rc < 0)
            return rc;
        uint64_t ts = rdps__clock_realtime_ns();
        if ((rc = batch_open(pub, ts, awaited_send(pub, ts, false), (uint32_t)len)) < 0)
            return rc;
    }
    *data = rdps__batch_add(&pub->open, (uint32_t)len);
    rdps__batch_hold_joins(&pub->open); /* until the commit says how long it is */
    return 0;
}

int rdps__pub_batch_commit(rdps_pub_t *pub, size_t len)
{
    struct rdps_batch *b = &pub->open;
    rdps__batch_shrink_last(b, (uint32_t)pub->claim_capacity, (uint32_t)len);
    /* Nothing to deliver in this ctx, and the datagram stays open (batch_added's decision, its
     * common case first: a message may still join it, and it is held or RDPS_SEND_MORE). */
    if (b->join_limit != 0 && pub->topic->live_subs == 0 &&
        ((pub->claim_flags & RDPS_SEND_MORE) || pub->open_deadline_ns != 0 || awaiting(pub)))
        return 0;
    return batch_added(pub, rdps__batch_last(b, (uint32_t)len), len, pub->claim_flags);
}

void rdps__pub_batch_abort(rdps_pub_t *pub)
{
    struct rdps_batch *b = &pub->open;
    rdps__batch_remove_last(b, (uint32_t)pub->claim_capacity);
    if (b->count == 0) { /* the claim had opened it: nothing is left behind, no sequence used */
        rdps_ctx_t *ctx = pub->ctx;
        ctx->transport->ops->abort(ctx->transport, &pub->open_buf);
        pub->next_seq--;
        ctx->open_batches--;
    }
}

/* Whether a poll sends p's open datagram held for the device (at now_ns): its completion seen,
 * or its wait, counted from the first poll that found it held, at its cap. */
static bool await_over(rdps_pub_t *p, uint64_t now_ns)
{
    if (!awaiting(p))
        return true;
    if (p->open_await_until_ns == 0)
        p->open_await_until_ns = now_ns + RDPS_BATCH_AWAIT_MAX_NS;
    return now_ns >= p->open_await_until_ns;
}

int rdps__ctx_batches_flush(rdps_ctx_t *ctx, enum rdps_flush_mode mode, uint64_t now_ns,
                            uint64_t *next_ns)
{
    int first_err = 0;
    *next_ns = UINT64_MAX;
    /* Going to sleep: a datagram lingering less than a millisecond more goes now (the ctx would
     * not sleep for less). */
    uint64_t linger_until = mode == RDPS_FLUSH_SLEEP ? now_ns + 1000000ull : now_ns;
    for (rdps_pub_t *p = ctx->pubs; p != NULL && ctx->open_batches > 0; p = p->next) {
        if (p->open.count == 0 || p->claimed)
            continue;
        if (mode != RDPS_FLUSH_ALL) {
            if (p->open_deadline_ns > linger_until) {
                if (p->open_deadline_ns < *next_ns) /* lingering: the ctx wakes for it */
                    *next_ns = p->open_deadline_ns;
                continue;
            }
            if (mode == RDPS_FLUSH_POLL && !await_over(p, now_ns))
                continue;
        }
        int rc = rdps__pub_batch_post(p, RDPS_SEND_MORE); /* the caller flushes the chain */
        if (rc < 0 && first_err == 0 && rc != RDPS_EAGAIN)
            first_err = rc;
    }
    return first_err;
}
