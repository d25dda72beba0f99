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
};

/* A registered send buffer obtained with claim(); `data` holds up to `capacity` bytes. */
struct rdps_tx_buf {
    uint8_t *data;
    uint32_t capacity;
    uint32_t slot; /* transport-private */
};

/* One received datagram; `data` stays valid until rx_release(). */
struct rdps_rx_datagram {
    const uint8_t *data; /* payload, after the 40-byte GRH on verbs */
    uint32_t len;
    uint32_t src_qpn;
    uint8_t src_gid[16]; /* from the GRH when has_src_gid, else all zero */
    bool has_src_gid;
    uint16_t src_lid; /* InfiniBand source LID when there was no GRH (else 0) */
    uint32_t slot;    /* transport-private */
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
    /* The QP entered the error state and was brought back to RTS (see
     * RDPS_TRANSPORT_EV_QP_RECOVERED). */
    uint64_t qp_recoveries;
    /* Send work requests queued or in flight when the QP was reset: lost, never sent. */
    uint64_t tx_lost_qp_error;
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
     * A pollable fd (level-triggered) that becomes readable when completions
     * or async events are pending, or -1. To sleep: arm(), poll() once more
     * (a completion may have landed before the arm), and only if that found
     * nothing wait for the fd; after it fires, arm() again.
     */
    int (*event_fd)(struct rdps_transport *t);
    /*
     * Consumes the fd's readiness and requests the next notification; returns
     * the number of async events waiting for next_event(). May leave the fd
     * readable when more is pending (the caller just wakes again).
     */
    int (*arm)(struct rdps_transport *t);
    /* Next async event (port/device) if any: returns 1 and fills *type, 0 if none. */
    int (*next_event)(struct rdps_transport *t, enum rdps_transport_event_type *type);
    void (*get_stats)(const struct rdps_transport *t, struct rdps_transport_stats *out);
    void (*destroy)(struct rdps_transport *t);
};

/*
 * Every transport starts with this. An interceptor (the loss generator) sets
 * `inner` to the transport it wraps, so code that needs the transport at the
 * bottom (verbs accessors) looks through any interceptor; NULL otherwise.
 */
struct rdps_transport {
    const struct rdps_transport_ops *ops;
    struct rdps_transport *inner;
};

/* The innermost transport under any interceptors (t itself when it wraps none). */
static inline struct rdps_transport *rdps__transport_innermost(struct rdps_transport *t)
{
    while (t != NULL && t->inner != NULL)
        t = t->inner;
    return t;
}

/* Shorthand for t->ops->reply_dest(t, rx, out). */
static inline int rdps__transport_reply(struct rdps_transport *t, const struct rdps_rx_datagram *rx,
                                        const struct rdps_dest **out)
{
    return t->ops->reply_dest(t, rx, out);
}

#endif /* RDPS_TRANSPORT_H */
