/* SPDX-License-Identifier: BSD-2-Clause */
/* test_reliable_parity.c - parity repairs through the public API over loopback: one publisher
 * with parity_k, two subscribers losing different datagrams, each repaired by the same parity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pubsub_test_util.h"
#include "rdps_clock.h"

struct parity_sub {
    struct test_inbox in;
    unsigned loss_events;
};

static void par_on_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    test_inbox_on_message(&((struct parity_sub *)user)->in, data, len, info);
}

static void par_on_event(void *user, const rdps_event *ev)
{
    if (ev->type == RDPS_EVENT_LOSS)
        ((struct parity_sub *)user)->loss_events++;
}

/*
 * Subscribers b and c drop 5 % of the data frames they receive, each its own (seeds 3 and 5);
 * with parity_blocks they NAK counts per block, and the publisher's parity datagrams rebuild what
 * each lacks: every message in order, exactly once, at both; parity did the repairs.
 * `parity_blocks` 0 at the subscribers: the same run repaired by retransmission.
 * `c_drops_parity`: subscriber c loses no data but its loss generator drops every PARITY
 * datagram it receives (loss_frame_types 1 << RDPS_FRAME_PARITY, rate 1): it hears the parity
 * the publisher multicasts for b, drops it (loss_dropped_rx) and rebuilds nothing.
 */
static void parity_run(uint32_t parity_blocks, bool c_drops_parity)
{
    struct rdps_loopback_fabric *fabric;
    rdps_ctx_t *a, *sub_ctx[2];
    assert_int_equal(rdps__loopback_fabric_create(&fabric), 0);
    assert_int_equal(test_loopback_ctx(fabric, NULL, 0, &a), 0);
    for (int k = 0; k < 2; k++) {
        rdps_config lossy;
        rdps_config_init(&lossy);
        lossy.announce_interval_ms = 1000;
        lossy.loss_rx_rate = 0.05;
        lossy.loss_frame_types = 1u << RDPS_FRAME_DATA;
        lossy.loss_seed = 3 + 2 * (uint64_t)k;
        lossy.parity_blocks = parity_blocks;
        if (c_drops_parity && k == 1) {
            lossy.loss_rx_rate = 1.0;
            lossy.loss_frame_types = 1u << RDPS_FRAME_PARITY;
        }
        assert_int_equal(test_loopback_ctx(fabric, &lossy, 0, &sub_ctx[k]), 0);
    }
    struct parity_sub ps[2];
    memset(ps, 0, sizeof(ps));
    rdps_sub_t *sub[2];
    rdps_sub_opts sopts = {.reliable = 1, .on_event = par_on_event};
    for (int k = 0; k < 2; k++) {
        sopts.event_user = &ps[k];
        assert_int_equal(
            rdps_sub_create(sub_ctx[k], "rel.parity", par_on_message, &ps[k], &sopts, &sub[k]), 0);
    }
    rdps_pub_t *pub;
    rdps_pub_opts popts = {.reliable = 1, .ring_bytes = 4u << 20, .parity_k = 16};
    assert_int_equal(rdps_pub_create(a, "rel.parity", &popts, &pub), 0);
    /* Both subscribers announced and reporting before the data: a group of two. */
    uint64_t until = rdps__clock_monotonic_ns() + 5000000000ull;
    rdps_counters pc;
    do {
        for (int r = 0; r < 3; r++) {
            assert_true(rdps_ctx_poll(a, 0) >= 0);
            assert_true(rdps_ctx_poll(sub_ctx[0], 0) >= 0);
            assert_true(rdps_ctx_poll(sub_ctx[1], 0) >= 0);
        }
        rdps_pub_counters(pub, &pc);
    } while (rdps_pub_subscriber_count(pub) < 2 && rdps__clock_monotonic_ns() < until);
    enum { N = 3000 };
    uint8_t buf[600];
    for (uint32_t i = 0; i < N; i++) {
        size_t len = test_message_fill(buf, i, 4 + (i * 131u) % (sizeof(buf) - 4));
        int rc;
        while ((rc = rdps_pub_send(pub, buf, len)) == RDPS_EAGAIN) {
            assert_true(rdps_ctx_poll(a, 0) >= 0);
            assert_true(rdps_ctx_poll(sub_ctx[0], 0) >= 0);
            assert_true(rdps_ctx_poll(sub_ctx[1], 0) >= 0);
        }
        assert_int_equal(rc, 0);
        assert_true(rdps_ctx_poll(a, 0) >= 0);
        assert_true(rdps_ctx_poll(sub_ctx[0], 0) >= 0);
        assert_true(rdps_ctx_poll(sub_ctx[1], 0) >= 0);
    }
    until = rdps__clock_monotonic_ns() + 20000000000ull;
    while ((ps[0].in.next_index < N || ps[1].in.next_index < N) &&
           rdps__clock_monotonic_ns() < until) {
        assert_true(rdps_ctx_wait(a, 1) >= 0);
        assert_true(rdps_ctx_wait(sub_ctx[0], 1) >= 0);
        assert_true(rdps_ctx_wait(sub_ctx[1], 1) >= 0);
    }
    rdps_pub_counters(pub, &pc);
    for (int k = 0; k < 2; k++) {
        rdps_counters sc;
        rdps_sub_counters(sub[k], &sc);
        assert_int_equal(ps[k].in.next_index, N);
        assert_int_equal(ps[k].in.count, N);
        assert_int_equal(ps[k].in.backwards, 0);
        assert_int_equal(ps[k].in.corrupt, 0);
        assert_int_equal(ps[k].loss_events, 0);
        assert_true(sc.loss_dropped_rx > 0);
        print_message("subscriber %d: dropped %llu, recovered %llu, rebuilt from parity %llu\n", k,
                      (unsigned long long)sc.loss_dropped_rx, (unsigned long long)sc.recovered,
                      (unsigned long long)sc.parity_rebuilt);
        if (c_drops_parity && k == 1) {
            /* Every drop was a parity datagram: c lost no data, so nothing to recover. */
            assert_true(sc.loss_dropped_rx <= pc.parity_sent);
            assert_int_equal(sc.parity_rebuilt, 0);
            assert_int_equal(sc.recovered, 0);
        } else if (parity_blocks != 0)
            /* How many of the losses parity heals depends on how the three contexts' polls
             * interleave on real clocks (0.4 to 0.8 of them over 40 runs); the rest are the
             * tail of a burst or blocks asked for by sequence. */
            assert_true(sc.parity_rebuilt > sc.loss_dropped_rx / 4);
        else
            assert_int_equal(sc.parity_rebuilt, 0);
    }
    print_message("publisher: %llu parity datagrams (%llu bytes), %llu retransmissions, %llu "
                  "repair bytes\n",
                  (unsigned long long)pc.parity_sent, (unsigned long long)pc.parity_bytes,
                  (unsigned long long)pc.retransmits, (unsigned long long)pc.repair_bytes);
    if (parity_blocks != 0)
        assert_true(pc.parity_sent > 0 && pc.parity_bytes == pc.parity_sent * 1024u);
    else
        assert_int_equal(pc.parity_sent, 0);
    assert_true(pc.repair_bytes >= pc.parity_bytes);
    rdps_ctx_destroy(a);
    rdps_ctx_destroy(sub_ctx[0]);
    rdps_ctx_destroy(sub_ctx[1]);
    rdps__loopback_fabric_destroy(fabric);
}

