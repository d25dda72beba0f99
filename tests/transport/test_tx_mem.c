/* SPDX-License-Identifier: BSD-2-Clause */
/* test_tx_mem.c - registered caller memory and destinations by source, over loopback and the loss
 * interceptor: zero-copy submits, completion cookies, back-pressure, source_dest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rdps_loopback.h"
#include "rdps_loss.h"

#include <string.h>

#define GROUP 7u

struct fixture {
    struct rdps_loopback_fabric *fabric;
    struct rdps_transport *a, *b, *c;
    const struct rdps_dest *to_b, *to_c, *group;
    uint8_t ring[4096];
    struct rdps_tx_mem *mem;
};

static int setup(void **state)
{
    static struct fixture fx;
    struct rdps_loopback_config cfg = {
        .max_payload = 256, .send_slots = 8, .recv_slots = 16, .sq_depth = 8};
    memset(&fx, 0, sizeof(fx));
    assert_int_equal(rdps__loopback_fabric_create(&fx.fabric), 0);
    assert_int_equal(rdps__loopback_create(fx.fabric, &cfg, &fx.a), 0);
    assert_int_equal(rdps__loopback_create(fx.fabric, &cfg, &fx.b), 0);
    assert_int_equal(rdps__loopback_create(fx.fabric, &cfg, &fx.c), 0);
    assert_int_equal(rdps__loopback_dest(fx.b, &fx.to_b), 0);
    assert_int_equal(rdps__loopback_dest(fx.c, &fx.to_c), 0);
    assert_int_equal(rdps__loopback_group_dest(fx.fabric, GROUP, &fx.group), 0);
    assert_int_equal(rdps__loopback_join(fx.b, GROUP), 0);
    assert_int_equal(rdps__loopback_join(fx.c, GROUP), 0);
    assert_int_equal(rdps__transport_mem_register(fx.a, fx.ring, sizeof(fx.ring), &fx.mem), 0);
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    /* A region left registered is freed by destroy (ASan checks that nothing leaks). */
    fx->a->ops->destroy(fx->a);
    fx->b->ops->destroy(fx->b);
    fx->c->ops->destroy(fx->c);
    rdps__loopback_fabric_destroy(fx->fabric);
    return 0;
}

/* Receives everything waiting on t; checks each datagram is `len` bytes of `fill`; returns count.
 */
static int recv_all(struct rdps_transport *t, uint8_t fill, uint32_t len)
{
    struct rdps_rx_datagram rx[16];
    int n = t->ops->poll(t, rx, 16);
    assert_true(n >= 0);
    for (int i = 0; i < n; i++) {
        assert_int_equal(rx[i].len, len);
        for (uint32_t k = 0; k < len; k++)
            assert_int_equal(rx[i].data[k], fill);
    }
    t->ops->rx_release(t, rx, n);
    return n;
}

static void test_register_errors(void **state)
{
    struct fixture *fx = *state;
    struct rdps_tx_mem *m = NULL;
    uint8_t other[64];
    assert_int_equal(rdps__transport_mem_register(fx->a, NULL, 64, &m), RDPS_EINVAL);
    assert_int_equal(rdps__transport_mem_register(fx->a, other, 0, &m), RDPS_EINVAL);
    assert_int_equal(rdps__transport_mem_register(fx->b, other, sizeof(other), &m), 0);
    /* A region of another transport is refused by submit and by deregister. */
    const struct rdps_dest *d[1] = {fx->to_c};
    assert_int_equal(rdps__transport_submit_mem(fx->a, m, 0, 8, d, 1, 1), RDPS_EINVAL);
    assert_int_equal(rdps__transport_mem_deregister(fx->a, m), RDPS_EINVAL);
    assert_int_equal(rdps__transport_mem_deregister(fx->b, m), 0);
    assert_int_equal(rdps__transport_mem_deregister(fx->b, NULL), 0);
}

