/* SPDX-License-Identifier: BSD-2-Clause */
/* publisher_internal.h - what the unreliable publisher's two files share: counting, refusals,
 * local delivery and posting (publisher.c sends, publisher_batch.c batches). */
#ifndef RDPS_PUBSUB_PUBLISHER_INTERNAL_H
#define RDPS_PUBSUB_PUBLISHER_INTERNAL_H

#include "ctx_internal.h"

#include <string.h>

#include "rdps_endian.h"
#include "rdps_error.h"

/* A data datagram of an unreliable publisher went: its tail heartbeats start over. */
static inline void rdps__pub_sent_data(rdps_pub_t *pub)
{
    pub->tail_sent = true;
    pub->ctx->tail_data = true;
}

/* A send counted as back-pressure when it is RDPS_EAGAIN (saying why, when the transport's pool
 * said nothing); returns rc. */
static inline int rdps__pub_refuse(rdps_pub_t *pub, int rc)
{
    if (rc == RDPS_EAGAIN) {
        pub->counters.send_backpressure++;
        if (!rdps__err_is_set())
            rdps__set_err_static(RDPS_EAGAIN, "the send queue is full: every send buffer is in "
                                              "flight (poll to reap completions, then retry)");
    }
    return rc;
}

/* A send's flags and data as rdps_pub_send_ex takes them: 0, or RDPS_EINVAL saying why. */
static inline int rdps__send_args_refusal(const void *data, size_t len, unsigned flags)
{
    if (flags & ~RDPS_SEND_MORE)
        return rdps__set_err(RDPS_EINVAL,
                             "unknown flags 0x%x (RDPS_SEND_MORE, 0x1, is the only flag)",
                             flags & ~RDPS_SEND_MORE);
    if (data == NULL && len > 0)
        return rdps__set_err(RDPS_EINVAL, "NULL data with a length of %zu bytes", len);
    return 0;
}

/* Posts what was submitted unless RDPS_SEND_MORE asks to chain it with the next send. */
static inline int rdps__pub_post_unless_more(rdps_ctx_t *ctx, unsigned flags)
{
    if (flags & RDPS_SEND_MORE) {
        ctx->sends_queued = true;
        return 0;
    }
    ctx->sends_queued = false;
    return ctx->transport->ops->flush(ctx->transport);
}

/*
 * Room in the send queue for a datagram's n copies (unicast fan-out), before its buffer is
 * claimed or submitted: flushes and reaps once when short. 0, or RDPS_EAGAIN. One copy (the
 * group, or one subscriber) needs nothing more than the claim's own check.
 */
int rdps__pub_fanout_room_copies(rdps_ctx_t *ctx, uint32_t n);
static inline int rdps__pub_fanout_room(rdps_ctx_t *ctx, uint32_t n)
{
    return n <= 1 ? 0 : rdps__pub_fanout_room_copies(ctx, n);
}

/*
 * Delivers a message sent from this ctx to the topic's subscribers in it, with the rdps_msg_info
 * a remote one gets (the datagram's seq and timestamp, the message's ordinal). Runs user
 * callbacks: RDPS_ECLOSED when one of them destroyed the ctx.
 */
int rdps__pub_deliver_local(rdps_pub_t *pub, const void *data, size_t len, uint32_t seq,
                            uint64_t ts, uint32_t frames, uint32_t ordinal);

/*
 * The join path's copy: messages of up to 64 bytes (the common small message) with a few
 * unaligned 16-byte moves, overlapping at the end, instead of a call through the PLT; longer
 * ones with memcpy.
 */
static inline void rdps__pub_copy_message(uint8_t *to, const uint8_t *from, size_t len)
{
    /* The two halves may overlap in the destination: the same bytes are written twice. 32 to 64
     * bytes first, in one compare (the common market-data message). */
    if (len - 32 <= 32) {
        memcpy(to, from, 32);
        memcpy(to + len - 32, from + len - 32, 32);
    } else if (len > 64) {
        memcpy(to, from, len);
    } else if (len >= 16) {
        memcpy(to, from, 16);
        memcpy(to + len - 16, from + len - 16, 16);
    } else if (len >= 8) {
        memcpy(to, from, 8);
        memcpy(to + len - 8, from + len - 8, 8);
    } else {
        for (size_t i = 0; i < len; i++)
            to[i] = from[i];
    }
}

