/* SPDX-License-Identifier: BSD-2-Clause */
/* publisher.c - rdps_pub: fragments messages into DATA frames and posts them to the topic's group.
 */
#include "publisher_internal.h"

#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "rdps_clock.h"
#include "rdps_error.h"
#include "rdps_frag.h"
#include "rdps_log.h"

/*
 * Claims. A publisher lends at most one claim at a time: a reliable publisher's reserved room is
 * the head of its ring, so nothing may be appended before its commit, and unreliable publishers
 * follow the same rule so an application need not know which kind it holds. The claim's opaque_
 * names the publisher and the claim's number: a stale copy (committed or aborted) or another
 * publisher's claim is refused, never sent twice.
 */
static bool claim_outstanding(const rdps_pub_t *pub, const rdps_claim *claim)
{
    return pub->claimed && claim->data != NULL && claim->opaque_[0] == pub->claim_token &&
           claim->opaque_[1] == (uint64_t)(uintptr_t)pub;
}

/* Gives back what the outstanding claim holds (ring room, or the transport buffer). */
static void release_claim(rdps_pub_t *pub)
{
    if (!pub->claimed)
        return;
    pub->claimed = false;
    if (pub->claim_large) {
        rdps__pub_claim_large_abort(pub);
        rdps__batch_update_join(pub->join); /* the join path as the open datagram allows */
    } else if (pub->rel != NULL)
        rdps__pub_rel_unclaim(pub);
    else if (pub->claim_in_open)
        rdps__pub_batch_abort(pub);
    else
        pub->ctx->transport->ops->abort(pub->ctx->transport, &pub->claim_buf);
}

void rdps_pub_destroy(rdps_pub_t *handle)
{
    rdps_pub_t *pub = NULL;
    /* NULL and a publisher destroyed already (or with its ctx) are no-ops; a publisher of
     * another thread's ctx is left alone. */
    if (handle == NULL || rdps__pub_enter(handle, &pub) < 0) {
        if (pub != NULL) {
            RDPS_LOG_ERR("rdps_pub_destroy: %s", rdps_last_error_message());
            rdps__api_note("rdps_pub_destroy");
        }
        return;
    }
    if (pub->closed)
        return;
    rdps__handle_release(pub->handle); /* refused from now on, even before the memory goes */
    pub->handle = 0;
    release_claim(pub); /* at once, even when the free waits for the callbacks to return */
    if (pub->cq != NULL && pub->ctx->callback_depth > 0) {
        rdps__pub_queue_close(pub); /* from a callback: what other threads queue now is refused */
    } else if (pub->cq != NULL) {
        /* What other threads queued goes first; local subscribers' callbacks run meanwhile. */
        rdps_ctx_t *ctx = pub->ctx;
        rdps__ctx_callbacks_enter(ctx);
        rdps__pub_queue_flush(pub);
        if (rdps__ctx_callbacks_leave(ctx))
            return; /* one of them destroyed the ctx, and this publisher with it */
    }
    rdps__pub_batch_drop(pub); /* what it accepted leaves, as far as the device takes it */
    if (pub->ctx->callback_depth > 0) {
        /* From a callback: an iteration up the stack may hold this publisher. */
        pub->closed = true;
        pub->ctx->closed_endpoints++;
        return;
    }
    rdps__pub_free(pub);
}

void rdps__pub_free(rdps_pub_t *pub)
{
    rdps_ctx_t *ctx = pub->ctx;
    struct rdps_topic *t = pub->topic;

    rdps__handle_release(pub->handle);
    pub->handle = 0;
    release_claim(pub);
    if (pub->cq != NULL)
        rdps__pub_queue_flush(pub); /* what other threads queued (dropped when refused) */
    rdps__pub_batch_drop(pub);
    rdps__pub_tail_final(pub);
    rdps__discovery_pub_removed(ctx, pub);
    for (struct rdps_pub **p = &ctx->pubs; *p; p = &(*p)->next) {
        if (*p == pub) {
            *p = pub->next;
            break;
        }
    }
    if (--t->pubs == 0)
        rdps__topic_send_detach(ctx, t);
    rdps__pub_fold_counters(pub, &ctx->counters); /* the ctx's totals keep what it sent */
    rdps__pub_rel_detach(pub);
    rdps__topic_table_put(&ctx->topics, t);
    if (pub->cq != NULL)
        rdps__pub_queue_linger(pub); /* another thread may hold it a moment more */
    else
        free(pub);
}