/* The bytes are read when flush() delivers them, and `completed` moves only on the next poll(). */
static void test_zero_copy_and_completion(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *d[1] = {fx->to_b};
    memset(fx->ring, 0x11, 100);
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 0, 100, d, 1, 1), 0);
    /* Not copied at submit: a write before flush is what goes out (as on a device). */
    memset(fx->ring, 0x22, 100);
    assert_int_equal(fx->mem->submitted, 1);
    assert_int_equal(rdps__tx_mem_completed(fx->mem), 0);
    assert_int_equal(rdps__transport_mem_deregister(fx->a, fx->mem), RDPS_EBUSY);
    assert_int_equal(fx->a->ops->flush(fx->a), 0);
    assert_int_equal(rdps__tx_mem_completed(fx->mem), 0); /* sent, completion not reaped yet */
    assert_int_equal(recv_all(fx->b, 0x22, 100), 1);
    /* The slot may be overwritten once the sender's poll reported the completion. */
    struct rdps_rx_datagram rx[1];
    assert_int_equal(fx->a->ops->poll(fx->a, rx, 1), 0);
    assert_int_equal(rdps__tx_mem_completed(fx->mem), 1);
    memset(fx->ring, 0x33, 100);
    assert_int_equal(recv_all(fx->b, 0x33, 100), 0); /* nothing re-read after completion */
    assert_int_equal(rdps__transport_mem_deregister(fx->a, fx->mem), 0);
    fx->mem = NULL;
}

static void test_multicast_and_multi_destination(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *grp[1] = {fx->group};
    const struct rdps_dest *two[2] = {fx->to_b, fx->to_c};
    struct rdps_rx_datagram rx[1];
    memset(fx->ring + 1000, 0x44, 200);
    memset(fx->ring + 2000, 0x55, 256);
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 1000, 200, grp, 1, 10), 0);
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 2000, 256, two, 2, 11), 0);
    assert_int_equal(fx->mem->inflight, 3);
    assert_int_equal(fx->a->ops->flush(fx->a), 0);
    assert_int_equal(fx->a->ops->poll(fx->a, rx, 1), 0);
    assert_int_equal(rdps__tx_mem_completed(fx->mem), 11);
    assert_int_equal(fx->mem->inflight, 0);
    struct rdps_rx_datagram got[4];
    for (int who = 0; who < 2; who++) {
        struct rdps_transport *t = who == 0 ? fx->b : fx->c;
        assert_int_equal(t->ops->poll(t, got, 4), 2);
        assert_int_equal(got[0].len, 200);
        assert_int_equal(got[0].data[199], 0x44);
        assert_int_equal(got[1].len, 256);
        assert_int_equal(got[1].data[255], 0x55);
        t->ops->rx_release(t, got, 2);
    }
}

/* Pool sends and region sends share one queue and arrive in submit order. */
static void test_mixed_chain_in_order(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *d[1] = {fx->to_b};
    struct rdps_tx_buf buf;
    fx->ring[0] = 'A';
    fx->ring[1] = 'C';
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 0, 1, d, 1, 1), 0);
    assert_int_equal(fx->a->ops->claim(fx->a, &buf), 0);
    buf.data[0] = 'B';
    assert_int_equal(fx->a->ops->submit(fx->a, &buf, 1, d, 1), 0);
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 1, 1, d, 1, 2), 0);
    assert_int_equal(fx->a->ops->flush(fx->a), 0);
    struct rdps_rx_datagram rx[4];
    assert_int_equal(fx->b->ops->poll(fx->b, rx, 4), 3);
    assert_int_equal(rx[0].data[0], 'A');
    assert_int_equal(rx[1].data[0], 'B');
    assert_int_equal(rx[2].data[0], 'C');
    fx->b->ops->rx_release(fx->b, rx, 3);
}

static void test_submit_errors(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *d[1] = {fx->to_b};
    const struct rdps_dest *none[1] = {NULL};
    size_t size = sizeof(fx->ring);
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 0, 257, d, 1, 1), RDPS_EMSGSIZE);
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, size - 10, 11, d, 1, 1),
                     RDPS_EINVAL);
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, size + 1, 0, d, 1, 1), RDPS_EINVAL);
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 0, 8, d, 0, 1), RDPS_EINVAL);
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 0, 8, none, 1, 1), RDPS_EINVAL);
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, size - 10, 10, d, 1, 5), 0);
    /* Cookies must grow: equal or lower is refused, nothing queued. */
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 0, 8, d, 1, 5), RDPS_EINVAL);
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 0, 8, d, 1, 4), RDPS_EINVAL);
    assert_int_equal(fx->mem->submitted, 5);
    assert_int_equal(fx->mem->inflight, 1);
    struct rdps_transport_stats st;
    fx->a->ops->get_stats(fx->a, &st);
    assert_int_equal(st.tx_outstanding, 1);
}