/*
 * The batching fast path of rdps_pub_send_ex: a message joins the open datagram (pub->join: an
 * unreliable publisher's, or the open frame of a reliable one's ring) when the datagram's writer
 * says it may (rdps_batch.h, join path: there is room after it, no claim writes the last record,
 * the flags are RDPS_SEND_MORE or the datagram is held anyway, no subscriber in this ctx wants
 * every message delivered now: pub->local_subs turns joins off). Counted, and its ordinal used,
 * when the datagram goes. A publisher or ctx being destroyed points its join path at nothing open
 * (rdps__pub_batch_drop). Returns where the caller copies the message (the bookkeeping done: the
 * copy is the last thing, so the fast path holds nothing across it), or NULL: the full path
 * decides, with every check.
 */
static inline uint8_t *rdps__pub_batch_join(rdps_pub_t *pub, const void *data, size_t len,
                                            unsigned flags)
{
    struct rdps_batch *b = pub->join;
    uint32_t limit = b->join_limit;
    if ((flags | b->join_flags) != RDPS_SEND_MORE || len >= limit || data == NULL)
        return NULL;
    return rdps__batch_join_within(b, (uint32_t)len, limit);
}

/*
 * The claim's fast path (rdps_pub_claim_ex): room for a message of len bytes lent as the open
 * datagram's last record, on the same terms as a join (unreliable publishers only: a reliable
 * one's pub->open is never opened, so its join_limit stays 0). The claim holds later joins until
 * its commit. Returns where the application writes, or NULL: the full path decides.
 */
static inline uint8_t *rdps__pub_batch_claim_join(rdps_pub_t *pub, size_t len, unsigned flags)
{
    struct rdps_batch *b = &pub->open;
    if (flags > RDPS_SEND_MORE || len >= b->join_limit)
        return NULL;
    uint8_t *to = rdps__batch_join(b, (uint32_t)len);
    rdps__batch_hold_joins(b);
    return to;
}

/*
 * Fragments sent from where they lie (claims longer than a datagram, publisher_claim.c): the
 * message is at mem->addr + offset, which is position `cookie` of the claim buffer (rdps_tx_mem's
 * cookies: a fragment's is the position its payload ends at). mem NULL: copied.
 */
struct rdps_gather {
    struct rdps_tx_mem *mem;
    size_t offset;
    uint64_t cookie;
};
/* publisher.c: rdps_pub_send_ex's work, on the object. */
int rdps__pub_send_flags(rdps_pub_t *pub, const void *data, size_t len, unsigned flags);
/* publisher_claim.c: a claim of len bytes (above a datagram's payload) in the ctx's claim buffer
 * (*data: where the message goes); its commit (the claim checked) and its abort. A reliable
 * publisher's commit that gets RDPS_EAGAIN keeps the claim outstanding (pub->claimed). */
int rdps__pub_claim_large(rdps_pub_t *pub, size_t len, void **data);
int rdps__pub_commit_large(rdps_pub_t *pub, size_t len, unsigned flags);
void rdps__pub_claim_large_abort(rdps_pub_t *pub);

/* A message longer than a datagram (g NULL: copied into send buffers). */
int rdps__pub_send_fragments(rdps_pub_t *pub, const void *data, size_t len, unsigned flags,
                             const struct rdps_gather *g);

/* A message that fits a datagram sent in one of its own, now (no batching): its timestamp ts. */
int rdps__pub_send_direct(rdps_pub_t *pub, const void *data, size_t len, unsigned flags,
                          uint64_t ts);

/* 1 ready (joined, or unicast), 0 joining, RDPS_ENOTJOINED (error set) when the join failed for
 * good. */
int rdps__pub_join_state(const rdps_pub_t *pub);

#endif /* RDPS_PUBSUB_PUBLISHER_INTERNAL_H */
