/* SPDX-License-Identifier: BSD-2-Clause */
/* test_verbs_ud.c - verbs UD transport on rxe: sizes 1..max_payload, EMSGSIZE, reply path, RQ
 * exhaustion, back-pressure, event fd. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rdps_error.h"
#include "rdps_loss.h"
#include "verbs_test_util.h"

#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>

struct pair {
    struct rdps_transport *a, *b;
    struct rdps_verbs_info ia, ib;
    struct ibv_ah *ah_ab;
    struct rdps_dest to_b;
};

static int pair_setup(void **state)
{
    static struct pair p;
    struct rdps_verbs_config cfg = {.device_name = vt_device()};
    memset(&p, 0, sizeof(p));
    int err = rdps__verbs_transport_create(&cfg, &p.a);
    if (err == 0)
        err = rdps__verbs_transport_create(&cfg, &p.b);
    if (err < 0) {
        fprintf(stderr, "transport create: %s: %s\n", rdps_err_name(err),
                rdps_last_error_message());
        return -1;
    }
    assert_int_equal(rdps__verbs_transport_info(p.a, &p.ia), 0);
    assert_int_equal(rdps__verbs_transport_info(p.b, &p.ib), 0);
    p.ah_ab = vt_make_ah(&p.ia, &p.ib);
    assert_non_null(p.ah_ab);
    p.to_b.ah = p.ah_ab;
    p.to_b.remote_qpn = p.ib.qpn;
    p.to_b.remote_qkey = p.ib.qkey;
    *state = &p;
    return 0;
}

static int pair_teardown(void **state)
{
    struct pair *p = *state;
    /* Destroy the senders' transports after their AHs. */
    ibv_destroy_ah(p->ah_ab);
    p->a->ops->destroy(p->a);
    p->b->ops->destroy(p->b);
    return 0;
}

static void fill_pattern(uint8_t *buf, uint32_t len, uint32_t seed)
{
    for (uint32_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(seed * 31u + i * 7u + (i >> 8));
}

static int check_pattern(const uint8_t *buf, uint32_t len, uint32_t seed)
{
    for (uint32_t i = 0; i < len; i++) {
        if (buf[i] != (uint8_t)(seed * 31u + i * 7u + (i >> 8)))
            return 0;
    }
    return 1;
}

static int send_one(struct rdps_transport *t, const struct rdps_dest *dest, uint32_t len,
                    uint32_t seed)
{
    struct rdps_tx_buf buf;
    const struct rdps_dest *dests[1] = {dest};
    int err = t->ops->claim(t, &buf);
    if (err < 0)
        return err;
    fill_pattern(buf.data, len <= buf.capacity ? len : buf.capacity, seed);
    err = t->ops->submit(t, &buf, len, dests, 1);
    if (err < 0)
        return err;
    return t->ops->flush(t);
}

/* Polls t until one datagram arrives (or 5 s pass, under TCG everything is slow). */
static int recv_one(struct rdps_transport *t, struct rdps_rx_datagram *rx)
{
    uint64_t deadline = vt_now_ms() + 5000;
    while (vt_now_ms() < deadline) {
        int n = t->ops->poll(t, rx, 1);
        if (n != 0)
            return n;
        vt_sleep_ms(0);
    }
    return 0;
}

static void test_info(void **state)
{
    struct pair *p = *state;
    assert_true(p->ia.active_mtu_bytes >= 256);
    assert_int_equal(p->ia.max_payload, p->ia.active_mtu_bytes);
    assert_int_equal(p->a->ops->max_payload(p->a), p->ia.max_payload);
    assert_int_equal(p->ia.qkey, RDPS_DEFAULT_QKEY);
    assert_int_not_equal(p->ia.qpn, p->ib.qpn);
    assert_non_null(p->ia.qp);
    assert_non_null(p->ia.pd);
    if (p->ia.link_layer == IBV_LINK_LAYER_ETHERNET)
        assert_true(p->ia.has_bound_addr); /* RoCE v2 IPv4 GID chosen */
    printf("# %s port %u: mtu %u, max_payload %u, gid index %u, inline %u, qpn 0x%x/0x%x\n",
           p->ia.device_name, p->ia.port_num, p->ia.active_mtu_bytes, p->ia.max_payload,
           p->ia.gid_index, p->ia.max_inline, p->ia.qpn, p->ib.qpn);
}

static void test_sizes_up_to_max_payload(void **state)
{
    struct pair *p = *state;
    uint32_t max = p->ia.max_payload;
    uint32_t sizes[] = {1,       2,       16, 64, p->ia.max_inline, p->ia.max_inline + 1,
                        max / 2, max - 1, max};
    struct rdps_rx_datagram rx;

    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint32_t len = sizes[i];
        if (len == 0 || len > max)
            continue;
        assert_int_equal(send_one(p->a, &p->to_b, len, (uint32_t)i), 0);
        assert_int_equal(recv_one(p->b, &rx), 1);
        assert_int_equal(rx.len, len);
        assert_true(check_pattern(rx.data, len, (uint32_t)i));
        assert_int_equal(rx.src_qpn, p->ia.qpn);
        assert_true(rx.has_src_gid);
        assert_memory_equal(rx.src_gid, p->ia.gid.raw, 16);
        assert_int_equal(rx.src_lid, 0); /* RoCE: the GRH identifies the sender */

        /* Echo it back through the reply destination the transport builds on request. */
        const struct rdps_dest *reply = NULL;
        assert_int_equal(rdps__transport_reply(p->b, &rx, &reply), 0);
        struct rdps_tx_buf buf;
        assert_int_equal(p->b->ops->claim(p->b, &buf), 0);
        memcpy(buf.data, rx.data, rx.len);
        assert_int_equal(p->b->ops->submit(p->b, &buf, rx.len, &reply, 1), 0);
        assert_int_equal(p->b->ops->flush(p->b), 0);
        p->b->ops->rx_release(p->b, &rx, 1);
        assert_int_equal(recv_one(p->a, &rx), 1);
        assert_int_equal(rx.len, len);
        assert_true(check_pattern(rx.data, len, (uint32_t)i));
        assert_int_equal(rx.src_qpn, p->ib.qpn);
        p->a->ops->rx_release(p->a, &rx, 1);
    }
    struct rdps_transport_stats st;
    p->b->ops->get_stats(p->b, &st);
    assert_int_equal(st.rx_completion_errors, 0);
    assert_int_equal(st.tx_completion_errors, 0);
}

