/* SPDX-License-Identifier: BSD-2-Clause */
/* test_verbs_mem.c - registered caller memory and destinations by source on rxe: zero-copy sends to
 * unicast and multicast, slots overwritten as soon as their completion is reported, source_dest
 * after the datagram was released, a reply-cache eviction with a send still queued. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rdps_addr.h"
#include "rdps_error.h"
#include "verbs_addr_test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>

#define GROUP_IP "239.192.77.11"
#define WAIT_MS  20000
#define SLOTS    4
#define FRAMES   300

struct node {
    struct rdps_transport *t;
    struct rdps_verbs_info info;
    struct rdps_addr *addr;
    unsigned got, corrupt; /* frames received intact / not matching their pattern */
    unsigned by_index[FRAMES];
};

static void node_open(struct node *n, uint32_t reply_entries)
{
    memset(n, 0, sizeof(*n));
    vt_open_with_addr(reply_entries, &n->t, &n->info, &n->addr);
}

static void node_close(struct node *n)
{
    vt_close_with_addr(n->t, n->addr);
}

/* Frame k: 4 bytes of k, then bytes derived from k; never all 0xEE (the scribble). */
static void frame_fill(uint8_t *p, uint32_t len, uint32_t k)
{
    memcpy(p, &k, 4);
    for (uint32_t i = 4; i < len; i++)
        p[i] = (uint8_t)((k * 13u + i * 7u + (i >> 8) + 1u) % 0xEEu);
}

static bool frame_ok(const uint8_t *p, uint32_t len, uint32_t *k_out)
{
    uint32_t k;
    if (len < 4)
        return false;
    memcpy(&k, p, 4);
    if (k >= FRAMES)
        return false;
    for (uint32_t i = 4; i < len; i++) {
        if (p[i] != (uint8_t)((k * 13u + i * 7u + (i >> 8) + 1u) % 0xEEu))
            return false;
    }
    *k_out = k;
    return true;
}

static void drain(struct node *n)
{
    struct rdps_rx_datagram rx[16];
    int got;
    rdps__addr_process(n->addr);
    while ((got = n->t->ops->poll(n->t, rx, 16)) > 0) {
        for (int i = 0; i < got; i++) {
            uint32_t k;
            if (frame_ok(rx[i].data, rx[i].len, &k)) {
                n->got++;
                n->by_index[k]++;
            } else {
                n->corrupt++;
            }
        }
        n->t->ops->rx_release(n->t, rx, got);
    }
}

static void pump(struct node *a, struct node *b, int ms)
{
    uint64_t until = vt_now_ms() + (uint64_t)ms;
    do {
        drain(a);
        drain(b);
        if (ms > 0)
            vt_sleep_ms(1);
    } while (vt_now_ms() < until);
}

/* Polls s until m's completed reaches cookie (false after WAIT_MS). */
static bool wait_completed(struct node *s, struct node *r, struct rdps_tx_mem *m, uint64_t cookie)
{
    uint64_t deadline = vt_now_ms() + WAIT_MS;
    while (rdps__tx_mem_completed(m) < cookie && vt_now_ms() < deadline)
        pump(s, r, 0);
    return rdps__tx_mem_completed(m) >= cookie;
}

/*
 * A ring of SLOTS frames in registered memory, posted from where they lie to
 * a unicast and a multicast destination in one submit. As soon as a frame's
 * completion is reported the slot is scribbled over (0xEE); every datagram
 * the receiver gets must still be the frame's original bytes. Frames of
 * max_payload bytes are DMA'd from the ring; every fifth is small enough to be
 * sent inline.
 */
