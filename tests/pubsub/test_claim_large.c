/* SPDX-License-Identifier: BSD-2-Clause */
/* test_claim_large.c - claims of any size up to max_message_size, written in place in one
 * contiguous buffer and sent from there, with RDPS_SEND_MORE (issue 37, row 7); through the
 * shared library only, over the loopback device (tests/pubsub/rxe_claim_large.c: real rxe). */
#include <rdps/rdps.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The bytes of message `id`: a pattern the subscriber checks byte by byte. */
static uint8_t pattern(uint32_t id, size_t i)
{
    return (uint8_t)(id * 131u + i * 7u + (i >> 8));
}

static void fill(uint8_t *p, uint32_t id, size_t len)
{
    for (size_t i = 0; i < len; i++)
        p[i] = pattern(id, i);
    if (len >= 4)
        memcpy(p, &id, 4);
}

struct inbox {
    uint32_t got, bad, fragments_max;
    size_t last_len;
};

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct inbox *in = user;
    const uint8_t *p = data;
    uint32_t id = 0;
    if (len >= 4)
        memcpy(&id, p, 4);
    for (size_t i = 4; i < len; i++)
        if (p[i] != pattern(id, i)) {
            in->bad++;
            break;
        }
    in->got++;
    in->last_len = len;
    if (info->fragments > in->fragments_max)
        in->fragments_max = info->fragments;
}

struct world {
    rdps_ctx_t *tx, *rx;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    struct inbox in;
};

static void open_world(struct world *w, const rdps_config *cfg_in, const rdps_pub_opts *po,
                       const rdps_sub_opts *so)
{
    rdps_config cfg;
    if (cfg_in != NULL) {
        cfg = *cfg_in;
    } else {
        rdps_config_init(&cfg);
        cfg.max_message_size = 4u << 20;
    }
    cfg.device = "loopback";
    cfg.stats_off = 1;
    cfg.recv_slots = 8192; /* the loopback device delivers at the sender's flush */
    memset(w, 0, sizeof(*w));
    assert_int_equal(rdps_ctx_create(&cfg, &w->tx), 0);
    assert_int_equal(rdps_ctx_create(&cfg, &w->rx), 0);
    assert_int_equal(rdps_sub_create(w->rx, "claim.large", on_msg, &w->in, so, &w->sub), 0);
    assert_int_equal(rdps_pub_create(w->tx, "claim.large", po, &w->pub), 0);
    for (int i = 0;
         i < 300 && !(rdps_pub_ready(w->pub) && rdps_pub_subscriber_count(w->pub) > 0 &&
                      (po == NULL || !po->reliable || rdps_pub_send(w->pub, "", 0) == 0));
         i++) {
        assert_true(rdps_ctx_poll(w->tx, 0) >= 0);
        assert_true(rdps_ctx_poll(w->rx, 0) >= 0);
    }
    assert_int_equal(rdps_pub_ready(w->pub), 1);
    for (int i = 0; i < 20; i++) { /* a reliable publisher's first (empty) message arrives */
        assert_true(rdps_ctx_poll(w->tx, 0) >= 0);
        assert_true(rdps_ctx_poll(w->rx, 0) >= 0);
    }
    w->in.got = 0;
}

static void close_world(struct world *w)
{
    rdps_ctx_destroy(w->tx);
    rdps_ctx_destroy(w->rx);
}

static void pump(struct world *w, int rounds)
{
    for (int i = 0; i < rounds; i++) {
        assert_true(rdps_ctx_poll(w->tx, 0) >= 0);
        while (rdps_ctx_poll(w->rx, 0) > 0)
            ;
    }
}

/* Claims, fills and commits a message of len bytes, retrying while the buffer is busy. */
static void claim_send(struct world *w, uint32_t id, size_t len, unsigned flags)
{
    rdps_claim c;
    int rc;
    for (int i = 0; (rc = rdps_pub_claim_ex(w->pub, len, flags, &c)) == RDPS_EAGAIN && i < 1000;
         i++)
        pump(w, 1);
    if (rc != 0)
        fail_msg("claim of %zu bytes: %s (%s)", len, rdps_err_name(rc), rdps_last_error_message());
    assert_int_equal(c.capacity, len);
    fill(c.data, id, len);
    for (int i = 0; (rc = rdps_pub_commit(w->pub, &c, len)) == RDPS_EAGAIN && i < 1000; i++)
        pump(w, 1); /* a reliable publisher's full ring keeps the claim: commit again */
    if (rc != 0)
        fail_msg("commit of %zu bytes: %s (%s)", len, rdps_err_name(rc), rdps_last_error_message());
}