static void test_oversize_rejected(void **state)
{
    struct pair *p = *state;
    struct rdps_rx_datagram rx;
    char expect[64];

    rdps__clear_err();
    assert_int_equal(send_one(p->a, &p->to_b, p->ia.max_payload + 1, 1), RDPS_EMSGSIZE);
    snprintf(expect, sizeof(expect), "exceeds max_payload %u", p->ia.max_payload);
    assert_non_null(strstr(rdps_last_error_message(), expect));
    printf("# max_payload+1: %s\n", rdps_last_error_message());
    vt_sleep_ms(50);
    assert_int_equal(p->b->ops->poll(p->b, &rx, 1), 0); /* nothing went out */
}

static void test_many_reply_sources(void **state)
{
    struct pair *p = *state;
    /* Several senders to b: each gets its own cached reply destination. */
    struct rdps_verbs_config cfg = {.device_name = vt_device()};
    struct rdps_transport *c;
    struct rdps_verbs_info ic;
    struct rdps_rx_datagram rx;
    assert_int_equal(rdps__verbs_transport_create(&cfg, &c), 0);
    assert_int_equal(rdps__verbs_transport_info(c, &ic), 0);
    struct ibv_ah *ah = vt_make_ah(&ic, &p->ib);
    assert_non_null(ah);
    struct rdps_dest to_b = {.ah = ah, .remote_qpn = p->ib.qpn, .remote_qkey = p->ib.qkey};
    const struct rdps_dest *reply_a = NULL, *reply_c = NULL;
    for (int round = 0; round < 3; round++) {
        assert_int_equal(send_one(p->a, &p->to_b, 8, 1), 0);
        assert_int_equal(recv_one(p->b, &rx), 1);
        const struct rdps_dest *reply = NULL;
        assert_int_equal(rdps__transport_reply(p->b, &rx, &reply), 0);
        if (reply_a != NULL)
            assert_ptr_equal(reply, reply_a); /* cached, not rebuilt */
        reply_a = reply;
        p->b->ops->rx_release(p->b, &rx, 1);
        assert_int_equal(send_one(c, &to_b, 8, 2), 0);
        assert_int_equal(recv_one(p->b, &rx), 1);
        assert_int_equal(rx.src_qpn, ic.qpn);
        assert_int_equal(rdps__transport_reply(p->b, &rx, &reply), 0);
        if (reply_c != NULL)
            assert_ptr_equal(reply, reply_c);
        reply_c = reply;
        p->b->ops->rx_release(p->b, &rx, 1);
    }
    assert_ptr_not_equal(reply_a, reply_c);
    assert_int_equal(reply_c->remote_qpn, ic.qpn);
    ibv_destroy_ah(ah);
    c->ops->destroy(c);
}

