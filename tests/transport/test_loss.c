/* SPDX-License-Identifier: BSD-2-Clause */
/* test_loss.c - loss generator statistics and determinism, and the loss interceptor over loopback.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rdps_loopback.h"
#include "rdps_loss.h"

#include <string.h>

enum { TYPE_DATA = 1, TYPE_HEARTBEAT = 2, TYPE_NAK = 3, TYPE_STATUS = 4, TYPE_ANNOUNCE = 5 };

static uint64_t count_drops(uint64_t seed, double rate, uint32_t mask, unsigned type, int frames)
{
    struct rdps_loss_gen g;
    uint8_t frame[8] = {0x52, (uint8_t)type};
    assert_int_equal(rdps__loss_gen_init(&g, seed, rate, mask), 0);
    for (int i = 0; i < frames; i++)
        (void)rdps__loss_gen_should_drop(&g, frame, sizeof(frame));
    assert_int_equal(g.seen, (uint64_t)frames);
    return g.dropped;
}

static void test_rate_within_band(void **state)
{
    (void)state;
    /* 10% of 100k: binomial sd ~95, so +-1% (10 sd) can only fail on a broken generator. */
    for (uint64_t seed = 1; seed <= 5; seed++) {
        uint64_t d = count_drops(seed, 0.10, RDPS_LOSS_TYPE_BIT(TYPE_DATA), TYPE_DATA, 100000);
        assert_in_range(d, 9000, 11000);
    }
    uint64_t d = count_drops(42, 0.5, RDPS_LOSS_TYPE_BIT(TYPE_DATA), TYPE_DATA, 100000);
    assert_in_range(d, 49000, 51000);
    d = count_drops(42, 0.001, RDPS_LOSS_TYPE_BIT(TYPE_DATA), TYPE_DATA, 100000);
    assert_in_range(d, 60, 140);
}

static void test_reproducible_per_seed(void **state)
{
    (void)state;
    uint64_t first = count_drops(12345, 0.10, RDPS_LOSS_TYPE_BIT(TYPE_DATA), TYPE_DATA, 100000);
    uint64_t again = count_drops(12345, 0.10, RDPS_LOSS_TYPE_BIT(TYPE_DATA), TYPE_DATA, 100000);
    assert_int_equal(first, again);
    /* Exact count for seed 12345, cross-checked with an independent splitmix64 in Python. */
    assert_int_equal(first, 10022);

    /* The same decisions frame by frame, not only the same total. */
    struct rdps_loss_gen a, b;
    uint8_t frame[2] = {0, TYPE_DATA};
    rdps__loss_gen_init(&a, 7, 0.3, RDPS_LOSS_TYPE_BIT(TYPE_DATA));
    rdps__loss_gen_init(&b, 7, 0.3, RDPS_LOSS_TYPE_BIT(TYPE_DATA));
    for (int i = 0; i < 1000; i++)
        assert_int_equal(rdps__loss_gen_should_drop(&a, frame, 2),
                         rdps__loss_gen_should_drop(&b, frame, 2));

    /* Another seed gives another pattern (totals alone may coincide). */
    struct rdps_loss_gen c;
    int differ = 0;
    rdps__loss_gen_init(&a, 12345, 0.3, RDPS_LOSS_TYPE_BIT(TYPE_DATA));
    rdps__loss_gen_init(&c, 54321, 0.3, RDPS_LOSS_TYPE_BIT(TYPE_DATA));
    for (int i = 0; i < 1000; i++)
        differ +=
            rdps__loss_gen_should_drop(&a, frame, 2) != rdps__loss_gen_should_drop(&c, frame, 2);
    assert_in_range(differ, 300, 540); /* independent streams: ~2 * 0.3 * 0.7 = 42% differ */
}

static void test_splitmix_reference(void **state)
{
    (void)state;
    /* splitmix64 reference outputs for seed 0 (Vigna's published generator). */
    struct rdps_loss_gen g;
    rdps__loss_gen_init(&g, 0, 0.0, 0);
    assert_true(rdps__loss_gen_next(&g) == 0xe220a8397b1dcdafull);
    assert_true(rdps__loss_gen_next(&g) == 0x6e789e6aa1b965f4ull);
    assert_true(rdps__loss_gen_next(&g) == 0x06c45d188009454full);
}

