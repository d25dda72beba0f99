/* SPDX-License-Identifier: BSD-2-Clause */
/* owner.c - thread tokens and records, ctx ownership, hand-over (owner.h). */
#include "owner.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rdps_error.h"
#include "rdps_log.h"

_Thread_local uint64_t rdps__thread_tls;

/*
 * One record per thread that called rdps, kept while it lives: what a message says about an
 * owner, and whether it is still alive (its record's token is cleared when it exits, by the
 * key's destructor). Records of exited threads are reused, never freed: their number is the
 * most threads alive at once. Everything here runs under `lock`, which also orders a hand-over
 * (or an owner's exit) before the next owner's first use.
 */
struct rdps__thread {
    uint64_t token; /* 0 once the thread exited */
    pid_t tid;
    pthread_t self;
    struct rdps__thread *next_free;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static bool have_exit_key;
static uint64_t last_token;
static struct rdps__thread *free_records;
static _Thread_local struct rdps__thread *my_record;

static void thread_exited(void *arg)
{
    struct rdps__thread *r = arg;
    my_record = NULL; /* runs on the exiting thread: later calls of its own name no record */
    pthread_mutex_lock(&lock);
    r->token = 0; /* what it owned may be taken over */
    r->next_free = free_records;
    free_records = r;
    pthread_mutex_unlock(&lock);
}

static void make_exit_key(void)
{
    have_exit_key = pthread_key_create(&exit_key, thread_exited) == 0;
}

uint64_t rdps__thread_register(void)
{
    pthread_once(&key_once, make_exit_key);
    pthread_mutex_lock(&lock);
    uint64_t token = ++last_token;
    struct rdps__thread *r = free_records;
    if (r != NULL)
        free_records = r->next_free;
    else
        r = calloc(1, sizeof(*r)); /* NULL: the thread goes without one (messages say less) */
    if (r != NULL) {
        r->token = token;
        r->tid = gettid();
        r->self = pthread_self();
        r->next_free = NULL;
        /* Without the exit hook the record is never freed: its thread never passes for dead. */
        if (have_exit_key)
            (void)pthread_setspecific(exit_key, r);
    }
    my_record = r;
    rdps__thread_tls = token;
    pthread_mutex_unlock(&lock);
    return token;
}

void rdps__owner_set(struct rdps_owner *o)
{
    uint64_t token = rdps__thread_token();
    pthread_mutex_lock(&lock);
    atomic_store_explicit(&o->token, token, memory_order_relaxed);
    o->thread = my_record;
    pthread_mutex_unlock(&lock);
}

/* "1234 (name)" for a live thread's record (the caller holds the lock: it cannot finish). */
static void describe(const struct rdps__thread *r, char *buf, size_t len)
{
    char name[16] = "";
    if (r == NULL) {
        snprintf(buf, len, "(unknown)");
        return;
    }
    if (pthread_getname_np(r->self, name, sizeof(name)) != 0)
        name[0] = '\0';
    snprintf(buf, len, "%d (%s)", (int)r->tid, name[0] ? name : "unnamed");
}

int rdps__owner_take(struct rdps_owner *o)
{
    uint64_t me = rdps__thread_token();
    pthread_mutex_lock(&lock);
    uint64_t owner = atomic_load_explicit(&o->token, memory_order_relaxed);
    const struct rdps__thread *r = o->thread;
    bool owner_alive = owner != RDPS__OWNER_NONE && (r == NULL || r->token == owner);
    if (owner == me || !owner_alive) {
        if (owner != RDPS__OWNER_NONE && owner != me && r != NULL)
            RDPS_LOG_INF("thread %d takes over a ctx whose owner thread %d exited", (int)gettid(),
                         (int)r->tid);
        atomic_store_explicit(&o->token, me, memory_order_relaxed);
        o->thread = my_record;
        pthread_mutex_unlock(&lock);
        return 0;
    }
    char theirs[40], mine[40];
    describe(r, theirs, sizeof(theirs));
    describe(my_record, mine, sizeof(mine));
    pthread_mutex_unlock(&lock);
    return rdps__set_err(RDPS_ENOTOWNER,
                         "the ctx belongs to thread %s, not to this thread %s: one thread at a "
                         "time uses a ctx and its publishers and subscribers (the owner passes it "
                         "on with rdps_ctx_handover; rdps(7), THREADS)",
                         theirs, mine);
}

void rdps__owner_hand_over(struct rdps_owner *o)
{
    pthread_mutex_lock(&lock);
    atomic_store_explicit(&o->token, RDPS__OWNER_NONE, memory_order_relaxed);
    o->thread = NULL;
    pthread_mutex_unlock(&lock);
}