/*
 * Receiving from many sources builds no address handle: one is created only
 * when a reply is asked for, cached per source, and the cache is bounded
 * (reply_cache_entries) with least-recently-used eviction.
 */
static void test_no_ah_until_reply(void **state)
{
    struct pair *p = *state;
    enum { NSRC = 5, PER_SRC = 2 };
    struct rdps_verbs_config rcfg = {.device_name = vt_device(), .reply_cache_entries = 2};
    struct rdps_verbs_config scfg = {.device_name = vt_device(), .recv_slots = 16};
    struct rdps_transport *r, *src[NSRC];
    struct rdps_verbs_info ir, is;
    struct ibv_ah *ahs[NSRC];
    struct rdps_rx_datagram rx[NSRC * PER_SRC];
    struct rdps_transport_stats st;
    (void)p;

    assert_int_equal(rdps__verbs_transport_create(&rcfg, &r), 0);
    assert_int_equal(rdps__verbs_transport_info(r, &ir), 0);
    for (int i = 0; i < NSRC; i++) {
        assert_int_equal(rdps__verbs_transport_create(&scfg, &src[i]), 0);
        assert_int_equal(rdps__verbs_transport_info(src[i], &is), 0);
        ahs[i] = vt_make_ah(&is, &ir);
        assert_non_null(ahs[i]);
        struct rdps_dest to_r = {.ah = ahs[i], .remote_qpn = ir.qpn, .remote_qkey = ir.qkey};
        for (int k = 0; k < PER_SRC; k++)
            assert_int_equal(send_one(src[i], &to_r, 16, (uint32_t)(i * PER_SRC + k)), 0);
    }
    int held = 0;
    while (held < NSRC * PER_SRC && recv_one(r, &rx[held]) == 1)
        held++;
    assert_int_equal(held, NSRC * PER_SRC);
    r->ops->get_stats(r, &st);
    assert_int_equal(st.rx_datagrams, NSRC * PER_SRC);
    assert_int_equal(st.reply_ah_created, 0); /* five sources seen, no AH built */

    /* Replies to three distinct sources: three AHs, the cache of two evicts one. */
    const struct rdps_dest *d[NSRC] = {0};
    uint32_t seen_qpn[NSRC] = {0};
    int nsrc = 0;
    for (int i = 0; i < held && nsrc < 3; i++) {
        bool dup = false;
        for (int j = 0; j < nsrc; j++)
            dup |= seen_qpn[j] == rx[i].src_qpn;
        if (dup)
            continue;
        assert_int_equal(rdps__transport_reply(r, &rx[i], &d[nsrc]), 0);
        assert_int_equal(d[nsrc]->remote_qpn, rx[i].src_qpn);
        seen_qpn[nsrc++] = rx[i].src_qpn;
    }
    assert_int_equal(nsrc, 3);
    r->ops->get_stats(r, &st);
    assert_int_equal(st.reply_ah_created, 3);
    assert_int_equal(st.reply_evictions, 1);
    assert_int_equal(st.reply_refused, 0);
    /* The newest source again: a cache hit, nothing built; and the reply really arrives. */
    for (int i = 0; i < held; i++) {
        if (rx[i].src_qpn != seen_qpn[2])
            continue;
        const struct rdps_dest *again = NULL;
        assert_int_equal(rdps__transport_reply(r, &rx[i], &again), 0);
        assert_ptr_equal(again, d[2]);
        break;
    }
    r->ops->get_stats(r, &st);
    assert_int_equal(st.reply_ah_created, 3);
    assert_int_equal(send_one(r, d[2], 8, 77), 0);
    struct rdps_rx_datagram back;
    bool answered = false;
    for (int i = 0; i < NSRC && !answered; i++) {
        struct rdps_verbs_info ii;
        assert_int_equal(rdps__verbs_transport_info(src[i], &ii), 0);
        if (ii.qpn != seen_qpn[2])
            continue;
        assert_int_equal(recv_one(src[i], &back), 1);
        assert_int_equal(back.src_qpn, ir.qpn);
        src[i]->ops->rx_release(src[i], &back, 1);
        answered = true;
    }
    assert_true(answered);
    r->ops->rx_release(r, rx, held);
    for (int i = 0; i < NSRC; i++) {
        ibv_destroy_ah(ahs[i]);
        src[i]->ops->destroy(src[i]);
    }
    r->ops->destroy(r);
}

