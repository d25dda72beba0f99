/* SPDX-License-Identifier: BSD-2-Clause */
/* test_reliable_hostile.c - reliable publishers through the API over loopback against a forging
 * host (issue 28, audit of 2026-11-28 findings 1 and 18): discovery announcements of receivers
 * that never report, and the largest message a small ring takes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discovery.h"
#include "pubsub_test_util.h"

#define MS 1000000ull
#define US 1000ull

static uint64_t fake_now = 1000000000ull;
static uint64_t fake_clock(void *user)
{
    (void)user;
    return fake_now;
}

static void count_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)data;
    (void)len;
    (void)info;
    (*(uint64_t *)user)++;
}

/* A raw endpoint on the fabric: the forger (its own GID and QPN, as every endpoint). */
struct forger {
    struct rdps_transport *t;
    uint8_t gid[16];
    uint32_t qpn;
};

static void forger_open(struct rdps_loopback_fabric *fabric, struct forger *fg)
{
    assert_int_equal(rdps__loopback_create(fabric, NULL, &fg->t), 0);
    rdps__loopback_gid(fg->t, fg->gid);
    fg->qpn = rdps__loopback_qpn(fg->t);
}

/* Announces a reliable subscriber of `topic` (session and receiver id `id`) on the control group.
 * The body names the forger's own GID and QPN, or (`lie`) another endpoint's GID. */
static void forger_announce(struct forger *fg, struct rdps_loopback_fabric *fabric,
                            uint32_t control_group, const char *topic, uint32_t id, bool lie)
{
    struct rdps_announce a = {
        .role = RDPS_ROLE_SUBSCRIBER,
        .topic_id = rdps_topic_id(topic),
        .group = 0xefc00707,
        .session_id = id,
        .qpn = fg->qpn,
        .reliable = true,
        .receiver_id = id,
        .interval_ms = 1000,
    };
    strcpy(a.topic, topic);
    memcpy(a.gid, fg->gid, 16);
    if (lie)
        a.gid[15] ^= 0x55;
    uint8_t body[RDPS_ANNOUNCE_MAX_BYTES], frame[LOOPBACK_MAX_DATAGRAM];
    int blen = rdps__announce_encode(&a, body, sizeof(body));
    assert_true(blen > 0);
    int len =
        rdps__frame_encode_announce(frame, sizeof(frame), id, a.topic_id, 1, body, (size_t)blen, 0);
    assert_true(len > 0);
    const struct rdps_dest *dest;
    assert_int_equal(rdps__loopback_group_dest(fabric, control_group, &dest), 0);
    struct rdps_tx_buf buf;
    struct rdps_rx_datagram none[1];
    fg->t->ops->poll(fg->t, none, 0); /* its earlier sends' buffers come back */
    assert_int_equal(fg->t->ops->claim(fg->t, &buf), 0);
    memcpy(buf.data, frame, (size_t)len);
    assert_int_equal(fg->t->ops->submit(fg->t, &buf, (uint32_t)len, &dest, 1), 0);
    assert_int_equal(fg->t->ops->flush(fg->t), 0);
}

enum forgery { NONE, ONE_HOST, LYING_BODY, MANY_HOSTS };

/*
 * A min publisher and one honest reliable subscriber on two contexts; the application offers a
 * 64-byte message every 250 us of fake time for 10 s. From 0.5 s on, a forger announces a new
 * reliable subscriber every 400 ms (new session, receiver ids 0xBAD, 0xBAE, ...) that never
 * reports: from one endpoint, naming another's GID, or each from an endpoint of its own.
 * Returns the messages the honest subscriber received.
 */