/* 1 ready (joined, or unicast), 0 joining, RDPS_ENOTJOINED when the join failed for good. */
int rdps__pub_join_state(const rdps_pub_t *pub)
{
    const struct rdps_topic *t = pub->topic;
    if (t->send_ready)
        return 1;
    if (t->send_path != RDPS_PATH_FAILED)
        return 0;
    return rdps__set_err(RDPS_ENOTJOINED, "topic '%s': joining its multicast group failed",
                         t->name);
}

/* The ctx's totals are the sum over its publishers (rdps_ctx_counters): count once, here. */
static void count_sent(rdps_pub_t *pub, uint32_t frames, uint64_t frame_bytes, size_t msg_len)
{
    pub->counters.msgs_sent++;
    pub->counters.bytes_sent += msg_len;
    pub->counters.frames_sent += frames;
    pub->counters.frame_bytes_sent += frame_bytes;
}

/*
 * Why a publisher cannot send (or claim) now, or 0: RDPS_EINVAL (NULL), RDPS_ECLOSED (destroyed
 * from a callback), RDPS_EBUSY (a claim is outstanding), RDPS_EAGAIN (group still joining:
 * back-pressure), RDPS_ENOTJOINED (join failed).
 */
static int send_refusal(const rdps_pub_t *pub)
{
    if (pub == NULL)
        return rdps__set_err_static(RDPS_EINVAL, "NULL publisher");
    if (pub->closed || pub->ctx->destroy_requested)
        return rdps__set_err_static(RDPS_ECLOSED, pub->closed
                                                      ? "the publisher was destroyed (from a "
                                                        "callback)"
                                                      : "the ctx is being destroyed");
    if (pub->claimed)
        return rdps__set_err(RDPS_EBUSY,
                             "publisher of '%s' has a claim outstanding: rdps_pub_commit or "
                             "rdps_pub_abort it first",
                             pub->topic->name);
    if (pub->topic->send_ready)
        return 0;
    int state = rdps__pub_join_state(pub);
    return state < 0 ? state
                     : rdps__set_err_static(RDPS_EAGAIN, "not ready: the topic's multicast group "
                                                         "is still being joined (poll until "
                                                         "rdps_pub_ready)");
}

/* The ready case inline (one load each); the rest out of line. */
static inline int send_check(const rdps_pub_t *pub)
{
    if (pub != NULL && pub->topic->send_ready && !pub->closed && !pub->claimed &&
        !pub->ctx->destroy_requested)
        return 0;
    return send_refusal(pub);
}

int rdps__pub_deliver_local(rdps_pub_t *pub, const void *data, size_t len, uint32_t seq,
                            uint64_t ts, uint32_t frames, uint32_t ordinal)
{
    rdps_ctx_t *ctx = pub->ctx;
    if (pub->topic->live_subs == 0)
        return 0; /* also checked by the hot callers, before the call */
    rdps_msg_info info = {
        .topic = pub->topic->name,
        .topic_id = pub->topic->id,
        .session_id = pub->session_id,
        .seq = seq,
        .publisher_ts_ns = ts,
        .fragments = frames,
        .ordinal = ordinal,
    };
    rdps__ctx_self_source(ctx, &info.source);
    rdps__ctx_callbacks_enter(ctx);
    rdps__deliver_local(ctx, pub->topic, data, len, &info);
    return rdps__ctx_callbacks_leave(ctx)
               ? rdps__set_err_static(RDPS_ECLOSED, RDPS__TEXT_CTX_DESTROYED)
               : 0;
}

/* fanout_room's work when a datagram has several copies (kept out of the one-copy path). */
__attribute__((noinline)) int rdps__pub_fanout_room_copies(rdps_ctx_t *ctx, uint32_t n)
{
    struct rdps_transport *t = ctx->transport;
    if (rdps__transport_send_room(t) > n)
        return 0;
    int rc = t->ops->flush(t);
    if (rc == 0)
        rc = rdps__ctx_reap_sends(ctx);
    if (rc < 0)
        return rc;
    return rdps__transport_send_room(t) > n ? 0 : RDPS_EAGAIN;
}

/* A message nobody is to get over the fabric (unicast topic, no subscriber known yet): it takes
 * its sequences and ordinal and reaches this ctx's own subscribers only. */
