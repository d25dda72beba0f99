/* SPDX-License-Identifier: BSD-2-Clause */
/* test_loopback_device.c - the public in-process device ("loopback", RDPS_DEVICE) and the event-fd
 * contract (rdps_ctx_arm) through the public API only. */
#include <rdps/rdps.h>

#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct received {
    int count;
    int in_order; /* every message carried the next index */
    int bad;
    rdps_source last_source;
    rdps_ctx_t *arm_ctx; /* when set, the callback calls rdps_ctx_arm on it */
    int arm_rc;
};

static void on_msg(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    struct received *r = user;
    int index = -1;
    if (len >= sizeof(int))
        memcpy(&index, data, sizeof(int));
    if (index != r->count)
        r->bad++;
    r->count++;
    r->last_source = info->source;
    if (r->arm_ctx != NULL)
        r->arm_rc = rdps_ctx_arm(r->arm_ctx);
}

static void loopback_cfg(rdps_config *cfg)
{
    rdps_config_init(cfg);
    cfg->device = "loopback";
    cfg->stats_off = 1;
}

static int fd_readable(rdps_ctx_t *ctx)
{
    struct pollfd pfd = {.fd = rdps_ctx_fd(ctx), .events = POLLIN};
    return poll(&pfd, 1, 0);
}

static void drain(rdps_ctx_t *ctx)
{
    int n;
    while ((n = rdps_ctx_poll(ctx, 0)) > 0)
        ;
    assert_true(n == 0);
}

/* Joins complete at once on the loopback device, at the next poll. */
static void wait_ready(rdps_ctx_t *a, rdps_pub_t *pub, rdps_ctx_t *b, rdps_sub_t *sub)
{
    for (int i = 0; i < 100 && (!rdps_pub_ready(pub) || !rdps_sub_ready(sub)); i++) {
        assert_true(rdps_ctx_poll(a, 0) >= 0);
        assert_true(rdps_ctx_poll(b, 0) >= 0);
    }
    assert_int_equal(rdps_pub_ready(pub), 1);
    assert_int_equal(rdps_sub_ready(sub), 1);
}

static void send_index(rdps_ctx_t *ctx, rdps_pub_t *pub, int index)
{
    int rc;
    while ((rc = rdps_pub_send(pub, &index, sizeof(index))) == RDPS_EAGAIN)
        rdps_ctx_poll(ctx, 0);
    assert_int_equal(rc, 0);
    /* The sender polls: the send's completion is seen, so the next message goes at once too
     * (batching holds a message only while an earlier send's completion is awaited). */
    assert_true(rdps_ctx_poll(ctx, 0) >= 0);
}

/* Two contexts of one thread on the loopback device exchange messages; the source is the
 * publisher's endpoint. */
static void test_two_contexts(void **state)
{
    (void)state;
    rdps_config cfg;
    rdps_ctx_t *a, *b;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    struct received r = {0};
    loopback_cfg(&cfg);
    assert_int_equal(rdps_ctx_create(&cfg, &a), 0);
    assert_int_equal(rdps_ctx_create(&cfg, &b), 0);
    size_t payload = rdps_ctx_max_datagram_payload(a);
    assert_true(payload > 900 && payload < 1024); /* 1024-byte datagrams less the header */
    assert_int_equal(rdps_sub_create(b, "dev.two", on_msg, &r, NULL, &sub), 0);
    assert_int_equal(rdps_pub_create(a, "dev.two", NULL, &pub), 0);
    wait_ready(a, pub, b, sub);
    for (int i = 0; i < 50; i++)
        send_index(a, pub, i);
    drain(b);
    assert_int_equal(r.count, 50);
    assert_int_equal(r.bad, 0);
    assert_true(r.last_source.has_gid);
    assert_true(r.last_source.qpn != 0);
    rdps_ctx_destroy(a);
    rdps_ctx_destroy(b);
}

/* RDPS_DEVICE selects the device when the config names none; bind_ip cannot apply to it. */
static void test_device_from_environment(void **state)
{
    (void)state;
    rdps_config cfg;
    rdps_ctx_t *ctx;
    rdps_config_init(&cfg);
    cfg.stats_off = 1;
    setenv("RDPS_DEVICE", "loopback", 1);
    assert_int_equal(rdps_ctx_create(&cfg, &ctx), 0);
    rdps_ctx_destroy(ctx);
    cfg.bind_ip = "127.0.0.1";
    assert_int_equal(rdps_ctx_create(&cfg, &ctx), RDPS_EINVAL);
    assert_non_null(strstr(rdps_last_error_message(), "bind_ip"));
    unsetenv("RDPS_DEVICE");
}

/*
 * The event fd contract: quiet after an arm with nothing waiting; readable once a datagram
 * arrived; poll alone does not consume it; the next arm does; an arm with a datagram waiting says
 * RDPS_EAGAIN instead of letting the caller sleep on it.
 */