/* The case and more: claims longer than a datagram arrive whole and intact. */
static void test_any_size(void **state)
{
    (void)state;
    static const size_t sizes[] = {1024, 977, 5000, 100000, 1u << 20, 4u << 20};
    struct world w;
    open_world(&w, NULL, NULL, NULL);
    size_t payload = rdps_ctx_max_datagram_payload(w.tx);
    for (uint32_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        claim_send(&w, k, sizes[k], 0);
        pump(&w, 3);
        assert_int_equal(w.in.got, k + 1);
        assert_int_equal(w.in.last_len, sizes[k]);
        assert_int_equal(w.in.bad, 0);
    }
    assert_true(w.in.fragments_max == (uint32_t)((4u << 20) + payload - 1) / payload);
    close_world(&w);
}

/* Many in a row: the claim buffer is a ring, its room comes back as sends complete. */
static void test_back_to_back(void **state)
{
    (void)state;
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.max_message_size = 64 * 1024; /* a 64 KiB claim buffer: it wraps often */
    struct world w;
    open_world(&w, &cfg, NULL, NULL);
    for (uint32_t k = 0; k < 300; k++) {
        claim_send(&w, k, 3000 + k * 97 % 30000, 0);
        pump(&w, 1);
    }
    pump(&w, 3);
    assert_int_equal(w.in.got, 300);
    assert_int_equal(w.in.bad, 0);
    rdps_claim c;
    assert_int_equal(rdps_pub_claim_ex(w.pub, 64 * 1024 + 1, 0, &c), RDPS_EMSGSIZE);
    assert_null(c.data);
    close_world(&w);
}

/* RDPS_SEND_MORE holds the fragments until a flush; a commit may be shorter than the claim;
 * an abort sends nothing and gives the room back. */
static void test_more_shorter_abort(void **state)
{
    (void)state;
    struct world w;
    rdps_claim c;
    open_world(&w, NULL, NULL, NULL);
    claim_send(&w, 1, 20000, RDPS_SEND_MORE);
    while (rdps_ctx_poll(w.rx, 0) > 0)
        ;
    assert_int_equal(w.in.got, 0); /* queued, not posted */
    assert_int_equal(rdps_ctx_flush(w.tx), 0);
    pump(&w, 1);
    assert_int_equal(w.in.got, 1);

    assert_int_equal(rdps_pub_claim_ex(w.pub, 50000, 0, &c), 0);
    fill(c.data, 2, 30000);
    assert_int_equal(rdps_pub_commit(w.pub, &c, 30000), 0);
    assert_int_equal(rdps_pub_claim_ex(w.pub, 50000, 0, &c), 0);
    fill(c.data, 3, 500); /* one datagram's worth: sent as one */
    assert_int_equal(rdps_pub_commit(w.pub, &c, 500), 0);
    pump(&w, 2);
    assert_int_equal(w.in.got, 3);
    assert_int_equal(w.in.last_len, 500);

    assert_int_equal(rdps_pub_claim_ex(w.pub, 2u << 20, 0, &c), 0);
    rdps_pub_abort(w.pub, &c);
    assert_null(c.data);
    claim_send(&w, 4, 3u << 20, 0); /* the aborted room is free again */
    pump(&w, 2);
    assert_int_equal(w.in.got, 4);
    assert_int_equal(w.in.bad, 0);
    close_world(&w);
}

/* A subscriber in the publisher's own ctx gets it from the claim buffer, before it is reused. */
static void test_local_subscriber(void **state)
{
    (void)state;
    struct world w;
    struct inbox local = {0};
    rdps_sub_t *sub;
    open_world(&w, NULL, NULL, NULL);
    assert_int_equal(rdps_sub_create(w.tx, "claim.large", on_msg, &local, NULL, &sub), 0);
    claim_send(&w, 7, 70000, 0);
    assert_int_equal(local.got, 1);
    assert_int_equal(local.last_len, 70000);
    assert_int_equal(local.bad, 0);
    pump(&w, 2);
    assert_int_equal(w.in.got, 1);
    close_world(&w);
}

