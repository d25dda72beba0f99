/* SPDX-License-Identifier: BSD-2-Clause */
/* test_reliable.c - reliable publishers and subscribers through the public API over loopback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pubsub_test_util.h"
#include "rdps_clock.h"

static int setup(void **state)
{
    struct test_pair *f = calloc(1, sizeof(*f));
    assert_int_equal(test_pair_open(f, NULL, 0), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    test_pair_close(*state);
    free(*state);
    return 0;
}

/* A reliable publisher's frames are ordinary DATA to a subscriber: all arrive, in order. */
static void test_reliable_publisher_to_plain_subscriber(void **state)
{
    struct test_pair *f = *state;
    struct test_inbox in = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 1u << 20};
    assert_int_equal(rdps_sub_create(f->b, "rel.plain", test_inbox_on_message, &in, NULL, &sub), 0);
    assert_int_equal(rdps_pub_create(f->a, "rel.plain", &popts, &pub), 0);
    TEST_PAIR_PUMP(f, 3);
    uint8_t buf[5000];
    for (uint32_t i = 0; i < 3000; i++) {
        size_t len = test_message_fill(buf, i, 4 + (i * 37u) % (sizeof(buf) - 4));
        TEST_PAIR_SEND_OK(f, pub, buf, len);
        if (i % 8 == 0)
            TEST_PAIR_PUMP(f, 1);
    }
    for (int r = 0; r < 100 && in.count < 3000; r++)
        TEST_PAIR_PUMP(f, 1);
    assert_int_equal(in.count, 3000);
    assert_int_equal(in.out_of_order, 0);
    assert_int_equal(in.corrupt, 0);
    rdps_counters c;
    rdps_pub_counters(pub, &c);
    assert_int_equal(c.msgs_sent, 3000);
    assert_true(c.frames_sent >= 3000);
    assert_int_equal(c.retransmits, 0);
    /* The ring went round several times (1 MiB for ~7.5 MB of messages). */
    assert_true(c.frame_bytes_sent > 4u << 20);
    rdps_pub_destroy(pub);
    rdps_sub_destroy(sub);
}

/* A rate-limited publisher: everything arrives in order, and no faster than the limit (a lower
 * bound on the time taken: the limiter cannot be beaten, however fast the host). */
static void test_rate_limited_publisher(void **state)
{
    struct test_pair *f = *state;
    struct test_inbox in = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 1u << 20, .rate_limit = 1000000};
    assert_int_equal(rdps_sub_create(f->b, "rel.paced", test_inbox_on_message, &in, NULL, &sub), 0);
    assert_int_equal(rdps_pub_create(f->a, "rel.paced", &popts, &pub), 0);
    TEST_PAIR_PUMP(f, 3);
    uint8_t buf[900];
    uint64_t start = rdps__clock_monotonic_ns();
    for (uint32_t i = 0; i < 200; i++) {
        size_t len = test_message_fill(buf, i, sizeof(buf));
        TEST_PAIR_SEND_OK(f, pub, buf, len);
    }
    uint64_t until = start + 10000000000ull;
    while (in.count < 200 && rdps__clock_monotonic_ns() < until) {
        assert_true(rdps_ctx_wait(f->a, 1) >= 0); /* sleeps until the limiter lets data go */
        TEST_PAIR_PUMP(f, 1);
    }
    uint64_t took = rdps__clock_monotonic_ns() - start;
    assert_int_equal(in.count, 200);
    assert_int_equal(in.out_of_order, 0);
    assert_int_equal(in.corrupt, 0);
    rdps_counters c;
    rdps_pub_counters(pub, &c);
    /* Each of the 200 datagrams carries a 900-byte message, and the limit charges at least that.
     * The last one may go as soon as the 199 before it are paid for, less the 2 ms burst: at
     * 1 MB/s, no sooner than 197 ms after the first. (frame_bytes_sent would not do: it counts
     * heartbeats too, which the limit does not charge, and a loaded host sends more of them.) */
    assert_true(took >= 199ull * 900ull * 1000ull - 2000000ull);
    assert_true(c.rate_waits > 0); /* the limit held data back, and says so */
    rdps_pub_destroy(pub);
    rdps_sub_destroy(sub);
    /* Refused: on an unreliable publisher, below one datagram per second, above 100 GB/s. */
    rdps_pub_opts unreliable = {.rate_limit = 1000000};
    rdps_pub_opts too_low = {.reliable = 1, .rate_limit = 100};
    rdps_pub_opts too_high = {.reliable = 1, .rate_limit = 200000000000ull};
    assert_int_equal(rdps_pub_create(f->a, "rel.paced", &unreliable, &pub), RDPS_EINVAL);
    assert_int_equal(rdps_pub_create(f->a, "rel.paced", &too_low, &pub), RDPS_EINVAL);
    assert_int_equal(rdps_pub_create(f->a, "rel.paced", &too_high, &pub), RDPS_EINVAL);
}

