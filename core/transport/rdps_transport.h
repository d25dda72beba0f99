/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_transport.h - the datagram transport the protocol engine runs over: an ops table (verbs UD,
 * loopback, interceptors). */
#ifndef RDPS_TRANSPORT_H
#define RDPS_TRANSPORT_H

#include <rdps/rdps.h> /* the RDPS_E* codes the ops return */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rdps_transport;

/*
 * Where a datagram goes: an address handle plus the remote QP number and
 * Q_Key. For the verbs transport `ah` is a struct ibv_ah *; for loopback it is
 * the peer endpoint. Destinations are created by addr/ (unicast resolve,
 * multicast join) or by the transport for replies (reply_dest()) and outlive
 * every send that uses them.
 */
struct rdps_dest {
    void *ah;
    uint32_t remote_qpn;
    uint32_t remote_qkey;
    /* Datagrams to it carry no GRH (InfiniBand inside a subnet: a unicast AH that is not global),
     * so its receiver sees our LID (with these path bits), not our GID: see self_source. */
    bool no_grh;
    uint8_t src_path_bits;
};

/* A registered send buffer obtained with claim(); `data` holds up to `capacity` bytes. */
struct rdps_tx_buf {
    uint8_t *data;
    uint32_t capacity;
    uint32_t slot; /* transport-private */
};

/*
 * Caller memory registered for zero-copy sends (mem_register), e.g. a
 * reliable publisher's ring of frames: written once by the caller, posted and
 * re-posted from where it lies (submit_mem), never copied per send.
 *
 * Completion model: every submit_mem carries a cookie, strictly increasing
 * per region (a 64-bit counter or the ring's byte position). `completed` is
 * the largest cookie such that every submit_mem of this region with a cookie
 * <= it no longer references the memory: sent (inline data leaves at post),
 * completed with an error, or dropped (QP reset, refused post, loss
 * interceptor). Only then may the caller overwrite those bytes. It advances
 * in poll() (which reaps send completions; UD sends of one QP complete in
 * order) and never goes back. The transport guarantees it advances without
 * further sends: a flush that posts submit_mem requests signals its last one.
 * Read it with rdps__tx_mem_completed(); the other fields are the transport's.
 */
struct rdps_tx_mem {
    uint8_t *addr;
    size_t len;
    uint64_t completed; /* every submit_mem with cookie <= completed is done (0: none yet) */
    uint64_t submitted; /* largest cookie submitted (0: none yet) */
    uint32_t inflight;  /* queued or posted requests still referencing the memory */
    uint32_t lkey;
    void *priv; /* transport-private (the ibv_mr on verbs) */
    struct rdps_transport *owner;
    struct rdps_tx_mem *next; /* the owner's list of regions */
};

/* One received datagram; `data` stays valid until rx_release(). */
struct rdps_rx_datagram {
    const uint8_t *data; /* payload, after the 40-byte GRH on verbs */
    uint32_t len;
    uint32_t src_qpn;
    uint8_t src_gid[16]; /* from the GRH when has_src_gid, else all zero */
    bool has_src_gid;
    uint16_t src_lid; /* InfiniBand source LID when there was no GRH (else 0) */
    /* Sent to a multicast group (its GRH names a group: an IB multicast GID, or on RoCE v2 an IPv4
     * multicast destination), not to this QP by unicast. */
    bool to_multicast;
    uint32_t slot; /* transport-private */
};

