/* SPDX-License-Identifier: BSD-2-Clause */
/* test_concurrent.c - a concurrent publisher: other threads' sends are queued and posted by the
 * ctx's thread, every message once and in each thread's order, the ctx's thread woken, errors and
 * destroy (issue 37, row 6); through the shared library only, under TSan too (label threads). */
#include <rdps/rdps.h>

#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define THREADS    4
#define PER_THREAD 20000

/* What the subscriber saw: per sending thread, the next sequence it expects. */
struct inbox {
    uint32_t next[THREADS + 1];
    uint64_t got, out_of_order;
};

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct inbox *in = user;
    uint32_t m[2];
    (void)info;
    if (len < sizeof(m))
        return;
    memcpy(m, data, sizeof(m));
    if (m[0] > THREADS || m[1] != in->next[m[0]])
        in->out_of_order++;
    else
        in->next[m[0]]++;
    in->got++;
}

struct world {
    rdps_ctx_t *ctx, *rx; /* the publisher's ctx and the subscriber's (both this thread's) */
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    struct inbox in;
};

static void open_world(struct world *w, uint32_t queue_bytes)
{
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.device = "loopback";
    cfg.stats_off = 1;
    memset(w, 0, sizeof(*w));
    assert_int_equal(rdps_ctx_create(&cfg, &w->ctx), 0);
    assert_int_equal(rdps_ctx_create(&cfg, &w->rx), 0);
    rdps_pub_opts o = {.concurrent = 1, .concurrent_queue_bytes = queue_bytes};
    assert_int_equal(rdps_sub_create(w->rx, "conc.t", on_msg, &w->in, NULL, &w->sub), 0);
    assert_int_equal(rdps_pub_create(w->ctx, "conc.t", &o, &w->pub), 0);
    for (int i = 0; i < 200 && !(rdps_pub_ready(w->pub) && rdps_pub_subscriber_count(w->pub) > 0);
         i++) {
        assert_true(rdps_ctx_poll(w->ctx, 0) >= 0);
        assert_true(rdps_ctx_poll(w->rx, 0) >= 0);
    }
    assert_int_equal(rdps_pub_ready(w->pub), 1);
}

static void close_world(struct world *w)
{
    rdps_ctx_destroy(w->ctx);
    rdps_ctx_destroy(w->rx);
}

static void pump(struct world *w)
{
    assert_true(rdps_ctx_poll(w->ctx, 0) >= 0);
    while (rdps_ctx_poll(w->rx, 0) > 0)
        ;
}

struct producer {
    rdps_pub_t *pub;
    uint32_t id, count;
    uint64_t busy;
    int failed; /* an unexpected code (cmocka asserts in the main thread only) */
};

static void *produce(void *arg)
{
    struct producer *p = arg;
    for (uint32_t seq = 0; seq < p->count;) {
        uint32_t m[16] = {p->id, seq};
        int rc = rdps_pub_send(p->pub, m, 8 + seq % 8 * 8);
        if (rc == RDPS_EAGAIN) {
            p->busy++;
            continue;
        }
        if (rc != 0) {
            __atomic_store_n(&p->failed, rc, __ATOMIC_RELAXED);
            return NULL;
        }
        seq++;
    }
    return NULL;
}

/* Four threads send on one publisher while its ctx's thread polls (and sends too): every message
 * arrives once, each thread's in the order it sent them, packed into shared datagrams. */
static void test_threads_send_on_one_publisher(void **state)
{
    (void)state;
    struct world w;
    open_world(&w, 1u << 16);
    struct producer p[THREADS];
    pthread_t t[THREADS];
    for (uint32_t i = 0; i < THREADS; i++) {
        p[i] = (struct producer){.pub = w.pub, .id = i, .count = PER_THREAD};
        assert_int_equal(pthread_create(&t[i], NULL, produce, &p[i]), 0);
    }
    uint32_t own = 0; /* the owner's own sends, id THREADS, go straight out */
    uint64_t want = (uint64_t)THREADS * PER_THREAD + 1000;
    for (int spins = 0; w.in.got < want && spins < 10000000; spins++) {
        if (own < 1000) {
            uint32_t m[2] = {THREADS, own};
            int rc = rdps_pub_send(w.pub, m, sizeof(m));
            assert_true(rc == 0 || rc == RDPS_EAGAIN);
            own += rc == 0;
        }
        pump(&w);
        for (uint32_t i = 0; i < THREADS; i++)
            assert_int_equal(__atomic_load_n(&p[i].failed, __ATOMIC_RELAXED), 0);
    }
    for (uint32_t i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(w.in.out_of_order, 0);
    assert_int_equal(w.in.got, want);
    for (uint32_t i = 0; i < THREADS; i++)
        assert_int_equal(w.in.next[i], PER_THREAD);
    rdps_counters c;
    assert_int_equal(rdps_pub_counters(w.pub, &c), 0);
    assert_int_equal(c.msgs_sent, want);
    assert_int_equal(c.queue_dropped, 0);
    assert_true(c.frames_batched > 0); /* the queue's messages shared datagrams */
    close_world(&w);
}

/* A message another thread queued before it told the owner to send goes out first. */
static void *send_one(void *arg)
{
    struct producer *p = arg;
    uint32_t m[2] = {p->id, 0};
    __atomic_store_n(&p->failed, rdps_pub_send(p->pub, m, sizeof(m)), __ATOMIC_RELAXED);
    return NULL;
}

static void test_queued_before_the_owner(void **state)
{
    (void)state;
    struct world w;
    open_world(&w, 0);
    struct producer p = {.pub = w.pub, .id = 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, send_one, &p), 0);
    assert_int_equal(pthread_join(t, NULL), 0); /* it happened before what follows */
    assert_int_equal(p.failed, 0);
    uint32_t m[2] = {0, 1}; /* the owner's message carries the next sequence of "thread 0" */
    assert_int_equal(rdps_pub_send(w.pub, m, sizeof(m)), 0);
    pump(&w);
    assert_int_equal(w.in.got, 2);
    assert_int_equal(w.in.out_of_order, 0);
    close_world(&w);
}

