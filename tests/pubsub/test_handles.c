/* SPDX-License-Identifier: BSD-2-Clause */
/* test_handles.c - destroy in any order is safe and a handle used after its destroy is
 * RDPS_ECLOSED, never a use after free (issue 37, row 4); through the shared library only. */
#include "public_app_util.h"

#define TOPIC "handles.t"

/* A ctx on the loopback device with a publisher and a subscriber of TOPIC, ready. */
static void app_open(struct test_app *a)
{
    test_app_open(a, TOPIC);
    test_app_ready(a);
}

/* rdps_last_error_message() names fn and contains fragment. */
static void assert_message(const char *fn, const char *fragment)
{
    const char *m = rdps_last_error_message();
    if (strncmp(m, fn, strlen(fn)) != 0 || strstr(m, fragment) == NULL)
        fail_msg("message \"%s\" (want \"%s: ...%s...\")", m, fn, fragment);
}

/* Every call on a destroyed publisher is refused (or a no-op), never a use of its memory. */
static void assert_pub_closed(rdps_pub_t *pub)
{
    rdps_claim claim;
    rdps_counters c;
    assert_int_equal(rdps_pub_send(pub, "x", 1), RDPS_ECLOSED);
    assert_message("rdps_pub_send", "publisher was destroyed");
    assert_int_equal(rdps_pub_send_ex(pub, "x", 1, RDPS_SEND_MORE), RDPS_ECLOSED);
    claim.data = (void *)&claim;
    assert_int_equal(rdps_pub_claim(pub, &claim), RDPS_ECLOSED);
    assert_null(claim.data);
    assert_int_equal(rdps_pub_claim_ex(pub, 8, 0, &claim), RDPS_ECLOSED);
    assert_int_equal(rdps_pub_commit(pub, &claim, 1), RDPS_ECLOSED);
    rdps_pub_abort(pub, &claim);
    assert_int_equal(rdps_pub_counters(pub, &c), RDPS_ECLOSED);
    assert_int_equal(rdps_pub_ready(pub), 0);
    assert_message("rdps_pub_ready", "destroyed");
    assert_int_equal(rdps_pub_subscriber_count(pub), 0);
    assert_int_equal(rdps_pub_receivers_behind(pub), 0);
    assert_int_equal(rdps_pub_max_message_size(pub), 0);
    assert_int_equal(rdps_pub_session(pub), 0);
    rdps_pub_destroy(pub); /* again: nothing */
}

static void assert_sub_closed(rdps_sub_t *sub)
{
    rdps_counters c;
    rdps_session_stats s[1];
    assert_int_equal(rdps_sub_ready(sub), 0);
    assert_int_equal(rdps_sub_counters(sub, &c), RDPS_ECLOSED);
    assert_message("rdps_sub_counters", "subscriber was destroyed");
    assert_int_equal(rdps_sub_sessions(sub, s, 1), RDPS_ECLOSED);
    rdps_sub_destroy(sub);
}

static void assert_ctx_closed(rdps_ctx_t *ctx)
{
    rdps_pub_t *pub = (rdps_pub_t *)&pub;
    rdps_counters c;
    char group[16];
    assert_int_equal(rdps_ctx_poll(ctx, 0), RDPS_ECLOSED);
    assert_message("rdps_ctx_poll", "ctx was destroyed");
    assert_int_equal(rdps_ctx_wait(ctx, 0), RDPS_ECLOSED);
    assert_int_equal(rdps_ctx_arm(ctx), RDPS_ECLOSED);
    assert_int_equal(rdps_ctx_flush(ctx), RDPS_ECLOSED);
    assert_int_equal(rdps_ctx_fd(ctx), RDPS_ECLOSED);
    assert_int_equal(rdps_ctx_counters(ctx, &c), RDPS_ECLOSED);
    assert_int_equal(rdps_ctx_handover(ctx), RDPS_ECLOSED);
    assert_int_equal(rdps_topic_group(ctx, "t", group, sizeof(group)), RDPS_ECLOSED);
    assert_int_equal(rdps_ctx_map_topic(ctx, "t", "239.192.1.1"), RDPS_ECLOSED);
    assert_int_equal(rdps_pub_create(ctx, "t", NULL, &pub), RDPS_ECLOSED);
    assert_null(pub);
    assert_int_equal(rdps_ctx_next_timeout_ms(ctx), 0);
    assert_int_equal(rdps_ctx_sends_pending(ctx), 0);
    assert_int_equal(rdps_ctx_max_datagram_payload(ctx), 0);
    assert_int_equal(rdps_ctx_key_in_use(ctx), 0);
    rdps_ctx_destroy(ctx); /* again: nothing */
}

