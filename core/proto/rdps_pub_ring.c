/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_pub_ring.c - the publisher ring: placement, retention and in-flight protection (model:
 * rdps_pub_ring.h). */
#include "rdps_pub_ring.h"

#include <stdlib.h>
#include <string.h>

#include <rdps/rdps.h>

#include "rdps_error.h"
#include "rdps_seq.h"

static bool is_pow2(uint32_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

int rdps__pub_ring_init(struct rdps_pub_ring *ring, void *mem, size_t bytes, uint32_t max_frames,
                        uint32_t max_inflight, uint32_t first_seq)
{
    memset(ring, 0, sizeof(*ring));
    if (mem == NULL || bytes < 64 || (uint64_t)bytes >= (1ull << 62))
        return rdps__set_err(RDPS_EINVAL, "pub_ring_init: ring memory of %zu bytes", bytes);
    if (max_frames < 2 || !is_pow2(max_frames) || max_frames > (1u << 30))
        return rdps__set_err(RDPS_EINVAL, "pub_ring_init: max_frames %u not a power of two >= 2",
                             max_frames);
    if (!is_pow2(max_inflight) || max_inflight > (1u << 24))
        return rdps__set_err(RDPS_EINVAL, "pub_ring_init: max_inflight %u not a power of two",
                             max_inflight);
    ring->slots = calloc(max_frames, sizeof(*ring->slots));
    ring->fifo = calloc(max_inflight, sizeof(*ring->fifo));
    ring->deque = calloc(max_inflight, sizeof(*ring->deque));
    if (ring->slots == NULL || ring->fifo == NULL || ring->deque == NULL) {
        rdps__pub_ring_fini(ring);
        return rdps__set_err(RDPS_ENOMEM, "pub_ring_init: out of memory");
    }
    ring->mem = mem;
    ring->cap = (uint64_t)bytes & ~(uint64_t)7u; /* frames start on 8-byte boundaries */
    ring->slot_mask = max_frames - 1;
    ring->fifo_mask = max_inflight - 1;
    ring->trail_seq = ring->head_seq = first_seq;
    return 0;
}

void rdps__pub_ring_fini(struct rdps_pub_ring *ring)
{
    free(ring->slots);
    free(ring->fifo);
    free(ring->deque);
    memset(ring, 0, sizeof(*ring));
}

/* Position of a frame of len bytes placed at or after pos (it never straddles the end). */
static uint64_t place(uint64_t cap, uint64_t pos, uint32_t len)
{
    if (pos % cap + len > cap)
        pos += cap - pos % cap;
    return pos;
}

/* Start and end positions of the frames laid out from pos. */
static void layout(uint64_t cap, uint64_t pos, uint32_t n, uint32_t full_len, uint32_t last_len,
                   uint64_t *start, uint64_t *end)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len = i + 1 == n ? last_len : full_len;
        pos = place(cap, pos, len);
        if (i == 0)
            *start = pos;
        pos += rdps__pub_ring_stride(len);
    }
    *end = pos;
}

int rdps__pub_ring_plan(const struct rdps_pub_ring *ring, uint32_t n, uint32_t full_len,
                        uint32_t last_len, struct rdps_pub_ring_plan *plan)
{
    uint64_t cap = ring->cap;
    if (n == 0 || n > ring->slot_mask + 1u || full_len > cap || last_len > cap)
        return RDPS_EMSGSIZE;
    uint64_t start, end;
    layout(cap, ring->head_pos, n, full_len, last_len, &start, &end);
    uint32_t t = ring->trail_seq;
    uint32_t slots = ring->slot_mask + 1u;
    /* Drop the oldest frames until the bytes from the trail frame to the end fit, and the slots. */
    while (t != ring->head_seq) {
        const struct rdps_pub_ring_slot *s = &ring->slots[t & ring->slot_mask];
        bool bytes_ok = end <= cap || s->pos >= end - cap;
        bool slots_ok = (uint64_t)(ring->head_seq - t) + n <= slots;
        if (bytes_ok && slots_ok)
            break;
        t++;
    }
    if (t == ring->head_seq && end - start > cap) {
        /* Empty ring and the message does not fit from here: start at the beginning of the memory.
         */
        uint64_t aligned = ring->head_pos + (cap - ring->head_pos % cap) % cap;
        layout(cap, aligned, n, full_len, last_len, &start, &end);
        if (end - start > cap)
            return RDPS_EMSGSIZE;
    }
    plan->new_trail = t;
    plan->start_pos = start;
    plan->end_pos = end;
    return 0;
}

