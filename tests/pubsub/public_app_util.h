/* SPDX-License-Identifier: BSD-2-Clause */
/* public_app_util.h - the fixture of the pub/sub tests that go through the shared library only
 * (rdps.h, no internal header, unlike pubsub_test_util.h): one ctx on the loopback device with a
 * publisher and a subscriber of one topic, counting what arrives. */
#ifndef RDPS_TESTS_PUBLIC_APP_UTIL_H
#define RDPS_TESTS_PUBLIC_APP_UTIL_H

#include <rdps/rdps.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

struct test_app {
    rdps_ctx_t *ctx;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    int got; /* messages the subscriber received */
};

/* An rdps_msg_cb counting into the int `user` (NULL: nothing). */
static inline void test_app_count(void *user, const void *data, size_t len,
                                  const rdps_msg_info *info)
{
    (void)data, (void)len, (void)info;
    if (user != NULL)
        (*(int *)user)++;
}

/* The ctx, then the subscriber and the publisher of `topic`, from the calling thread; not polled
 * (test_app_ready), so a test may hand the ctx to another thread first. */
static inline void test_app_open(struct test_app *a, const char *topic)
{
    rdps_config cfg;
    rdps_config_init(&cfg);
    cfg.device = "loopback";
    cfg.stats_off = 1;
    memset(a, 0, sizeof(*a));
    assert_int_equal(rdps_ctx_create(&cfg, &a->ctx), 0);
    assert_int_equal(rdps_sub_create(a->ctx, topic, test_app_count, &a->got, NULL, &a->sub), 0);
    assert_int_equal(rdps_pub_create(a->ctx, topic, NULL, &a->pub), 0);
}

/* Polls until the publisher and the subscriber are ready (from the ctx's owner). */
static inline void test_app_ready(struct test_app *a)
{
    for (int i = 0; i < 100 && !(rdps_pub_ready(a->pub) && rdps_sub_ready(a->sub)); i++)
        assert_true(rdps_ctx_poll(a->ctx, 0) >= 0);
    assert_int_equal(rdps_pub_ready(a->pub), 1);
}

#endif /* RDPS_TESTS_PUBLIC_APP_UTIL_H */