static void test_type_mask(void **state)
{
    (void)state;
    uint32_t mask = RDPS_LOSS_TYPE_BIT(TYPE_NAK) | RDPS_LOSS_TYPE_BIT(TYPE_STATUS);
    assert_int_equal(count_drops(9, 1.0, mask, TYPE_DATA, 1000), 0);
    assert_int_equal(count_drops(9, 1.0, mask, TYPE_HEARTBEAT, 1000), 0);
    assert_int_equal(count_drops(9, 1.0, mask, TYPE_NAK, 1000), 1000);
    assert_int_equal(count_drops(9, 1.0, mask, TYPE_STATUS, 1000), 1000);
    assert_int_equal(count_drops(9, 0.0, mask, TYPE_NAK, 1000), 0);

    /* Mixed traffic: only masked types are dropped, per-type counts add up. */
    struct rdps_loss_gen g;
    rdps__loss_gen_init(&g, 99, 0.2, RDPS_LOSS_TYPE_BIT(TYPE_DATA));
    assert_int_equal(rdps__loss_gen_set_rate(&g, TYPE_HEARTBEAT, 0.5), 0);
    for (int i = 0; i < 30000; i++) {
        uint8_t frame[4] = {0, (uint8_t)(1 + i % 5)};
        (void)rdps__loss_gen_should_drop(&g, frame, sizeof(frame));
    }
    assert_in_range(g.dropped_by_type[TYPE_DATA], 1000, 1400);
    assert_in_range(g.dropped_by_type[TYPE_HEARTBEAT], 2800, 3200);
    assert_int_equal(g.dropped_by_type[TYPE_NAK] + g.dropped_by_type[TYPE_STATUS] +
                         g.dropped_by_type[TYPE_ANNOUNCE],
                     0);
    assert_int_equal(g.dropped, g.dropped_by_type[TYPE_DATA] + g.dropped_by_type[TYPE_HEARTBEAT]);

    /* Short frames have type 0; unknown large types share the last entry. */
    uint8_t one = 1;
    assert_int_equal(rdps__loss_frame_type(&one, 1), 0);
    uint8_t big[2] = {0, 200};
    assert_int_equal(rdps__loss_frame_type(big, 2), RDPS_LOSS_MAX_TYPES - 1);
}

static void test_bad_rates(void **state)
{
    (void)state;
    struct rdps_loss_gen g;
    assert_int_equal(rdps__loss_gen_init(&g, 1, 1.5, 1), RDPS_EINVAL);
    assert_int_equal(rdps__loss_gen_init(&g, 1, -0.1, 1), RDPS_EINVAL);
    assert_int_equal(rdps__loss_gen_init(&g, 1, 0.1, 1), 0);
    assert_int_equal(rdps__loss_gen_set_rate(&g, RDPS_LOSS_MAX_TYPES, 0.1), RDPS_EINVAL);
    assert_int_equal(rdps__loss_gen_set_rate(&g, 1, 2.0), RDPS_EINVAL);
}