__attribute__((noinline)) static int send_nowhere(rdps_pub_t *pub, const void *data, size_t len)
{
    uint64_t ts = rdps__clock_realtime_ns();
    uint32_t payload = pub->ctx->max_datagram - RDPS_FRAME_HEADER_LEN;
    uint32_t frames = len <= payload ? 1u : (uint32_t)((len + payload - 1) / payload);
    uint32_t seq = pub->next_seq;
    uint32_t ordinal = pub->next_ordinal++;
    pub->next_seq += frames;
    pub->counters.msgs_sent++;
    pub->counters.bytes_sent += len;
    if (pub->topic->live_subs == 0)
        return 0;
    return rdps__pub_deliver_local(pub, data, len, seq, ts, frames, ordinal);
}

/*
 * A message that fits one datagram: copied straight behind the header, no fragmenter. The
 * datagram goes to the topic's destinations (one: the group, or the one unicast subscriber;
 * more: unicast copies, room for them made first).
 */
static inline __attribute__((always_inline)) int
send_single(rdps_pub_t *pub, const void *data, size_t len, unsigned flags, bool copies, uint64_t ts)
{
    rdps_ctx_t *ctx = pub->ctx;
    struct rdps_transport *t = ctx->transport;
    const struct rdps_topic *topic = pub->topic;
    struct rdps_tx_buf buf;
    int rc;
    if (copies && (rc = rdps__pub_fanout_room_copies(ctx, topic->ndests)) < 0)
        return rdps__pub_refuse(pub, rc);
    rc = t->ops->claim(t, &buf);
    if (rc == RDPS_EAGAIN)
        rc = rdps__ctx_claim(ctx, &buf); /* flushes and reaps first */
    if (rc < 0)
        return rdps__pub_refuse(pub, rc);
    uint32_t seq = pub->next_seq++;
    uint32_t ordinal = pub->next_ordinal++;
    if (len > 0)
        memcpy(buf.data + RDPS_FRAME_HEADER_LEN, data, len);
    /* Session and topic ids are nonzero and len fits (checked by the caller): no validation. */
    uint32_t flen = rdps__frame_put_data_header(buf.data, pub->session_id, pub->topic->id, seq,
                                                (uint32_t)len, 0, (uint32_t)len, ts, 0, ordinal, 1);
    if ((rc = t->ops->submit(t, &buf, flen, topic->dests, copies ? topic->ndests : 1)) < 0 ||
        (rc = rdps__pub_post_unless_more(ctx, flags)) < 0)
        return rc;
    count_sent(pub, 1, flen, len);
    pub->counters.unicast_copies += topic->ndests_unicast;
    rdps__pub_sent_data(pub);
    if (pub->topic->live_subs == 0)
        return 0;
    return rdps__pub_deliver_local(pub, data, len, seq, ts, 1, ordinal);
}

/* send_single with several copies (unicast fan-out), out of the one-copy path. */
__attribute__((noinline)) static int send_single_copies(rdps_pub_t *pub, const void *data,
                                                        size_t len, unsigned flags, uint64_t ts)
{
    return send_single(pub, data, len, flags, true, ts);
}

int rdps__pub_send_direct(rdps_pub_t *pub, const void *data, size_t len, unsigned flags,
                          uint64_t ts)
{
    if (pub->topic->ndests == 1) /* the group, or one subscriber */
        return send_single(pub, data, len, flags, false, ts);
    if (pub->topic->ndests > 1)
        return send_single_copies(pub, data, len, flags, ts);
    return send_nowhere(pub, data, len);
}

/* A fragment of a claimed message: its header in buf, its payload where the application wrote
 * it (a second SGE), or copied behind the header where the transport cannot gather. */
static int submit_gathered(rdps_pub_t *pub, struct rdps_tx_buf *buf, const struct rdps_gather *g,
                           const uint8_t *payload, uint32_t offset, uint32_t len)
{
    rdps_ctx_t *ctx = pub->ctx;
    struct rdps_transport *t = ctx->transport;
    const struct rdps_topic *topic = pub->topic;
    if (g->mem != NULL && !ctx->no_gather) {
        int rc = rdps__transport_submit_gather(t, buf, RDPS_FRAME_HEADER_LEN, g->mem,
                                               g->offset + offset, len, topic->dests, topic->ndests,
                                               g->cookie + offset + len);
        if (rc != RDPS_ENOTSUP)
            return rc;
        ctx->no_gather = true; /* a QP of one SGE: copies from now on */
    }
    memcpy(buf->data + RDPS_FRAME_HEADER_LEN, payload, len);
    return t->ops->submit(t, buf, RDPS_FRAME_HEADER_LEN + len, topic->dests, topic->ndests);
}