/* A full send queue refuses with RDPS_EAGAIN before queuing anything; room returns after poll. */
static void test_backpressure(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *three[3] = {fx->to_b, fx->to_c, fx->group};
    const struct rdps_dest *d[1] = {fx->to_b};
    uint64_t cookie = 0;
    /* sq_depth 8: two submits of three requests fit, the third does not. */
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 0, 16, three, 3, ++cookie), 0);
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 0, 16, three, 3, ++cookie), 0);
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 0, 16, three, 3, cookie + 1),
                     RDPS_EAGAIN);
    assert_int_equal(fx->mem->submitted, 2);
    assert_int_equal(fx->mem->inflight, 6);
    struct rdps_transport_stats st;
    fx->a->ops->get_stats(fx->a, &st);
    assert_int_equal(st.tx_outstanding, 6);
    assert_int_equal(st.tx_backpressure, 1);
    /* Flushed but not reaped: still no room (the device still owns the requests). */
    assert_int_equal(fx->a->ops->flush(fx->a), 0);
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 0, 16, three, 3, cookie + 1),
                     RDPS_EAGAIN);
    struct rdps_rx_datagram rx[1];
    assert_int_equal(fx->a->ops->poll(fx->a, rx, 1), 0);
    assert_int_equal(rdps__tx_mem_completed(fx->mem), 2);
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 0, 16, three, 3, ++cookie), 0);
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 0, 16, d, 1, ++cookie), 0);
    assert_int_equal(fx->a->ops->flush(fx->a), 0);
    /* b got 2 + 2 unicast and 3 multicast datagrams. */
    assert_int_equal(recv_all(fx->b, fx->ring[0], 16), 7);
}

/* A peer known only by the source of a datagram already released is reachable by source_dest. */
static void test_source_dest(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *d[1] = {fx->to_b};
    struct rdps_rx_datagram rx[1];
    fx->ring[0] = 'q';
    assert_int_equal(rdps__transport_submit_mem(fx->a, fx->mem, 0, 1, d, 1, 1), 0);
    assert_int_equal(fx->a->ops->flush(fx->a), 0);
    assert_int_equal(fx->b->ops->poll(fx->b, rx, 1), 1);
    rdps_source src;
    memset(&src, 0, sizeof(src));
    memcpy(src.gid, rx[0].src_gid, 16);
    src.has_gid = 1;
    src.qpn = rx[0].src_qpn;
    fx->b->ops->rx_release(fx->b, rx, 1);

    const struct rdps_dest *back = NULL;
    assert_int_equal(rdps__transport_source_dest(fx->b, &src, &back), 0);
    struct rdps_tx_buf buf;
    assert_int_equal(fx->b->ops->claim(fx->b, &buf), 0);
    buf.data[0] = 'n';
    assert_int_equal(fx->b->ops->submit(fx->b, &buf, 1, &back, 1), 0);
    assert_int_equal(fx->b->ops->flush(fx->b), 0);
    assert_int_equal(fx->a->ops->poll(fx->a, rx, 1), 1);
    assert_int_equal(rx[0].data[0], 'n');
    assert_int_equal(rx[0].src_qpn, rdps__loopback_qpn(fx->b));
    fx->a->ops->rx_release(fx->a, rx, 1);

    /* The same source again: the same destination. A GID that is not the endpoint's is refused. */
    const struct rdps_dest *again = NULL;
    assert_int_equal(rdps__transport_source_dest(fx->b, &src, &again), 0);
    assert_ptr_equal(again, back);
    src.gid[15] ^= 1;
    assert_int_equal(rdps__transport_source_dest(fx->b, &src, &again), RDPS_ENOENT);
    assert_null(again);
    src.gid[15] ^= 1;
    src.qpn = 999;
    assert_int_equal(rdps__transport_source_dest(fx->b, &src, &again), RDPS_ENOENT);
    src.qpn = 0;
    assert_int_equal(rdps__transport_source_dest(fx->b, &src, &again), RDPS_EINVAL);
}

/*
 * The completion rules on their own: requests released out of submit order
 * (inline at post, dropped) never move `completed` past a request still in
 * flight; the last release brings it to the last cookie submitted.
 */