static void test_interceptor_over_loopback(void **state)
{
    (void)state;
    struct rdps_loopback_fabric *f;
    struct rdps_transport *inner_a, *b, *a;
    struct rdps_loopback_config cfg = {.send_slots = 16, .recv_slots = 64};
    struct rdps_loss_config loss = {
        .seed = 2024, .rate = 0.25, .type_mask = RDPS_LOSS_TYPE_BIT(TYPE_DATA), .on_send = true};
    const struct rdps_dest *to_b;
    struct rdps_rx_datagram rx[16];
    int received = 0;

    assert_int_equal(rdps__loopback_fabric_create(&f), 0);
    assert_int_equal(rdps__loopback_create(f, &cfg, &inner_a), 0);
    assert_int_equal(rdps__loopback_create(f, &cfg, &b), 0);
    assert_int_equal(rdps__loss_transport_create(inner_a, &loss, &a), 0);
    assert_int_equal(rdps__loopback_dest(b, &to_b), 0);
    for (int i = 0; i < 4000; i++) {
        struct rdps_tx_buf buf;
        assert_int_equal(a->ops->claim(a, &buf), 0);
        buf.data[0] = 0x52;
        buf.data[1] = i % 2 ? TYPE_DATA : TYPE_HEARTBEAT;
        assert_int_equal(a->ops->submit(a, &buf, 16, &to_b, 1), 0);
        assert_int_equal(a->ops->flush(a), 0);
        assert_int_equal(a->ops->poll(a, rx, 16), 0);
        int n = b->ops->poll(b, rx, 16);
        for (int k = 0; k < n; k++)
            assert_int_equal(rx[k].data[1] == TYPE_DATA || rx[k].data[1] == TYPE_HEARTBEAT, 1);
        received += n;
        b->ops->rx_release(b, rx, n);
    }
    struct rdps_transport_stats st;
    a->ops->get_stats(a, &st);
    struct rdps_loss_gen *gen = rdps__loss_transport_send_gen(a);
    assert_non_null(gen);
    assert_int_equal(st.loss_dropped_tx, gen->dropped);
    assert_in_range(st.loss_dropped_tx, 400, 600); /* 25% of 2000 DATA frames */
    assert_int_equal(gen->dropped_by_type[TYPE_HEARTBEAT], 0);
    assert_int_equal(st.tx_datagrams + st.loss_dropped_tx, 4000);
    assert_int_equal((uint64_t)received, st.tx_datagrams);

    /* Receive-side: everything of type DATA dropped, and the buffers go back to b. */
    struct rdps_transport *lossy_b;
    struct rdps_loss_config all = {
        .seed = 1, .rate = 1.0, .type_mask = RDPS_LOSS_TYPE_BIT(TYPE_DATA), .on_recv = true};
    assert_int_equal(rdps__loss_transport_create(b, &all, &lossy_b), 0);
    uint64_t sent_before = st.tx_datagrams;
    for (int i = 0; i < 200; i++) {
        struct rdps_tx_buf buf;
        assert_int_equal(a->ops->claim(a, &buf), 0);
        buf.data[0] = 0x52;
        buf.data[1] = TYPE_DATA;
        assert_int_equal(a->ops->submit(a, &buf, 2, &to_b, 1), 0);
        a->ops->flush(a);
        a->ops->poll(a, rx, 16);
        assert_int_equal(lossy_b->ops->poll(lossy_b, rx, 16), 0);
    }
    a->ops->get_stats(a, &st);
    uint64_t arrived = st.tx_datagrams - sent_before; /* a's send-side loss still applies */
    assert_in_range(arrived, 100, 199);
    lossy_b->ops->get_stats(lossy_b, &st);
    assert_int_equal(st.rx_queue_empty, 0); /* released, never exhausted */
    assert_int_equal(st.loss_dropped_rx, rdps__loss_transport_recv_gen(lossy_b)->dropped);
    assert_int_equal(st.loss_dropped_rx, arrived);

    lossy_b->ops->destroy(lossy_b); /* destroys b too */
    a->ops->destroy(a);
    rdps__loopback_fabric_destroy(f);
}

/*
 * Copies of one datagram to several destinations (unicast fan-out) are lost independently, on a
 * send buffer and on a registered region alike: with 3 receivers at 30 % loss each receives about
 * 70 %, and their losses differ. (Judged whole, every receiver lost the same frames.)
 */