/* A message longer than a datagram: its fragments, after the open datagram (in sequence); copied
 * into send buffers, or (g) sent from the claim buffer they were written in. */
__attribute__((noinline)) int rdps__pub_send_fragments(rdps_pub_t *pub, const void *data,
                                                       size_t len, unsigned flags,
                                                       const struct rdps_gather *g)
{
    struct rdps_frag it;
    struct rdps_tx_buf buf;
    rdps_ctx_t *ctx = pub->ctx;
    struct rdps_transport *t = ctx->transport;
    const struct rdps_topic *topic = pub->topic;
    int rc;
    if (pub->open.count > 0 && (rc = rdps__pub_batch_post(pub, RDPS_SEND_MORE)) < 0)
        return rdps__pub_refuse(pub, rc);
    if (topic->ndests == 0)
        return send_nowhere(pub, data, len);
    uint64_t ts = rdps__clock_realtime_ns();
    uint32_t first_seq = pub->next_seq;
    uint32_t ordinal = pub->next_ordinal;
    int frames = rdps__frag_init(&it, pub->session_id, pub->topic->id, &pub->next_seq, data, len,
                                 ctx->cfg.max_message_size, ctx->max_datagram, ts, 0, ordinal);
    if (frames < 0)
        return frames;

    /* Back-pressure before the first frame leaves nothing half-sent: report it. */
    if ((rc = rdps__pub_fanout_room(ctx, topic->ndests)) < 0)
        return rdps__pub_refuse(pub, rc);
    rc = rdps__ctx_claim(ctx, &buf);
    if (rc < 0)
        return rdps__pub_refuse(pub, rc);
    pub->next_ordinal++;

    uint64_t frame_bytes = 0;
    uint64_t deadline = 0;
    for (int sent = 0;; sent++) {
        uint32_t offset = 0, plen = 0;
        int flen = g != NULL ? rdps__frag_next_header(&it, buf.data, &offset, &plen)
                             : rdps__frag_next(&it, buf.data, buf.capacity);
        if (flen <= 0) {
            t->ops->abort(t, &buf);
            if (flen < 0)
                return flen;
            break;
        }
        rc = g != NULL ? submit_gathered(pub, &buf, g, (const uint8_t *)data + offset, offset, plen)
                       : t->ops->submit(t, &buf, (uint32_t)flen, topic->dests, topic->ndests);
        if (rc < 0)
            return rc;
        frame_bytes += (uint64_t)flen;
        if (sent + 1 == frames)
            break;
        /*
         * The message has started: finish it. Claims that fail now mean the
         * pool (or, with unicast copies, the send queue) is in flight; post what
         * is queued and reap completions until a buffer frees up (bounded: a
         * dead port fails the message instead).
         */
        while ((rc = rdps__pub_fanout_room(ctx, topic->ndests)) == RDPS_EAGAIN ||
               (rc == 0 && (rc = t->ops->claim(t, &buf)) == RDPS_EAGAIN)) {
            if ((rc = t->ops->flush(t)) < 0)
                return rc;
            if ((rc = rdps__ctx_reap_sends(ctx)) < 0)
                return rc;
            uint64_t now = rdps__clock_monotonic_ns();
            if (deadline == 0)
                deadline = now + 5000000000ull;
            else if (now > deadline)
                return rdps__set_err(RDPS_ETIMEDOUT,
                                     "send buffers did not come back within 5 s mid-message "
                                     "(%d of %d frames sent)",
                                     sent + 1, frames);
        }
        if (rc < 0)
            return rc;
        deadline = 0;
    }
    if ((rc = rdps__pub_post_unless_more(ctx, flags)) < 0)
        return rc;
    count_sent(pub, (uint32_t)frames, frame_bytes, len);
    pub->counters.unicast_copies += (uint64_t)topic->ndests_unicast * (uint32_t)frames;
    rdps__pub_sent_data(pub);
    return rdps__pub_deliver_local(pub, data, len, first_seq, ts, (uint32_t)frames, ordinal);
}