/* Transport-level counters (the engine keeps its own protocol counters). */
struct rdps_transport_stats {
    uint64_t tx_datagrams, tx_bytes, tx_completion_errors;
    uint64_t rx_datagrams, rx_bytes, rx_completion_errors;
    uint64_t tx_backpressure; /* claim/submit refused because the pool or send queue was full */
    /*
     * Send work requests queued or posted whose completion is not known yet (a
     * snapshot, not a counter). Unsignaled requests are known complete only
     * when a later signaled one completes, so this can stay above zero after a
     * sender goes quiet: wait on it with a deadline.
     */
    uint64_t tx_outstanding;
    /*
     * Times the receive queue ran out of posted buffers. Loopback counts each
     * datagram dropped for want of a buffer; verbs counts polls that found
     * every posted buffer consumed (the device drops silently after that, so
     * it is a lower bound: use it as a signal, sequence gaps give the loss).
     */
    uint64_t rx_queue_empty;
    uint64_t loss_dropped_tx, loss_dropped_rx; /* dropped by the loss-generator interceptor */
    uint64_t async_events;
    /*
     * Reply destinations (reply_dest()): address handles created for them,
     * cached ones evicted (least recently used) for a new source, and requests
     * refused (the AH could not be created, or too many evicted AHs still wait
     * for in-flight sends). Receiving alone never creates one.
     */
    uint64_t reply_ah_created, reply_evictions, reply_refused;
    /*
     * Address handles given up (evicted replies, addr/'s released ones) that
     * still wait for sends naming them to complete before they are destroyed
     * (a snapshot, not a counter).
     */
    uint64_t ah_retiring;
    /* The QP entered the error state and was brought back to RTS (see
     * RDPS_TRANSPORT_EV_QP_RECOVERED). */
    uint64_t qp_recoveries;
    /* Send work requests queued or in flight when the QP was reset: lost, never sent. */
    uint64_t tx_lost_qp_error;
    /* Times a signaled send stayed uncompleted for the stall time (verbs: 2 s) while
     * nothing else completed: the device or the link stopped sending (logged once each). */
    uint64_t tx_stalls;
    /* Received frames an authenticating interceptor dropped, by reason (rdps_auth.h). */
    uint64_t auth_unsigned, auth_short, auth_unknown_key, auth_bad_tag, auth_replayed;
    uint64_t auth_senders_evicted; /* anti-replay table entries evicted (LRU) */
    uint64_t auth_stale;           /* sealed further from our clock than the frame age allows */
};

enum rdps_transport_event_type {
    RDPS_TRANSPORT_EV_PORT_ACTIVE = 1,
    RDPS_TRANSPORT_EV_PORT_DOWN = 2,
    RDPS_TRANSPORT_EV_DEVICE_FATAL = 3,
    RDPS_TRANSPORT_EV_OTHER = 4,
    /*
     * The QP had entered the error state (a fatal QP event or flushed work
     * requests); it was reset and brought back to RTS on the same QPN, its
     * receives re-posted and its multicast attachments restored. Datagrams
     * that arrived meanwhile and the sends in flight (tx_lost_qp_error) are lost.
     */
    RDPS_TRANSPORT_EV_QP_RECOVERED = 5,
};

/*
 * The ops table. Calls return 0 or a non-negative count on success and a
 * negative rdps error code on failure; RDPS_EAGAIN means back-pressure (no
 * free send buffer or send-queue slot): nothing was queued and the caller
 * may retry after poll().
 */
