/* SPDX-License-Identifier: BSD-2-Clause */
/* owner.h - the thread a ctx belongs to: one check on every call, an explicit hand-over, and a
 * ctx whose thread exited taken over by the next caller. */
#ifndef RDPS_PUBSUB_OWNER_H
#define RDPS_PUBSUB_OWNER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * A ctx, its publishers and its subscribers are used by one thread at a time (rdps(7), THREADS):
 * nothing in them is locked, so a second thread would corrupt them silently. Every call on them
 * compares the ctx's owner token with the calling thread's: two loads and a compare, cheap
 * enough to stay on in release builds. A mismatch goes out of line (rdps__owner_take): the
 * caller takes the ctx over when its owner handed it over (rdps_ctx_handover) or has exited,
 * and otherwise gets RDPS_ENOTOWNER naming both threads.
 *
 * Thread tokens are never reused (a 64-bit counter), so a new thread never passes for an old
 * one; the kernel thread id and name are kept for messages only.
 */

/* The calling thread's token, 0 until its first call that needed one. */
extern _Thread_local uint64_t rdps__thread_tls
    __attribute__((tls_model("initial-exec"), visibility("hidden")));
/* Gives the calling thread its token (first call) and returns it. */
uint64_t rdps__thread_register(void);

static inline uint64_t rdps__thread_token(void)
{
    uint64_t t = rdps__thread_tls;
    return __builtin_expect(t != 0, 1) ? t : rdps__thread_register();
}

struct rdps__thread; /* owner.c: a thread that called rdps (token, kernel tid, alive) */

/* An owner token no thread has: the ctx was handed over, the next caller takes it. */
#define RDPS__OWNER_NONE UINT64_MAX

struct rdps_owner {
    _Atomic uint64_t token;      /* the owning thread's token, or RDPS__OWNER_NONE */
    struct rdps__thread *thread; /* the owner's record (owner.c's lock) */
};

/* The hot path: a thread's token is 0 until it registers, and no owner's token is 0, so a
 * thread new to rdps goes the slow way once (rdps__owner_take registers it). */
static inline bool rdps__owner_is_caller(const struct rdps_owner *o)
{
    return atomic_load_explicit(&o->token, memory_order_relaxed) == rdps__thread_tls;
}

/* The calling thread owns o from now on (the ctx was just created). */
void rdps__owner_set(struct rdps_owner *o);
/*
 * The caller failed rdps__owner_is_caller: 0 when it now owns o (o was handed over, or its owner
 * thread exited), else RDPS_ENOTOWNER, recorded with both threads' ids and names.
 */
int rdps__owner_take(struct rdps_owner *o);
/* The owner gives o up: the next thread that calls on it takes it over. */
void rdps__owner_hand_over(struct rdps_owner *o);

#endif /* RDPS_PUBSUB_OWNER_H */