static void test_ring_unicast_and_multicast(void **state)
{
    (void)state;
    struct node s, r;
    struct rdps_addr_group *rg = NULL, *sg = NULL;
    const struct rdps_dest *group = NULL, *rdest = NULL;
    struct sockaddr_in ga = {.sin_family = AF_INET};

    node_open(&s, 0);
    node_open(&r, 0);
    inet_pton(AF_INET, GROUP_IP, &ga.sin_addr);
    assert_int_equal(rdps__addr_join_start(r.addr, (struct sockaddr *)&ga, RDPS_JOIN_FULL, &rg), 0);
    assert_int_equal(
        rdps__addr_join_start(s.addr, (struct sockaddr *)&ga, RDPS_JOIN_SEND_ONLY, &sg), 0);
    uint64_t deadline = vt_now_ms() + WAIT_MS;
    while ((rdps__addr_group_state(rg, &rdest) == 0 || rdps__addr_group_state(sg, &group) == 0) &&
           vt_now_ms() < deadline)
        pump(&s, &r, 20);
    assert_int_equal(rdps__addr_group_state(sg, &group), 1);
    assert_int_equal(rdps__addr_group_state(rg, &rdest), 1);
    struct ibv_ah *ah = vt_make_ah(&s.info, &r.info);
    assert_non_null(ah);
    struct rdps_dest uni = {.ah = ah, .remote_qpn = r.info.qpn, .remote_qkey = r.info.qkey};
    const struct rdps_dest *dests[2] = {&uni, group};

    uint32_t stride = s.info.max_payload;
    uint8_t *ring = calloc(SLOTS, stride);
    assert_non_null(ring);
    struct rdps_tx_mem *m = NULL;
    assert_int_equal(rdps__transport_mem_register(s.t, ring, (size_t)SLOTS * stride, &m), 0);
    uint32_t small = s.info.max_inline >= 64 ? 64 : s.info.max_inline;
    printf("# max_payload %u, inline up to %u\n", stride, s.info.max_inline);

    unsigned inline_frames = 0;
    for (uint32_t k = 0; k < FRAMES; k++) {
        uint8_t *slot = ring + (size_t)(k % SLOTS) * stride;
        uint32_t len = k % 5 == 4 && small >= 4 ? small : stride;
        inline_frames += len == small;
        frame_fill(slot, len, k);
        int err;
        while ((err = rdps__transport_submit_mem(s.t, m, (size_t)(k % SLOTS) * stride, len, dests,
                                                 2, k + 1)) == RDPS_EAGAIN)
            pump(&s, &r, 0);
        assert_int_equal(err, 0);
        assert_int_equal(s.t->ops->flush(s.t), 0);
        /*
         * Inline data left with the post; DMA'd data is the device's until its
         * completion is polled (rxe happens to copy during the post, so only
         * this check, not the bytes, shows a completion reported too early).
         */
        if (len <= s.info.max_inline)
            assert_int_equal(rdps__tx_mem_completed(m), k + 1);
        else
            assert_true(rdps__tx_mem_completed(m) < k + 1);
        /* The caller's rule: overwrite only once the completion was reported; then at once. */
        assert_true(wait_completed(&s, &r, m, k + 1));
        memset(slot, 0xEE, len);
        drain(&r);
    }
    deadline = vt_now_ms() + WAIT_MS;
    while (r.got + r.corrupt < 2 * FRAMES && vt_now_ms() < deadline)
        pump(&s, &r, 5);
    unsigned twice = 0;
    for (uint32_t k = 0; k < FRAMES; k++)
        twice += r.by_index[k] == 2;
    printf("# %u frames (%u inline) x 2 destinations: %u intact, %u corrupt, %u frames got both\n",
           FRAMES, inline_frames, r.got, r.corrupt, twice);
    assert_int_equal(r.corrupt, 0);
    assert_int_equal(r.got, 2 * FRAMES);
    assert_int_equal(twice, FRAMES);
    assert_int_equal(m->inflight, 0);
    assert_int_equal(rdps__transport_mem_deregister(s.t, m), 0);

    ibv_destroy_ah(ah);
    free(ring);
    rdps__addr_leave(sg);
    rdps__addr_leave(rg);
    node_close(&s);
    node_close(&r);
}

static void source_of(const struct rdps_rx_datagram *rx, rdps_source *src)
{
    memset(src, 0, sizeof(*src));
    if (rx->has_src_gid)
        memcpy(src->gid, rx->src_gid, 16);
    src->has_gid = rx->has_src_gid;
    src->lid = rx->has_src_gid ? 0 : rx->src_lid;
    src->qpn = rx->src_qpn;
}

/* Sends frame k from a pool buffer to dest. */
static int send_frame(struct node *n, const struct rdps_dest *dest, uint32_t k, uint32_t len)
{
    struct rdps_tx_buf buf;
    int err = n->t->ops->claim(n->t, &buf);
    if (err < 0)
        return err;
    frame_fill(buf.data, len, k);
    return n->t->ops->submit(n->t, &buf, len, &dest, 1);
}

