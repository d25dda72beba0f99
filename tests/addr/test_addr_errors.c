/* SPDX-License-Identifier: BSD-2-Clause */
/* test_addr_errors.c - addr failure paths that need no device: bad config, non-verbs transport, SA
 * query without a device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>
#include <sys/socket.h>

#include "rdps_addr.h"
#include "rdps_error.h"
#include "rdps_loopback.h"

static void test_create_rejects_bad_config(void **state)
{
    struct rdps_addr *a = (struct rdps_addr *)&a;
    (void)state;

    assert_int_equal(rdps__addr_create(NULL, &a), RDPS_EINVAL);
    assert_null(a);
    struct rdps_addr_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(rdps__addr_create(&cfg, &a), RDPS_EINVAL); /* no transport */
    assert_non_null(strstr(rdps_last_error_message(), "transport"));
    assert_int_equal(rdps__addr_create(&cfg, NULL), RDPS_EINVAL);
}

static void test_create_needs_a_verbs_transport(void **state)
{
    struct rdps_loopback_fabric *fabric = NULL;
    struct rdps_transport *t = NULL;
    struct rdps_addr *a = NULL;
    struct rdps_addr_config cfg;
    (void)state;

    assert_int_equal(rdps__loopback_fabric_create(&fabric), 0);
    assert_int_equal(rdps__loopback_create(fabric, NULL, &t), 0);
    memset(&cfg, 0, sizeof(cfg));
    cfg.transport = t;
    int err = rdps__addr_create(&cfg, &a);
    assert_int_equal(err, RDPS_EINVAL);
    assert_null(a);
    assert_non_null(strstr(rdps_last_error_message(), "addr_create: "));

    /* Out-of-range cm_port and a non-IP local address are refused before anything opens. */
    cfg.cm_port = 70000;
    assert_int_equal(rdps__addr_create(&cfg, &a), RDPS_EINVAL);
    assert_non_null(strstr(rdps_last_error_message(), "cm_port"));
    cfg.cm_port = -2;
    assert_int_equal(rdps__addr_create(&cfg, &a), RDPS_EINVAL);
    cfg.cm_port = 0;
    struct sockaddr unix_addr = {.sa_family = AF_UNIX};
    cfg.local_addr = &unix_addr;
    assert_int_equal(rdps__addr_create(&cfg, &a), RDPS_EINVAL);
    assert_non_null(strstr(rdps_last_error_message(), "local_addr"));

    t->ops->destroy(t);
    rdps__loopback_fabric_destroy(fabric);
}

static void test_null_handles(void **state)
{
    struct rdps_addr_peer *p = (struct rdps_addr_peer *)&p;
    struct rdps_addr_group *g = (struct rdps_addr_group *)&g;
    struct rdps_addr_group_info info;
    (void)state;

    /* destroy/release/leave accept NULL; the others say what was wrong. */
    rdps__addr_destroy(NULL);
    rdps__addr_peer_release(NULL);
    rdps__addr_leave(NULL);
    assert_int_equal(rdps__addr_process(NULL), RDPS_EINVAL);
    assert_int_equal(rdps__addr_tick(NULL), RDPS_EINVAL);
    assert_int_equal(rdps__addr_fd(NULL), RDPS_EINVAL);
    assert_int_equal(rdps__addr_listen_port(NULL), 0);
    assert_int_equal(rdps__addr_peer_state(NULL, NULL), RDPS_EINVAL);
    assert_int_equal(rdps__addr_group_state(NULL, NULL), RDPS_EINVAL);
    assert_int_equal(rdps__addr_group_info(NULL, &info), RDPS_EINVAL);
    assert_int_equal(rdps__addr_peer_refresh(NULL), RDPS_EINVAL);
    assert_int_equal(rdps__addr_group_rejoin(NULL), RDPS_EINVAL);
    assert_int_equal(rdps__addr_resolve_start(NULL, NULL, &p), RDPS_EINVAL);
    assert_null(p);
    assert_int_equal(rdps__addr_join_start(NULL, NULL, RDPS_JOIN_FULL, &g), RDPS_EINVAL);
    assert_null(g);
}

static void test_sa_query_without_device(void **state)
{
    struct rdps_sa_mcmember rec[1];
    (void)state;

    assert_int_equal(rdps__sa_query_mcmember(NULL, 1, NULL, 100, rec, 1), RDPS_EINVAL);
    assert_int_equal(rdps__sa_query_mcmember("mlx5_0", 0, NULL, 100, rec, 1), RDPS_EINVAL);
    /* No such device here (the test host has no RDMA at all, or not this name). */
    int err = rdps__sa_query_mcmember("rdps_no_such_dev", 1, NULL, 100, rec, 1);
    assert_true(err < 0);
    assert_non_null(strstr(rdps_last_error_message(), "SA query: "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_rejects_bad_config),
        cmocka_unit_test(test_create_needs_a_verbs_transport),
        cmocka_unit_test(test_null_handles),
        cmocka_unit_test(test_sa_query_without_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
