/* SPDX-License-Identifier: BSD-2-Clause */
/* publisher_claim.c - claims longer than a datagram: the ctx's claim buffer, written in place by
 * the application and sent from there (rdps.h, rdps_pub_claim_ex). */
#include "publisher_internal.h"

#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"
#include "rdps_log.h"

/*
 * Why a contiguous buffer and two SGEs rather than a list of segments: a datagram's header sits
 * before its payload, so a message written in place in send buffers (or ring frames) would come
 * in pieces of one datagram's payload each, and an application that builds a 1 KiB struct would
 * have to split it, as it had to branch before. Here the application gets one contiguous buffer
 * of the message's size, in memory registered with the device; each fragment goes as one work
 * request of two SGEs, its header from a send buffer and its payload from where the application
 * wrote it (rdps_transport.h, submit_gather). Transports that copy every datagram anyway (the
 * loopback device, a keyed ctx's sealing) copy it there; a QP granted one SGE makes the ctx copy
 * it behind the header. A reliable publisher copies the message into its ring at commit: the
 * ring is where its frames are posted, repaired and parity-coded from, whole.
 *
 * The buffer: one per ctx, max_message_size bytes (at least 64 KiB), registered at the first
 * such claim. Claims take its room in order, as a ring of byte positions, one outstanding at a
 * time (its fragments' cookies, their end positions, must rise in the order they are sent); a
 * position is free again once the device completed every fragment sent from before it (the
 * region's completed cookie), or at once when nothing was sent from it (abort, a reliable
 * commit's copy).
 */
struct rdps_claim_buffer {
    uint8_t *mem;
    size_t size;
    struct rdps_tx_mem *reg; /* NULL: the transport registers nothing (tests): copied */
    uint64_t head;           /* the next claim's position */
    uint64_t done;           /* unregistered: every position below is free */
    bool outstanding;        /* a claim holds room: the next waits (cookies go up in order) */
};

#define CLAIM_ALIGN   64u
#define CLAIM_MIN_BUF (64u * 1024u)

static uint64_t free_through(const struct rdps_claim_buffer *cb)
{
    return cb->reg != NULL ? rdps__tx_mem_completed(cb->reg) : cb->done;
}

static int buffer_open(rdps_ctx_t *ctx)
{
    size_t size =
        ctx->cfg.max_message_size < CLAIM_MIN_BUF ? CLAIM_MIN_BUF : ctx->cfg.max_message_size;
    size = (size + 4095) & ~(size_t)4095;
    struct rdps_claim_buffer *cb = calloc(1, sizeof(*cb));
    uint8_t *mem = aligned_alloc(4096, size);
    if (cb == NULL || mem == NULL) {
        free(cb);
        free(mem);
        return rdps__set_err(RDPS_ENOMEM, "out of memory for a claim buffer of %zu bytes", size);
    }
    int rc = rdps__transport_mem_register(ctx->transport, mem, size, &cb->reg);
    if (rc < 0 && rc != RDPS_ENOTSUP) {
        free(cb);
        free(mem);
        return rdps__prepend_err(rc, "registering a claim buffer of %zu bytes: ", size);
    }
    if (rc == RDPS_ENOTSUP)
        cb->reg = NULL; /* a transport without registered memory: fragments are copied */
    cb->mem = mem;
    cb->size = size;
    ctx->claim_buffer = cb;
    return 0;
}

void rdps__claim_buffer_fini(rdps_ctx_t *ctx)
{
    struct rdps_claim_buffer *cb = ctx->claim_buffer;
    if (cb == NULL)
        return;
    free(cb->mem);
    free(cb);
    ctx->claim_buffer = NULL;
}

/* Marks the positions before `end` free once nothing sent from them is in flight. */
static void buffer_release(struct rdps_claim_buffer *cb, uint64_t end)
{
    if (cb->reg == NULL) {
        cb->done = end;
        return;
    }
    if (end > cb->reg->submitted)
        rdps__tx_mem_skip(cb->reg, end); /* completes once the fragments before it did */
}