/*
 * r learns a's and b's sources from their datagrams and releases them; later
 * it answers both through source_dest. With one reply-cache entry, asking for
 * b evicts a's AH while a send to a is still queued (not even posted): the AH
 * must wait in retirement until that send completed, and the send arrives.
 */
static void test_source_dest_and_eviction_with_send_queued(void **state)
{
    (void)state;
    struct node a, b, r;
    node_open(&a, 0);
    node_open(&b, 0);
    node_open(&r, 1);
    struct ibv_ah *ah_a = vt_make_ah(&a.info, &r.info), *ah_b = vt_make_ah(&b.info, &r.info);
    assert_non_null(ah_a);
    assert_non_null(ah_b);
    struct rdps_dest to_r_a = {.ah = ah_a, .remote_qpn = r.info.qpn, .remote_qkey = r.info.qkey};
    struct rdps_dest to_r_b = {.ah = ah_b, .remote_qpn = r.info.qpn, .remote_qkey = r.info.qkey};
    rdps_source src_a, src_b;
    struct rdps_rx_datagram rx[4];

    /* Learn each source from one datagram, then release it. */
    assert_int_equal(send_frame(&a, &to_r_a, 1, 100), 0);
    assert_int_equal(a.t->ops->flush(a.t), 0);
    assert_int_equal(send_frame(&b, &to_r_b, 2, 100), 0);
    assert_int_equal(b.t->ops->flush(b.t), 0);
    int got = 0;
    uint64_t deadline = vt_now_ms() + WAIT_MS;
    while (got < 2 && vt_now_ms() < deadline) {
        int n = r.t->ops->poll(r.t, rx + got, 4 - got);
        assert_true(n >= 0);
        got += n;
    }
    assert_int_equal(got, 2);
    bool first_is_a = rx[0].src_qpn == a.info.qpn;
    source_of(&rx[first_is_a ? 0 : 1], &src_a);
    source_of(&rx[first_is_a ? 1 : 0], &src_b);
    assert_int_equal(src_a.qpn, a.info.qpn);
    assert_int_equal(src_b.qpn, b.info.qpn);
    r.t->ops->rx_release(r.t, rx, 2);

    struct rdps_transport_stats st;
    r.t->ops->get_stats(r.t, &st);
    assert_int_equal(st.reply_ah_created, 0); /* receiving alone built nothing */

    /* source_dest to a: the datagram arrives at a. */
    const struct rdps_dest *d = NULL;
    assert_int_equal(rdps__transport_source_dest(r.t, &src_a, &d), 0);
    assert_int_equal(d->remote_qpn, a.info.qpn);
    assert_int_equal(send_frame(&r, d, 10, r.info.max_payload), 0);
    /* Queued only. Now b's destination evicts a's AH (one entry). */
    const struct rdps_dest *db = NULL;
    assert_int_equal(rdps__transport_source_dest(r.t, &src_b, &db), 0);
    r.t->ops->get_stats(r.t, &st);
    assert_int_equal(st.reply_evictions, 1);
    assert_int_equal(st.ah_retiring, 1); /* a's AH waits for the queued send */
    assert_int_equal(send_frame(&r, db, 11, r.info.max_payload), 0);
    assert_int_equal(r.t->ops->flush(r.t), 0);

    deadline = vt_now_ms() + WAIT_MS;
    while ((a.got == 0 || b.got == 0) && vt_now_ms() < deadline) {
        pump(&a, &b, 1);
        drain(&r);
    }
    assert_int_equal(a.got, 1);
    assert_int_equal(a.by_index[10], 1);
    assert_int_equal(b.got, 1);
    assert_int_equal(b.by_index[11], 1);
    assert_int_equal(a.corrupt + b.corrupt, 0);
    /*
     * Pool sends are signaled one in signal_every: a send from registered
     * memory signals its chain, so its completion covers the two before it and
     * a's AH is destroyed once poll reaps it.
     */
    uint8_t *mem = calloc(1, r.info.max_payload);
    assert_non_null(mem);
    struct rdps_tx_mem *m = NULL;
    assert_int_equal(rdps__transport_mem_register(r.t, mem, r.info.max_payload, &m), 0);
    frame_fill(mem, r.info.max_payload, 12);
    assert_int_equal(rdps__transport_submit_mem(r.t, m, 0, r.info.max_payload, &db, 1, 1), 0);
    assert_int_equal(r.t->ops->flush(r.t), 0);
    deadline = vt_now_ms() + WAIT_MS;
    do {
        drain(&r);
        r.t->ops->get_stats(r.t, &st);
    } while (st.ah_retiring > 0 && vt_now_ms() < deadline);
    assert_int_equal(st.ah_retiring, 0);
    assert_int_equal(rdps__tx_mem_completed(m), 1);
    assert_int_equal(rdps__transport_mem_deregister(r.t, m), 0);
    free(mem);

    /* a again (evicts b, whose send completed: destroyed at once) and a reply_dest to the same
     * source shares the entry. */
    assert_int_equal(rdps__transport_source_dest(r.t, &src_a, &d), 0);
    r.t->ops->get_stats(r.t, &st);
    assert_int_equal(st.reply_ah_created, 3);
    assert_int_equal(st.ah_retiring, 0);
    assert_int_equal(send_frame(&a, &to_r_a, 3, 100), 0);
    assert_int_equal(a.t->ops->flush(a.t), 0);
    got = 0;
    deadline = vt_now_ms() + WAIT_MS;
    while (got == 0 && vt_now_ms() < deadline)
        got = r.t->ops->poll(r.t, rx, 1);
    assert_int_equal(got, 1);
    const struct rdps_dest *via_reply = NULL;
    assert_int_equal(rdps__transport_reply(r.t, &rx[0], &via_reply), 0);
    assert_ptr_equal(via_reply, d);
    r.t->ops->rx_release(r.t, rx, 1);
    r.t->ops->get_stats(r.t, &st);
    assert_int_equal(st.reply_ah_created, 3);

    /* Sources that cannot be addressed are refused with a clear error. */
    rdps_source bad = src_a;
    bad.qpn = 0;
    assert_int_equal(rdps__transport_source_dest(r.t, &bad, &d), RDPS_EINVAL);
    assert_null(d);

    ibv_destroy_ah(ah_a);
    ibv_destroy_ah(ah_b);
    node_close(&a);
    node_close(&b);
    node_close(&r);
}