void rdps__pub_ring_release(struct rdps_pub_ring *ring, uint32_t new_trail)
{
    if (rdps__seq_gt(new_trail, ring->trail_seq) && rdps__seq_le(new_trail, ring->head_seq))
        ring->trail_seq = new_trail;
}

uint8_t *rdps__pub_ring_push(struct rdps_pub_ring *ring, uint64_t *pos, uint32_t len)
{
    uint64_t at = place(ring->cap, *pos, len);
    struct rdps_pub_ring_slot *s = &ring->slots[ring->head_seq & ring->slot_mask];
    s->pos = at;
    s->len = len;
    s->seq = ring->head_seq;
    ring->head_seq++;
    *pos = at + rdps__pub_ring_stride(len);
    ring->head_pos = *pos;
    return ring->mem + at % ring->cap;
}

void rdps__pub_ring_shrink_head(struct rdps_pub_ring *ring, uint32_t len)
{
    struct rdps_pub_ring_slot *s = &ring->slots[(ring->head_seq - 1u) & ring->slot_mask];
    if (len < s->len) {
        s->len = len;
        ring->head_pos = s->pos + rdps__pub_ring_stride(len);
    }
}

void rdps__pub_ring_unpush(struct rdps_pub_ring *ring)
{
    ring->head_seq--;
    ring->head_pos = ring->slots[ring->head_seq & ring->slot_mask].pos;
}

const struct rdps_pub_ring_slot *rdps__pub_ring_find(const struct rdps_pub_ring *ring, uint32_t seq)
{
    if ((uint32_t)(seq - ring->trail_seq) >= (uint32_t)(ring->head_seq - ring->trail_seq))
        return NULL;
    return &ring->slots[seq & ring->slot_mask];
}

uint64_t rdps__pub_ring_used(const struct rdps_pub_ring *ring)
{
    if (ring->trail_seq == ring->head_seq)
        return 0;
    return ring->head_pos - ring->slots[ring->trail_seq & ring->slot_mask].pos;
}

void rdps__pub_ring_inflight_push(struct rdps_pub_ring *ring, uint32_t seq)
{
    uint64_t c = ring->fifo_tail++;
    ring->fifo[c & ring->fifo_mask] = seq;
    /* Monotone deque: references at the back with a sequence >= seq leave the FIFO before this
     * one, so they can never be the minimum again. */
    while (ring->deque_tail != ring->deque_head &&
           rdps__seq_ge(
               ring->fifo[ring->deque[(ring->deque_tail - 1) & ring->fifo_mask] & ring->fifo_mask],
               seq))
        ring->deque_tail--;
    ring->deque[ring->deque_tail++ & ring->fifo_mask] = c;
}

uint32_t rdps__pub_ring_inflight_pop(struct rdps_pub_ring *ring, uint32_t n)
{
    uint32_t have = rdps__pub_ring_inflight(ring);
    if (n > have)
        n = have;
    ring->fifo_head += n;
    while (ring->deque_head != ring->deque_tail &&
           ring->deque[ring->deque_head & ring->fifo_mask] < ring->fifo_head)
        ring->deque_head++;
    return n;
}

bool rdps__pub_ring_inflight_min(const struct rdps_pub_ring *ring, uint32_t *seq)
{
    if (ring->deque_head == ring->deque_tail)
        return false;
    *seq = ring->fifo[ring->deque[ring->deque_head & ring->fifo_mask] & ring->fifo_mask];
    return true;
}
