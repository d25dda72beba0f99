/* SPDX-License-Identifier: BSD-2-Clause */
/* test_loopback.c - loopback transport semantics: unicast, multicast, back-pressure,
 * release/re-post, events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rdps_loopback.h"

#include <poll.h>
#include <string.h>

struct fixture {
    struct rdps_loopback_fabric *fabric;
    struct rdps_transport *a, *b, *c;
};

static int setup(void **state)
{
    static struct fixture fx;
    struct rdps_loopback_config cfg = {.max_payload = 256, .send_slots = 8, .recv_slots = 4};
    memset(&fx, 0, sizeof(fx));
    assert_int_equal(rdps__loopback_fabric_create(&fx.fabric), 0);
    assert_int_equal(rdps__loopback_create(fx.fabric, &cfg, &fx.a), 0);
    assert_int_equal(rdps__loopback_create(fx.fabric, &cfg, &fx.b), 0);
    assert_int_equal(rdps__loopback_create(fx.fabric, &cfg, &fx.c), 0);
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    fx->a->ops->destroy(fx->a);
    fx->b->ops->destroy(fx->b);
    fx->c->ops->destroy(fx->c);
    rdps__loopback_fabric_destroy(fx->fabric);
    return 0;
}

/* Claims, fills with `fill`, submits to the given dests and flushes. */
static int send_bytes(struct rdps_transport *t, uint8_t fill, uint32_t len,
                      const struct rdps_dest *const *dests, unsigned ndest)
{
    struct rdps_tx_buf buf;
    int err = t->ops->claim(t, &buf);
    if (err < 0)
        return err;
    memset(buf.data, fill, len <= buf.capacity ? len : buf.capacity);
    err = t->ops->submit(t, &buf, len, dests, ndest);
    if (err < 0)
        return err;
    return t->ops->flush(t);
}

static void test_unicast_and_reply(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *to_b;
    struct rdps_rx_datagram rx[4];

    assert_int_equal(rdps__loopback_dest(fx->b, &to_b), 0);
    assert_int_equal(fx->a->ops->max_payload(fx->a), 256);
    assert_int_equal(send_bytes(fx->a, 0xab, 100, &to_b, 1), 0);
    assert_int_equal(fx->c->ops->poll(fx->c, rx, 4), 0); /* not addressed to c */
    assert_int_equal(fx->b->ops->poll(fx->b, rx, 4), 1);
    assert_int_equal(rx[0].len, 100);
    assert_int_equal(rx[0].data[0], 0xab);
    assert_int_equal(rx[0].data[99], 0xab);
    assert_int_equal(rx[0].src_qpn, rdps__loopback_qpn(fx->a));
    assert_true(rx[0].has_src_gid);

    /* Answer through the reply destination (asked for while the datagram is held). */
    const struct rdps_dest *reply = NULL;
    assert_int_equal(rdps__transport_reply(fx->b, &rx[0], &reply), 0);
    assert_non_null(reply);
    fx->b->ops->rx_release(fx->b, rx, 1);
    assert_int_equal(send_bytes(fx->b, 0x11, 3, &reply, 1), 0);
    assert_int_equal(fx->a->ops->poll(fx->a, rx, 4), 1);
    assert_int_equal(rx[0].len, 3);
    assert_int_equal(rx[0].src_qpn, rdps__loopback_qpn(fx->b));
    fx->a->ops->rx_release(fx->a, rx, 1);

    struct rdps_transport_stats st;
    fx->a->ops->get_stats(fx->a, &st);
    assert_int_equal(st.tx_datagrams, 1);
    assert_int_equal(st.tx_bytes, 100);
    assert_int_equal(st.rx_datagrams, 1);
    assert_int_equal(st.rx_bytes, 3);
}

