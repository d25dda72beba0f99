/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_ah_retire.h - deferred destruction of address handles: an AH dies only after every send
 * that may name it has completed. */
#ifndef RDPS_AH_RETIRE_H
#define RDPS_AH_RETIRE_H

#include <stdint.h>

/*
 * Model: a sender numbers its send work requests with a 64-bit sequence;
 * they are posted and complete in order on one send queue, and the sender
 * knows `done_seq` (every WR below it has completed). An AH given up while
 * WRs up to `pending_until - 1` are queued or in flight may be named by any of
 * them, so it is destroyed only once done_seq >= pending_until. The list is
 * a FIFO ring and a sweep stops at the first AH still in use (retirements
 * nearly always arrive with non-decreasing pending_until; when not, a later
 * AH is destroyed later than it could be, never earlier).
 *
 * Bounded: `capacity` entries allocated at init, no malloc after it. When the
 * ring is full, retire() refuses (counted): the caller keeps the AH in use,
 * or reaps completions and tries again. Destruction goes through a callback
 * (ibv_destroy_ah on verbs), so the logic is unit-tested without a device.
 */
struct rdps_ah_retire_entry {
    void *ah;
    uint64_t free_after_seq;
};

struct rdps_ah_retire {
    struct rdps_ah_retire_entry *ring;
    uint32_t head, count, capacity;
    void (*destroy)(void *ah);
    uint64_t destroyed_now, deferred, refused; /* retire() outcomes */
};

/* capacity >= 1; destroy is called exactly once per retired AH. */
int rdps__ah_retire_init(struct rdps_ah_retire *r, uint32_t capacity, void (*destroy)(void *ah));
/* Destroys every AH still waiting: only once no send can use them (QP destroyed or reset). */
void rdps__ah_retire_fini(struct rdps_ah_retire *r);
/*
 * Gives up `ah`: destroyed at once when done_seq >= pending_until (no WR that
 * could name it is outstanding), else kept until a sweep sees that. Returns 0,
 * or RDPS_EAGAIN (the ring is full; nothing changed, the caller still owns ah).
 */
int rdps__ah_retire(struct rdps_ah_retire *r, void *ah, uint64_t pending_until, uint64_t done_seq);
/* Destroys the AHs whose sends have all completed (everything below done_seq). */
void rdps__ah_retire_sweep(struct rdps_ah_retire *r, uint64_t done_seq);

#endif /* RDPS_AH_RETIRE_H */