struct rdps_transport_ops {
    const char *name;
    /* Largest datagram payload (the port's active MTU on verbs). */
    uint32_t (*max_payload)(struct rdps_transport *t);
    /* Takes a free registered send buffer. */
    int (*claim)(struct rdps_transport *t, struct rdps_tx_buf *buf);
    /* Returns an unused claimed buffer. */
    void (*abort)(struct rdps_transport *t, struct rdps_tx_buf *buf);
    /*
     * Queues `len` bytes of a claimed buffer to each of `ndest` destinations
     * (one copy per destination, the buffer is freed when all complete).
     * Ownership of buf passes to the transport even on failure.
     */
    int (*submit)(struct rdps_transport *t, struct rdps_tx_buf *buf, uint32_t len,
                  const struct rdps_dest *const *dests, unsigned ndest);
    /* Posts everything queued by submit() as one work-request chain. */
    int (*flush)(struct rdps_transport *t);
    /* Reaps send completions and returns up to `max` received datagrams (0 if none). */
    int (*poll)(struct rdps_transport *t, struct rdps_rx_datagram *rx, int max);
    /* Hands received buffers back (re-posted in batches). */
    void (*rx_release)(struct rdps_transport *t, struct rdps_rx_datagram *rx, int count);
    /*
     * A destination that answers the sender of `rx` (a datagram from poll()
     * not yet released), for NAK / STATUS / echo replies. Built only when asked
     * for and cached by source (bounded, O(1)): receiving alone costs nothing.
     * *out stays valid until the cache's capacity of other sources were
     * answered after it; use it right away. RDPS_EAGAIN when the cache refused
     * (counted in reply_refused), another negative code when the AH failed.
     */
    int (*reply_dest)(struct rdps_transport *t, const struct rdps_rx_datagram *rx,
                      const struct rdps_dest **out);
    /*
     * A destination for a peer known only by its source (as poll() reported it
     * in a datagram since released, or from rdps_msg_info / rdps_event): the
     * publisher's QP for a NAK or STATUS, a receiver for a unicast repair.
     * Same cache as reply_dest (same key, so both share one AH per source) and
     * the same lifetime: *out stays valid until reply_cache_entries (default
     * 256) other sources were looked up after it through either call; look it
     * up again right before each submit (an O(1) hash hit) instead of keeping
     * it. submit copies what it needs, and an evicted AH is destroyed only
     * after every send queued or posted before the eviction has completed. A
     * stale pointer names a live AH of another source or none (submit refuses
     * it), never a destroyed one. RDPS_EAGAIN when the cache refused (counted
     * in reply_refused); RDPS_ENOTSUP on an InfiniBand port for a source with a
     * GID but no LID (the path needs the LID of its datagram: use reply_dest).
     */
    int (*source_dest)(struct rdps_transport *t, const struct rdps_source *src,
                       const struct rdps_dest **out);
    /*
     * A destination for `src` that stays valid until dest_release (unicast fan-out: a subscriber
     * gets a copy of every datagram for as long as discovery knows it). The address handle is
     * built from the source exactly as source_dest builds it, but kept outside the reply cache,
     * so no number of other sources answered meanwhile evicts it. Slow path (one AH each);
     * RDPS_ENOTSUP where source_dest would refuse (InfiniBand source known by GID only).
     */
    int (*dest_acquire)(struct rdps_transport *t, const struct rdps_source *src,
                        const struct rdps_dest **out);
    /* Gives back what dest_acquire returned; the AH is destroyed once the sends that name it
     * completed (queued and posted sends keep their copy of the destination). */
    void (*dest_release)(struct rdps_transport *t, const struct rdps_dest *dest);
    /*
     * Work requests the send queue takes now (reaping completions first when it looks full):
     * a caller that submits one buffer to many destinations makes sure they fit before it claims.
     */
    uint32_t (*send_room)(struct rdps_transport *t);
    /*
     * Registers len bytes at addr (ibv_reg_mr once) for submit_mem. Slow path;
     * *out belongs to the transport until mem_deregister (or destroy, which
     * deregisters every region left).
     */
    int (*mem_register)(struct rdps_transport *t, void *addr, size_t len, struct rdps_tx_mem **out);
    /*
     * Deregisters a region no request references any more (completed ==
     * submitted after a flush and poll); RDPS_EBUSY otherwise, nothing done.
     */
    int (*mem_deregister)(struct rdps_transport *t, struct rdps_tx_mem *m);
    /*
     * Queues len bytes at m->addr + offset to each of ndest destinations, in
     * the same work-request chain as submit() (posted by flush()). No copy:
     * the bytes are read by the device after flush and must not change until
     * completed >= cookie. cookie > m->submitted (strictly increasing).
     * RDPS_EAGAIN when the send queue has no room for ndest requests (nothing
     * queued); RDPS_EMSGSIZE beyond max_payload; RDPS_EINVAL for a range
     * outside the region, a cookie not above the last, or a bad destination.
     */
    int (*submit_mem)(struct rdps_transport *t, struct rdps_tx_mem *m, size_t offset, uint32_t len,
                      const struct rdps_dest *const *dests, unsigned ndest, uint64_t cookie);
    /*
     * A pollable fd (level-triggered) that becomes readable when, after an
     * arm() that returned 0, a datagram arrives, a send completes that a
     * sender may wait for, or an async event comes; or -1. It stays readable
     * until the next arm(): poll() does not consume it (a busy-polling caller
     * pays no system call for notifications it never sleeps on).
     */
    int (*event_fd)(struct rdps_transport *t);
    /*
     * To sleep on the fd: poll() until it finds nothing, then arm(). arm()
     * consumes the fd's readiness, requests the next notification and looks
     * once more: 1 when work is already waiting (received datagrams, send
     * completions a sender may wait for, async events for next_event()): poll
     * instead of sleeping; 0 when armed with nothing waiting: the fd is quiet
     * until new work comes. Negative on a device error.
     */
    int (*arm)(struct rdps_transport *t);
    /* Next async event (port/device) if any: returns 1 and fills *type, 0 if none. */
    int (*next_event)(struct rdps_transport *t, enum rdps_transport_event_type *type);
    void (*get_stats)(const struct rdps_transport *t, struct rdps_transport_stats *out);
    void (*destroy)(struct rdps_transport *t);
    /*
     * The source a receiver of a datagram sent to `dest` sees as ours, exactly as its poll()
     * reports it (src_gid/has_src_gid or src_lid, and src_qpn): through a GRH (RoCE always;
     * InfiniBand multicast and routed traffic) our GID and QPN, without one (dest->no_grh) our
     * LID and QPN. An authenticating interceptor binds every frame to it, so the same bytes sent
     * from any other QP fail verification. Interceptors leave it NULL (the innermost answers);
     * RDPS_ENOTSUP where a transport cannot tell, and then no domain key can be used over it.
     */
    int (*self_source)(struct rdps_transport *t, const struct rdps_dest *dest,
                       struct rdps_source *out);
    /*
     * One datagram gathered from two places (claims longer than a datagram): the first hdr_len
     * bytes of a claimed buffer (the frame's header), then len bytes of registered memory at
     * m->addr + offset (its payload, where the application wrote it), to each of ndest
     * destinations, in the chain submit() builds. The buffer passes to the transport as with
     * submit(), even on failure; the region's bytes are read as with submit_mem (no copy on
     * verbs: a second SGE; done with them once completed >= cookie, cookie above m->submitted).
     * RDPS_ENOTSUP when the transport cannot gather (a QP of one SGE): nothing is queued and the
     * buffer stays the caller's, who copies the payload behind the header instead. NULL: the
     * same as RDPS_ENOTSUP (rdps__transport_submit_gather).
     */
    int (*submit_gather)(struct rdps_transport *t, struct rdps_tx_buf *buf, uint32_t hdr_len,
                         struct rdps_tx_mem *m, size_t offset, uint32_t len,
                         const struct rdps_dest *const *dests, unsigned ndest, uint64_t cookie);
};

