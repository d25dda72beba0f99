/* SPDX-License-Identifier: BSD-2-Clause */
/* publisher_concurrent.c - concurrent publishers (rdps_pub_opts.concurrent): other threads queue
 * messages without a lock, the ctx's thread posts them (rdps(7), THREADS; Aeron's concurrent
 * publication against its exclusive one). */
#include "publisher_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rdps_clock.h"
#include "rdps_error.h"
#include "rdps_log.h"
#include "rdps_mpsc_ring.h"

/*
 * A concurrent publisher is an ordinary publisher of its ctx plus a many-producer ring
 * (rdps_mpsc_ring.h). A thread other than the ctx's owner that sends on it copies the message
 * into the ring (one compare-and-swap, one copy, one store: no lock, no system call unless the
 * ctx's thread sleeps); the ctx's thread takes the messages out at each rdps_ctx_poll (and
 * before each of its own sends on the publisher, so a message another thread queued before it
 * told the owner to send goes first) and sends them as its own with RDPS_SEND_MORE: batching
 * packs them into full datagrams and the poll posts them in one chain.
 *
 * What other threads read of the publisher: the ring, the state below (the ctx's thread keeps it
 * up to date at every poll), and fields that never change. Destroyed, the publisher lingers a
 * second (closed: producers get RDPS_ECLOSED) before its memory goes, for a producer that
 * looked its handle up just before the destroy; rdps(7) asks to stop producers first.
 */
enum queue_state { QUEUE_JOINING = 0, QUEUE_READY = 1, QUEUE_FAILED = 2, QUEUE_CLOSED = 3 };

struct rdps_pub_queue {
    struct rdps_mpsc_ring ring;
    int wake_fd;           /* the ctx's eventfd: written when its thread sleeps on its fd */
    _Atomic int state;     /* enum queue_state, for producers */
    uint32_t max_message;  /* what producers may queue (the ring's half, max_message_size) */
    _Atomic uint64_t busy; /* producers' RDPS_EAGAIN (ring full, not ready): send_backpressure */
    uint64_t dropped;      /* taken out but not sendable (queue_dropped; the ctx's thread's) */
    bool draining;         /* a drain is on the stack: a callback's flush or send skips it */
    uint64_t gone_at_ns;   /* destroyed: its memory goes at the first poll from then on */
};

#define QUEUE_DEFAULT_BYTES (1u << 20)
#define QUEUE_MAX_BYTES     (1u << 30)
#define DRAIN_BUDGET        8192u         /* messages per publisher per poll */
#define LINGER_NS           1000000000ull /* a destroyed publisher's memory stays this long */

int rdps__pub_queue_check_opts(const rdps_pub_opts *opts)
{
    if (opts->concurrent > 1)
        return rdps__set_err(RDPS_EINVAL, "rdps_pub_create: concurrent %u is not 0 or 1",
                             (unsigned)opts->concurrent);
    if (opts->concurrent_queue_bytes != 0 && opts->concurrent == 0)
        return rdps__set_err(RDPS_EINVAL, "rdps_pub_create: concurrent_queue_bytes needs a "
                                          "concurrent publisher (opts.concurrent = 1)");
    if (opts->concurrent_queue_bytes != 0 && (opts->concurrent_queue_bytes < RDPS_MPSC_MIN_CAP ||
                                              opts->concurrent_queue_bytes > QUEUE_MAX_BYTES))
        return rdps__set_err(RDPS_EINVAL,
                             "rdps_pub_create: concurrent_queue_bytes %u outside %u..%u",
                             opts->concurrent_queue_bytes, RDPS_MPSC_MIN_CAP, QUEUE_MAX_BYTES);
    return 0;
}

/* The ctx's wake-up eventfd, in its epoll set (made with its first concurrent publisher). */
static int ctx_wake_fd(rdps_ctx_t *ctx)
{
    if (ctx->wake_fd >= 0)
        return ctx->wake_fd;
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0)
        return rdps__set_err(rdps__errno_code(errno), "eventfd: %s", strerror(errno));
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    if (epoll_ctl(ctx->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        int err = errno;
        close(fd);
        return rdps__set_err(rdps__errno_code(err), "epoll_ctl(ADD eventfd): %s", strerror(err));
    }
    ctx->wake_fd = fd;
    return fd;
}