static int pub_send_ex(rdps_pub_t *pub, const void *data, size_t len, unsigned flags)
{
    int rc = send_check(pub);
    if (rc < 0)
        return rdps__pub_refuse(pub, rc);
    rdps_ctx_t *ctx = pub->ctx;
    if ((rc = rdps__send_args_refusal(data, len, flags)) < 0)
        return rc;
    if (len > ctx->cfg.max_message_size)
        return rdps__set_err(RDPS_EMSGSIZE, "message of %zu bytes above max_message_size %zu", len,
                             ctx->cfg.max_message_size);
    if (pub->rel != NULL)
        return rdps__pub_rel_send(pub, data, len, flags);
    if (len > ctx->max_datagram - RDPS_FRAME_HEADER_LEN)
        return rdps__pub_send_fragments(pub, data, len, flags, NULL);
    if (pub->batching)
        return rdps__pub_batch_send(pub, data, len, flags);
    return rdps__pub_send_direct(pub, data, len, flags, rdps__clock_realtime_ns());
}

/* rdps_pub_claim's len: a whole datagram's payload. */
#define CLAIM_WHOLE SIZE_MAX

/* Fills in an outstanding claim of capacity bytes at data. */
static inline void lend_claim(rdps_pub_t *pub, rdps_claim *claim, void *data, size_t capacity,
                              unsigned flags)
{
    pub->claimed = true;
    pub->claim_capacity = capacity;
    pub->claim_flags = flags;
    claim->data = data;
    claim->capacity = capacity;
    claim->opaque_[0] = ++pub->claim_token;
    claim->opaque_[1] = (uint64_t)(uintptr_t)pub;
}

static int claim_any(rdps_pub_t *pub, size_t len, unsigned flags, rdps_claim *claim)
{
    void *data;
    size_t capacity;
    if (claim == NULL)
        return rdps__set_err_static(RDPS_EINVAL, pub == NULL ? "NULL publisher" : "NULL claim");
    int rc = send_check(pub);
    if (rc < 0)
        goto refused;
    rdps_ctx_t *ctx = pub->ctx;
    if (flags & ~RDPS_SEND_MORE) {
        rc =
            rdps__set_err(RDPS_EINVAL, "unknown flags 0x%x (RDPS_SEND_MORE, 0x1, is the only flag)",
                          flags & ~RDPS_SEND_MORE);
        goto failed;
    }
    size_t room = ctx->max_datagram - RDPS_FRAME_HEADER_LEN;
    if (room > ctx->cfg.max_message_size)
        room = ctx->cfg.max_message_size;
    bool whole = len == CLAIM_WHOLE;
    pub->claim_in_open = false;
    if (whole) {
        len = room;
    } else if (len > room) {
        /* Longer than a datagram: in the ctx's claim buffer (publisher_claim.c). */
        size_t max =
            pub->rel != NULL ? rdps__pub_rel_max_message_size(pub) : ctx->cfg.max_message_size;
        if (len > max) {
            rc = rdps__set_err(RDPS_EMSGSIZE,
                               "%zu bytes above the publisher's max_message_size %zu "
                               "(rdps_pub_max_message_size)",
                               len, max);
            goto failed;
        }
        if ((rc = rdps__pub_claim_large(pub, len, &data)) < 0)
            goto refused;
        /* Sends get RDPS_EBUSY until its commit or abort: none may take the join path. */
        rdps__batch_hold_joins(pub->join);
        capacity = len;
        goto claimed;
    }
    if (pub->rel != NULL) {
        if ((rc = rdps__pub_rel_claim(pub, whole ? SIZE_MAX : len, &data, &capacity)) < 0)
            goto failed;      /* RDPS_EAGAIN counted there */
        if (capacity < len) { /* parity leaves a reliable frame less room */
            rdps__pub_rel_unclaim(pub);
            rc = rdps__set_err(RDPS_EMSGSIZE,
                               "%zu bytes above a reliable frame's payload %zu (parity takes "
                               "room): send longer messages with rdps_pub_send",
                               len, capacity);
            goto failed;
        }
        if (whole)
            len = capacity;
    } else if (pub->batching) {
        if ((rc = rdps__pub_batch_claim(pub, len, &data)) < 0)
            goto refused;
        pub->claim_in_open = true;
    } else {
        struct rdps_transport *t = ctx->transport;
        struct rdps_tx_buf *buf = &pub->claim_buf;
        if ((rc = rdps__pub_fanout_room(ctx, pub->topic->ndests)) < 0)
            goto refused;
        rc = t->ops->claim(t, buf);
        if (rc == RDPS_EAGAIN)
            rc = rdps__ctx_claim(ctx, buf); /* flushes and reaps first */
        if (rc < 0)
            goto refused;
        data = buf->data + RDPS_FRAME_HEADER_LEN;
    }
    capacity = len;
claimed:
    lend_claim(pub, claim, data, capacity, flags);
    return 0;
refused:
    rc = rdps__pub_refuse(pub, rc);
failed:
    claim->data = NULL;
    claim->capacity = 0;
    return rc;
}