static void test_arm_contract(void **state)
{
    (void)state;
    rdps_config cfg;
    rdps_ctx_t *a, *b;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    struct received r = {0};
    loopback_cfg(&cfg);
    assert_int_equal(rdps_ctx_create(&cfg, &a), 0);
    assert_int_equal(rdps_ctx_create(&cfg, &b), 0);
    assert_int_equal(rdps_sub_create(b, "dev.arm", on_msg, &r, NULL, &sub), 0);
    assert_int_equal(rdps_pub_create(a, "dev.arm", NULL, &pub), 0);
    wait_ready(a, pub, b, sub);
    drain(a);
    drain(b);
    assert_int_equal(rdps_ctx_arm(b), 0);
    assert_int_equal(fd_readable(b), 0);

    send_index(a, pub, 0);
    assert_int_equal(fd_readable(b), 1);
    drain(b);
    assert_int_equal(r.count, 1);
    assert_int_equal(fd_readable(b), 1); /* poll does not consume the notification */
    assert_int_equal(rdps_ctx_arm(b), 0);
    assert_int_equal(fd_readable(b), 0);

    /* Work that came before the arm: the arm says so rather than letting the caller sleep. */
    send_index(a, pub, 1);
    assert_int_equal(rdps_ctx_arm(b), RDPS_EAGAIN);
    drain(b);
    assert_int_equal(r.count, 2);
    assert_int_equal(rdps_ctx_arm(b), 0);
    assert_int_equal(fd_readable(b), 0);

    /* From a callback, arming is refused like polling. */
    r.arm_ctx = b;
    send_index(a, pub, 2);
    drain(b);
    assert_int_equal(r.arm_rc, RDPS_EBUSY);
    assert_int_equal(rdps_ctx_arm(NULL), RDPS_EINVAL);
    rdps_ctx_destroy(a);
    rdps_ctx_destroy(b);
}

/* A queued RDPS_SEND_MORE datagram goes out at arm, not at some later wakeup. */
static void test_arm_flushes_queued_sends(void **state)
{
    (void)state;
    rdps_config cfg;
    rdps_ctx_t *a, *b;
    rdps_pub_t *pub;
    rdps_sub_t *sub;
    struct received r = {0};
    loopback_cfg(&cfg);
    assert_int_equal(rdps_ctx_create(&cfg, &a), 0);
    assert_int_equal(rdps_ctx_create(&cfg, &b), 0);
    assert_int_equal(rdps_sub_create(b, "dev.more", on_msg, &r, NULL, &sub), 0);
    assert_int_equal(rdps_pub_create(a, "dev.more", NULL, &pub), 0);
    wait_ready(a, pub, b, sub);
    drain(b);
    int index = 0;
    assert_int_equal(rdps_pub_send_ex(pub, &index, sizeof(index), RDPS_SEND_MORE), 0);
    drain(b);
    assert_int_equal(r.count, 0);
    (void)rdps_ctx_arm(a);
    drain(b);
    assert_int_equal(r.count, 1);
    rdps_ctx_destroy(a);
    rdps_ctx_destroy(b);
}

struct reliable_publisher {
    int count;
    int status;
};

/* A reliable publisher in its own thread and ctx, as an application's second component. */
static void *publish_reliable(void *p)
{
    struct reliable_publisher *arg = p;
    rdps_config cfg;
    rdps_ctx_t *ctx;
    rdps_pub_t *pub;
    rdps_pub_opts opts = {.reliable = 1};
    loopback_cfg(&cfg);
    if ((arg->status = rdps_ctx_create(&cfg, &ctx)) < 0)
        return NULL;
    arg->status = rdps_pub_create(ctx, "dev.threads", &opts, &pub);
    while (arg->status == 0 && rdps_pub_subscriber_count(pub) < 1)
        rdps_ctx_wait(ctx, 5);
    for (int i = 0; arg->status == 0 && i < arg->count; i++) {
        int rc;
        while ((rc = rdps_pub_send(pub, &i, sizeof(i))) == RDPS_EAGAIN)
            rdps_ctx_wait(ctx, 1);
        if (rc < 0)
            arg->status = rc;
        else if ((rc = rdps_ctx_poll(ctx, 0)) < 0) /* a datagram a message: losses to repair */
            arg->status = rc;
    }
    while (arg->status == 0 && rdps_pub_receivers_behind(pub) > 0)
        rdps_ctx_wait(ctx, 1);
    rdps_ctx_destroy(ctx);
    return NULL;
}

/*
 * Contexts of different threads share the process's fabric: a reliable stream from a publisher
 * thread reaches a subscriber thread whole and in order although the subscriber's loss
 * generator drops 5 % of the data frames (NAKs and repairs cross between the threads too).
 */
static void test_reliable_across_threads(void **state)
{
    (void)state;
    rdps_config cfg;
    rdps_ctx_t *ctx;
    rdps_sub_t *sub;
    rdps_sub_opts sopts = {.reliable = 1};
    struct received r = {0};
    loopback_cfg(&cfg);
    cfg.loss_rx_rate = 0.05;
    cfg.loss_seed = 11;
    assert_int_equal(rdps_ctx_create(&cfg, &ctx), 0);
    assert_int_equal(rdps_sub_create(ctx, "dev.threads", on_msg, &r, &sopts, &sub), 0);
    struct reliable_publisher arg = {.count = 3000};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, publish_reliable, &arg), 0);
    for (int i = 0; i < 30000 && r.count < arg.count; i++)
        assert_true(rdps_ctx_wait(ctx, 1) >= 0);
    pthread_join(thread, NULL);
    assert_int_equal(arg.status, 0);
    assert_int_equal(r.count, arg.count);
    assert_int_equal(r.bad, 0);
    rdps_counters c;
    assert_int_equal(rdps_ctx_counters(ctx, &c), 0);
    assert_true(c.loss_dropped_rx > 0);
    assert_true(c.recovered > 0);
    rdps_ctx_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_contexts),
        cmocka_unit_test(test_device_from_environment),
        cmocka_unit_test(test_arm_contract),
        cmocka_unit_test(test_arm_flushes_queued_sends),
        cmocka_unit_test(test_reliable_across_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
