/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_pub_ring.h - the publisher ring: frames written once into caller memory, indexed by
 * sequence, protected while the device still reads them. */
#ifndef RDPS_PROTO_PUB_RING_H
#define RDPS_PROTO_PUB_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Model
 * -----
 * The ring is `cap` bytes of caller memory (registered memory in pubsub) in
 * which a publisher writes each frame once. Frames are placed one after the
 * other at increasing virtual positions (uint64, never wrapping); the byte
 * offset of position p is p % cap. A frame never straddles the end of the
 * memory: when it would, it starts at the next multiple of cap (the skipped
 * bytes are padding). Frames start on 8-byte boundaries.
 *
 * The ring retains the frames of sequences [trail_seq, head_seq): slot
 * seq & slot_mask gives each one's position and length (O(1) lookup for
 * posts and repairs). Retention is bounded by bytes (the virtual distance
 * from the trail frame to the head is at most cap, so retained frames never
 * overlap) and by slots (head - trail <= slot count).
 *
 * Appending plans first: rdps__pub_ring_plan() says where a message of n
 * frames would go and how far the trail must move to make room, without
 * touching anything, so a caller can refuse the message (back-pressure)
 * before a byte is written. The caller then releases up to that trail and
 * pushes the frames.
 *
 * In flight. A frame handed to the device is referenced until its send
 * completes; the trail must not pass it or the device could read
 * overwritten bytes. The ring keeps the sequences of in-flight references
 * in a FIFO (sends on one queue pair complete in posting order) with a
 * monotone deque over it, so the lowest in-flight sequence is known in O(1)
 * amortized. The FIFO holds max_inflight references; the caller stops
 * handing out frames when it is full.
 *
 * Memory: the slot table and the FIFO are allocated at init; nothing after.
 * Sequences use serial arithmetic; head - trail never exceeds the slot count.
 */

struct rdps_pub_ring_slot {
    uint64_t pos; /* virtual position of the frame */
    uint32_t len; /* frame length in bytes */
    uint32_t seq; /* the sequence stored here (checks lookups) */
};

struct rdps_pub_ring {
    uint8_t *mem;
    uint64_t cap; /* bytes */
    struct rdps_pub_ring_slot *slots;
    uint32_t slot_mask;
    uint32_t trail_seq, head_seq; /* retained: [trail_seq, head_seq) */
    uint64_t head_pos;            /* where the next frame may start (before alignment/wrap) */
    /* In-flight references: FIFO of sequences and a monotone deque of FIFO counters. */
    uint32_t *fifo;
    uint64_t *deque;
    uint32_t fifo_mask;
    uint64_t fifo_head, fifo_tail; /* counters; count = tail - head */
    uint64_t deque_head, deque_tail;
};

/* Where a message would go: the trail it needs and the position of its first frame. */
struct rdps_pub_ring_plan {
    uint32_t new_trail; /* lowest sequence that can stay retained */
    uint64_t start_pos; /* position of the first frame */
    uint64_t end_pos;   /* position after the last frame */
};

/*
 * Uses `bytes` of `mem` (>= 64, < 2^62), max_frames slots (a power of two,
 * >= 2) and max_inflight references (a power of two, >= 1); the first frame
 * pushed gets first_seq. Returns 0, RDPS_EINVAL or RDPS_ENOMEM.
 */
int rdps__pub_ring_init(struct rdps_pub_ring *ring, void *mem, size_t bytes, uint32_t max_frames,
                        uint32_t max_inflight, uint32_t first_seq);
void rdps__pub_ring_fini(struct rdps_pub_ring *ring);

/* Ring stride of a frame of len bytes (8-byte aligned). */
static inline uint64_t rdps__pub_ring_stride(uint32_t len)
{
    return ((uint64_t)len + 7u) & ~(uint64_t)7u;
}

/*
 * Plans n frames (n >= 1): n - 1 of full_len bytes then one of last_len.
 * Returns 0 with *plan filled, or RDPS_EMSGSIZE if they could never fit
 * (more frames than slots, or more bytes than the memory even when empty).
 * Nothing changes.
 */
int rdps__pub_ring_plan(const struct rdps_pub_ring *ring, uint32_t n, uint32_t full_len,
                        uint32_t last_len, struct rdps_pub_ring_plan *plan);

/* Drops the retained frames below new_trail (which must lie in [trail, head]). */
void rdps__pub_ring_release(struct rdps_pub_ring *ring, uint32_t new_trail);

/*
 * Stores the next frame (sequence head_seq) of len bytes at *pos (the plan's
 * start_pos for the first frame; advanced past this one on return, wrapping
 * as planned) and returns where to write it. The caller planned and released.
 */
uint8_t *rdps__pub_ring_push(struct rdps_pub_ring *ring, uint64_t *pos, uint32_t len);

/*
 * The newest frame (head_seq - 1) is len bytes after all, at most what it was pushed with: a
 * frame pushed at its largest while it was being filled. What it gives back is the next frame's.
 */
void rdps__pub_ring_shrink_head(struct rdps_pub_ring *ring, uint32_t len);

/* Takes back the newest frame (head_seq - 1), never handed out: as if it had not been pushed
 * (the trail released for it stays released). */
void rdps__pub_ring_unpush(struct rdps_pub_ring *ring);

/* The slot of a retained sequence, or NULL if seq is not in [trail, head). */
const struct rdps_pub_ring_slot *rdps__pub_ring_find(const struct rdps_pub_ring *ring,
                                                     uint32_t seq);

static inline uint8_t *rdps__pub_ring_frame(const struct rdps_pub_ring *ring,
                                            const struct rdps_pub_ring_slot *slot)
{
    return ring->mem + slot->pos % ring->cap;
}

static inline uint32_t rdps__pub_ring_retained(const struct rdps_pub_ring *ring)
{
    return ring->head_seq - ring->trail_seq;
}

/* Bytes between the trail frame and the head (including padding). */
uint64_t rdps__pub_ring_used(const struct rdps_pub_ring *ring);

/* In-flight references: full when count == capacity. */
static inline uint32_t rdps__pub_ring_inflight(const struct rdps_pub_ring *ring)
{
    return (uint32_t)(ring->fifo_tail - ring->fifo_head);
}
static inline bool rdps__pub_ring_inflight_full(const struct rdps_pub_ring *ring)
{
    return rdps__pub_ring_inflight(ring) > ring->fifo_mask;
}
/* Records a reference to seq handed to the device (the FIFO is not full). */
void rdps__pub_ring_inflight_push(struct rdps_pub_ring *ring, uint32_t seq);
/* The n oldest references completed (n is clamped to the count). Returns how many were popped. */
uint32_t rdps__pub_ring_inflight_pop(struct rdps_pub_ring *ring, uint32_t n);
/* Lowest in-flight sequence; false when nothing is in flight. */
bool rdps__pub_ring_inflight_min(const struct rdps_pub_ring *ring, uint32_t *seq);

#endif /* RDPS_PROTO_PUB_RING_H */