/* An AH retired while a send that names it is in flight: the send still arrives. */
static void test_retire_ah_with_send_in_flight(void **state)
{
    struct pair *p = *state;
    struct rdps_rx_datagram rx;
    assert_int_equal(rdps__verbs_transport_retire_ah(p->a, NULL), RDPS_EINVAL);
    for (int i = 0; i < 40; i++) {
        struct ibv_ah *ah = vt_make_ah(&p->ia, &p->ib);
        assert_non_null(ah);
        struct rdps_dest d = {.ah = ah, .remote_qpn = p->ib.qpn, .remote_qkey = p->ib.qkey};
        assert_int_equal(send_one(p->a, &d, 200, (uint32_t)i), 0);
        assert_int_equal(rdps__verbs_transport_retire_ah(p->a, ah), 0);
        assert_int_equal(recv_one(p->b, &rx), 1);
        assert_true(check_pattern(rx.data, 200, (uint32_t)i));
        p->b->ops->rx_release(p->b, &rx, 1);
    }
    struct rdps_transport_stats st;
    p->a->ops->get_stats(p->a, &st);
    assert_int_equal(st.tx_completion_errors, 0);
}

static void test_recv_queue_exhaustion(void **state)
{
    struct pair *p = *state;
    struct rdps_verbs_config cfg = {.device_name = vt_device(), .recv_slots = 4};
    struct rdps_transport *small;
    struct rdps_verbs_info is;
    struct rdps_rx_datagram rx[16];
    const int burst = 64;

    assert_int_equal(rdps__verbs_transport_create(&cfg, &small), 0);
    assert_int_equal(rdps__verbs_transport_info(small, &is), 0);
    struct ibv_ah *ah = vt_make_ah(&p->ia, &is);
    assert_non_null(ah);
    struct rdps_dest to_small = {.ah = ah, .remote_qpn = is.qpn, .remote_qkey = is.qkey};
    const struct rdps_dest *dests[1] = {&to_small};
    for (int i = 0; i < burst; i++) {
        struct rdps_tx_buf buf;
        int err;
        while ((err = p->a->ops->claim(p->a, &buf)) == RDPS_EAGAIN)
            p->a->ops->poll(p->a, rx, 0);
        assert_int_equal(err, 0);
        buf.data[0] = (uint8_t)i;
        assert_int_equal(p->a->ops->submit(p->a, &buf, 32, dests, 1), 0);
        if (i % 16 == 15)
            assert_int_equal(p->a->ops->flush(p->a), 0);
    }
    vt_sleep_ms(500); /* let rxe deliver (or drop) the whole burst */
    int got = 0, n;
    while ((n = small->ops->poll(small, rx, 16)) > 0) {
        got += n;
        small->ops->rx_release(small, rx, n);
        vt_sleep_ms(20);
    }
    assert_true(n >= 0);
    struct rdps_transport_stats st;
    small->ops->get_stats(small, &st);
    printf("# burst %d into 4 receive buffers: %d received, rx_queue_empty %llu\n", burst, got,
           (unsigned long long)st.rx_queue_empty);
    assert_true(got >= 4 && got < burst);
    assert_true(st.rx_queue_empty >= 1);
    /* Still healthy afterwards: re-posted buffers take new datagrams. */
    assert_int_equal(send_one(p->a, &to_small, 5, 9), 0);
    assert_int_equal(recv_one(small, rx), 1);
    assert_int_equal(rx[0].len, 5);
    small->ops->rx_release(small, rx, 1);
    small->ops->destroy(small);
    ibv_destroy_ah(ah);
}