static void test_max_payload_enforced(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *to_b;
    struct rdps_rx_datagram rx[4];

    assert_int_equal(rdps__loopback_dest(fx->b, &to_b), 0);
    assert_int_equal(send_bytes(fx->a, 1, 256, &to_b, 1), 0);
    assert_int_equal(send_bytes(fx->a, 1, 257, &to_b, 1), RDPS_EMSGSIZE);
    assert_non_null(strstr(rdps_last_error_message(), "exceeds max_payload 256"));
    assert_int_equal(fx->b->ops->poll(fx->b, rx, 4), 1);
    assert_int_equal(rx[0].len, 256);
    fx->b->ops->rx_release(fx->b, rx, 1);
    /* The refused buffer went back to the pool: all 8 can be claimed again. */
    struct rdps_tx_buf bufs[8];
    fx->a->ops->poll(fx->a, rx, 4);
    for (int i = 0; i < 8; i++)
        assert_int_equal(fx->a->ops->claim(fx->a, &bufs[i]), 0);
    for (int i = 0; i < 8; i++)
        fx->a->ops->abort(fx->a, &bufs[i]);
}

static void test_multicast_members(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *group7, *group8;
    struct rdps_rx_datagram rx[4];

    assert_int_equal(rdps__loopback_group_dest(fx->fabric, 7, &group7), 0);
    assert_int_equal(rdps__loopback_group_dest(fx->fabric, 8, &group8), 0);
    assert_int_equal(rdps__loopback_join(fx->b, 7), 0);
    assert_int_equal(rdps__loopback_join(fx->c, 7), 0);
    assert_int_equal(rdps__loopback_join(fx->c, 8), 0);
    assert_int_equal(send_bytes(fx->a, 7, 10, &group7, 1), 0);
    assert_int_equal(send_bytes(fx->a, 8, 10, &group8, 1), 0);
    assert_int_equal(fx->b->ops->poll(fx->b, rx, 4), 1);
    assert_int_equal(rx[0].data[0], 7);
    fx->b->ops->rx_release(fx->b, rx, 1);
    assert_int_equal(fx->c->ops->poll(fx->c, rx, 4), 2);
    assert_int_equal(rx[0].data[0], 7);
    assert_int_equal(rx[1].data[0], 8);
    fx->c->ops->rx_release(fx->c, rx, 2);
    assert_int_equal(fx->a->ops->poll(fx->a, rx, 4), 0); /* a is not a member */

    /* Joins are reference-counted: c joined 7 twice leaves twice. */
    assert_int_equal(rdps__loopback_join(fx->c, 7), 0);
    assert_int_equal(rdps__loopback_leave(fx->c, 7), 0);
    assert_int_equal(send_bytes(fx->a, 9, 10, &group7, 1), 0);
    assert_int_equal(fx->c->ops->poll(fx->c, rx, 4), 1);
    fx->c->ops->rx_release(fx->c, rx, 1);
    assert_int_equal(rdps__loopback_leave(fx->c, 7), 0);
    assert_int_equal(rdps__loopback_leave(fx->c, 7), RDPS_ENOENT);
    assert_int_equal(send_bytes(fx->a, 9, 10, &group7, 1), 0);
    assert_int_equal(fx->c->ops->poll(fx->c, rx, 4), 0);
    assert_int_equal(fx->b->ops->poll(fx->b, rx, 4), 2);
    fx->b->ops->rx_release(fx->b, rx, 2);

    /* A sender that is a member receives its own multicast, as on rxe. */
    assert_int_equal(rdps__loopback_join(fx->a, 8), 0);
    assert_int_equal(send_bytes(fx->a, 8, 10, &group8, 1), 0);
    assert_int_equal(fx->a->ops->poll(fx->a, rx, 4), 1);
    assert_int_equal(rx[0].src_qpn, rdps__loopback_qpn(fx->a));
    fx->a->ops->rx_release(fx->a, rx, 1);
    assert_int_equal(fx->c->ops->poll(fx->c, rx, 4), 1);
    fx->c->ops->rx_release(fx->c, rx, 1);
}