/* An idle reliable publisher sends heartbeats, backing off. */
static void test_idle_reliable_publisher_heartbeats(void **state)
{
    struct test_pair *f = *state;
    rdps_pub_t *pub;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 1u << 20};
    assert_int_equal(rdps_pub_create(f->a, "rel.idle", &popts, &pub), 0);
    TEST_PAIR_PUMP(f, 3);
    TEST_PAIR_SEND_OK(f, pub, "x", 1);
    for (int i = 0; i < 200; i++)
        assert_true(rdps_ctx_wait(f->a, 1) >= 0);
    rdps_counters c;
    rdps_pub_counters(pub, &c);
    assert_true(c.heartbeats_sent >= 3); /* 100 us doubling: several in ~200 ms */
    assert_true(c.heartbeats_sent < 40); /* and backing off, not one per poll */
    rdps_pub_destroy(pub);
}

/* A reliable message is bounded by the ctx's max_message_size and by what the ring holds, not
 * by a receiver's window: with a 32 MiB ring the limit is the ctx's 16 MiB, with a 16 MiB ring a
 * little less (its datagrams carry headers); longer ones are refused, with the limit named,
 * before anything is written. */
static void test_reliable_message_limit(void **state)
{
    struct test_pair *f = *state;
    rdps_pub_t *pub, *big, *plain;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 16u << 20};
    rdps_pub_opts bigopts = {.reliable = 1, .ring_bytes = 32u << 20};
    assert_int_equal(rdps_pub_create(f->a, "rel.limit", &popts, &pub), 0);
    assert_int_equal(rdps_pub_create(f->a, "rel.limit.big", &bigopts, &big), 0);
    assert_int_equal(rdps_pub_create(f->a, "rel.limit.plain", NULL, &plain), 0);
    TEST_PAIR_PUMP(f, 3);
    size_t limit = rdps_pub_max_message_size(pub);
    assert_int_equal(rdps_pub_max_message_size(plain), 16u << 20);
    assert_int_equal(rdps_pub_max_message_size(big), 16u << 20);
    assert_true(limit > (15u << 20) && limit < (16u << 20));
    assert_int_equal(rdps_pub_max_message_size(NULL), 0);

    uint8_t *buf = calloc(1, limit + 1);
    assert_non_null(buf);
    rdps_counters c;
    assert_int_equal(rdps_pub_send(pub, buf, limit + 1), RDPS_EMSGSIZE);
    assert_non_null(strstr(rdps_last_error_message(), "what the ring holds"));
    rdps_pub_counters(pub, &c);
    assert_int_equal(c.msgs_sent, 0);
    int rc = RDPS_EAGAIN;
    for (int round = 0; round < 1000 && rc == RDPS_EAGAIN; round++) {
        rc = rdps_pub_send(pub, buf, limit);
        TEST_PAIR_PUMP(f, 1);
    }
    assert_int_equal(rc, 0);
    rdps_pub_counters(pub, &c);
    assert_int_equal(c.msgs_sent, 1);
    free(buf);
    rdps_pub_destroy(plain);
    rdps_pub_destroy(big);
    rdps_pub_destroy(pub);
}

struct loss_seen {
    unsigned loss_events, lost;
};

static void on_loss_event(void *user, const rdps_event *ev)
{
    struct loss_seen *l = user;
    if (ev->type == RDPS_EVENT_LOSS) {
        l->loss_events++;
        l->lost += ev->count;
    }
}

struct reliable_sub {
    struct test_inbox in;
    struct loss_seen loss;
};