static void test_completion_rules(void **state)
{
    (void)state;
    struct rdps_tx_mem m;
    memset(&m, 0, sizeof(m));
    /* Cookie 1 (two requests), 2 (sent inline at post), 3: posted in that order. */
    m.inflight = 4;
    m.submitted = 3;
    rdps__tx_mem_release(&m, 0); /* cookie 2's inline request, released at post */
    assert_int_equal(m.completed, 0);
    rdps__tx_mem_release(&m, 0); /* cookie 1's first request completes */
    assert_int_equal(m.completed, 0);
    rdps__tx_mem_release(&m, 1); /* cookie 1's last */
    assert_int_equal(m.completed, 1);
    rdps__tx_mem_release(&m, 3);
    assert_int_equal(m.completed, 3);
    assert_int_equal(m.inflight, 0);
    /* A submit dropped before queuing completes at once when nothing is in flight... */
    rdps__tx_mem_skip(&m, 4);
    assert_int_equal(m.completed, 4);
    /* ...else when the requests before it are done. */
    m.inflight = 1;
    m.submitted = 5;
    rdps__tx_mem_skip(&m, 6);
    assert_int_equal(m.completed, 4);
    rdps__tx_mem_release(&m, 5);
    assert_int_equal(m.completed, 6);
}

/* The loss interceptor forwards every new op; a dropped submit_mem still completes its cookie. */
static void test_through_loss_interceptor(void **state)
{
    struct fixture *fx = *state;
    struct rdps_transport *lossy = NULL;
    struct rdps_loss_config lc = {
        .seed = 3, .rate = 0.0, .type_mask = 0xffffu, .on_send = true, .on_recv = false};
    assert_int_equal(rdps__loss_transport_create(fx->a, &lc, &lossy), 0);
    fx->a = lossy; /* destroyed with it by teardown */
    struct rdps_tx_mem *m = NULL;
    uint8_t mem[512];
    memset(mem, 0x66, sizeof(mem));
    assert_int_equal(rdps__transport_mem_register(lossy, mem, sizeof(mem), &m), 0);
    const struct rdps_dest *d[1] = {fx->to_b};
    assert_int_equal(rdps__transport_submit_mem(lossy, m, 0, 64, d, 1, 1), 0);
    assert_int_equal(lossy->ops->flush(lossy), 0);
    assert_int_equal(recv_all(fx->b, 0x66, 64), 1);

    /* Every frame type dropped from now on: nothing arrives, the cookie completes anyway. */
    struct rdps_loss_gen *g = rdps__loss_transport_send_gen(lossy);
    for (unsigned type = 0; type < RDPS_LOSS_MAX_TYPES; type++)
        assert_int_equal(rdps__loss_gen_set_rate(g, type, 1.0), 0);
    assert_int_equal(rdps__transport_submit_mem(lossy, m, 0, 64, d, 1, 2), 0);
    assert_int_equal(lossy->ops->flush(lossy), 0);
    struct rdps_rx_datagram rx[1];
    assert_int_equal(lossy->ops->poll(lossy, rx, 1), 0);
    assert_int_equal(rdps__tx_mem_completed(m), 2);
    assert_int_equal(recv_all(fx->b, 0x66, 64), 0);
    struct rdps_transport_stats st;
    lossy->ops->get_stats(lossy, &st);
    assert_int_equal(st.loss_dropped_tx, 1);
    /* Bad submits get the inner transport's answer, not a silent drop. */
    assert_int_equal(rdps__transport_submit_mem(lossy, m, 0, 64, d, 1, 2), RDPS_EINVAL);
    assert_int_equal(rdps__transport_submit_mem(lossy, m, 0, 300, d, 1, 3), RDPS_EMSGSIZE);

    /* source_dest is forwarded. */
    rdps_source src;
    memset(&src, 0, sizeof(src));
    rdps__loopback_gid(fx->c, src.gid);
    src.has_gid = 1;
    src.qpn = rdps__loopback_qpn(fx->c);
    const struct rdps_dest *to_c = NULL;
    assert_int_equal(rdps__transport_source_dest(lossy, &src, &to_c), 0);
    assert_ptr_equal(to_c, fx->to_c);
    assert_int_equal(rdps__transport_mem_deregister(lossy, m), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_register_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zero_copy_and_completion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_multicast_and_multi_destination, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mixed_chain_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_submit_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backpressure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_dest, setup, teardown),
        cmocka_unit_test(test_completion_rules),
        cmocka_unit_test_setup_teardown(test_through_loss_interceptor, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