/* A region cannot be deregistered while a request still references it; destroy frees the rest. */
static void test_deregister_busy(void **state)
{
    (void)state;
    struct node s, r;
    node_open(&s, 0);
    node_open(&r, 0);
    struct ibv_ah *ah = vt_make_ah(&s.info, &r.info);
    assert_non_null(ah);
    struct rdps_dest uni = {.ah = ah, .remote_qpn = r.info.qpn, .remote_qkey = r.info.qkey};
    const struct rdps_dest *dests[1] = {&uni};
    size_t len = 1u << 20;
    uint8_t *mem = calloc(1, len);
    assert_non_null(mem);
    struct rdps_tx_mem *m = NULL, *left = NULL;
    assert_int_equal(rdps__transport_mem_register(s.t, mem, len, &m), 0);
    assert_int_equal(rdps__transport_mem_register(s.t, mem, 4096, &left), 0);
    frame_fill(mem, s.info.max_payload, 5);
    assert_int_equal(rdps__transport_submit_mem(s.t, m, 0, s.info.max_payload, dests, 1, 1), 0);
    assert_int_equal(rdps__transport_mem_deregister(s.t, m), RDPS_EBUSY); /* queued */
    assert_int_equal(rdps__transport_submit_mem(s.t, m, len - 8, 16, dests, 1, 2), RDPS_EINVAL);
    assert_int_equal(rdps__transport_submit_mem(s.t, m, 0, s.info.max_payload + 1, dests, 1, 2),
                     RDPS_EMSGSIZE);
    assert_int_equal(s.t->ops->flush(s.t), 0);
    assert_true(wait_completed(&s, &r, m, 1));
    assert_int_equal(rdps__transport_mem_deregister(s.t, m), 0);
    uint64_t deadline = vt_now_ms() + WAIT_MS;
    while (r.got == 0 && vt_now_ms() < deadline)
        pump(&s, &r, 1);
    assert_int_equal(r.by_index[5], 1);
    ibv_destroy_ah(ah);
    node_close(&s); /* deregisters `left` */
    node_close(&r);
    free(mem);
}

int main(void)
{
    if (!vt_have_device()) {
        printf("no RDMA device: skipped\n");
        return VT_SKIP;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_unicast_and_multicast),
        cmocka_unit_test(test_source_dest_and_eviction_with_send_queued),
        cmocka_unit_test(test_deregister_busy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