/*
 * Send progress, kept by the innermost transport in its own struct rdps_transport for senders to
 * read without a call (batching: a message waits in the open datagram while an earlier send's
 * completion is awaited, pubsub/publisher_batch.c). Send work requests are numbered in posting
 * order. `awaited`: a completion will be seen for every request below it (1 + the last one posted
 * with a completion requested); `seen`: completions were seen (reaped by poll(), or by claim and
 * send_room making room) for every request below it. awaited > seen: a posted send will still
 * report, and a later poll() sees it. A transport that requests completions selectively requests
 * one on the last request of every chain posted while none is awaited, so a sender never waits
 * on requests that will not report (verbs: flush). Zero in transports that do not keep it: nothing
 * is ever awaited.
 */
struct rdps_tx_progress {
    uint64_t awaited;
    uint64_t seen;
};

/* A posted send's completion is still to be seen (see rdps_tx_progress). */
static inline bool rdps__tx_awaited(const struct rdps_tx_progress *p)
{
    return p->awaited > p->seen;
}

/*
 * Every transport starts with this. An interceptor (the loss generator) sets
 * `inner` to the transport it wraps, so code that needs the transport at the
 * bottom (verbs accessors) looks through any interceptor; NULL otherwise.
 * `tx` is kept by the innermost transport only (read it there:
 * rdps__transport_innermost(t)->tx).
 */
struct rdps_transport {
    const struct rdps_transport_ops *ops;
    struct rdps_transport *inner;
    struct rdps_tx_progress tx;
};

/* The innermost transport under any interceptors (t itself when it wraps none). */
static inline struct rdps_transport *rdps__transport_innermost(struct rdps_transport *t)
{
    while (t != NULL && t->inner != NULL)
        t = t->inner;
    return t;
}

/* Every submit_mem of m with a cookie <= the result is done with m's memory (see rdps_tx_mem). */
static inline uint64_t rdps__tx_mem_completed(const struct rdps_tx_mem *m)
{
    return m->completed;
}

/*
 * A cookie that will never reference the memory: a submit_mem dropped before
 * it was queued (an interceptor's drop), or a cookie the caller consumed but
 * whose submit failed. Keeps cookies gap-free for callers that count posts;
 * completed reaches it as soon as nothing before it is in flight. cookie must
 * be above m->submitted.
 */
static inline void rdps__tx_mem_skip(struct rdps_tx_mem *m, uint64_t cookie)
{
    m->submitted = cookie;
    if (m->inflight == 0)
        m->completed = cookie;
}

/*
 * For transports: one request of m stopped referencing its memory (sent
 * inline, completed, or dropped); `cookie` is its submit's cookie when it was
 * the submit's last request and completed in order, else 0.
 */
static inline void rdps__tx_mem_release(struct rdps_tx_mem *m, uint64_t cookie)
{
    if (--m->inflight == 0)
        m->completed = m->submitted;
    else if (cookie > m->completed)
        m->completed = cookie;
}