static void test_multi_destination_submit(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *dests[2];
    struct rdps_rx_datagram rx[4];

    assert_int_equal(rdps__loopback_dest(fx->b, &dests[0]), 0);
    assert_int_equal(rdps__loopback_dest(fx->c, &dests[1]), 0);
    assert_int_equal(send_bytes(fx->a, 5, 20, dests, 2), 0);
    assert_int_equal(fx->b->ops->poll(fx->b, rx, 4), 1);
    fx->b->ops->rx_release(fx->b, rx, 1);
    assert_int_equal(fx->c->ops->poll(fx->c, rx, 4), 1);
    fx->c->ops->rx_release(fx->c, rx, 1);
    struct rdps_transport_stats st;
    fx->a->ops->get_stats(fx->a, &st);
    assert_int_equal(st.tx_datagrams, 2);
}

/* Group datagrams say so (to_multicast); unicast ones do not. */
static void test_to_multicast_flag(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *group, *to_b;
    struct rdps_rx_datagram rx[4];

    assert_int_equal(rdps__loopback_group_dest(fx->fabric, 7, &group), 0);
    assert_int_equal(rdps__loopback_dest(fx->b, &to_b), 0);
    assert_int_equal(rdps__loopback_join(fx->b, 7), 0);
    assert_int_equal(send_bytes(fx->a, 1, 10, &group, 1), 0);
    assert_int_equal(send_bytes(fx->a, 2, 10, &to_b, 1), 0);
    assert_int_equal(fx->b->ops->poll(fx->b, rx, 4), 2);
    assert_true(rx[0].to_multicast);
    assert_false(rx[1].to_multicast);
    fx->b->ops->rx_release(fx->b, rx, 2);
}

/* A fabric without multicast loses every group datagram and keeps unicast; the mode applies to
 * every endpoint at once and can be turned back on. */
static void test_fabric_without_multicast(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *group, *to_c;
    struct rdps_rx_datagram rx[4];

    assert_int_equal(rdps__loopback_fabric_multicast(fx->fabric), RDPS_LOOPBACK_MCAST_ON);
    assert_int_equal(rdps__loopback_group_dest(fx->fabric, 7, &group), 0);
    assert_int_equal(rdps__loopback_dest(fx->c, &to_c), 0);
    assert_int_equal(rdps__loopback_join(fx->b, 7), 0);
    assert_int_equal(rdps__loopback_join(fx->c, 7), 0);
    rdps__loopback_fabric_set_multicast(fx->fabric, RDPS_LOOPBACK_MCAST_DROP);
    assert_int_equal(send_bytes(fx->a, 1, 10, &group, 1), 0);
    assert_int_equal(send_bytes(fx->a, 2, 10, &to_c, 1), 0);
    assert_int_equal(fx->b->ops->poll(fx->b, rx, 4), 0);
    assert_int_equal(fx->c->ops->poll(fx->c, rx, 4), 1);
    assert_int_equal(rx[0].data[0], 2);
    fx->c->ops->rx_release(fx->c, rx, 1);
    struct rdps_transport_stats st;
    fx->a->ops->get_stats(fx->a, &st);
    assert_int_equal(st.tx_datagrams, 2); /* the group datagram left the port all the same */
    rdps__loopback_fabric_set_multicast(fx->fabric, RDPS_LOOPBACK_MCAST_NO_JOIN);
    assert_int_equal(rdps__loopback_fabric_multicast(fx->fabric), RDPS_LOOPBACK_MCAST_NO_JOIN);
    assert_int_equal(send_bytes(fx->a, 3, 10, &group, 1), 0);
    assert_int_equal(fx->b->ops->poll(fx->b, rx, 4), 0);
    rdps__loopback_fabric_set_multicast(fx->fabric, RDPS_LOOPBACK_MCAST_ON);
    assert_int_equal(send_bytes(fx->a, 4, 10, &group, 1), 0);
    assert_int_equal(fx->b->ops->poll(fx->b, rx, 4), 1);
    assert_int_equal(rx[0].data[0], 4);
    fx->b->ops->rx_release(fx->b, rx, 1);
}