/* A reliable publisher: the claim is copied into its ring at commit; in order, exactly once. */
static void test_reliable(void **state)
{
    (void)state;
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.max_message_size = 1u << 20;
    rdps_pub_opts po = {.reliable = 1, .ring_bytes = 4u << 20};
    rdps_sub_opts so = {.reliable = 1};
    struct world w;
    open_world(&w, &cfg, &po, &so);
    for (uint32_t k = 0; k < 40; k++) {
        claim_send(&w, k, 10000 + k * 20000, 0);
        pump(&w, 2);
    }
    pump(&w, 20);
    assert_int_equal(w.in.got, 40);
    assert_int_equal(w.in.bad, 0);
    close_world(&w);
}

/* A keyed ctx seals every frame: the fragments are copied behind their headers there. */
static void test_keyed(void **state)
{
    (void)state;
    rdps_config cfg;
    uint8_t key[RDPS_DOMAIN_KEY_BYTES];
    for (unsigned i = 0; i < sizeof(key); i++)
        key[i] = (uint8_t)(i * 29 + 3);
    rdps_config_init(&cfg);
    cfg.domain_key = key;
    struct world w;
    open_world(&w, &cfg, NULL, NULL);
    claim_send(&w, 9, 200000, 0);
    pump(&w, 3);
    assert_int_equal(w.in.got, 1);
    assert_int_equal(w.in.last_len, 200000);
    assert_int_equal(w.in.bad, 0);
    close_world(&w);
}

/* One claim longer than a datagram per ctx at a time: a second publisher's waits for it. */
static void test_second_publisher_waits(void **state)
{
    (void)state;
    struct world w;
    rdps_claim c, c2;
    rdps_pub_t *pub2;
    open_world(&w, NULL, NULL, NULL);
    assert_int_equal(rdps_pub_create(w.tx, "claim.large", NULL, &pub2), 0);
    assert_int_equal(rdps_pub_claim_ex(w.pub, 10000, 0, &c), 0);
    assert_int_equal(rdps_pub_claim_ex(pub2, 10000, 0, &c2), RDPS_EAGAIN);
    if (strstr(rdps_last_error_message(), "another publisher") == NULL)
        fail_msg("\"%s\"", rdps_last_error_message());
    assert_int_equal(rdps_pub_claim_ex(pub2, 500, 0, &c2), 0); /* one datagram: its own room */
    fill(c2.data, 2, 500);
    assert_int_equal(rdps_pub_commit(pub2, &c2, 500), 0);
    fill(c.data, 1, 10000);
    assert_int_equal(rdps_pub_commit(w.pub, &c, 10000), 0);
    assert_int_equal(rdps_pub_claim_ex(pub2, 10000, 0, &c2), 0);
    fill(c2.data, 3, 10000);
    assert_int_equal(rdps_pub_commit(pub2, &c2, 10000), 0);
    pump(&w, 3);
    assert_int_equal(w.in.got, 3);
    assert_int_equal(w.in.bad, 0);
    close_world(&w);
}

/* A claim outstanding when the publisher or its ctx goes: released, nothing left behind. */
static void test_destroy_with_claim(void **state)
{
    (void)state;
    struct world w;
    rdps_claim c;
    open_world(&w, NULL, NULL, NULL);
    assert_int_equal(rdps_pub_claim_ex(w.pub, 1u << 20, 0, &c), 0);
    rdps_pub_destroy(w.pub);
    assert_int_equal(rdps_pub_commit(w.pub, &c, 10), RDPS_ECLOSED);
    rdps_pub_t *pub2;
    assert_int_equal(rdps_pub_create(w.tx, "claim.large.2", NULL, &pub2), 0);
    for (int i = 0; i < 100 && !rdps_pub_ready(pub2); i++)
        pump(&w, 1);
    assert_int_equal(rdps_pub_claim_ex(pub2, 3u << 20, 0, &c), 0); /* the room came back */
    rdps_ctx_destroy(w.tx);                                        /* with the claim outstanding */
    rdps_ctx_destroy(w.rx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_any_size),
        cmocka_unit_test(test_back_to_back),
        cmocka_unit_test(test_more_shorter_abort),
        cmocka_unit_test(test_local_subscriber),
        cmocka_unit_test(test_reliable),
        cmocka_unit_test(test_keyed),
        cmocka_unit_test(test_second_publisher_waits),
        cmocka_unit_test(test_destroy_with_claim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