static void rel_on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    test_inbox_on_message(&((struct reliable_sub *)user)->in, data, len, info);
}

static void rel_on_event(void *user, const rdps_event *ev)
{
    on_loss_event(&((struct reliable_sub *)user)->loss, ev);
}

/*
 * The subscriber's ctx drops `loss` of every received frame type (data, heartbeats, repairs):
 * it NAKs, the publisher repairs, and every message arrives in order exactly once.
 */
static void reliable_over_loss(double loss, uint64_t seed)
{
    struct test_pair f;
    rdps_config lossy;
    rdps_config_init(&lossy);
    lossy.announce_interval_ms = 1000;
    lossy.loss_rx_rate = loss;
    lossy.loss_frame_types = (1u << RDPS_FRAME_DATA) | (1u << RDPS_FRAME_HEARTBEAT);
    lossy.loss_seed = seed;
    assert_int_equal(test_pair_open(&f, &lossy, 0), 0);
    struct reliable_sub rs = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 4u << 20};
    rdps_sub_opts sopts = {.reliable = 1, .on_event = rel_on_event};
    assert_int_equal(rdps_sub_create(f.b, "rel.lossy", rel_on_message, &rs, &sopts, &sub), 0);
    assert_int_equal(rdps_pub_create(f.a, "rel.lossy", &popts, &pub), 0);
    TEST_PAIR_PUMP(&f, 3);
    enum { N = 2000 };
    uint8_t buf[3000];
    for (uint32_t i = 0; i < N; i++) {
        size_t len = test_message_fill(buf, i, 4 + (i * 131u) % (sizeof(buf) - 4));
        TEST_PAIR_SEND_OK(&f, pub, buf, len);
        TEST_PAIR_PUMP(&f, 1);
    }
    /* Tail loss is found through heartbeats; give NAKs and repairs time to finish. */
    uint64_t until = rdps__clock_monotonic_ns() + 20000000000ull;
    while (rs.in.next_index < N && rdps__clock_monotonic_ns() < until) {
        assert_true(rdps_ctx_wait(f.a, 1) >= 0);
        assert_true(rdps_ctx_wait(f.b, 1) >= 0);
    }
    rdps_counters pc, sc;
    rdps_pub_counters(pub, &pc);
    rdps_sub_counters(sub, &sc);
    /* In order, intact, never twice; every message skipped was announced by a loss event. */
    assert_int_equal(rs.in.next_index, N);
    assert_int_equal(rs.in.backwards, 0);
    assert_int_equal(rs.in.corrupt, 0);
    assert_int_equal(rs.in.count + rs.in.skipped, N);
    if (rs.in.skipped > 0)
        assert_true(rs.loss.loss_events > 0);
    assert_int_equal(rs.in.count, N); /* ... and nothing was lost */
    assert_int_equal(rs.loss.loss_events, 0);
    if (loss > 0) {
        assert_true(sc.loss_dropped_rx > 0);
        assert_true(sc.naks_sent > 0);
        assert_true(sc.recovered > 0);
        assert_true(pc.retransmits > 0);
        /* Repair latency, in microseconds and in round trips (bucket bounds, p50 <= p99). */
        assert_true(sc.repair_latency_p50_us > 0);
        assert_true(sc.repair_rtts_p50_milli > 0);
        assert_true(sc.repair_rtts_p50_milli <= sc.repair_rtts_p99_milli);
    }
    /* Per session: the one publisher session, its figures those of the ctx (the only sender). */
    rdps_session_stats ss[2];
    assert_int_equal(rdps_sub_sessions(sub, ss, 2), 1);
    assert_int_equal(ss[0].session_id, rdps_pub_session(pub));
    assert_int_equal(ss[0].delivered, N);
    assert_int_equal(ss[0].naks_sent, sc.naks_sent);
    assert_int_equal(ss[0].recovered, sc.recovered);
    assert_int_equal(ss[0].lost, 0);
    assert_int_equal(ss[0].loss_events, 0);
    assert_int_equal(ss[0].gap_ranges, 0);
    assert_true(ss[0].rtt_us > 0);
    assert_int_equal(ss[0].repair_rtts_p50_milli, sc.repair_rtts_p50_milli);
    assert_int_equal(ss[0].repair_rtts_p99_milli, sc.repair_rtts_p99_milli);
    assert_int_equal(rdps_sub_sessions(sub, NULL, 0), 1);
    assert_int_equal(rdps_sub_sessions(sub, NULL, 1), RDPS_EINVAL);
    assert_int_equal(rdps_sub_sessions(NULL, ss, 2), RDPS_EINVAL);
    test_pair_close(&f);
}

