/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_mpsc_ring.h - a many-producer, one-consumer ring of variable-length records: producers on
 * any thread claim with one compare-and-swap, copy and commit; no lock (Agrona's and Aeron's
 * ManyToOneRingBuffer). */
#ifndef RDPS_UTIL_MPSC_RING_H
#define RDPS_UTIL_MPSC_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Memory: `capacity` bytes (a power of two), records at 8-byte boundaries, each an 8-byte
 * header (the record's bytes, header and alignment included; the payload's length, or a padding
 * record's mark) and the payload. Positions are byte counts that only grow; a position's offset
 * is pos & (cap - 1).
 *
 *   tail    bytes claimed by producers (compare-and-swap; bit 63: closed, nothing more claimed)
 *   head    bytes the consumer released (its own store; producers read it for the room left)
 *
 * A producer claims [tail, tail + n) (n: the record, plus a padding record to the end of the
 * memory when the record would not fit before it), writes the payload and its length, then
 * stores the record's length (release): the commit. The consumer reads
 * records in position order and stops at the first length that is not positive, so a record
 * committed after a later one waits for it; it zeroes what it releases, so a length it reads
 * is always one written for this lap.
 *
 * Waking the consumer: before it sleeps it sets `waiting` and looks at the tail once more
 * (rdps__mpsc_sleep); a producer that commits reads `waiting` and clears it (the one that does
 * wakes the consumer: rdps__mpsc_offer's *wake). Both sides use sequentially consistent
 * operations, so either the consumer sees the new tail or the producer sees `waiting`.
 */
struct rdps_mpsc_ring {
    uint8_t *buf;
    uint32_t capacity;   /* bytes, a power of two */
    uint32_t max_length; /* the longest payload offer takes */
    _Alignas(64) _Atomic uint64_t tail;
    _Atomic uint64_t head_cache; /* the head as a producer last read it */
    _Alignas(64) _Atomic uint64_t head;
    _Atomic uint32_t waiting;
};

#define RDPS_MPSC_HEADER  8u
#define RDPS_MPSC_MIN_CAP 4096u

/* Sets r up over `capacity` bytes (a power of two, at least RDPS_MPSC_MIN_CAP) that it
 * allocates: 0, RDPS_EINVAL or RDPS_ENOMEM. Payloads of up to capacity / 2 - 8 bytes fit. */
int rdps__mpsc_init(struct rdps_mpsc_ring *r, uint32_t capacity);
void rdps__mpsc_fini(struct rdps_mpsc_ring *r);

/*
 * Producers (any thread): queues len bytes. 0; RDPS_EAGAIN when the ring has no room for them now
 * (the consumer has not caught up); RDPS_EMSGSIZE above max_length; RDPS_ECLOSED after
 * rdps__mpsc_close. *wake: this producer must wake the consumer (it was about to sleep).
 */
int rdps__mpsc_offer(struct rdps_mpsc_ring *r, const void *data, uint32_t len, bool *wake);

/* The consumer (one thread at a time). */
struct rdps_mpsc_msg {
    const uint8_t *data;
    uint32_t len;
};
/* The oldest committed record, left in place (false: none committed yet). */
bool rdps__mpsc_peek(struct rdps_mpsc_ring *r, struct rdps_mpsc_msg *m);
/* Releases the record the last peek returned: its room goes back to the producers. */
void rdps__mpsc_release(struct rdps_mpsc_ring *r);
/* Something claimed and not released (committed, or a producer between claim and commit). */
bool rdps__mpsc_pending(const struct rdps_mpsc_ring *r);
/*
 * The consumer is about to sleep: true when it may (nothing pending, and a producer that
 * commits from now on gets *wake), false when records came meanwhile (do not sleep).
 */
bool rdps__mpsc_sleep(struct rdps_mpsc_ring *r);
/* The consumer is awake again (it polls without being told). */
void rdps__mpsc_awake(struct rdps_mpsc_ring *r);
/* No producer claims anything from now on (RDPS_ECLOSED); what was claimed is still committed. */
void rdps__mpsc_close(struct rdps_mpsc_ring *r);

#endif /* RDPS_UTIL_MPSC_RING_H */