int rdps__pub_queue_attach(rdps_pub_t *pub, const rdps_pub_opts *opts)
{
    rdps_ctx_t *ctx = pub->ctx;
    uint32_t bytes =
        opts->concurrent_queue_bytes ? opts->concurrent_queue_bytes : QUEUE_DEFAULT_BYTES;
    uint32_t cap = RDPS_MPSC_MIN_CAP;
    while (cap < bytes)
        cap <<= 1; /* the next power of two */
    int fd = ctx_wake_fd(ctx);
    if (fd < 0)
        return fd;
    struct rdps_pub_queue *q = calloc(1, sizeof(*q));
    if (q == NULL)
        return rdps__set_err(RDPS_ENOMEM, "out of memory for a concurrent publisher's queue");
    int rc = rdps__mpsc_init(&q->ring, cap);
    if (rc < 0) {
        free(q);
        return rdps__set_err(rc, "a concurrent publisher's queue of %u bytes: %s", cap,
                             rdps_strerror(rc));
    }
    q->wake_fd = fd;
    q->max_message = q->ring.max_length;
    if (q->max_message > ctx->cfg.max_message_size)
        q->max_message = (uint32_t)ctx->cfg.max_message_size;
    atomic_init(&q->state, QUEUE_JOINING);
    pub->cq = q;
    ctx->concurrent_pubs++;
    return 0;
}

size_t rdps__pub_queue_max_message(const rdps_pub_t *pub)
{
    return pub->cq->max_message;
}

/* What producers are told, from the publisher's state (the ctx's thread, at every poll). */
static void publish_state(rdps_pub_t *pub)
{
    int state = pub->closed || pub->ctx->destroy_requested  ? QUEUE_CLOSED
                : pub->topic->send_ready                    ? QUEUE_READY
                : pub->topic->send_path == RDPS_PATH_FAILED ? QUEUE_FAILED
                                                            : QUEUE_JOINING;
    if (atomic_load_explicit(&pub->cq->state, memory_order_relaxed) != state)
        atomic_store_explicit(&pub->cq->state, state, memory_order_release);
}

int rdps__pub_queue_ready(const rdps_pub_t *pub)
{
    int state = atomic_load_explicit(&pub->cq->state, memory_order_acquire);
    if (state == QUEUE_FAILED)
        rdps__set_err(RDPS_ENOTJOINED, "topic '%s': joining its multicast group failed",
                      pub->topic->name);
    return state == QUEUE_READY;
}

/* A producer's refusal: RDPS_EAGAIN counted as back-pressure (atomically: any thread). */
static int producer_busy(struct rdps_pub_queue *q, const char *why)
{
    atomic_fetch_add_explicit(&q->busy, 1, memory_order_relaxed);
    return rdps__set_err_static(RDPS_EAGAIN, why);
}