/* Endpoints have addresses (127.77.0.0 + number) that resolve to their destination and source;
 * anything else is unreachable. */
static void test_addresses_resolve(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *dest, *to_b;
    struct rdps_source src;
    struct rdps_rx_datagram rx[4];

    uint32_t ip_b = rdps__loopback_ipv4(fx->b);
    assert_int_equal(ip_b, RDPS_LOOPBACK_NET | rdps__loopback_qpn(fx->b));
    assert_int_equal(rdps__loopback_resolve(fx->fabric, ip_b, &dest, &src), 0);
    assert_int_equal(rdps__loopback_dest(fx->b, &to_b), 0);
    assert_ptr_equal(dest, to_b);
    assert_int_equal(src.qpn, rdps__loopback_qpn(fx->b));
    assert_true(src.has_gid);
    /* The source is what b's datagrams show. */
    const struct rdps_dest *to_a;
    assert_int_equal(rdps__loopback_dest(fx->a, &to_a), 0);
    assert_int_equal(send_bytes(fx->b, 1, 10, &to_a, 1), 0);
    assert_int_equal(fx->a->ops->poll(fx->a, rx, 4), 1);
    assert_memory_equal(rx[0].src_gid, src.gid, 16);
    fx->a->ops->rx_release(fx->a, rx, 1);
    assert_int_equal(rdps__loopback_resolve(fx->fabric, RDPS_LOOPBACK_NET | 999, &dest, NULL),
                     RDPS_EHOSTUNREACH);
    assert_int_equal(rdps__loopback_resolve(fx->fabric, 0x0a000001u, &dest, NULL),
                     RDPS_EHOSTUNREACH);
    assert_int_equal(rdps__loopback_resolve(fx->fabric, RDPS_LOOPBACK_NET, &dest, NULL),
                     RDPS_EHOSTUNREACH);
}

/* dest_acquire names the endpoint of a source; send_room counts the queue. */
static void test_acquired_dest_and_room(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *dest;
    struct rdps_source src = {.qpn = rdps__loopback_qpn(fx->c), .has_gid = 1};
    struct rdps_rx_datagram rx[4];
    rdps__loopback_gid(fx->c, src.gid);
    assert_int_equal(rdps__transport_dest_acquire(fx->a, &src, &dest), 0);
    assert_int_equal(rdps__transport_send_room(fx->a), 8);
    assert_int_equal(send_bytes(fx->a, 6, 10, &dest, 1), 0);
    assert_int_equal(rdps__transport_send_room(fx->a), 7); /* sent, not yet reaped */
    assert_int_equal(fx->c->ops->poll(fx->c, rx, 4), 1);
    fx->c->ops->rx_release(fx->c, rx, 1);
    rdps__transport_dest_release(fx->a, dest);
    src.qpn = 999;
    rdps__loopback_gid(fx->c, src.gid);
    src.gid[15] = (uint8_t)999;
    assert_true(rdps__transport_dest_acquire(fx->a, &src, &dest) < 0);
}

static void test_send_backpressure(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *to_b;
    struct rdps_tx_buf bufs[9];
    struct rdps_rx_datagram rx[4];

    assert_int_equal(rdps__loopback_dest(fx->b, &to_b), 0);
    for (int i = 0; i < 8; i++)
        assert_int_equal(fx->a->ops->claim(fx->a, &bufs[i]), 0);
    assert_int_equal(fx->a->ops->claim(fx->a, &bufs[8]), RDPS_EAGAIN);
    for (int i = 0; i < 8; i++)
        assert_int_equal(fx->a->ops->submit(fx->a, &bufs[i], 4, &to_b, 1), 0);
    assert_int_equal(fx->a->ops->flush(fx->a), 0);
    /* Sent buffers come back only when the sender polls (reaps its completions). */
    assert_int_equal(fx->a->ops->claim(fx->a, &bufs[8]), RDPS_EAGAIN);
    assert_int_equal(fx->a->ops->poll(fx->a, rx, 4), 0);
    assert_int_equal(fx->a->ops->claim(fx->a, &bufs[8]), 0);
    fx->a->ops->abort(fx->a, &bufs[8]);

    struct rdps_transport_stats st;
    fx->a->ops->get_stats(fx->a, &st);
    assert_int_equal(st.tx_backpressure, 2);
    /* b had 4 receive buffers: 4 delivered, 4 dropped and counted. */
    fx->b->ops->get_stats(fx->b, &st);
    assert_int_equal(st.rx_queue_empty, 4);
    assert_int_equal(fx->b->ops->poll(fx->b, rx, 4), 4);
    fx->b->ops->rx_release(fx->b, rx, 4);
}