static void test_send_backpressure(void **state)
{
    struct pair *p = *state;
    struct rdps_verbs_config cfg = {.device_name = vt_device(), .send_slots = 8, .max_inline = 0};
    struct rdps_transport *s;
    struct rdps_verbs_info is;
    struct rdps_tx_buf bufs[9];
    struct rdps_rx_datagram rx[16];

    assert_int_equal(rdps__verbs_transport_create(&cfg, &s), 0);
    assert_int_equal(rdps__verbs_transport_info(s, &is), 0);
    struct ibv_ah *ah = vt_make_ah(&is, &p->ib);
    struct rdps_dest to_b = {.ah = ah, .remote_qpn = p->ib.qpn, .remote_qkey = p->ib.qkey};
    const struct rdps_dest *dests[1] = {&to_b};
    for (int i = 0; i < 8; i++)
        assert_int_equal(s->ops->claim(s, &bufs[i]), 0);
    assert_int_equal(s->ops->claim(s, &bufs[8]), RDPS_EAGAIN);
    for (int i = 0; i < 8; i++) {
        bufs[i].data[0] = (uint8_t)i;
        assert_int_equal(s->ops->submit(s, &bufs[i], 600 < is.max_payload ? 600 : 100, dests, 1),
                         0);
    }
    assert_int_equal(s->ops->flush(s), 0);
    /*
     * The pool ran low, so the chain's last WR was signaled: a sender that
     * sleeps on the event fd is woken by that send completion.
     */
    uint64_t deadline = vt_now_ms() + 5000;
    struct pollfd pfd = {.fd = s->ops->event_fd(s), .events = POLLIN};
    int err, wakeups = 0;
    while ((err = s->ops->claim(s, &bufs[8])) == RDPS_EAGAIN && vt_now_ms() < deadline) {
        assert_true(s->ops->arm(s) >= 0);
        assert_int_equal(s->ops->poll(s, rx, 0), 0); /* re-check after arming */
        if ((err = s->ops->claim(s, &bufs[8])) != RDPS_EAGAIN)
            break;
        wakeups += poll(&pfd, 1, 1000);
    }
    assert_int_equal(err, 0);
    printf("# back-pressured sender woken %d time(s) by the event fd\n", wakeups);
    s->ops->abort(s, &bufs[8]);
    struct rdps_transport_stats st;
    s->ops->get_stats(s, &st);
    assert_true(st.tx_backpressure >= 1);
    assert_int_equal(st.tx_datagrams, 8);
    int got = 0;
    deadline = vt_now_ms() + 5000;
    while (got < 8 && vt_now_ms() < deadline) {
        int n = p->b->ops->poll(p->b, rx, 16);
        assert_true(n >= 0);
        for (int i = 0; i < n; i++)
            assert_int_equal(rx[i].data[0], got + i); /* in order */
        got += n;
        p->b->ops->rx_release(p->b, rx, n);
    }
    assert_int_equal(got, 8);
    ibv_destroy_ah(ah);
    s->ops->destroy(s);
}

static void test_event_fd(void **state)
{
    struct pair *p = *state;
    struct rdps_rx_datagram rx;
    int fd = p->b->ops->event_fd(p->b);
    struct pollfd pfd = {.fd = fd, .events = POLLIN};

    assert_true(fd >= 0);
    /* Arm, check nothing is pending, then sleep on the fd until a datagram arrives. */
    assert_true(p->b->ops->arm(p->b) >= 0);
    assert_int_equal(p->b->ops->poll(p->b, &rx, 1), 0);
    assert_int_equal(send_one(p->a, &p->to_b, 10, 3), 0);
    assert_int_equal(poll(&pfd, 1, 5000), 1);
    assert_true(p->b->ops->arm(p->b) >= 0);
    assert_int_equal(p->b->ops->poll(p->b, &rx, 1), 1);
    p->b->ops->rx_release(p->b, &rx, 1);
    /* Nothing more: after re-arming, the fd stays quiet. */
    assert_true(p->b->ops->arm(p->b) >= 0);
    assert_int_equal(p->b->ops->poll(p->b, &rx, 1), 0);
    assert_int_equal(poll(&pfd, 1, 100), 0);
    enum rdps_transport_event_type type;
    while (p->b->ops->next_event(p->b, &type) == 1)
        printf("# pending async event %d\n", (int)type);
}

