/* SPDX-License-Identifier: BSD-2-Clause */
/* test_mpsc_ring.c - the many-producer, one-consumer record ring: order, wrap-around,
 * back-pressure, close, the wake-up handshake, and producer threads against one consumer (run under
 * TSan too). */
#include "rdps_mpsc_ring.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <rdps/rdps.h>

static void offer_ok(struct rdps_mpsc_ring *r, const void *data, uint32_t len)
{
    bool wake;
    assert_int_equal(rdps__mpsc_offer(r, data, len, &wake), 0);
    assert_false(wake);
}

static void expect(struct rdps_mpsc_ring *r, const void *data, uint32_t len)
{
    struct rdps_mpsc_msg m;
    assert_true(rdps__mpsc_peek(r, &m));
    assert_int_equal(m.len, len);
    assert_memory_equal(m.data, data, len);
    rdps__mpsc_release(r);
}

static void test_order_and_sizes(void **state)
{
    (void)state;
    struct rdps_mpsc_ring r;
    struct rdps_mpsc_msg m;
    assert_int_equal(rdps__mpsc_init(&r, 4096), 0);
    assert_int_equal(r.max_length, 2048 - 8);
    assert_false(rdps__mpsc_peek(&r, &m));
    assert_false(rdps__mpsc_pending(&r));
    offer_ok(&r, "", 0);
    offer_ok(&r, "a", 1);
    offer_ok(&r, "12345678", 8);
    assert_true(rdps__mpsc_pending(&r));
    expect(&r, "", 0);
    expect(&r, "a", 1);
    expect(&r, "12345678", 8);
    assert_false(rdps__mpsc_peek(&r, &m));
    assert_false(rdps__mpsc_pending(&r));
    bool wake;
    uint8_t big[4096] = {0};
    assert_int_equal(rdps__mpsc_offer(&r, big, 2048 - 7, &wake), RDPS_EMSGSIZE);
    offer_ok(&r, big, 2048 - 8);
    expect(&r, big, 2048 - 8);
    assert_int_equal(rdps__mpsc_init(&(struct rdps_mpsc_ring){0}, 5000), RDPS_EINVAL);
    rdps__mpsc_fini(&r);
}

/* Records of every size across many laps: padding at the end, nothing lost or mixed up; a full
 * ring refuses (RDPS_EAGAIN) until the consumer releases. */
static void test_wrap_and_backpressure(void **state)
{
    (void)state;
    struct rdps_mpsc_ring r;
    uint8_t buf[2048], got_full = 0;
    assert_int_equal(rdps__mpsc_init(&r, 4096), 0);
    uint32_t sent = 0, recv = 0;
    for (int round = 0; round < 5000; round++) {
        bool wake;
        uint32_t len = (uint32_t)(round * 37 % 700);
        memset(buf, (int)(sent & 0xff), len);
        int rc = rdps__mpsc_offer(&r, buf, len, &wake);
        if (rc == RDPS_EAGAIN) {
            got_full = 1;
        } else {
            assert_int_equal(rc, 0);
            sent++;
        }
        if (rc == RDPS_EAGAIN || round % 16 == 0) { /* the consumer catches up now and then */
            struct rdps_mpsc_msg m;
            while (rdps__mpsc_peek(&r, &m)) {
                for (uint32_t i = 0; i < m.len; i++)
                    assert_int_equal(m.data[i], recv & 0xff);
                rdps__mpsc_release(&r);
                recv++;
            }
        }
    }
    assert_true(got_full);
    assert_true(sent > 3000);
    rdps__mpsc_fini(&r);
}

static void test_close_and_wake(void **state)
{
    (void)state;
    struct rdps_mpsc_ring r;
    bool wake;
    assert_int_equal(rdps__mpsc_init(&r, 4096), 0);
    /* Asleep with nothing pending: the next commit wakes, once. */
    assert_true(rdps__mpsc_sleep(&r));
    assert_int_equal(rdps__mpsc_offer(&r, "x", 1, &wake), 0);
    assert_true(wake);
    assert_int_equal(rdps__mpsc_offer(&r, "y", 1, &wake), 0);
    assert_false(wake);
    /* Not asleep while something is pending. */
    assert_false(rdps__mpsc_sleep(&r));
    assert_int_equal(rdps__mpsc_offer(&r, "z", 1, &wake), 0);
    assert_false(wake);
    rdps__mpsc_close(&r);
    assert_int_equal(rdps__mpsc_offer(&r, "w", 1, &wake), RDPS_ECLOSED);
    expect(&r, "x", 1); /* what was queued before the close stays */
    expect(&r, "y", 1);
    expect(&r, "z", 1);
    assert_false(rdps__mpsc_pending(&r));
    rdps__mpsc_fini(&r);
}

/* Producer threads against one consumer: every message once, each producer's in its order. */
#define PRODUCERS    4
#define PER_PRODUCER 200000

struct producer {
    struct rdps_mpsc_ring *r;
    uint32_t id;
    uint64_t full;
    int failed; /* an unexpected code (checked by the main thread: cmocka asserts there only) */
};

static void *produce(void *arg)
{
    struct producer *p = arg;
    for (uint32_t seq = 0; seq < PER_PRODUCER;) {
        uint32_t msg[4] = {p->id, seq, seq * 7u, ~seq};
        bool wake;
        int rc = rdps__mpsc_offer(p->r, msg, 8 + seq % 3 * 4, &wake);
        if (rc == RDPS_EAGAIN) {
            p->full++;
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

static void test_producer_threads(void **state)
{
    (void)state;
    struct rdps_mpsc_ring r;
    assert_int_equal(rdps__mpsc_init(&r, 1u << 16), 0);
    struct producer p[PRODUCERS];
    pthread_t t[PRODUCERS];
    uint32_t next[PRODUCERS] = {0};
    for (uint32_t i = 0; i < PRODUCERS; i++) {
        p[i] = (struct producer){.r = &r, .id = i};
        assert_int_equal(pthread_create(&t[i], NULL, produce, &p[i]), 0);
    }
    uint64_t total = 0;
    while (total < (uint64_t)PRODUCERS * PER_PRODUCER) {
        struct rdps_mpsc_msg m;
        if (!rdps__mpsc_peek(&r, &m)) {
            for (uint32_t i = 0; i < PRODUCERS; i++)
                assert_int_equal(__atomic_load_n(&p[i].failed, __ATOMIC_RELAXED), 0);
            continue;
        }
        uint32_t msg[4] = {0};
        memcpy(msg, m.data, m.len);
        assert_true(msg[0] < PRODUCERS);
        assert_int_equal(msg[1], next[msg[0]]);
        assert_int_equal(m.len, 8 + msg[1] % 3 * 4);
        if (m.len >= 12)
            assert_int_equal(msg[2], msg[1] * 7u);
        next[msg[0]]++;
        rdps__mpsc_release(&r);
        total++;
    }
    for (uint32_t i = 0; i < PRODUCERS; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(p[i].failed, 0);
        assert_int_equal(next[i], PER_PRODUCER);
    }
    assert_false(rdps__mpsc_pending(&r));
    rdps__mpsc_fini(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_and_sizes),
        cmocka_unit_test(test_wrap_and_backpressure),
        cmocka_unit_test(test_close_and_wake),
        cmocka_unit_test(test_producer_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