static void test_reliable_lossless(void **state)
{
    (void)state;
    reliable_over_loss(0.0, 1);
}

static void test_reliable_five_percent_loss(void **state)
{
    (void)state;
    reliable_over_loss(0.05, 7);
}

static void test_reliable_twenty_percent_loss(void **state)
{
    (void)state;
    reliable_over_loss(0.20, 11);
}

/*
 * Reliable messages of 1, 8 and 16 MiB through the API, over the loopback device, the
 * subscriber's ctx dropping 5 % of the data frames and heartbeats it receives: each arrives whole
 * and in order (up to 17 051 datagrams each, through a sequence window of 2048), nothing lost.
 * Before, rdps_pub_send refused a reliable message over 1023 datagrams (RDPS_EMSGSIZE).
 */
static void test_reliable_large_messages_over_loss(void **state)
{
    (void)state;
    struct test_pair f;
    rdps_config lossy;
    rdps_config_init(&lossy);
    lossy.announce_interval_ms = 1000;
    lossy.loss_rx_rate = 0.05;
    lossy.loss_frame_types = (1u << RDPS_FRAME_DATA) | (1u << RDPS_FRAME_HEARTBEAT);
    lossy.loss_seed = 29;
    assert_int_equal(test_pair_open(&f, &lossy, 0), 0);
    struct reliable_sub rs = {0};
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 40u << 20};
    rdps_sub_opts sopts = {.reliable = 1, .on_event = rel_on_event};
    assert_int_equal(rdps_sub_create(f.b, "rel.large", rel_on_message, &rs, &sopts, &sub), 0);
    assert_int_equal(rdps_pub_create(f.a, "rel.large", &popts, &pub), 0);
    TEST_PAIR_PUMP(&f, 3);
    const size_t sizes[] = {1u << 20, 8u << 20, 16u << 20, 16u << 20, 1u << 20};
    enum { N = sizeof(sizes) / sizeof(sizes[0]) };
    uint8_t *buf = malloc(16u << 20);
    assert_non_null(buf);
    uint64_t until = rdps__clock_monotonic_ns() + 60000000000ull;
    for (uint32_t i = 0; i < N; i++) {
        size_t len = test_message_fill(buf, i, sizes[i]);
        int rc;
        while ((rc = rdps_pub_send(pub, buf, len)) == RDPS_EAGAIN &&
               rdps__clock_monotonic_ns() < until) {
            assert_true(rdps_ctx_wait(f.a, 1) >= 0);
            assert_true(rdps_ctx_wait(f.b, 1) >= 0);
        }
        assert_int_equal(rc, 0);
    }
    while (rs.in.next_index < N && rdps__clock_monotonic_ns() < until) {
        assert_true(rdps_ctx_wait(f.a, 1) >= 0);
        assert_true(rdps_ctx_wait(f.b, 1) >= 0);
    }
    rdps_counters sc;
    rdps_sub_counters(sub, &sc);
    assert_int_equal(rs.in.next_index, N);
    assert_int_equal(rs.in.count, N);
    assert_int_equal(rs.in.corrupt, 0);
    assert_int_equal(rs.in.backwards, 0);
    assert_int_equal(rs.loss.loss_events, 0);
    assert_true(sc.loss_dropped_rx > 0);
    assert_true(sc.recovered > 0);
    free(buf);
    test_pair_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reliable_publisher_to_plain_subscriber, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rate_limited_publisher, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_reliable_publisher_heartbeats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reliable_message_limit, setup, teardown),
        cmocka_unit_test(test_reliable_lossless),
        cmocka_unit_test(test_reliable_five_percent_loss),
        cmocka_unit_test(test_reliable_twenty_percent_loss),
        cmocka_unit_test(test_reliable_large_messages_over_loss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