static void test_bad_config(void **state)
{
    (void)state;
    struct rdps_transport *t = NULL;
    struct rdps_verbs_config cfg = {.device_name = "no_such_dev0"};
    assert_int_equal(rdps__verbs_transport_create(&cfg, &t), RDPS_ENODEV);
    assert_null(t);
    assert_non_null(strstr(rdps_last_error_message(), "no_such_dev0"));
    struct rdps_verbs_config bad_port = {.device_name = vt_device(), .port_num = 9};
    assert_true(rdps__verbs_transport_create(&bad_port, &t) < 0);
    printf("# port 9: %s\n", rdps_last_error_message());
    struct sockaddr_in nowhere = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x0a0b0c0d)};
    struct rdps_verbs_config bad_addr = {.bind_addr = (struct sockaddr *)&nowhere};
    assert_int_equal(rdps__verbs_transport_create(&bad_addr, &t), RDPS_EADDRNOTAVAIL);
    printf("# 10.11.12.13: %s\n", rdps_last_error_message());
    assert_int_equal(rdps__verbs_transport_info(NULL, NULL), RDPS_EINVAL);
}

static void test_info_through_interceptor(void **state)
{
    struct pair *p = *state;
    struct rdps_transport *inner, *lossy;
    struct rdps_verbs_config cfg = {.device_name = vt_device()};
    struct rdps_loss_config loss = {.seed = 1, .rate = 1.0, .type_mask = 1u << 1, .on_send = true};
    struct rdps_verbs_info info;
    struct rdps_rx_datagram rx;

    assert_int_equal(rdps__verbs_transport_create(&cfg, &inner), 0);
    assert_int_equal(rdps__loss_transport_create(inner, &loss, &lossy), 0);
    assert_int_equal(rdps__verbs_transport_info(lossy, &info), 0);
    assert_ptr_equal(info.qp->context, info.verbs);
    struct ibv_ah *ah = vt_make_ah(&info, &p->ib);
    struct rdps_dest to_b = {.ah = ah, .remote_qpn = p->ib.qpn, .remote_qkey = p->ib.qkey};
    /* Type 1 frames are all dropped by the interceptor, type 2 frames pass. */
    for (uint8_t type = 1; type <= 2; type++) {
        struct rdps_tx_buf buf;
        const struct rdps_dest *dests[1] = {&to_b};
        assert_int_equal(lossy->ops->claim(lossy, &buf), 0);
        buf.data[0] = 0x52;
        buf.data[1] = type;
        assert_int_equal(lossy->ops->submit(lossy, &buf, 2, dests, 1), 0);
        assert_int_equal(lossy->ops->flush(lossy), 0);
    }
    assert_int_equal(recv_one(p->b, &rx), 1);
    assert_int_equal(rx.data[1], 2);
    p->b->ops->rx_release(p->b, &rx, 1);
    vt_sleep_ms(100);
    assert_int_equal(p->b->ops->poll(p->b, &rx, 1), 0);
    struct rdps_transport_stats st;
    lossy->ops->get_stats(lossy, &st);
    assert_int_equal(st.loss_dropped_tx, 1);
    assert_int_equal(st.tx_datagrams, 1);
    ibv_destroy_ah(ah);
    lossy->ops->destroy(lossy);
}

static void test_bind_by_address(void **state)
{
    struct pair *p = *state;
    if (!p->ia.has_bound_addr) {
        skip();
        return;
    }
    struct rdps_verbs_config cfg = {.bind_addr = (struct sockaddr *)&p->ia.bound_addr};
    struct rdps_transport *t;
    struct rdps_verbs_info it;
    assert_int_equal(rdps__verbs_transport_create(&cfg, &t), 0);
    assert_int_equal(rdps__verbs_transport_info(t, &it), 0);
    assert_string_equal(it.device_name, p->ia.device_name);
    assert_int_equal(it.port_num, p->ia.port_num);
    assert_int_equal(it.gid_index, p->ia.gid_index);
    assert_true(it.has_bound_addr);
    t->ops->destroy(t);
}

int main(void)
{
    if (!vt_have_device()) {
        fprintf(stderr, "test_verbs_ud: no RDMA device, skipped\n");
        return VT_SKIP;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info),
        cmocka_unit_test(test_sizes_up_to_max_payload),
        cmocka_unit_test(test_oversize_rejected),
        cmocka_unit_test(test_many_reply_sources),
        cmocka_unit_test(test_no_ah_until_reply),
        cmocka_unit_test(test_retire_ah_with_send_in_flight),
        cmocka_unit_test(test_recv_queue_exhaustion),
        cmocka_unit_test(test_send_backpressure),
        cmocka_unit_test(test_event_fd),
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_info_through_interceptor),
        cmocka_unit_test(test_bind_by_address),
    };
    return cmocka_run_group_tests(tests, pair_setup, pair_teardown);
}