void rdps_pub_abort(rdps_pub_t *handle, rdps_claim *claim)
{
    rdps_pub_t *pub;
    /* A destroyed publisher released its claim already. */
    if (rdps__pub_enter(handle, &pub) < 0 || claim == NULL || !claim_outstanding(pub, claim))
        return;
    release_claim(pub);
    claim->data = NULL;
}

/* Commit's datagram with no copy (a unicast topic nobody subscribes yet: local subscribers
 * only) or several (unicast fan-out): its buffer is submitted to all of them, or given back. */
__attribute__((noinline)) static int commit_copies(rdps_pub_t *pub, struct rdps_tx_buf *buf,
                                                   uint32_t flen)
{
    struct rdps_transport *t = pub->ctx->transport;
    const struct rdps_topic *topic = pub->topic;
    int rc = topic->ndests == 0 ? 0 : rdps__pub_fanout_room(pub->ctx, topic->ndests);
    if (topic->ndests == 0 || rc < 0) {
        t->ops->abort(t, buf);
        return rc;
    }
    rc = t->ops->submit(t, buf, flen, topic->dests, topic->ndests); /* takes the buffer */
    return rc == 0 ? t->ops->flush(t) : rc;
}

static int pub_commit(rdps_pub_t *pub, rdps_claim *claim, size_t len)
{
    if (pub == NULL || claim == NULL)
        return rdps__set_err_static(RDPS_EINVAL, pub == NULL ? "NULL publisher" : "NULL claim");
    rdps_ctx_t *ctx = pub->ctx;
    if (pub->closed || ctx->destroy_requested) {
        /* Destroying the publisher released its claim; a ctx being destroyed releases it here. */
        if (claim_outstanding(pub, claim))
            release_claim(pub);
        claim->data = NULL;
        return send_refusal(pub); /* RDPS_ECLOSED, saying which */
    }
    if (!claim_outstanding(pub, claim))
        return rdps__set_err(RDPS_EINVAL,
                             "rdps_pub_commit: not the publisher's outstanding claim (committed or "
                             "aborted already, another publisher's, or never claimed)");
    /* From here the claim ends, whatever the outcome (but a reliable claim longer than a
     * datagram that the ring cannot take yet: publisher_claim.c). */
    void *claimed_data = claim->data;
    claim->data = NULL;
    if (len > pub->claim_capacity) {
        release_claim(pub);
        return rdps__set_err(RDPS_EMSGSIZE,
                             "rdps_pub_commit: %zu bytes above the claim's capacity %zu (what the "
                             "claim asked for, at most a datagram's payload and max_message_size "
                             "%zu)",
                             len, pub->claim_capacity, ctx->cfg.max_message_size);
    }
    pub->claimed = false;
    if (pub->claim_large) {
        int rc = rdps__pub_commit_large(pub, len, pub->claim_flags);
        if (rc == RDPS_EAGAIN && pub->claimed)
            claim->data = claimed_data; /* still outstanding: commit it again */
        return rc;
    }
    if (pub->rel != NULL)
        return rdps__pub_rel_commit(pub, len, pub->claim_flags);
    if (pub->claim_in_open)
        return rdps__pub_batch_commit(pub, len);

    struct rdps_transport *t = ctx->transport;
    const struct rdps_topic *topic = pub->topic;
    struct rdps_tx_buf buf = pub->claim_buf;
    uint64_t ts = rdps__clock_realtime_ns();
    uint32_t seq = pub->next_seq++;
    uint32_t ordinal = pub->next_ordinal++;
    uint32_t flen = rdps__frame_put_data_header(buf.data, pub->session_id, pub->topic->id, seq,
                                                (uint32_t)len, 0, (uint32_t)len, ts, 0, ordinal, 1);
    int rc;
    if (topic->ndests == 1) {
        rc = t->ops->submit(t, &buf, flen, topic->dests, 1); /* takes the buffer, even on failure */
        if (rc == 0)
            rc = rdps__pub_post_unless_more(ctx, pub->claim_flags);
    } else {
        rc = commit_copies(pub, &buf, flen);
    }
    if (rc == RDPS_EAGAIN && !rdps__err_is_set())
        return rdps__set_err_static(rc, "the send queue filled up since the claim (sends made "
                                        "meanwhile): the claimed message was not sent");
    if (rc < 0)
        return rc;
    if (topic->ndests > 0) {
        count_sent(pub, 1, flen, len);
        pub->counters.unicast_copies += topic->ndests_unicast;
        rdps__pub_sent_data(pub);
    } else {
        pub->counters.msgs_sent++;
        pub->counters.bytes_sent += len;
    }
    if (pub->topic->live_subs == 0)
        return 0;
    return rdps__pub_deliver_local(pub, buf.data + RDPS_FRAME_HEADER_LEN, len, seq, ts, 1, ordinal);
}

