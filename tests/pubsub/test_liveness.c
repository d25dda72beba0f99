/* SPDX-License-Identifier: BSD-2-Clause */
/* test_liveness.c - a peer whose announcements stop while its stream flows is not declared gone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pubsub_test_util.h"

#define MS 1000000ull

/*
 * Two contexts on the loopback fabric, each on its own fake clock. A clock that runs slower than
 * the other is a host that cannot run (a starved guest, a stopped process) or whose
 * announcements are lost while its traffic gets through: the other side sees one announcement
 * where it expects several.
 */
struct fixture {
    struct test_pair pair;
    uint64_t now_a, now_b;
};

static uint64_t clock_of(void *user)
{
    return *(const uint64_t *)user;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct test_pair *p = &f->pair;
    int rc = rdps__loopback_fabric_create(&p->fabric);
    if (rc == 0)
        rc = test_loopback_ctx(p->fabric, NULL, 0, &p->a); /* both announce every 1000 ms */
    if (rc == 0)
        rc = test_loopback_ctx(p->fabric, NULL, 0, &p->b);
    assert_int_equal(rc, 0);
    f->now_a = f->now_b = 1000 * MS;
    rdps__ctx_set_clock(p->a, clock_of, &f->now_a);
    rdps__ctx_set_clock(p->b, clock_of, &f->now_b);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    test_pair_close(&f->pair);
    free(f);
    return 0;
}

/* One round: each clock moves its step, a polls, then b. */
static void round_trip(struct fixture *f, uint64_t step_a, uint64_t step_b)
{
    f->now_a += step_a;
    f->now_b += step_b;
    assert_true(rdps_ctx_poll(f->pair.a, 0) >= 0);
    assert_true(rdps_ctx_poll(f->pair.b, 0) >= 0);
}

struct events {
    unsigned seen, gone, timed_out, messages;
};

static void on_event(void *user, const rdps_event *ev)
{
    struct events *e = user;
    if (ev->type == RDPS_EVENT_PUBLISHER_SEEN || ev->type == RDPS_EVENT_SUBSCRIBER_SEEN)
        e->seen++;
    if (ev->type == RDPS_EVENT_PUBLISHER_GONE || ev->type == RDPS_EVENT_SUBSCRIBER_GONE)
        e->gone++;
    if (ev->type == RDPS_EVENT_RECEIVER_TIMED_OUT)
        e->timed_out++;
}

static void on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct events *e = user;
    (void)data, (void)len, (void)info;
    e->messages++;
}

/*
 * The publisher's clock runs at a fifth of the subscriber's: over 6 s of the subscriber's time
 * the publisher announces once, but its messages keep coming. Before the fix the subscriber
 * declared it gone after 3 s (three announce intervals) and saw it again at its next
 * announcement: a recorder wrote a session end and start in the middle of a flowing stream.
 * Once its stream stops, it goes after its liveness time as before.
 */
static void test_publisher_heard_by_its_stream(void **state)
{
    struct fixture *f = *state;
    struct events ev = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_sub_opts so = {.on_event = on_event};
    assert_int_equal(rdps_sub_create(f->pair.b, "live.stream", on_message, &ev, &so, &sub), 0);
    assert_int_equal(rdps_pub_create(f->pair.a, "live.stream", NULL, &pub), 0);
    for (int i = 0; i < 3; i++)
        round_trip(f, MS, MS);
    assert_int_equal(ev.seen, 1);
    for (int i = 0; i < 60; i++) {
        assert_int_equal(rdps_pub_send(pub, "tick", 4), 0);
        round_trip(f, 20 * MS, 100 * MS);
    }
    assert_int_equal(ev.gone, 0);
    assert_int_equal(ev.seen, 1);
    assert_true(ev.messages >= 55);
    /* Silent now (a does not run): gone after three intervals from its last message. */
    f->now_b += 2900 * MS;
    assert_true(rdps_ctx_poll(f->pair.b, 0) >= 0);
    assert_int_equal(ev.gone, 0);
    f->now_b += 200 * MS;
    assert_true(rdps_ctx_poll(f->pair.b, 0) >= 0);
    assert_int_equal(ev.gone, 1);
}

/*
 * The subscriber's clock runs at a fifth of the publisher's: a reliable publisher hears one
 * announcement in 6 s but the receiver's STATUS all along. Before the fix discovery expired it
 * after 3 s: SUBSCRIBER_GONE, RECEIVER_TIMED_OUT, and the receiver out of flow control while it
 * was receiving (a `min` publisher then ran ahead of it).
 */
static void test_reliable_subscriber_heard_by_its_status(void **state)
{
    struct fixture *f = *state;
    struct events pe = {0}, se = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_opts po = {.reliable = 1, .flow = RDPS_FLOW_MIN, .on_event = on_event};
    rdps_sub_opts so = {.reliable = 1};
    po.event_user = &pe;
    assert_int_equal(rdps_pub_create(f->pair.a, "live.status", &po, &pub), 0);
    assert_int_equal(rdps_sub_create(f->pair.b, "live.status", on_message, &se, &so, &sub), 0);
    for (int i = 0; i < 3; i++)
        round_trip(f, MS, MS);
    assert_int_equal(pe.seen, 1);
    unsigned sent = 0;
    for (int i = 0; i < 60; i++) {
        if (rdps_pub_send(pub, "tick", 4) == 0)
            sent++;
        round_trip(f, 100 * MS, 20 * MS);
    }
    assert_int_equal(pe.gone, 0);
    assert_int_equal(pe.timed_out, 0);
    assert_int_equal(pe.seen, 1);
    assert_true(sent >= 55);
    for (int i = 0; i < 10; i++) /* the last message's acknowledgement */
        round_trip(f, MS, MS);
    assert_int_equal(rdps_pub_receivers_behind(pub), 0);
    assert_int_equal(se.messages, sent);
    /* b stops running: gone once neither its announcements nor its STATUS come. */
    for (int i = 0; i < 40 && pe.gone == 0; i++) {
        f->now_a += 100 * MS;
        assert_true(rdps_ctx_poll(f->pair.a, 0) >= 0);
    }
    assert_int_equal(pe.gone, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_publisher_heard_by_its_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reliable_subscriber_heard_by_its_status, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