static void test_fanout_copies_lost_independently(void **state)
{
    (void)state;
    struct rdps_loopback_fabric *f;
    struct rdps_transport *inner, *a, *r[3];
    struct rdps_loopback_config cfg = {.send_slots = 16, .recv_slots = 64};
    struct rdps_loss_config loss = {
        .seed = 77, .rate = 0.3, .type_mask = RDPS_LOSS_TYPE_BIT(TYPE_DATA), .on_send = true};
    const struct rdps_dest *dests[3];
    struct rdps_rx_datagram rx[16];
    unsigned got[3] = {0, 0, 0}, differ = 0;
    static uint8_t region[64];

    assert_int_equal(rdps__loopback_fabric_create(&f), 0);
    assert_int_equal(rdps__loopback_create(f, &cfg, &inner), 0);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(rdps__loopback_create(f, &cfg, &r[k]), 0);
        assert_int_equal(rdps__loopback_dest(r[k], &dests[k]), 0);
    }
    assert_int_equal(rdps__loss_transport_create(inner, &loss, &a), 0);
    struct rdps_tx_mem *mem;
    assert_int_equal(rdps__transport_mem_register(a, region, sizeof(region), &mem), 0);
    region[1] = TYPE_DATA;
    for (int i = 0; i < 2000; i++) {
        if (i % 2 == 0) {
            struct rdps_tx_buf buf;
            assert_int_equal(a->ops->claim(a, &buf), 0);
            buf.data[0] = 0x52;
            buf.data[1] = TYPE_DATA;
            assert_int_equal(a->ops->submit(a, &buf, 16, dests, 3), 0);
        } else {
            assert_int_equal(rdps__transport_submit_mem(a, mem, 0, 16, dests, 3, (uint64_t)i), 0);
        }
        assert_int_equal(a->ops->flush(a), 0);
        assert_int_equal(a->ops->poll(a, rx, 16), 0);
        unsigned here[3];
        for (int k = 0; k < 3; k++) {
            int n = r[k]->ops->poll(r[k], rx, 16);
            here[k] = (unsigned)n;
            got[k] += (unsigned)n;
            r[k]->ops->rx_release(r[k], rx, n);
        }
        differ += here[0] != here[1] || here[1] != here[2];
    }
    for (int k = 0; k < 3; k++)
        assert_in_range(got[k], 1200, 1600);
    assert_true(differ > 500);
    struct rdps_transport_stats st;
    a->ops->get_stats(a, &st);
    assert_int_equal(st.loss_dropped_tx + st.tx_datagrams, 6000);
    assert_int_equal(rdps__tx_mem_completed(mem), 1999); /* every region cookie done */
    assert_int_equal(rdps__transport_mem_deregister(a, mem), 0);
    a->ops->destroy(a);
    for (int k = 0; k < 3; k++)
        r[k]->ops->destroy(r[k]);
    rdps__loopback_fabric_destroy(f);
}

/* The interceptor is reached through the base transport's inner pointer, and forwards reply_dest.
 */
static void test_inner_pointer_and_reply(void **state)
{
    (void)state;
    struct rdps_loopback_fabric *f;
    struct rdps_transport *a, *b, *lossy, *lossier;
    const struct rdps_dest *to_b, *reply = NULL;
    struct rdps_rx_datagram rx[2];
    struct rdps_loss_config none = {.seed = 3};

    assert_int_equal(rdps__loopback_fabric_create(&f), 0);
    assert_int_equal(rdps__loopback_create(f, NULL, &a), 0);
    assert_int_equal(rdps__loopback_create(f, NULL, &b), 0);
    assert_null(b->inner);
    assert_ptr_equal(rdps__transport_innermost(b), b);
    assert_int_equal(rdps__loss_transport_create(b, &none, &lossy), 0);
    assert_int_equal(rdps__loss_transport_create(lossy, &none, &lossier), 0);
    assert_ptr_equal(lossier->inner, lossy);
    assert_ptr_equal(rdps__loss_transport_inner(lossier), lossy);
    assert_ptr_equal(rdps__transport_innermost(lossier), b);
    assert_null(rdps__loss_transport_inner(b)); /* not an interceptor */

    assert_int_equal(rdps__loopback_dest(b, &to_b), 0);
    struct rdps_tx_buf buf;
    assert_int_equal(a->ops->claim(a, &buf), 0);
    memset(buf.data, 0, 4);
    assert_int_equal(a->ops->submit(a, &buf, 4, &to_b, 1), 0);
    assert_int_equal(a->ops->flush(a), 0);
    assert_int_equal(lossier->ops->poll(lossier, rx, 2), 1);
    assert_int_equal(rdps__transport_reply(lossier, &rx[0], &reply), 0);
    const struct rdps_dest *to_a;
    assert_int_equal(rdps__loopback_dest(a, &to_a), 0);
    assert_ptr_equal(reply, to_a);
    struct rdps_rx_datagram bogus = {.slot = 12345};
    assert_int_equal(rdps__transport_reply(lossier, &bogus, &reply), RDPS_EINVAL);
    assert_null(reply);
    lossier->ops->rx_release(lossier, rx, 1);

    lossier->ops->destroy(lossier); /* destroys lossy and b */
    a->ops->destroy(a);
    rdps__loopback_fabric_destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rate_within_band),
        cmocka_unit_test(test_reproducible_per_seed),
        cmocka_unit_test(test_splitmix_reference),
        cmocka_unit_test(test_type_mask),
        cmocka_unit_test(test_bad_rates),
        cmocka_unit_test(test_interceptor_over_loopback),
        cmocka_unit_test(test_inner_pointer_and_reply),
        cmocka_unit_test(test_fanout_copies_lost_independently),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