int rdps__pub_queue_offer(rdps_pub_t *pub, const void *data, size_t len, unsigned flags)
{
    struct rdps_pub_queue *q = pub->cq;
    int rc = rdps__send_args_refusal(data, len, flags);
    if (rc < 0)
        return rc;
    if (len > q->max_message)
        return rdps__set_err(RDPS_EMSGSIZE,
                             "message of %zu bytes above %u, the longest a concurrent "
                             "publisher's queue takes from other threads (half of "
                             "concurrent_queue_bytes, at most max_message_size)",
                             len, q->max_message);
    switch (atomic_load_explicit(&q->state, memory_order_acquire)) {
    case QUEUE_READY:
        break;
    case QUEUE_JOINING:
        return producer_busy(q, "not ready: the topic's multicast group is still being joined "
                                "(its ctx's thread polls; retry)");
    case QUEUE_FAILED:
        return rdps__set_err(RDPS_ENOTJOINED, "topic '%s': joining its multicast group failed",
                             pub->topic->name);
    default:
        return rdps__set_err_static(RDPS_ECLOSED, "the publisher was destroyed");
    }
    bool wake;
    rc = rdps__mpsc_offer(&q->ring, data, (uint32_t)len, &wake);
    if (rc == RDPS_EAGAIN)
        return producer_busy(q, "the concurrent publisher's queue is full: its ctx's thread has "
                                "not posted what other threads queued yet (retry)");
    if (rc == RDPS_ECLOSED)
        return rdps__set_err_static(RDPS_ECLOSED, "the publisher was destroyed");
    if (rc < 0)
        return rc;
    if (wake) {
        uint64_t one = 1;
        if (write(q->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
            RDPS_LOG_WRN("waking a ctx's thread: %s", strerror(errno)); /* it polls on its timer */
    }
    return 0;
}

int rdps__pub_queue_drain(rdps_pub_t *pub)
{
    struct rdps_pub_queue *q = pub->cq;
    rdps_ctx_t *ctx = pub->ctx;
    struct rdps_mpsc_msg m;
    int rc = 0;
    publish_state(pub);
    if (q->draining)
        return 0; /* a callback of the drain up the stack: that one goes on */
    q->draining = true;
    for (unsigned n = 0; n < DRAIN_BUDGET && rdps__mpsc_peek(&q->ring, &m); n++) {
        if (ctx->destroy_requested) {
            rc = RDPS_ECLOSED;
            break;
        }
        if (pub->claimed)
            break; /* the owner's claim goes first: the queue waits for its commit */
        uint8_t *to = rdps__pub_batch_join(pub, m.data, m.len, RDPS_SEND_MORE);
        if (to != NULL) /* the batching fast path: it joins the open datagram */
            memcpy(to, m.data, m.len);
        else
            rc = rdps__pub_send_queued(pub, m.data, m.len);
        if (rc == RDPS_EAGAIN || rc == RDPS_EBUSY)
            break; /* it stays first in the queue: the next poll sends it */
        if (rc < 0) {
            if (q->dropped++ == 0)
                RDPS_LOG_WRN("topic '%s': a message another thread queued could not be sent: "
                             "%s (counted in queue_dropped)",
                             pub->topic->name, rdps_last_error_message());
            rdps__clear_err();
        }
        rc = 0;
        rdps__mpsc_release(&q->ring);
        if (pub->closed)
            break; /* destroyed by a callback: what is left is dropped when it is freed */
    }
    q->draining = false;
    return rc;
}

/* Frees what lingered long enough (every: the ctx goes). */
static void free_lingering(rdps_ctx_t *ctx, bool every)
{
    for (rdps_pub_t **p = &ctx->lingering; *p != NULL;) {
        rdps_pub_t *pub = *p;
        if (!every && ctx->now_ns < pub->cq->gone_at_ns) {
            p = &pub->next;
            continue;
        }
        *p = pub->next;
        rdps__mpsc_fini(&pub->cq->ring);
        free(pub->cq);
        free(pub);
    }
}

void rdps__ctx_queues_drain(rdps_ctx_t *ctx)
{
    for (rdps_pub_t *p = ctx->pubs; p != NULL && !ctx->destroy_requested; p = p->next) {
        if (p->cq == NULL || p->closed)
            continue;
        rdps__mpsc_awake(&p->cq->ring);
        (void)rdps__pub_queue_drain(p);
    }
    if (ctx->lingering != NULL)
        free_lingering(ctx, false);
}

bool rdps__ctx_queues_sleep(rdps_ctx_t *ctx)
{
    uint64_t count;
    /* What woke it last time is consumed now (the fd is level-triggered, like the device's). */
    while (read(ctx->wake_fd, &count, sizeof(count)) > 0)
        ;
    for (rdps_pub_t *p = ctx->pubs; p != NULL; p = p->next)
        if (p->cq != NULL && !p->closed && !rdps__mpsc_sleep(&p->cq->ring))
            return false;
    return true;
}

void rdps__pub_queue_close(rdps_pub_t *pub)
{
    atomic_store_explicit(&pub->cq->state, QUEUE_CLOSED, memory_order_release);
    rdps__mpsc_close(&pub->cq->ring);
}

void rdps__pub_queue_flush(rdps_pub_t *pub)
{
    struct rdps_pub_queue *q = pub->cq;
    rdps_ctx_t *ctx = pub->ctx;
    rdps__pub_queue_close(pub);
    if (q->draining)
        return; /* the drain up the stack sees the publisher closed */
    /* What producers claimed before the close is committed in a moment (a copy): wait for it,
     * sending what comes, so what the publisher accepted leaves; what the device or the window
     * does not take within a second is dropped, counted. */
    uint64_t deadline = rdps__clock_monotonic_ns() + LINGER_NS;
    while (rdps__mpsc_pending(&q->ring)) {
        struct rdps_mpsc_msg m;
        if (!rdps__mpsc_peek(&q->ring, &m)) {
            sched_yield();
            continue;
        }
        int rc = pub->closed || ctx->destroy_requested ? RDPS_ECLOSED
                                                       : rdps__pub_send_queued(pub, m.data, m.len);
        if (rc == RDPS_EAGAIN && rdps__clock_monotonic_ns() < deadline) {
            ctx->transport->ops->flush(ctx->transport);
            (void)rdps__ctx_reap_sends(ctx); /* completions free send buffers: then again */
            continue;
        }
        if (rc < 0)
            q->dropped++;
        rdps__mpsc_release(&q->ring);
    }
    rdps__clear_err();
}

void rdps__pub_queue_linger(rdps_pub_t *pub)
{
    rdps_ctx_t *ctx = pub->ctx;
    ctx->concurrent_pubs--;
    pub->cq->gone_at_ns = rdps__ctx_now(ctx) + LINGER_NS;
    pub->next = ctx->lingering;
    ctx->lingering = pub;
    rdps__ctx_timer_at(ctx, pub->cq->gone_at_ns);
}

void rdps__ctx_queues_fini(rdps_ctx_t *ctx)
{
    free_lingering(ctx, true);
    if (ctx->wake_fd >= 0)
        close(ctx->wake_fd);
    ctx->wake_fd = -1;
}

void rdps__pub_queue_counters(const rdps_pub_t *pub, rdps_counters *into)
{
    into->send_backpressure += atomic_load_explicit(&pub->cq->busy, memory_order_relaxed);
    into->queue_dropped += pub->cq->dropped;
}
