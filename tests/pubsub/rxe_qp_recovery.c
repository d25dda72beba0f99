/* SPDX-License-Identifier: BSD-2-Clause */
/* rxe_qp_recovery.c - rxe-guest: a ctx whose queue pair is forced into the error state recovers
 * on its own; publishing and receiving resume on the same ctx, counted and raised as an event. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx_internal.h"
#include "rdps_clock.h"
#include "rdps_verbs_transport.h"

struct tally {
    unsigned msgs, recovered_events;
};

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)data;
    (void)len;
    (void)info;
    ((struct tally *)user)->msgs++;
}

static void on_event(void *user, const rdps_event *ev)
{
    if (ev->type == RDPS_EVENT_QP_RECOVERED)
        ((struct tally *)user)->recovered_events++;
}

static void pump(rdps_ctx_t *a, rdps_ctx_t *b, unsigned ms)
{
    uint64_t until = rdps__clock_monotonic_ns() + ms * 1000000ull;
    while (rdps__clock_monotonic_ns() < until) {
        assert_true(rdps_ctx_poll(a, 0) >= 0);
        assert_true(rdps_ctx_wait(b, 1) >= 0);
    }
}

/* Sends `n` messages, pumping both contexts, and waits until `t` counted them or 10 s passed. */
static void exchange(rdps_ctx_t *a, rdps_ctx_t *b, rdps_pub_t *pub, struct tally *t, unsigned n)
{
    unsigned target = t->msgs + n;
    char msg[200] = "after recovery";
    for (unsigned i = 0; i < n; i++) {
        int rc;
        while ((rc = rdps_pub_send(pub, msg, sizeof(msg))) == RDPS_EAGAIN)
            pump(a, b, 1);
        assert_int_equal(rc, 0);
        if (i % 8 == 7)
            pump(a, b, 2);
    }
    uint64_t until = rdps__clock_monotonic_ns() + 10000000000ull;
    while (t->msgs < target && rdps__clock_monotonic_ns() < until)
        pump(a, b, 5);
    assert_int_equal(t->msgs, target);
}

static void test_receiver_and_sender_qp_recover(void **state)
{
    (void)state;
    rdps_config cfg;
    rdps_ctx_t *a, *b;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    struct tally t = {0};
    rdps_config_init(&cfg);
    cfg.device = getenv("RDPS_VM_DEV");
    int rc = rdps_ctx_create(&cfg, &a);
    if (rc == RDPS_ENODEV) {
        fprintf(stderr, "no RDMA device: %s\n", rdps_last_error_message());
        skip();
    }
    assert_int_equal(rc, 0);
    assert_int_equal(rdps_ctx_create(&cfg, &b), 0);
    rdps_sub_opts sopts = {.on_event = on_event};
    assert_int_equal(rdps_sub_create(b, "qp.recovery", on_msg, &t, &sopts, &sub), 0);
    assert_int_equal(rdps_pub_create(a, "qp.recovery", NULL, &pub), 0);
    uint64_t until = rdps__clock_monotonic_ns() + 10000000000ull;
    while ((rdps_pub_ready(pub) != 1 || rdps_sub_ready(sub) != 1) &&
           rdps__clock_monotonic_ns() < until)
        pump(a, b, 10);
    assert_int_equal(rdps_pub_ready(pub), 1);
    assert_int_equal(rdps_sub_ready(sub), 1);
    exchange(a, b, pub, &t, 50);

    /* The subscriber's QP fails: it is reset, its group attachment restored, traffic resumes. */
    assert_int_equal(rdps__verbs_transport_force_error(
                         rdps__transport_innermost(rdps__ctx_of_handle(b)->transport)),
                     0);
    pump(a, b, 50);
    exchange(a, b, pub, &t, 50);
    rdps_counters c;
    rdps_ctx_counters(b, &c);
    assert_int_equal(c.qp_recoveries, 1);
    assert_int_equal(t.recovered_events, 1);

    /* The publisher's QP fails: sends resume after the reset. */
    assert_int_equal(rdps__verbs_transport_force_error(
                         rdps__transport_innermost(rdps__ctx_of_handle(a)->transport)),
                     0);
    pump(a, b, 50);
    exchange(a, b, pub, &t, 50);
    rdps_ctx_counters(a, &c);
    assert_int_equal(c.qp_recoveries, 1);
    rdps_ctx_destroy(a);
    rdps_ctx_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_receiver_and_sender_qp_recover),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