/* ---- entry points: the thread's error message belongs to the call (rdps_error.h) ---- */

int rdps__pub_send_queued(rdps_pub_t *pub, const void *data, size_t len)
{
    return pub_send_ex(pub, data, len, RDPS_SEND_MORE);
}

int rdps__pub_send_flags(rdps_pub_t *pub, const void *data, size_t len, unsigned flags)
{
    return pub_send_ex(pub, data, len, flags);
}

/*
 * The owner's call on a concurrent publisher: what other threads queued goes first, so a message
 * queued before the owner was told to send follows nothing sent after it. Callbacks of local
 * subscribers run meanwhile: the publisher returned is looked up again (NULL, recorded: one of
 * them destroyed it or its ctx).
 */
static rdps_pub_t *drain_for_owner(const rdps_pub_t *handle, rdps_pub_t *pub)
{
    rdps_ctx_t *ctx = pub->ctx;
    rdps__ctx_callbacks_enter(ctx);
    (void)rdps__pub_queue_drain(pub);
    if (rdps__ctx_callbacks_leave(ctx)) {
        rdps__set_err_static(RDPS_ECLOSED, RDPS__TEXT_CTX_DESTROYED);
        return NULL;
    }
    pub = rdps__pub_of_handle(handle);
    if (pub == NULL)
        rdps__handle_refusal(handle, RDPS_HANDLE_PUB);
    return pub;
}

/*
 * The sends that are not the owner's exclusive fast path: another thread's on a concurrent
 * publisher (its queue), the owner's on a concurrent publisher (what other threads queued goes
 * first), and what the owner check refuses or lets a thread take over.
 */
__attribute__((noinline)) static int send_not_exclusive(const rdps_pub_t *handle, rdps_pub_t *pub,
                                                        const void *data, size_t len,
                                                        unsigned flags, const char *fn)
{
    if (pub != NULL && pub->cq != NULL && !rdps__owner_is_caller(&pub->ctx->owner))
        return rdps__api_return(rdps__pub_queue_offer(pub, data, len, flags), fn);
    int rc = rdps__pub_enter(handle, &pub);
    if (rc == 0 && pub->cq != NULL && (pub = drain_for_owner(handle, pub)) == NULL)
        rc = RDPS_ECLOSED;
    return rdps__api_return(rc < 0 ? rc : pub_send_ex(pub, data, len, flags), fn);
}

/* The exclusive fast path: a live handle, the owner's thread, not a concurrent publisher (one
 * compare: send_owner is RDPS__OWNER_NONE on a concurrent one). */
static inline rdps_pub_t *exclusive_pub(const rdps_pub_t *handle)
{
    rdps_pub_t *pub = rdps__pub_of_handle(handle);
    if (__builtin_expect(pub == NULL ||
                             atomic_load_explicit(&pub->send_owner, memory_order_relaxed) !=
                                 rdps__thread_tls,
                         0))
        return NULL;
    return pub;
}

/* The full path of a send the join path did not take (fn: the public call, for its error). */
__attribute__((noinline)) static int send_full(rdps_pub_t *pub, const void *data, size_t len,
                                               unsigned flags, const char *fn)
{
    return rdps__api_return(pub_send_ex(pub, data, len, flags), fn);
}

int rdps_pub_send(rdps_pub_t *handle, const void *data, size_t len)
{
    rdps__api_enter();
    rdps_pub_t *pub = exclusive_pub(handle);
    if (pub == NULL)
        return send_not_exclusive(handle, rdps__pub_of_handle(handle), data, len, 0,
                                  "rdps_pub_send");
    /* A held datagram takes messages sent without RDPS_SEND_MORE too (rdps__pub_batch_join). */
    uint8_t *to = rdps__pub_batch_join(pub, data, len, 0);
    if (to == NULL)
        return send_full(pub, data, len, 0, "rdps_pub_send");
    rdps__pub_copy_message(to, data, len);
    return 0;
}

