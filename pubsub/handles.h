/* SPDX-License-Identifier: BSD-2-Clause */
/* handles.h - the public handles: generation-checked ids in one process-wide table, so a destroyed
 * or stale rdps_ctx_t, rdps_pub_t or rdps_sub_t is an error (RDPS_ECLOSED), never a wild pointer.
 */
#ifndef RDPS_PUBSUB_HANDLES_H
#define RDPS_PUBSUB_HANDLES_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What an application holds is not the object's address but an id, as NNG's nng_socket is:
 *
 *     handle = generation << 32 | index << 4 | 1
 *
 * index names a slot of the table; while the object lives, its slot holds the check word
 * handle ^ type and the object. Destroying the object moves the slot to the next generation at
 * once, so every copy of the handle fails its lookup from then on, also after the slot is
 * reused: slots are reused oldest-freed first, and one slot's generation comes round again only
 * after 2^32 reuses. The type in the check word makes a subscriber's handle passed as a
 * publisher fail the same compare. The low bit keeps every handle odd: no object's address is
 * ever taken for one, and NULL fails like any stale handle.
 *
 * Why ids rather than handles the ctx keeps until the application releases them: ids also catch
 * a publisher used after its own destroy (freed memory otherwise), need no release call that C++
 * wrappers must order, and cost a few instructions per call: a mask, a compare with the slot
 * and the object's load (rdps__handle_get, inline in every entry point).
 *
 * The table is reserved at the first create (RDPS__HANDLE_MAX slots of 16 bytes, address space
 * only: pages are touched as slots are used) and never moves or shrinks, so lookups take no
 * lock; until then lookups see one empty slot. Creating and destroying (slow paths) take the
 * table's mutex. Lookups from any thread are data-race free (atomic loads); what the object may
 * do from that thread is the owner check's business (owner.h).
 */
#define RDPS__HANDLE_MAX   (1u << 20)
#define RDPS__HANDLE_SHIFT 4 /* handle bits 4..23: the slot's byte offset in the table */

enum rdps_handle_type {
    RDPS_HANDLE_CTX = 1,
    RDPS_HANDLE_PUB = 2,
    RDPS_HANDLE_SUB = 3,
};

struct rdps__handle_slot {
    _Atomic uint64_t check; /* live: handle ^ type; free: next generation << 32 | 8 (no match) */
    _Atomic(void *) obj;    /* the object; free: the next free slot's index (the mutex's) */
};
_Static_assert(sizeof(struct rdps__handle_slot) == 1u << RDPS__HANDLE_SHIFT,
               "a slot's offset is the handle's middle bits");
_Static_assert(sizeof(uintptr_t) == 8, "rdps handles are 64-bit ids (a 64-bit platform)");

struct rdps__handle_table {
    _Atomic(struct rdps__handle_slot *) slots; /* one empty slot until the table is reserved */
    _Atomic uint32_t mask;                     /* slot offsets in handles (0: the empty slot) */
};
extern struct rdps__handle_table rdps__handles __attribute__((visibility("hidden")));

/* The object behind `handle` when it is a live handle of that type, else NULL. */
static inline void *rdps__handle_get(const void *handle, enum rdps_handle_type type)
{
    uint64_t h = (uint64_t)(uintptr_t)handle;
    /* mask before slots (the table's publication order): a new mask comes with its table. */
    uint32_t offset = (uint32_t)h & atomic_load_explicit(&rdps__handles.mask, memory_order_acquire);
    const struct rdps__handle_slot *s =
        (const struct rdps__handle_slot *)((const char *)atomic_load_explicit(
                                               &rdps__handles.slots, memory_order_relaxed) +
                                           offset);
    if (__builtin_expect(
            (atomic_load_explicit(&s->check, memory_order_acquire) ^ (uint64_t)type) != h, 0))
        return NULL;
    void *obj = atomic_load_explicit(&s->obj, memory_order_relaxed);
    if (obj == NULL)
        __builtin_unreachable(); /* a live slot holds its object: callers test nothing more */
    return obj;
}

/* A new handle for obj (0 when the table is full: RDPS_ENOMEM recorded). */
uintptr_t rdps__handle_new(enum rdps_handle_type type, void *obj);
/* Ends the handle: every copy of it fails its lookup from now on. 0 is ignored. */
void rdps__handle_release(uintptr_t handle);

/*
 * Why `handle` names no live object of `type` (its lookup failed), recorded: RDPS_EINVAL for
 * NULL, what was never an rdps handle and a handle of another type; RDPS_ECLOSED for a
 * destroyed one.
 */
int rdps__handle_refusal(const void *handle, enum rdps_handle_type type);

#endif /* RDPS_PUBSUB_HANDLES_H */