/* Shorthand for t->ops->reply_dest(t, rx, out). */
static inline int rdps__transport_reply(struct rdps_transport *t, const struct rdps_rx_datagram *rx,
                                        const struct rdps_dest **out)
{
    return t->ops->reply_dest(t, rx, out);
}

/* The ops added for the reliable layer, RDPS_ENOTSUP on a transport without them (test doubles). */
static inline int rdps__transport_source_dest(struct rdps_transport *t,
                                              const struct rdps_source *src,
                                              const struct rdps_dest **out)
{
    return t->ops->source_dest != NULL ? t->ops->source_dest(t, src, out) : RDPS_ENOTSUP;
}

/* The unicast fan-out ops (RDPS_ENOTSUP, no-op, unbounded on a transport without them). */
static inline int rdps__transport_dest_acquire(struct rdps_transport *t,
                                               const struct rdps_source *src,
                                               const struct rdps_dest **out)
{
    return t->ops->dest_acquire != NULL ? t->ops->dest_acquire(t, src, out) : RDPS_ENOTSUP;
}

static inline void rdps__transport_dest_release(struct rdps_transport *t,
                                                const struct rdps_dest *dest)
{
    if (t->ops->dest_release != NULL && dest != NULL)
        t->ops->dest_release(t, dest);
}

/* The self_source of the first transport from t inwards that has one (RDPS_ENOTSUP: none). */
static inline int rdps__transport_self_source(struct rdps_transport *t,
                                              const struct rdps_dest *dest, struct rdps_source *out)
{
    for (; t != NULL; t = t->inner)
        if (t->ops->self_source != NULL)
            return t->ops->self_source(t, dest, out);
    return RDPS_ENOTSUP;
}

static inline uint32_t rdps__transport_send_room(struct rdps_transport *t)
{
    return t->ops->send_room != NULL ? t->ops->send_room(t) : UINT32_MAX;
}

static inline int rdps__transport_mem_register(struct rdps_transport *t, void *addr, size_t len,
                                               struct rdps_tx_mem **out)
{
    return t->ops->mem_register != NULL ? t->ops->mem_register(t, addr, len, out) : RDPS_ENOTSUP;
}

static inline int rdps__transport_mem_deregister(struct rdps_transport *t, struct rdps_tx_mem *m)
{
    return t->ops->mem_deregister != NULL ? t->ops->mem_deregister(t, m) : RDPS_ENOTSUP;
}

static inline int rdps__transport_submit_mem(struct rdps_transport *t, struct rdps_tx_mem *m,
                                             size_t offset, uint32_t len,
                                             const struct rdps_dest *const *dests, unsigned ndest,
                                             uint64_t cookie)
{
    return t->ops->submit_mem(t, m, offset, len, dests, ndest, cookie);
}

static inline int rdps__transport_submit_gather(struct rdps_transport *t, struct rdps_tx_buf *buf,
                                                uint32_t hdr_len, struct rdps_tx_mem *m,
                                                size_t offset, uint32_t len,
                                                const struct rdps_dest *const *dests,
                                                unsigned ndest, uint64_t cookie)
{
    return t->ops->submit_gather != NULL
               ? t->ops->submit_gather(t, buf, hdr_len, m, offset, len, dests, ndest, cookie)
               : RDPS_ENOTSUP;
}

/*
 * submit_gather for a transport that copies every datagram anyway (the loopback device, the
 * authenticating interceptor): the payload is copied behind the header and the buffer submitted;
 * the region is done with at once. Checks what submit_mem checks of the region.
 */
int rdps__transport_gather_by_copy(struct rdps_transport *t, struct rdps_tx_buf *buf,
                                   uint32_t hdr_len, struct rdps_tx_mem *m, size_t offset,
                                   uint32_t len, const struct rdps_dest *const *dests,
                                   unsigned ndest, uint64_t cookie);

/*
 * Registered regions of a transport that copies what it sends (loopback, local, the
 * authenticating interceptor): nothing to register with a device, only the list to keep.
 * list_add makes a region of t at the head of *list (RDPS_EINVAL for no memory, RDPS_ENOMEM);
 * list_remove unlinks and frees m (false: not in the list, nothing done).
 */
int rdps__tx_mem_list_add(struct rdps_transport *t, struct rdps_tx_mem **list, void *addr,
                          size_t len, struct rdps_tx_mem **out);
bool rdps__tx_mem_list_remove(struct rdps_tx_mem **list, struct rdps_tx_mem *m);

#endif /* RDPS_TRANSPORT_H */
