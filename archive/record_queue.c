/* SPDX-License-Identifier: BSD-2-Clause */
/* record_queue.c - the recorder's SPSC byte ring: reserve/publish, peek/release, sleep and wake. */
#include "record_queue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdps/rdps.h>

/* An entry: a u64 length, then the bytes, padded to 8. A length of PAD skips to the ring's end. */
#define ENTRY_HEAD 8u
#define PAD        UINT64_MAX

static size_t align8(size_t n)
{
    return (n + 7u) & ~(size_t)7u;
}

int record_queue_init(struct record_queue *q, size_t cap)
{
    memset(q, 0, sizeof(*q));
    size_t c = 64 * 1024;
    while (c < cap)
        c *= 2;
    q->buf = malloc(c);
    if (q->buf == NULL)
        return RDPS_ENOMEM;
    q->cap = c;
    atomic_init(&q->head, 0);
    atomic_init(&q->tail, 0);
    atomic_init(&q->consumer_sleeping, 0);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&q->wake, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&q->lock, NULL);
    return 0;
}

void record_queue_fini(struct record_queue *q)
{
    if (q->buf == NULL)
        return;
    pthread_cond_destroy(&q->wake);
    pthread_mutex_destroy(&q->lock);
    free(q->buf);
    q->buf = NULL;
}

size_t record_queue_used(struct record_queue *q)
{
    return (size_t)(atomic_load_explicit(&q->tail, memory_order_acquire) -
                    atomic_load_explicit(&q->head, memory_order_acquire));
}

void *record_queue_reserve(struct record_queue *q, size_t len)
{
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&q->head, memory_order_acquire);
    size_t total = ENTRY_HEAD + align8(len);
    size_t idx = (size_t)(tail & (q->cap - 1));
    size_t to_end = q->cap - idx;
    size_t pad = total > to_end ? to_end : 0;
    if (pad + total > q->cap - (size_t)(tail - head))
        return NULL;
    if (pad > 0) {
        uint64_t mark = PAD;
        memcpy(q->buf + idx, &mark, sizeof(mark));
        idx = 0;
    }
    uint64_t n = len;
    memcpy(q->buf + idx, &n, sizeof(n));
    q->reserved_at = tail;
    q->reserved_end = tail + pad + total;
    return q->buf + idx + ENTRY_HEAD;
}

void record_queue_publish(struct record_queue *q)
{
    uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    bool was_empty = head == q->reserved_at;
    /* seq_cst: ordered before the load of consumer_sleeping (the consumer stores that flag and
     * then loads tail: one of the two sees the other). */
    atomic_store(&q->tail, q->reserved_end);
    uint64_t used = q->reserved_end - head;
    if (used > q->high_water)
        q->high_water = used;
    int sleeping = atomic_load(&q->consumer_sleeping);
    if ((sleeping == 1 && was_empty) || (sleeping != 0 && used > q->cap / 4)) {
        q->wakeups++;
        record_queue_wake(q);
    }
}

const void *record_queue_peek(struct record_queue *q, size_t *len)
{
    for (;;) {
        uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
        uint64_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
        if (head == tail)
            return NULL;
        size_t idx = (size_t)(head & (q->cap - 1));
        uint64_t n;
        memcpy(&n, q->buf + idx, sizeof(n));
        if (n == PAD) {
            atomic_store_explicit(&q->head, head + (q->cap - idx), memory_order_release);
            continue;
        }
        q->peeked = (size_t)n;
        *len = (size_t)n;
        return q->buf + idx + ENTRY_HEAD;
    }
}

void record_queue_release(struct record_queue *q)
{
    uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    atomic_store_explicit(&q->head, head + ENTRY_HEAD + align8(q->peeked), memory_order_release);
}

void record_queue_wait(struct record_queue *q, uint64_t deadline_ns, bool wake_on_first)
{
    pthread_mutex_lock(&q->lock);
    atomic_store(&q->consumer_sleeping, wake_on_first ? 1 : 2);
    uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    if (!wake_on_first || atomic_load(&q->tail) == head) {
        struct timespec ts = {.tv_sec = (time_t)(deadline_ns / 1000000000u),
                              .tv_nsec = (long)(deadline_ns % 1000000000u)};
        pthread_cond_timedwait(&q->wake, &q->lock, &ts);
    }
    atomic_store(&q->consumer_sleeping, 0);
    pthread_mutex_unlock(&q->lock);
}

void record_queue_wake(struct record_queue *q)
{
    pthread_mutex_lock(&q->lock);
    pthread_cond_signal(&q->wake);
    pthread_mutex_unlock(&q->lock);
}