static uint64_t run(enum forgery forgery)
{
    struct test_pair p;
    assert_int_equal(test_pair_open(&p, NULL, 0), 0);
    rdps__ctx_set_clock(p.a, fake_clock, NULL);
    rdps__ctx_set_clock(p.b, fake_clock, NULL);
    uint64_t got = 0;
    rdps_sub_t *sub;
    rdps_pub_t *pub;
    rdps_sub_opts so = {.reliable = 1};
    rdps_pub_opts po = {.reliable = 1, .flow = RDPS_FLOW_MIN, .ring_bytes = 1u << 20};
    assert_int_equal(rdps_sub_create(p.b, "hostile.min", count_message, &got, &so, &sub), 0);
    assert_int_equal(rdps_pub_create(p.a, "hostile.min", &po, &pub), 0);
    enum { FORGERS = 32 };
    struct forger fg[FORGERS];
    unsigned forgers = forgery == MANY_HOSTS ? FORGERS : forgery == NONE ? 0 : 1;
    for (unsigned k = 0; k < forgers; k++)
        forger_open(p.fabric, &fg[k]);
    uint8_t msg[64] = {0};
    uint64_t t0 = fake_now;
    unsigned forged = 0;
    while (fake_now < t0 + 10000 * MS) {
        fake_now += 250 * US;
        (void)rdps_pub_send(pub, msg, sizeof(msg));
        while (rdps_ctx_poll(p.a, 0) > 0 || rdps_ctx_poll(p.b, 0) > 0)
            ;
        if (forgers > 0 && fake_now >= t0 + 500 * MS + forged * 400 * MS) {
            forger_announce(&fg[forged % forgers], p.fabric,
                            rdps__ctx_of_handle(p.a)->control_group, "hostile.min", 0xBAD + forged,
                            forgery == LYING_BODY);
            forged++;
        }
    }
    rdps_counters c;
    rdps_pub_counters(pub, &c);
    rdps_pub_destroy(pub);
    rdps_sub_destroy(sub);
    for (unsigned k = 0; k < forgers; k++)
        fg[k].t->ops->destroy(fg[k].t);
    test_pair_close(&p);
    return got;
}

/* Finding 1: 12 announcement frames stopped a min publisher (the audit: 5000 messages delivered
 * in 5 s, all before the forger started). */
static void test_forged_announcements_do_not_stall_min(void **state)
{
    (void)state;
    uint64_t clean = run(NONE), one = run(ONE_HOST), lying = run(LYING_BODY),
             many = run(MANY_HOSTS);
    printf("finding 1 (API): delivered in 10 s: undisturbed %llu, forger %llu (%.2f), body naming "
           "another GID %llu (%.2f), 32 forging endpoints %llu (%.2f)\n",
           (unsigned long long)clean, (unsigned long long)one, (double)one / clean,
           (unsigned long long)lying, (double)lying / clean, (unsigned long long)many,
           (double)many / clean);
    assert_true(clean >= 39000);
    assert_true(one >= clean * 8 / 10);
    assert_true(lying >= clean * 98 / 100); /* not taken as a receiver at all */
    assert_true(many >= clean * 8 / 10);
}

/* Finding 18: rdps_pub_max_message_size() said 1 014 816 bytes for a 64 KiB ring, and a message of
 * that size was refused. */
static void test_max_message_size_fits_a_small_ring(void **state)
{
    (void)state;
    struct test_pair p;
    assert_int_equal(test_pair_open(&p, NULL, 0), 0);
    rdps_pub_t *pub;
    rdps_pub_opts po = {.reliable = 1, .ring_bytes = 64 * 1024};
    assert_int_equal(rdps_pub_create(p.a, "hostile.ring", &po, &pub), 0);
    TEST_PAIR_PUMP(&p, 3); /* the group joined */
    size_t max = rdps_pub_max_message_size(pub);
    printf("finding 18 (API): 64 KiB ring, largest message %zu bytes\n", max);
    assert_true(max <= 64 * 1024);
    assert_true(max >= 60 * LOOPBACK_PAYLOAD);
    uint8_t *buf = calloc(1, max + 1);
    assert_non_null(buf);
    assert_int_equal(rdps_pub_send(pub, buf, max), 0);
    for (int i = 0; i < 10; i++)
        rdps_ctx_poll(p.a, 0);
    assert_int_equal(rdps_pub_send(pub, buf, max + 1), RDPS_EMSGSIZE);
    free(buf);
    rdps_pub_destroy(pub);
    test_pair_close(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forged_announcements_do_not_stall_min),
        cmocka_unit_test(test_max_message_size_fits_a_small_ring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
