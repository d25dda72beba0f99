/* SPDX-License-Identifier: BSD-2-Clause */
/* record_queue.h - the bounded single-producer single-consumer byte queue between a recorder's ctx
 * thread (which must never wait on the disk) and its writer thread. */
#ifndef RDPS_ARCHIVE_RECORD_QUEUE_H
#define RDPS_ARCHIVE_RECORD_QUEUE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Variable-length entries in a ring of `cap` bytes (a power of two). The producer reserves an
 * entry, fills it and publishes it; a reservation that does not fit fails at once (the caller
 * counts an overrun) - the producer never blocks and never allocates. The consumer peeks the
 * oldest entry and releases it. Positions are 64-bit counters (never wrap); each side writes
 * only its own, with release/acquire ordering.
 *
 * Waking the consumer costs a system call, so the producer does it only when the consumer sleeps
 * and either asked for the first entry (it has nothing pending) and the queue was empty before
 * this one, or the queue is a quarter full: a consumer with records pending has a deadline of
 * its own (its flush rule) and drains the queue then.
 */
struct record_queue {
    uint8_t *buf;
    size_t cap;
    _Alignas(64) _Atomic uint64_t head; /* consumer: next entry to read */
    _Alignas(64) _Atomic uint64_t tail; /* producer: next free byte */
    uint64_t reserved_at, reserved_end; /* producer's pending reservation */
    size_t peeked;                      /* consumer: length of the entry peek returned */
    _Alignas(64) _Atomic int consumer_sleeping;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    uint64_t high_water; /* producer: largest fill seen, bytes */
    uint64_t wakeups;    /* producer: signals sent */
};

/* cap is rounded up to a power of two (at least 64 KiB). 0 or RDPS_ENOMEM. */
int record_queue_init(struct record_queue *q, size_t cap);
void record_queue_fini(struct record_queue *q);

/* Producer: room for len bytes (aligned to 8), or NULL when the queue cannot take them now. */
void *record_queue_reserve(struct record_queue *q, size_t len);
/* Producer: makes the reserved entry visible (and wakes the consumer when due). */
void record_queue_publish(struct record_queue *q);

/* Consumer: the oldest entry and its length, or NULL when empty. */
const void *record_queue_peek(struct record_queue *q, size_t *len);
/* Consumer: frees the entry peek returned. */
void record_queue_release(struct record_queue *q);
/* Consumer: sleeps until the absolute CLOCK_MONOTONIC deadline (ns) or until woken: with
 * wake_on_first (nothing of its own pending) by the first entry (it does not sleep when one is
 * already waiting), otherwise only by a queue a quarter full. */
void record_queue_wait(struct record_queue *q, uint64_t deadline_ns, bool wake_on_first);
/* Either side: wakes the consumer now (stopping). */
void record_queue_wake(struct record_queue *q);
/* Bytes in use. */
size_t record_queue_used(struct record_queue *q);

#endif /* RDPS_ARCHIVE_RECORD_QUEUE_H */