static void test_send_queue_depth(void **state)
{
    (void)state;
    struct rdps_loopback_fabric *f;
    struct rdps_transport *a, *b;
    struct rdps_loopback_config cfg = {.send_slots = 8, .sq_depth = 3, .recv_slots = 16};
    const struct rdps_dest *dests[4];
    struct rdps_tx_buf buf;

    assert_int_equal(rdps__loopback_fabric_create(&f), 0);
    assert_int_equal(rdps__loopback_create(f, &cfg, &a), 0);
    assert_int_equal(rdps__loopback_create(f, &cfg, &b), 0);
    assert_int_equal(rdps__loopback_dest(b, &dests[0]), 0);
    dests[1] = dests[2] = dests[3] = dests[0];
    /* Four WRs do not fit a three-deep queue: refused, buffer returned. */
    assert_int_equal(a->ops->claim(a, &buf), 0);
    assert_int_equal(a->ops->submit(a, &buf, 1, dests, 4), RDPS_EAGAIN);
    assert_int_equal(a->ops->claim(a, &buf), 0);
    assert_int_equal(a->ops->submit(a, &buf, 1, dests, 3), 0);
    assert_int_equal(a->ops->claim(a, &buf), RDPS_EAGAIN);
    assert_int_equal(a->ops->flush(a), 0);
    struct rdps_rx_datagram rx[4];
    assert_int_equal(a->ops->poll(a, rx, 4), 0);
    assert_int_equal(a->ops->claim(a, &buf), 0);
    a->ops->abort(a, &buf);
    assert_int_equal(b->ops->poll(b, rx, 4), 3);
    b->ops->rx_release(b, rx, 3);
    a->ops->destroy(a);
    b->ops->destroy(b);
    rdps__loopback_fabric_destroy(f);
}

static void test_release_reposts(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *to_b;
    struct rdps_rx_datagram rx[4];

    assert_int_equal(rdps__loopback_dest(fx->b, &to_b), 0);
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 4; i++) {
            assert_int_equal(send_bytes(fx->a, (uint8_t)(round * 4 + i), 8, &to_b, 1), 0);
            assert_int_equal(fx->a->ops->poll(fx->a, rx, 0), 0);
        }
        assert_int_equal(fx->b->ops->poll(fx->b, rx, 4), 4);
        for (int i = 0; i < 4; i++)
            assert_int_equal(rx[i].data[0], round * 4 + i); /* in order */
        fx->b->ops->rx_release(fx->b, rx, 4);
    }
    struct rdps_transport_stats st;
    fx->b->ops->get_stats(fx->b, &st);
    assert_int_equal(st.rx_queue_empty, 0);
    assert_int_equal(st.rx_datagrams, 20);
}

