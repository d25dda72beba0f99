/* SPDX-License-Identifier: BSD-2-Clause */
/* test_threads.c - a ctx belongs to one thread: another thread's call is RDPS_ENOTOWNER naming
 * both, rdps_ctx_handover passes it on, a ctx whose thread exited is taken over (issue 37,
 * row 5); through the shared library only. Run under TSan too (ctest label "threads"). */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "public_app_util.h"

#define TOPIC "threads.t"

/* A thread running fn(arg), named `name`, joined before returning. */
static void run_thread(const char *name, void *(*fn)(void *), void *arg)
{
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fn, arg), 0);
    pthread_setname_np(t, name);
    assert_int_equal(pthread_join(t, NULL), 0);
}

/* What an intruder thread saw: the codes and the messages of its calls. */
struct intruder {
    struct test_app *a;
    pthread_barrier_t *named; /* waits until its name is set */
    int poll_rc, send_rc, claim_rc, sub_counters_rc, handover_rc, ready;
    char poll_msg[512], ready_msg[512];
    pid_t tid;
};

static void *intrude(void *arg)
{
    struct intruder *in = arg;
    rdps_claim claim;
    rdps_counters c;
    if (in->named != NULL)
        pthread_barrier_wait(in->named);
    in->tid = gettid();
    in->poll_rc = rdps_ctx_poll(in->a->ctx, 0);
    snprintf(in->poll_msg, sizeof(in->poll_msg), "%s", rdps_last_error_message());
    in->send_rc = rdps_pub_send(in->a->pub, "x", 1);
    in->claim_rc = rdps_pub_claim(in->a->pub, &claim);
    in->sub_counters_rc = rdps_sub_counters(in->a->sub, &c);
    in->handover_rc = rdps_ctx_handover(in->a->ctx);
    in->ready = rdps_pub_ready(in->a->pub);
    snprintf(in->ready_msg, sizeof(in->ready_msg), "%s", rdps_last_error_message());
    rdps_pub_destroy(in->a->pub); /* left alone: not this thread's */
    rdps_ctx_destroy(in->a->ctx);
    return NULL;
}

/* Another thread's calls are refused, naming both threads (ids and names); nothing changes. */
static void test_other_thread_is_refused(void **state)
{
    (void)state;
    struct test_app a;
    pthread_barrier_t named;
    pthread_setname_np(pthread_self(), "rdps-owner");
    test_app_open(&a, TOPIC);
    test_app_ready(&a);
    struct intruder in = {.a = &a, .named = &named};
    pthread_t t;
    pthread_barrier_init(&named, NULL, 2);
    assert_int_equal(pthread_create(&t, NULL, intrude, &in), 0);
    pthread_setname_np(t, "rdps-intruder");
    pthread_barrier_wait(&named);
    assert_int_equal(pthread_join(t, NULL), 0);
    pthread_barrier_destroy(&named);

    assert_int_equal(in.poll_rc, RDPS_ENOTOWNER);
    assert_int_equal(in.send_rc, RDPS_ENOTOWNER);
    assert_int_equal(in.claim_rc, RDPS_ENOTOWNER);
    assert_int_equal(in.sub_counters_rc, RDPS_ENOTOWNER);
    assert_int_equal(in.handover_rc, RDPS_ENOTOWNER);
    assert_int_equal(in.ready, 0);
    char owner[64], intruder[64];
    snprintf(owner, sizeof(owner), "thread %d (rdps-owner)", (int)gettid());
    snprintf(intruder, sizeof(intruder), "this thread %d (rdps-intruder)", (int)in.tid);
    if (strncmp(in.poll_msg, "rdps_ctx_poll: ", 15) != 0 || strstr(in.poll_msg, owner) == NULL ||
        strstr(in.poll_msg, intruder) == NULL || strstr(in.poll_msg, "rdps_ctx_handover") == NULL)
        fail_msg("message \"%s\" names not both threads (%s, %s)", in.poll_msg, owner, intruder);
    if (strncmp(in.ready_msg, "rdps_pub_ready: ", 16) != 0 || strstr(in.ready_msg, owner) == NULL)
        fail_msg("rdps_pub_ready's message \"%s\"", in.ready_msg);

    /* The owner's ctx is intact (the intruder's destroys did nothing). */
    assert_int_equal(rdps_pub_send(a.pub, "y", 1), 0);
    assert_true(rdps_ctx_poll(a.ctx, 0) >= 0);
    assert_int_equal(a.got, 1);
    rdps_ctx_destroy(a.ctx);
}

/* The report: one thread sending, another polling the same ctx, every send returning 0
 * and most messages lost without a word. Now the second thread's first call says so. */
struct sender {
    struct test_app *a;
    int sent_ok, refused, other;
};

static void *send_many(void *arg)
{
    struct sender *s = arg;
    for (int i = 0; i < 20000; i++) {
        int rc = rdps_pub_send(s->a->pub, &i, sizeof(i));
        if (rc == 0)
            s->sent_ok++;
        else if (rc == RDPS_ENOTOWNER)
            s->refused++;
        else
            s->other++;
    }
    return NULL;
}

static void test_sender_and_poller_threads(void **state)
{
    (void)state;
    struct test_app a;
    test_app_open(&a, TOPIC);
    test_app_ready(&a);
    struct sender s = {.a = &a};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, send_many, &s), 0);
    for (int i = 0; i < 1000; i++)
        assert_true(rdps_ctx_poll(a.ctx, 0) >= 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(s.sent_ok, 0);
    assert_int_equal(s.refused, 20000);
    assert_int_equal(s.other, 0);
    assert_int_equal(a.got, 0); /* nothing was half-sent */
    rdps_ctx_destroy(a.ctx);
}

