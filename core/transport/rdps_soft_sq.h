/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_soft_sq.h - the send queue of a device made of software (loopback, local): send buffers,
 * queued requests, requests sent and completed by the next poll, registered regions. */
#ifndef RDPS_SOFT_SQ_H
#define RDPS_SOFT_SQ_H

#include "rdps_transport.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RDPS_SOFT_SQ_NO_SLOT UINT32_MAX

/*
 * The model, the verbs device's as far as a sender can tell: a claim takes one of `slots` send
 * buffers; submit and submit_mem queue one request per destination, at most `depth` requests
 * queued or sent; the device's flush copies every queued request (the NIC's DMA: a registered
 * region is read then, not at submit) and marks them sent; the next reap (the device's poll)
 * completes them in order, buffers back to the pool and regions' `completed` forward. A sender
 * that outruns its polls thus sees the queue fill and batches, as on verbs. What a request's
 * bytes reach (rings, endpoints, groups) is the device's; the queue never touches other
 * endpoints and takes no lock.
 *
 * Requests lie in one array: [0, sent) flushed and waiting for the reap, then [sent, sent +
 * queued) queued for the next flush.
 */
struct rdps_soft_sq_req {
    uint32_t slot, len;      /* slot RDPS_SOFT_SQ_NO_SLOT: from a registered region */
    const uint8_t *data;     /* the bytes the flush reads */
    struct rdps_dest dest;   /* copied: a device may rewrite its destinations meanwhile */
    struct rdps_tx_mem *mem; /* region requests: the region */
    uint64_t cookie;         /* on a submit_mem's last request, else 0 */
};

struct rdps_soft_sq {
    struct rdps_transport *owner; /* regions must be registered with it */
    const char *limit_name;       /* says what buf_size is, in EMSGSIZE messages */
    uint8_t *buf_mem;
    uint32_t buf_size, slots, depth;
    uint32_t *refs; /* per send buffer: the claim, then one per queued or sent request */
    uint32_t *free_slots, free_count;
    struct rdps_soft_sq_req *reqs;
    uint32_t sent, queued;
    struct rdps_tx_mem *mems; /* registered regions */
    uint64_t backpressure;    /* claims and submits refused for want of buffers or room */
};

/*
 * `slots` buffers of `buf_size` bytes, at most `depth` requests; limit_name completes "datagram
 * of N bytes exceeds max_payload M ..." (e.g. "of loopback endpoint"). Free lists hand out slot
 * 0 first, so buffer order is predictable in tests. RDPS_ENOMEM; fini after a failed init is safe.
 */
int rdps__soft_sq_init(struct rdps_soft_sq *q, struct rdps_transport *owner, const char *limit_name,
                       uint32_t buf_size, uint32_t slots, uint32_t depth);
/* Frees the buffers, the requests and every region still registered. */
void rdps__soft_sq_fini(struct rdps_soft_sq *q);

/* The transport ops claim and abort (rdps_transport.h). */
int rdps__soft_sq_claim(struct rdps_soft_sq *q, struct rdps_tx_buf *buf);
void rdps__soft_sq_abort(struct rdps_soft_sq *q, struct rdps_tx_buf *buf);

/*
 * The transport ops submit and submit_mem. `refuse` is the device's own refusal (a negative
 * code: RDPS_EDEVFATAL, RDPS_ESHUTDOWN) or 0; submit returns a claimed buffer to the pool on
 * every error, as the contract says, and a buffer it does not know is RDPS_EINVAL, untouched.
 */
int rdps__soft_sq_submit(struct rdps_soft_sq *q, struct rdps_tx_buf *buf, uint32_t len,
                         const struct rdps_dest *const *dests, unsigned ndest, int refuse);
int rdps__soft_sq_submit_mem(struct rdps_soft_sq *q, struct rdps_tx_mem *m, size_t offset,
                             uint32_t len, const struct rdps_dest *const *dests, unsigned ndest,
                             uint64_t cookie, int refuse);

/* The requests a flush copies: queued ones, oldest first, *count of them. */
static inline const struct rdps_soft_sq_req *rdps__soft_sq_queued(const struct rdps_soft_sq *q,
                                                                  uint32_t *count)
{
    *count = q->queued;
    return q->reqs + q->sent;
}

/* The device copied every queued request: they are sent, completed by the next reap (each one
 * reports: the owner's send progress awaits them all, rdps_tx_progress). */
static inline void rdps__soft_sq_flushed(struct rdps_soft_sq *q)
{
    q->sent += q->queued;
    q->queued = 0;
    q->owner->tx.awaited = q->owner->tx.seen + q->sent;
}

/* The device failed or is gone: every queued request is dropped (buffers back, regions told). */
void rdps__soft_sq_drop_queued(struct rdps_soft_sq *q);

/* Completes every sent request (the device's poll): buffers back, regions' `completed` forward. */
void rdps__soft_sq_reap(struct rdps_soft_sq *q);

/* True while sent requests wait for the reap (a completion to report: arm() says "ready"). */
static inline bool rdps__soft_sq_completions_due(const struct rdps_soft_sq *q)
{
    return q->sent > 0;
}

/* Requests queued or sent and not completed (the stats' tx_outstanding). */
static inline uint32_t rdps__soft_sq_outstanding(const struct rdps_soft_sq *q)
{
    return q->sent + q->queued;
}

/* The queue's part of the transport's stats: tx_backpressure and tx_outstanding. */
static inline void rdps__soft_sq_stats(const struct rdps_soft_sq *q,
                                       struct rdps_transport_stats *out)
{
    out->tx_backpressure = q->backpressure;
    out->tx_outstanding = rdps__soft_sq_outstanding(q);
}

/* The transport op send_room: completions come back at once on a soft device, so a full queue
 * reaps first. */
static inline uint32_t rdps__soft_sq_room(struct rdps_soft_sq *q)
{
    if (q->sent + q->queued >= q->depth)
        rdps__soft_sq_reap(q);
    return q->depth - q->sent - q->queued;
}

/* The transport ops mem_register and mem_deregister (a region still referenced is RDPS_EBUSY,
 * after a reap). */
int rdps__soft_sq_mem_register(struct rdps_soft_sq *q, void *addr, size_t len,
                               struct rdps_tx_mem **out);
int rdps__soft_sq_mem_deregister(struct rdps_soft_sq *q, struct rdps_tx_mem *m);

#endif /* RDPS_SOFT_SQ_H */