/* The ctx's thread about to sleep on its fd is woken by another thread's send. */
static void test_sleeping_owner_is_woken(void **state)
{
    (void)state;
    struct world w;
    open_world(&w, 0);
    int rc = RDPS_EAGAIN;
    for (int i = 0; i < 1000 && rc == RDPS_EAGAIN; i++) {
        while (rdps_ctx_poll(w.ctx, 0) > 0)
            ;
        rc = rdps_ctx_arm(w.ctx);
    }
    assert_int_equal(rc, 0); /* armed: the fd is quiet until work comes */
    struct pollfd pfd = {.fd = rdps_ctx_fd(w.ctx), .events = POLLIN};
    assert_int_equal(poll(&pfd, 1, 0), 0);
    struct producer p = {.pub = w.pub, .id = 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, send_one, &p), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(p.failed, 0);
    assert_int_equal(poll(&pfd, 1, 0), 1); /* readable now: poll */
    pump(&w);
    assert_int_equal(w.in.got, 1);
    close_world(&w);
}

/* What another thread is told: too long, queue full (the owner not polling), destroyed;
 * claims stay the owner's; readiness and the limit may be asked from any thread. */
struct asker {
    rdps_pub_t *pub;
    int too_long, full_after, claim, ready;
    size_t max;
    char claim_msg[256];
};

static void *ask(void *arg)
{
    struct asker *a = arg;
    static uint8_t big[8192];
    rdps_claim c;
    a->too_long = rdps_pub_send(a->pub, big, 4096 / 2);
    a->max = rdps_pub_max_message_size(a->pub);
    a->ready = rdps_pub_ready(a->pub);
    a->full_after = 0;
    while (rdps_pub_send_ex(a->pub, big, 100, RDPS_SEND_MORE) == 0 && a->full_after < 1000)
        a->full_after++;
    a->claim = rdps_pub_claim(a->pub, &c);
    memcpy(a->claim_msg, rdps_last_error_message(), sizeof(a->claim_msg) - 1);
    return NULL;
}

static void test_other_threads_errors(void **state)
{
    (void)state;
    struct world w;
    open_world(&w, 4096);
    struct asker a = {.pub = w.pub};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, ask, &a), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(a.too_long, RDPS_EMSGSIZE);
    assert_int_equal(a.max, 4096 / 2 - 8);
    assert_int_equal(a.ready, 1);
    assert_true(a.full_after > 10 && a.full_after < 40); /* 4 KiB of 112-byte records */
    assert_int_equal(a.claim, RDPS_ENOTOWNER);
    assert_non_null(strstr(a.claim_msg, "rdps_pub_claim: the ctx belongs to thread"));
    rdps_counters c;
    assert_int_equal(rdps_pub_counters(w.pub, &c), 0);
    assert_int_equal(c.send_backpressure, 1); /* the one refused when full */
    pump(&w);
    assert_int_equal(w.in.got, (uint64_t)a.full_after);
    close_world(&w);
}

/* Destroyed with messages queued: they are sent first; then other threads are refused. */
static void test_destroy_sends_what_was_queued(void **state)
{
    (void)state;
    struct world w;
    open_world(&w, 0);
    struct producer p = {.pub = w.pub, .id = 0, .count = 500};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, produce, &p), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(p.failed, 0);
    rdps_pub_destroy(w.pub);
    while (rdps_ctx_poll(w.rx, 0) > 0)
        ;
    assert_int_equal(w.in.got, 500);
    assert_int_equal(w.in.out_of_order, 0);
    assert_int_equal(pthread_create(&t, NULL, send_one, &p), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(p.failed, RDPS_ECLOSED);
    close_world(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_send_on_one_publisher),
        cmocka_unit_test(test_queued_before_the_owner),
        cmocka_unit_test(test_sleeping_owner_is_woken),
        cmocka_unit_test(test_other_threads_errors),
        cmocka_unit_test(test_destroy_sends_what_was_queued),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