/* Create here, run there: the owner hands the ctx over, the runner takes it by calling, hands
 * it back, and the creator destroys it. While the runner owns it, the creator is refused. */
struct runner {
    struct test_app *a;
    pthread_barrier_t *owned, *checked;
    int sent;
    int handback_rc;
};

static void *run_ctx(void *arg)
{
    struct runner *r = arg;
    test_app_ready(r->a); /* its first call takes the ctx over */
    pthread_barrier_wait(r->owned);
    pthread_barrier_wait(r->checked);
    for (int i = 0; i < 100; i++)
        if (rdps_pub_send(r->a->pub, &i, sizeof(i)) == 0)
            r->sent++;
    assert_true(rdps_ctx_poll(r->a->ctx, 0) >= 0);
    r->handback_rc = rdps_ctx_handover(r->a->ctx);
    return NULL;
}

static void test_handover(void **state)
{
    (void)state;
    struct test_app a;
    pthread_barrier_t owned, checked;
    pthread_barrier_init(&owned, NULL, 2);
    pthread_barrier_init(&checked, NULL, 2);
    test_app_open(&a, TOPIC);
    assert_int_equal(rdps_ctx_handover(a.ctx), 0);
    struct runner r = {.a = &a, .owned = &owned, .checked = &checked};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, run_ctx, &r), 0);
    pthread_barrier_wait(&owned);
    assert_int_equal(rdps_ctx_poll(a.ctx, 0), RDPS_ENOTOWNER); /* the runner's now */
    assert_int_equal(rdps_pub_send(a.pub, "x", 1), RDPS_ENOTOWNER);
    pthread_barrier_wait(&checked);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(r.handback_rc, 0);
    assert_int_equal(r.sent, 100);
    assert_int_equal(a.got, 100);
    assert_true(rdps_ctx_poll(a.ctx, 0) >= 0); /* back with its creator */
    rdps_ctx_destroy(a.ctx);
    pthread_barrier_destroy(&owned);
    pthread_barrier_destroy(&checked);
}

/* A ctx whose owner thread exited without handing it over is taken over by the next caller:
 * destroy after pthread_join needs no hand-over. */
static void *create_and_exit(void *arg)
{
    test_app_open(arg, TOPIC);
    test_app_ready(arg);
    return NULL;
}

static void test_owner_exited(void **state)
{
    (void)state;
    struct test_app a;
    run_thread("rdps-creator", create_and_exit, &a);
    assert_int_equal(rdps_pub_send(a.pub, "x", 1), 0);
    assert_true(rdps_ctx_poll(a.ctx, 0) >= 0);
    assert_int_equal(a.got, 1);
    rdps_ctx_destroy(a.ctx);
}

/* Two threads race for a handed-over ctx: exactly one takes it. */
struct racer {
    struct test_app *a;
    pthread_barrier_t *go;
    int rc;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    pthread_barrier_wait(r->go);
    r->rc = rdps_ctx_poll(r->a->ctx, 0);
    pthread_barrier_wait(r->go); /* the winner keeps living while the loser is refused */
    return NULL;
}

static void test_handover_race(void **state)
{
    (void)state;
    for (int round = 0; round < 20; round++) {
        struct test_app a;
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, 2);
        test_app_open(&a, TOPIC);
        assert_int_equal(rdps_ctx_handover(a.ctx), 0);
        struct racer r1 = {.a = &a, .go = &go}, r2 = {.a = &a, .go = &go};
        pthread_t t1, t2;
        assert_int_equal(pthread_create(&t1, NULL, race, &r1), 0);
        assert_int_equal(pthread_create(&t2, NULL, race, &r2), 0);
        assert_int_equal(pthread_join(t1, NULL), 0);
        assert_int_equal(pthread_join(t2, NULL), 0);
        assert_true((r1.rc >= 0 && r2.rc == RDPS_ENOTOWNER) ||
                    (r2.rc >= 0 && r1.rc == RDPS_ENOTOWNER));
        rdps_ctx_destroy(a.ctx); /* the winner exited: taken over here */
        pthread_barrier_destroy(&go);
    }
}

/* From a callback the poll running it holds the ctx: no hand-over. */
struct in_callback {
    rdps_ctx_t *ctx;
    int handover_rc;
};

static void handover_in_callback(void *user, const void *data, size_t len,
                                 const rdps_msg_info *info)
{
    struct in_callback *cb = user;
    (void)data, (void)len, (void)info;
    cb->handover_rc = rdps_ctx_handover(cb->ctx);
}

static void test_handover_from_a_callback(void **state)
{
    (void)state;
    struct test_app a;
    rdps_sub_t *sub;
    test_app_open(&a, TOPIC);
    test_app_ready(&a);
    struct in_callback cb = {.ctx = a.ctx};
    assert_int_equal(rdps_sub_create(a.ctx, TOPIC, handover_in_callback, &cb, NULL, &sub), 0);
    assert_int_equal(rdps_pub_send(a.pub, "x", 1), 0);
    assert_int_equal(cb.handover_rc, RDPS_EBUSY);
    rdps_ctx_destroy(a.ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_other_thread_is_refused),
        cmocka_unit_test(test_sender_and_poller_threads),
        cmocka_unit_test(test_handover),
        cmocka_unit_test(test_owner_exited),
        cmocka_unit_test(test_handover_race),
        cmocka_unit_test(test_handover_from_a_callback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
