/* SPDX-License-Identifier: BSD-2-Clause */
/* test_tail_heartbeats.c - an unreliable publisher's tail heartbeats reach a subscriber whose
 * receive queue overflowed to the end of a burst, and name the end when the publisher goes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>

#include <rdps/rdps.h>

#include "pubsub_test_util.h"

#define TOPIC "tail.t"
#define MS    1000000ull

static uint64_t fake_now;
static uint64_t fake_clock(void *user)
{
    (void)user;
    return fake_now;
}

/* What the subscriber heard: messages delivered, messages GAP events counted. */
struct heard {
    uint64_t delivered, gap_msgs, gap_events;
    uint32_t first_ordinal, last_ordinal; /* of the messages delivered */
};

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)data, (void)len;
    struct heard *h = user;
    if (h->delivered == 0 || (int32_t)(info->ordinal - h->first_ordinal) < 0)
        h->first_ordinal = info->ordinal;
    if (h->delivered == 0 || (int32_t)(info->ordinal - h->last_ordinal) > 0)
        h->last_ordinal = info->ordinal;
    h->delivered++;
}

static void on_event(void *user, const rdps_event *ev)
{
    struct heard *h = user;
    if (ev->type != RDPS_EVENT_GAP)
        return;
    h->gap_events++;
    h->gap_msgs += ev->msg_count;
}

struct fixture {
    struct test_pair p;
    rdps_pub_t *pub;
    rdps_sub_t *sub, *local; /* local: on the publisher's ctx, every message */
    struct heard heard, local_heard;
};

/* A publisher on a (one message per datagram), a subscriber on b, both with recv_slots receive
 * slots and the fake clock; joined. */
static void open_fixture(struct fixture *f, const rdps_config *cfg_b, uint32_t recv_slots)
{
    memset(f, 0, sizeof(*f));
    assert_int_equal(test_pair_open(&f->p, cfg_b, recv_slots), 0);
    fake_now = 1000 * MS;
    rdps__ctx_set_clock(f->p.a, fake_clock, NULL);
    rdps__ctx_set_clock(f->p.b, fake_clock, NULL);
    rdps_sub_opts so = {.on_event = on_event};
    rdps_pub_opts po = {.batching = RDPS_BATCH_OFF};
    assert_int_equal(rdps_sub_create(f->p.b, TOPIC, on_msg, &f->heard, &so, &f->sub), 0);
    assert_int_equal(rdps_sub_create(f->p.a, TOPIC, on_msg, &f->local_heard, NULL, &f->local), 0);
    assert_int_equal(rdps_pub_create(f->p.a, TOPIC, &po, &f->pub), 0);
    for (int i = 0; i < 50 && !rdps_pub_ready(f->pub); i++)
        TEST_PAIR_PUMP(&f->p, 1);
    assert_true(rdps_pub_ready(f->pub));
}

/* n messages as fast as the publisher's ctx takes them; the subscriber's ctx is not polled. */
static void burst(struct fixture *f, uint32_t n)
{
    uint8_t msg[16] = {0};
    for (uint32_t i = 0; i < n; i++) {
        int rc;
        while ((rc = rdps_pub_send(f->pub, msg, sizeof(msg))) == RDPS_EAGAIN)
            assert_true(rdps_ctx_poll(f->p.a, 0) >= 0);
        assert_int_equal(rc, 0);
    }
}

/* Polls both for up to `ms` of fake time in 10 ms steps, until n messages are accounted for. */
static void pump_until_accounted(struct fixture *f, uint64_t n, uint64_t ms)
{
    for (uint64_t t = 0; t < ms && f->heard.delivered + f->heard.gap_msgs < n; t += 10) {
        TEST_PAIR_PUMP(&f->p, 2);
        fake_now += 10 * MS;
    }
}

/*
 * 3000 datagrams into a receive queue of 64 that nobody drains: the subscriber keeps the first 64
 * and hears nothing of the rest, a tail longer than its sequence window. Its application then
 * does not poll for 600 ms, while the publisher's back-off beats (1 .. 364 ms) all find the queue
 * full. The idle beat after it drains names the tail: every message is delivered or counted.
 */
static void test_tail_past_a_full_receive_queue(void **state)
{
    (void)state;
    struct fixture f;
    open_fixture(&f, NULL, 64);
    burst(&f, 3000);
    for (int step = 0; step < 60; step++) {
        assert_true(rdps_ctx_poll(f.p.a, 0) >= 0);
        fake_now += 10 * MS;
    }
    rdps_counters c;
    rdps_pub_counters(f.pub, &c);
    assert_true(c.heartbeats_sent >= 6); /* the back-off's, all into the full queue */
    pump_until_accounted(&f, 3000, 3000);
    assert_true(f.heard.delivered > 0 && f.heard.delivered < 3000);
    assert_int_equal(f.heard.delivered + f.heard.gap_msgs, 3000);
    rdps_sub_counters(f.sub, &c);
    assert_int_equal(c.gap_messages, f.heard.gap_msgs);
    rdps_pub_destroy(f.pub);
    test_pair_close(&f.p);
}

/*
 * The publisher goes right after its burst, its ctx never polled (no tail beat from the
 * schedule): the beat it sends as it goes names the end, so a lost last datagram is counted.
 */
static void test_destroy_names_the_end(void **state)
{
    (void)state;
    struct fixture f;
    rdps_config lossy;
    rdps_config_init(&lossy);
    lossy.loss_rx_rate = 0.5;
    lossy.loss_seed = 3; /* the last datagram is among those lost (checked below) */
    open_fixture(&f, &lossy, 0);
    burst(&f, 40);
    rdps_pub_destroy(f.pub);
    pump_until_accounted(&f, 40, 2000);
    /* The seed's draws: the first datagram arrived (nothing before the stream), the last not. */
    assert_int_equal(f.local_heard.delivered, 40);
    assert_int_equal(f.heard.first_ordinal, f.local_heard.first_ordinal);
    assert_true(f.heard.last_ordinal != f.local_heard.last_ordinal);
    assert_int_equal(f.heard.delivered + f.heard.gap_msgs, 40);
    test_pair_close(&f.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tail_past_a_full_receive_queue),
        cmocka_unit_test(test_destroy_names_the_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