static void test_event_fd_and_events(void **state)
{
    struct fixture *fx = *state;
    const struct rdps_dest *to_b;
    struct rdps_rx_datagram rx[4];
    enum rdps_transport_event_type type;
    int fd = fx->b->ops->event_fd(fx->b);
    struct pollfd pfd = {.fd = fd, .events = POLLIN};

    assert_true(fd >= 0);
    assert_int_equal(fx->b->ops->arm(fx->b), 0);
    assert_int_equal(poll(&pfd, 1, 0), 0);
    assert_int_equal(rdps__loopback_dest(fx->b, &to_b), 0);
    assert_int_equal(send_bytes(fx->a, 1, 8, &to_b, 1), 0);
    assert_int_equal(poll(&pfd, 1, 0), 1);
    assert_int_equal(fx->b->ops->poll(fx->b, rx, 4), 1);
    fx->b->ops->rx_release(fx->b, rx, 1);
    assert_int_equal(fx->b->ops->arm(fx->b), 0);
    assert_int_equal(poll(&pfd, 1, 0), 0);

    assert_int_equal(fx->b->ops->next_event(fx->b, &type), 0);
    assert_int_equal(rdps__loopback_inject_event(fx->b, RDPS_TRANSPORT_EV_PORT_DOWN), 0);
    assert_int_equal(poll(&pfd, 1, 0), 1);
    assert_int_equal(fx->b->ops->arm(fx->b), 1);
    assert_int_equal(fx->b->ops->next_event(fx->b, &type), 1);
    assert_int_equal(type, RDPS_TRANSPORT_EV_PORT_DOWN);
    assert_int_equal(fx->b->ops->next_event(fx->b, &type), 0);

    /* A fatal device error makes every data call fail. */
    assert_int_equal(rdps__loopback_inject_event(fx->b, RDPS_TRANSPORT_EV_DEVICE_FATAL), 0);
    struct rdps_tx_buf buf;
    assert_int_equal(fx->b->ops->claim(fx->b, &buf), RDPS_EDEVFATAL);
    assert_int_equal(fx->b->ops->poll(fx->b, rx, 4), RDPS_EDEVFATAL);
    assert_int_equal(fx->b->ops->next_event(fx->b, &type), 1);
    assert_int_equal(type, RDPS_TRANSPORT_EV_DEVICE_FATAL);
}

static void test_destroyed_peer_and_fabric(void **state)
{
    (void)state;
    struct rdps_loopback_fabric *f;
    struct rdps_transport *a, *b;
    const struct rdps_dest *to_b;
    struct rdps_rx_datagram rx[2];

    assert_int_equal(rdps__loopback_fabric_create(&f), 0);
    assert_int_equal(rdps__loopback_create(f, NULL, &a), 0);
    assert_int_equal(rdps__loopback_create(f, NULL, &b), 0);
    assert_int_equal(rdps__loopback_join(b, 3), 0);
    assert_int_equal(rdps__loopback_dest(b, &to_b), 0);
    b->ops->destroy(b);
    /* The destination outlives the endpoint; datagrams to it are lost, not a crash. */
    assert_int_equal(send_bytes(a, 1, 8, &to_b, 1), 0);
    assert_int_equal(a->ops->poll(a, rx, 2), 0);
    rdps__loopback_fabric_destroy(f);
    assert_int_equal(send_bytes(a, 1, 8, &to_b, 1), RDPS_ESHUTDOWN);
    a->ops->destroy(a);
    a = NULL;
    struct rdps_loopback_config bad = {.max_payload = 1u << 30};
    assert_int_equal(rdps__loopback_fabric_create(&f), 0);
    assert_int_equal(rdps__loopback_create(f, &bad, &a), RDPS_EINVAL);
    assert_null(a);
    rdps__loopback_fabric_destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_unicast_and_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_payload_enforced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_multicast_members, setup, teardown),
        cmocka_unit_test_setup_teardown(test_multi_destination_submit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_to_multicast_flag, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fabric_without_multicast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_addresses_resolve, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acquired_dest_and_room, setup, teardown),
        cmocka_unit_test_setup_teardown(test_send_backpressure, setup, teardown),
        cmocka_unit_test(test_send_queue_depth),
        cmocka_unit_test_setup_teardown(test_release_reposts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_fd_and_events, setup, teardown),
        cmocka_unit_test(test_destroyed_peer_and_fabric),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
