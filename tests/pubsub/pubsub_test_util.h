/* SPDX-License-Identifier: BSD-2-Clause */
/* pubsub_test_util.h - contexts over the loopback fabric for the pub/sub unit tests, benches and
 * fuzzers. */
#ifndef RDPS_TESTS_PUBSUB_TEST_UTIL_H
#define RDPS_TESTS_PUBSUB_TEST_UTIL_H

#include <string.h>

#include "ctx_internal.h"
#include "rdps_loopback.h"

#define LOOPBACK_MAX_DATAGRAM 1024
#define LOOPBACK_PAYLOAD      (LOOPBACK_MAX_DATAGRAM - RDPS_FRAME_HEADER_LEN)

/* A ctx on `fabric` over a loopback endpoint configured by *lc; cfg NULL: defaults. */
static inline int test_loopback_ctx_with(struct rdps_loopback_fabric *fabric,
                                         const rdps_config *cfg_in,
                                         const struct rdps_loopback_config *lc, rdps_ctx_t **out)
{
    struct rdps_transport *t;
    const struct rdps_membership_ops *ops;
    void *impl;
    rdps_config cfg;
    if (cfg_in) {
        cfg = *cfg_in;
    } else {
        rdps_config_init(&cfg);
        cfg.announce_interval_ms = 1000; /* long enough that no peer expires while a test runs */
    }
    int rc = rdps__loopback_create(fabric, lc, &t);
    if (rc < 0)
        return rc;
    rc = rdps__membership_loopback_create(fabric, t, &ops, &impl);
    if (rc < 0) {
        t->ops->destroy(t);
        return rc;
    }
    uint32_t qpn = rdps__loopback_qpn(t), host = rdps__loopback_ipv4(t);
    uint8_t gid[16];
    rdps__loopback_gid(t, gid);
    rc = rdps__ctx_wrap_loss_generator(&cfg, &t);
    if (rc < 0) {
        ops->destroy(impl);
        t->ops->destroy(t);
        return rc;
    }
    rc = rdps__ctx_create_over(&cfg, t, ops, impl, out);
    if (rc == 0) {
        rdps_ctx_t *ctx = rdps__ctx_of_handle(*out);
        ctx->self_qpn = qpn;
        memcpy(ctx->self_gid, gid, 16);
        ctx->has_self_gid = true;
        ctx->self_host = host;
    }
    return rc;
}

/*
 * The same with 64 send slots and `recv_slots` receive slots (0: 20000). The loopback fabric
 * delivers during the sender's flush, so a receiver must hold a whole 16 MiB message (16913
 * datagrams) before it polls, as no UD receiver could: hence the large default.
 */
static inline int test_loopback_ctx(struct rdps_loopback_fabric *fabric, const rdps_config *cfg,
                                    uint32_t recv_slots, rdps_ctx_t **out)
{
    struct rdps_loopback_config lc = {.max_payload = LOOPBACK_MAX_DATAGRAM,
                                      .send_slots = 64,
                                      .recv_slots = recv_slots ? recv_slots : 20000};
    return test_loopback_ctx_with(fabric, cfg, &lc, out);
}

/* Two contexts on one fabric: the usual fixture of the pub/sub tests. */
struct test_pair {
    struct rdps_loopback_fabric *fabric;
    rdps_ctx_t *a, *b;
};

/*
 * A fabric and two contexts on it, `a` with the defaults, `b` with cfg_b (NULL: the defaults),
 * each with `recv_slots` receive slots (0: 20000). Returns 0 or the first error.
 */
static inline int test_pair_open(struct test_pair *p, const rdps_config *cfg_b, uint32_t recv_slots)
{
    memset(p, 0, sizeof(*p));
    int rc = rdps__loopback_fabric_create(&p->fabric);
    if (rc == 0)
        rc = test_loopback_ctx(p->fabric, NULL, recv_slots, &p->a);
    if (rc == 0)
        rc = test_loopback_ctx(p->fabric, cfg_b, recv_slots, &p->b);
    return rc;
}

static inline void test_pair_close(struct test_pair *p)
{
    rdps_ctx_destroy(p->a);
    rdps_ctx_destroy(p->b);
    rdps__loopback_fabric_destroy(p->fabric);
}

/* Polls both contexts `rounds` times; every poll must succeed. */
#define TEST_PAIR_PUMP(pair, rounds)                           \
    do {                                                       \
        for (int pump_i_ = 0; pump_i_ < (rounds); pump_i_++) { \
            assert_true(rdps_ctx_poll((pair)->a, 0) >= 0);     \
            assert_true(rdps_ctx_poll((pair)->b, 0) >= 0);     \
        }                                                      \
    } while (0)

/* Sends through back-pressure (pumping both contexts); the send must succeed. */
#define TEST_PAIR_SEND_OK(pair, pub, data, len)                                 \
    do {                                                                        \
        int send_rc_;                                                           \
        while ((send_rc_ = rdps_pub_send((pub), (data), (len))) == RDPS_EAGAIN) \
            TEST_PAIR_PUMP(pair, 1);                                            \
        assert_int_equal(send_rc_, 0);                                          \
    } while (0)

/*
 * Indexed test messages: a 4-byte index i, then bytes derived from i and their position, so a
 * subscriber can check each message's integrity and order (struct test_inbox).
 */
static inline size_t test_message_fill(uint8_t *buf, uint32_t i, size_t len)
{
    memcpy(buf, &i, 4);
    for (size_t k = 4; k < len; k++)
        buf[k] = (uint8_t)(i * 7u + k);
    return len;
}

struct test_inbox {
    unsigned count, out_of_order, corrupt;
    unsigned backwards;   /* an index at or below one already delivered: reordered or duplicate */
    unsigned skipped;     /* indices jumped over (lost messages followed by a delivery) */
    unsigned loss_events; /* RDPS_EVENT_LOSS and RDPS_EVENT_GAP (test_inbox_on_event) */
    uint32_t next_index;
    size_t last_len;
};

/* An rdps_msg_cb checking indexed messages into the struct test_inbox `user` (shorter than an
 * index: corrupt). */
static inline void test_inbox_on_message(void *user, const void *data, size_t len,
                                         const rdps_msg_info *info)
{
    struct test_inbox *in = user;
    const uint8_t *b = data;
    uint32_t i;
    (void)info;
    in->count++;
    in->last_len = len;
    if (len < 4) {
        in->corrupt++;
        return;
    }
    memcpy(&i, b, 4);
    for (size_t k = 4; k < len; k++)
        if (b[k] != (uint8_t)(i * 7u + k)) {
            in->corrupt++;
            break;
        }
    if (i != in->next_index)
        in->out_of_order++;
    if (i < in->next_index)
        in->backwards++;
    else
        in->skipped += i - in->next_index;
    in->next_index = i + 1;
}

/* An rdps_event_cb counting losses into the struct test_inbox `user`. */
static inline void test_inbox_on_event(void *user, const rdps_event *ev)
{
    struct test_inbox *in = user;
    if (ev->type == RDPS_EVENT_LOSS || ev->type == RDPS_EVENT_GAP)
        in->loss_events++;
}

#endif /* RDPS_TESTS_PUBSUB_TEST_UTIL_H */