int rdps_pub_send_ex(rdps_pub_t *handle, const void *data, size_t len, unsigned flags)
{
    rdps__api_enter();
    rdps_pub_t *pub = exclusive_pub(handle);
    if (pub == NULL)
        return send_not_exclusive(handle, rdps__pub_of_handle(handle), data, len, flags,
                                  "rdps_pub_send_ex");
    uint8_t *to = rdps__pub_batch_join(pub, data, len, flags);
    if (to == NULL)
        return send_full(pub, data, len, flags, "rdps_pub_send_ex");
    rdps__pub_copy_message(to, data, len); /* joined the open datagram: nothing to clear */
    return 0;
}

/* A claim refused before the publisher was found: the claim holds nothing. */
static int claim_refused(rdps_claim *claim, int rc)
{
    if (claim != NULL) {
        claim->data = NULL;
        claim->capacity = 0;
    }
    return rc;
}

/* A claim's publisher: rdps__pub_enter, and a concurrent one's queue drained first. */
static int claim_enter(const rdps_pub_t *handle, rdps_pub_t **pub)
{
    int rc = rdps__pub_enter(handle, pub);
    if (rc == 0 && (*pub)->cq != NULL && (*pub = drain_for_owner(handle, *pub)) == NULL)
        rc = RDPS_ECLOSED;
    return rc;
}

int rdps_pub_claim(rdps_pub_t *handle, rdps_claim *claim)
{
    rdps_pub_t *pub;
    rdps__api_enter();
    int rc = claim_enter(handle, &pub);
    return rdps__api_return(rc < 0 ? claim_refused(claim, rc)
                                   : claim_any(pub, CLAIM_WHOLE, 0, claim),
                            "rdps_pub_claim");
}

/* The full path of a claim the fast one did not take; pub: the exclusive publisher the fast path
 * found (the owner's, not concurrent: nothing to enter), or NULL. */
__attribute__((noinline)) static int claim_ex_full(rdps_pub_t *handle, rdps_pub_t *pub, size_t len,
                                                   unsigned flags, rdps_claim *claim)
{
    int rc = pub != NULL ? 0 : claim_enter(handle, &pub);
    /* SIZE_MAX is no whole datagram here: a length, too long. */
    return rdps__api_return(
        rc < 0 ? claim_refused(claim, rc)
               : claim_any(pub, len == CLAIM_WHOLE ? CLAIM_WHOLE - 1 : len, flags, claim),
        "rdps_pub_claim_ex");
}

int rdps_pub_claim_ex(rdps_pub_t *handle, size_t len, unsigned flags, rdps_claim *claim)
{
    rdps__api_enter();
    /* The fast path: the owner's exclusive publisher, room in the open datagram's join path. */
    rdps_pub_t *pub = exclusive_pub(handle);
    uint8_t *to;
    if (__builtin_expect(pub == NULL || claim == NULL ||
                             (to = rdps__pub_batch_claim_join(pub, len, flags)) == NULL,
                         0))
        return claim_ex_full(handle, pub, len, flags, claim);
    pub->claim_in_open = true;
    lend_claim(pub, claim, to, len, flags);
    return 0;
}

/* The full path of a commit (pub: as for claim_ex_full). */
__attribute__((noinline)) static int commit_full(rdps_pub_t *handle, rdps_pub_t *pub,
                                                 rdps_claim *claim, size_t len)
{
    int rc = pub != NULL ? 0 : rdps__pub_enter(handle, &pub);
    if (rc < 0 && claim != NULL)
        claim->data = NULL; /* a destroyed publisher released its claim */
    return rdps__api_return(rc < 0 ? rc : pub_commit(pub, claim, len), "rdps_pub_commit");
}

int rdps_pub_commit(rdps_pub_t *handle, rdps_claim *claim, size_t len)
{
    rdps__api_enter();
    /* The fast path: the owner's exclusive publisher commits its claim in the open datagram
     * within the claim's capacity (pub_commit's checks, in the order that finds this case; a
     * reliable publisher's claim is never in the open datagram: it leaves at the first test). */
    rdps_pub_t *pub = exclusive_pub(handle);
    if (__builtin_expect(pub == NULL || !pub->claim_in_open || claim == NULL ||
                             !claim_outstanding(pub, claim) || len > pub->claim_capacity ||
                             pub->ctx->destroy_requested,
                         0))
        return commit_full(handle, pub, claim, len);
    claim->data = NULL;
    pub->claimed = false;
    return rdps__api_return(rdps__pub_batch_commit(pub, len), "rdps_pub_commit");
}