/* The crash: a C++ wrapper whose members are destroyed in the wrong order. */
static void test_pub_destroy_after_ctx_destroy(void **state)
{
    (void)state;
    struct test_app a;
    app_open(&a);
    rdps_ctx_destroy(a.ctx);
    rdps_pub_destroy(a.pub);
    rdps_sub_destroy(a.sub);
    assert_pub_closed(a.pub);
    assert_sub_closed(a.sub);
    assert_ctx_closed(a.ctx);
}

static void test_ctx_destroy_twice(void **state)
{
    (void)state;
    struct test_app a;
    app_open(&a);
    rdps_ctx_destroy(a.ctx);
    rdps_ctx_destroy(a.ctx);
    assert_ctx_closed(a.ctx);
}

/* Every order of destroying a ctx, its publisher and its subscriber. */
static void test_every_destroy_order(void **state)
{
    (void)state;
    static const char orders[6][3] = {"cps", "csp", "pcs", "psc", "scp", "spc"};
    for (int o = 0; o < 6; o++) {
        struct test_app a;
        app_open(&a);
        assert_int_equal(rdps_pub_send(a.pub, "x", 1), 0);
        for (int i = 0; i < 3; i++) {
            if (orders[o][i] == 'c')
                rdps_ctx_destroy(a.ctx);
            else if (orders[o][i] == 'p')
                rdps_pub_destroy(a.pub);
            else
                rdps_sub_destroy(a.sub);
        }
        assert_pub_closed(a.pub);
        assert_sub_closed(a.sub);
        assert_ctx_closed(a.ctx);
    }
}

static void test_use_after_destroy(void **state)
{
    (void)state;
    struct test_app a;
    app_open(&a);
    rdps_pub_destroy(a.pub);
    rdps_sub_destroy(a.sub);
    assert_pub_closed(a.pub);
    assert_sub_closed(a.sub);
    assert_true(rdps_ctx_poll(a.ctx, 0) >= 0); /* the ctx goes on */
    rdps_ctx_destroy(a.ctx);
}

/* A destroyed handle stays refused when its memory and its table slot are reused: the new
 * publisher is never reached through the old handle. */
static void test_stale_handle_after_reuse(void **state)
{
    (void)state;
    struct test_app a;
    app_open(&a);
    rdps_pub_t *old = a.pub, *fresh;
    rdps_pub_destroy(old);
    assert_int_equal(rdps_pub_create(a.ctx, TOPIC, NULL, &fresh), 0);
    assert_ptr_not_equal(fresh, old);
    assert_pub_closed(old); /* its destroy does not destroy the new one either */
    for (int i = 0; i < 100 && !rdps_pub_ready(fresh); i++)
        assert_true(rdps_ctx_poll(a.ctx, 0) >= 0);
    assert_int_equal(rdps_pub_send(fresh, "y", 1), 0);
    assert_true(rdps_ctx_poll(a.ctx, 0) >= 0);
    assert_int_equal(a.got, 1);
    rdps_ctx_destroy(a.ctx);
    assert_pub_closed(fresh);
}