int rdps__pub_claim_large(rdps_pub_t *pub, size_t len, void **data)
{
    rdps_ctx_t *ctx = pub->ctx;
    int rc;
    if (ctx->claim_buffer == NULL && (rc = buffer_open(ctx)) < 0)
        return rc;
    struct rdps_claim_buffer *cb = ctx->claim_buffer;
    if (len > cb->size)
        return rdps__set_err(RDPS_EMSGSIZE, "%zu bytes above the claim buffer's %zu", len,
                             cb->size);
    if (cb->outstanding)
        return rdps__set_err_static(RDPS_EAGAIN, "another publisher of this ctx has a claim "
                                                 "longer than a datagram outstanding: one at a "
                                                 "time (commit or abort it, then retry)");
    size_t offset = (size_t)(cb->head % cb->size);
    if (offset + len > cb->size) {
        /* It does not fit before the end: from the start; the end's room, holding nothing, is
         * free with what precedes it. */
        cb->head += cb->size - offset;
        buffer_release(cb, cb->head);
    }
    uint64_t pos = cb->head;
    uint64_t end = (pos + len + CLAIM_ALIGN - 1) & ~(uint64_t)(CLAIM_ALIGN - 1);
    if (end - free_through(cb) > cb->size) {
        /* Sends from earlier claims still hold the room: reap completions once, then refuse. */
        ctx->transport->ops->flush(ctx->transport);
        (void)rdps__ctx_reap_sends(ctx);
        if (end - free_through(cb) > cb->size)
            return rdps__set_err_static(RDPS_EAGAIN,
                                        "the ctx's claim buffer is held by messages still being "
                                        "sent, or by another publisher's claim (poll, then "
                                        "retry)");
    }
    cb->head = end;
    cb->outstanding = true;
    pub->claim_large = true;
    pub->claim_pos = pos;
    *data = cb->mem + pos % cb->size;
    return 0;
}

void rdps__pub_claim_large_abort(rdps_pub_t *pub)
{
    struct rdps_claim_buffer *cb = pub->ctx->claim_buffer;
    pub->claim_large = false;
    cb->outstanding = false;
    /* Nothing was sent from it: free once what was sent before it completed. */
    buffer_release(cb, (pub->claim_pos + pub->claim_capacity + CLAIM_ALIGN - 1) &
                           ~(uint64_t)(CLAIM_ALIGN - 1));
}

int rdps__pub_commit_large(rdps_pub_t *pub, size_t len, unsigned flags)
{
    rdps_ctx_t *ctx = pub->ctx;
    struct rdps_claim_buffer *cb = ctx->claim_buffer;
    uint64_t pos = pub->claim_pos;
    uint64_t end = (pos + pub->claim_capacity + CLAIM_ALIGN - 1) & ~(uint64_t)(CLAIM_ALIGN - 1);
    const uint8_t *data = cb->mem + pos % cb->size;
    int rc;
    /* Local subscribers' callbacks run during the send: the bracket keeps the ctx (and this
     * publisher) until the buffer's room is accounted for, whatever they destroy. */
    rdps__ctx_callbacks_enter(ctx);
    if (pub->rel != NULL) {
        /* The ring keeps what it retransmits: the message is copied into it. */
        rc = rdps__pub_rel_send(pub, data, len, flags);
    } else if (len <= ctx->max_datagram - RDPS_FRAME_HEADER_LEN) {
        rc = rdps__pub_send_flags(pub, data, len, flags); /* one datagram: the usual copy */
    } else {
        struct rdps_gather g = {.mem = cb->reg, .offset = (size_t)(pos % cb->size), .cookie = pos};
        rc = rdps__pub_send_fragments(pub, data, len, flags, &g);
    }
    if (pub->rel != NULL && rc == RDPS_EAGAIN && !pub->closed) {
        pub->claimed = true; /* the ring or the window is full: the claim stays, commit again */
        rdps__set_err_static(RDPS_EAGAIN, "the ring or the flow-control window cannot take the "
                                          "message yet: the claim stays outstanding (poll, then "
                                          "commit it again)");
    } else {
        pub->claim_large = false;
        cb->outstanding = false;
        buffer_release(cb, end);
    }
    if (rdps__ctx_callbacks_leave(ctx))
        return rdps__set_err_static(RDPS_ECLOSED, RDPS__TEXT_CTX_DESTROYED);
    return rc;
}
