/* SPDX-License-Identifier: BSD-2-Clause */
/* mpsc_ring.c - the many-producer, one-consumer record ring (rdps_mpsc_ring.h). */
#include "rdps_mpsc_ring.h"

#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#define CLOSED    (1ull << 63)
#define PAD_MARK  UINT32_MAX /* a padding record's payload length: skipped */
#define ALIGN8(n) (((n) + 7u) & ~(uint64_t)7u)

int rdps__mpsc_init(struct rdps_mpsc_ring *r, uint32_t capacity)
{
    memset(r, 0, sizeof(*r));
    if (capacity < RDPS_MPSC_MIN_CAP || (capacity & (capacity - 1)) != 0 || capacity > 1u << 30)
        return RDPS_EINVAL;
    r->buf = aligned_alloc(64, capacity);
    if (r->buf == NULL)
        return RDPS_ENOMEM;
    memset(r->buf, 0, capacity); /* a zero length: nothing committed there */
    r->capacity = capacity;
    r->max_length = capacity / 2 - RDPS_MPSC_HEADER;
    return 0;
}

void rdps__mpsc_fini(struct rdps_mpsc_ring *r)
{
    free(r->buf);
    r->buf = NULL;
}

/* The header words at offset o: the record's bytes (committing store last) and the payload's. */
static inline uint32_t *header_at(const struct rdps_mpsc_ring *r, uint64_t pos)
{
    return (uint32_t *)(void *)(r->buf + (pos & (r->capacity - 1)));
}

int rdps__mpsc_offer(struct rdps_mpsc_ring *r, const void *data, uint32_t len, bool *wake)
{
    *wake = false;
    if (len > r->max_length)
        return RDPS_EMSGSIZE;
    const uint64_t cap = r->capacity, need = ALIGN8(RDPS_MPSC_HEADER + (uint64_t)len);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed), padding, total;
    do {
        if (tail & CLOSED)
            return RDPS_ECLOSED;
        uint64_t to_end = cap - (tail & (cap - 1));
        padding = need > to_end ? to_end : 0; /* the record starts the next lap */
        total = need + padding;
        uint64_t head = atomic_load_explicit(&r->head_cache, memory_order_acquire);
        if (tail + total - head > cap) {
            head = atomic_load_explicit(&r->head, memory_order_acquire);
            if (tail + total - head > cap)
                return RDPS_EAGAIN;
            atomic_store_explicit(&r->head_cache, head, memory_order_release);
        }
    } while (!atomic_compare_exchange_weak_explicit(&r->tail, &tail, tail + total,
                                                    memory_order_seq_cst, memory_order_relaxed));
    if (padding != 0) {
        uint32_t *pad = header_at(r, tail);
        pad[1] = PAD_MARK;
        __atomic_store_n(&pad[0], (uint32_t)padding, __ATOMIC_RELEASE);
        tail += padding;
    }
    uint32_t *h = header_at(r, tail);
    h[1] = len;
    if (len > 0)
        memcpy(h + 2, data, len);
    __atomic_store_n(&h[0], (uint32_t)need, __ATOMIC_RELEASE); /* the commit */
    /* After the commit: a consumer that set `waiting` before it is woken (rdps_mpsc_ring.h). */
    if (atomic_load_explicit(&r->waiting, memory_order_seq_cst) != 0 &&
        atomic_exchange_explicit(&r->waiting, 0, memory_order_seq_cst) != 0)
        *wake = true;
    return 0;
}

bool rdps__mpsc_peek(struct rdps_mpsc_ring *r, struct rdps_mpsc_msg *m)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed); /* its own */
    for (;;) {
        uint32_t *h = header_at(r, head);
        uint32_t bytes = __atomic_load_n(&h[0], __ATOMIC_ACQUIRE);
        if (bytes == 0)
            return false; /* not committed yet (or nothing claimed) */
        if (h[1] != PAD_MARK) {
            m->data = (const uint8_t *)(h + 2);
            m->len = h[1];
            return true;
        }
        memset(h, 0, bytes); /* the padding to the end of the memory: nothing to hand out */
        head += bytes;
        atomic_store_explicit(&r->head, head, memory_order_release);
    }
}

void rdps__mpsc_release(struct rdps_mpsc_ring *r)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint32_t *h = header_at(r, head);
    uint32_t bytes = h[0];
    memset(h, 0, bytes); /* the next lap reads zero lengths here until producers commit */
    atomic_store_explicit(&r->head, head + bytes, memory_order_release);
}

bool rdps__mpsc_pending(const struct rdps_mpsc_ring *r)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_seq_cst) & ~CLOSED;
    return tail != atomic_load_explicit(&r->head, memory_order_relaxed);
}

bool rdps__mpsc_sleep(struct rdps_mpsc_ring *r)
{
    atomic_store_explicit(&r->waiting, 1, memory_order_seq_cst);
    if (!rdps__mpsc_pending(r))
        return true;
    atomic_store_explicit(&r->waiting, 0, memory_order_relaxed);
    return false;
}

void rdps__mpsc_awake(struct rdps_mpsc_ring *r)
{
    atomic_store_explicit(&r->waiting, 0, memory_order_relaxed);
}

void rdps__mpsc_close(struct rdps_mpsc_ring *r)
{
    atomic_fetch_or_explicit(&r->tail, CLOSED, memory_order_seq_cst);
}