/* A handle of another type, or what is no handle at all: RDPS_EINVAL, nothing touched. */
static void test_wrong_handles(void **state)
{
    (void)state;
    struct test_app a;
    app_open(&a);
    rdps_counters c;
    assert_int_equal(rdps_pub_send((rdps_pub_t *)a.sub, "x", 1), RDPS_EINVAL);
    assert_message("rdps_pub_send", "a subscriber handle where a publisher is expected");
    assert_int_equal(rdps_sub_counters((rdps_sub_t *)a.pub, &c), RDPS_EINVAL);
    assert_message("rdps_sub_counters", "a publisher handle where a subscriber is expected");
    assert_int_equal(rdps_ctx_poll((rdps_ctx_t *)a.pub, 0), RDPS_EINVAL);
    assert_message("rdps_ctx_poll", "a publisher handle where a ctx is expected");
    rdps_ctx_destroy((rdps_ctx_t *)a.sub); /* nothing */
    rdps_pub_destroy((rdps_pub_t *)a.ctx);
    uint64_t junk[4] = {0};
    assert_int_equal(rdps_pub_send((rdps_pub_t *)junk, "x", 1), RDPS_EINVAL);
    assert_message("rdps_pub_send", "not a publisher handle");
    assert_int_equal(rdps_pub_send(NULL, "x", 1), RDPS_EINVAL);
    assert_message("rdps_pub_send", "NULL publisher");
    assert_int_equal(rdps_pub_send(a.pub, "z", 1), 0); /* all still there */
    assert_true(rdps_ctx_poll(a.ctx, 0) >= 0);
    assert_int_equal(a.got, 1);
    rdps_ctx_destroy(a.ctx);
}

/* A claim outstanding when the ctx goes: the commit is refused and the claim released. */
static void test_claim_outlives_its_ctx(void **state)
{
    (void)state;
    struct test_app a;
    rdps_claim claim;
    app_open(&a);
    assert_int_equal(rdps_pub_claim(a.pub, &claim), 0);
    rdps_ctx_destroy(a.ctx);
    assert_int_equal(rdps_pub_commit(a.pub, &claim, 1), RDPS_ECLOSED);
    assert_null(claim.data);
    rdps_pub_abort(a.pub, &claim);
    rdps_pub_destroy(a.pub);
}

/* Destroyed from a callback: the handles are refused at once, inside the callback too. */
struct in_callback {
    struct test_app *a;
    int send_rc, poll_rc;
};

static void destroy_from_callback(void *user, const void *data, size_t len,
                                  const rdps_msg_info *info)
{
    struct in_callback *cb = user;
    (void)data, (void)len, (void)info;
    rdps_ctx_destroy(cb->a->ctx);
    cb->send_rc = rdps_pub_send(cb->a->pub, "x", 1);
    cb->poll_rc = rdps_ctx_poll(cb->a->ctx, 0);
}

static void test_destroy_from_a_callback(void **state)
{
    (void)state;
    struct test_app a;
    struct in_callback cb = {.a = &a};
    app_open(&a);
    rdps_sub_t *sub;
    assert_int_equal(rdps_sub_create(a.ctx, TOPIC, destroy_from_callback, &cb, NULL, &sub), 0);
    assert_int_equal(rdps_pub_send(a.pub, "x", 1), RDPS_ECLOSED); /* its local delivery */
    assert_int_equal(cb.send_rc, RDPS_ECLOSED);
    assert_int_equal(cb.poll_rc, RDPS_ECLOSED);
    rdps_sub_destroy(sub);
    assert_pub_closed(a.pub);
    assert_ctx_closed(a.ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pub_destroy_after_ctx_destroy),
        cmocka_unit_test(test_ctx_destroy_twice),
        cmocka_unit_test(test_every_destroy_order),
        cmocka_unit_test(test_use_after_destroy),
        cmocka_unit_test(test_stale_handle_after_reuse),
        cmocka_unit_test(test_wrong_handles),
        cmocka_unit_test(test_claim_outlives_its_ctx),
        cmocka_unit_test(test_destroy_from_a_callback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