static void test_parity_repairs_two_subscribers(void **state)
{
    (void)state;
    parity_run(32, false);
}

static void test_subscribers_without_parity_get_retransmissions(void **state)
{
    (void)state;
    parity_run(0, false);
}

/* The loss generator's PARITY bit: a subscriber's ctx drops the parity datagrams it receives. */
static void test_loss_generator_drops_parity(void **state)
{
    (void)state;
    parity_run(32, true);
}

/* parity_k must be a power of two in 2..128, and only on a reliable publisher; parity_proactive
 * at most parity_k (so none without it), named by the error. */
static void test_parity_k_checked(void **state)
{
    (void)state;
    struct test_pair f;
    assert_int_equal(test_pair_open(&f, NULL, 0), 0);
    rdps_pub_t *pub;
    static const uint32_t bad[] = {1, 3, 48, 256};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        rdps_pub_opts o = {.reliable = 1, .parity_k = bad[i]};
        assert_int_equal(rdps_pub_create(f.a, "rel.k", &o, &pub), RDPS_EINVAL);
    }
    rdps_pub_opts plain = {.parity_k = 64};
    assert_int_equal(rdps_pub_create(f.a, "rel.k", &plain, &pub), RDPS_EINVAL);
    static const uint32_t bad_share[][2] = {{0, 1}, {16, 17}, {64, 65}}; /* {k, proactive} */
    for (size_t i = 0; i < sizeof(bad_share) / sizeof(bad_share[0]); i++) {
        rdps_pub_opts o = {
            .reliable = 1, .parity_k = bad_share[i][0], .parity_proactive = bad_share[i][1]};
        assert_int_equal(rdps_pub_create(f.a, "rel.k", &o, &pub), RDPS_EINVAL);
        assert_non_null(strstr(rdps_last_error_message(), "parity_proactive"));
    }
    rdps_pub_opts unrel = {.parity_proactive = 1};
    assert_int_equal(rdps_pub_create(f.a, "rel.k", &unrel, &pub), RDPS_EINVAL);
    assert_non_null(strstr(rdps_last_error_message(), "parity_proactive"));
    rdps_pub_opts good = {.reliable = 1, .parity_k = 16, .parity_proactive = 16};
    assert_int_equal(rdps_pub_create(f.a, "rel.k", &good, &pub), 0);
    rdps_pub_destroy(pub);
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.parity_blocks = 4097;
    rdps_ctx_t *ctx = NULL;
    assert_int_equal(test_loopback_ctx(f.fabric, &cfg, 0, &ctx), RDPS_EINVAL);
    test_pair_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parity_repairs_two_subscribers),
        cmocka_unit_test(test_subscribers_without_parity_get_retransmissions),
        cmocka_unit_test(test_loss_generator_drops_parity),
        cmocka_unit_test(test_parity_k_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
