/* SPDX-License-Identifier: BSD-2-Clause */
/* verbs_addr_test_util.h - rxe-guest tests: a verbs transport with an addr/ context on it (no
 * rdma_cm listener), for tests that join groups or resolve peers. Include after <cmocka.h>. */
#ifndef RDPS_TESTS_VERBS_ADDR_TEST_UTIL_H
#define RDPS_TESTS_VERBS_ADDR_TEST_UTIL_H

#include <stdio.h>
#include <string.h>

#include "rdps_addr.h"
#include "verbs_test_util.h"

/* Opens the guest's device (reply cache of reply_entries, 0: default) and addr/ over it. */
static inline void vt_open_with_addr(uint32_t reply_entries, struct rdps_transport **t,
                                     struct rdps_verbs_info *info, struct rdps_addr **addr)
{
    struct rdps_verbs_config vc = {.device_name = vt_device(),
                                   .reply_cache_entries = reply_entries};
    struct rdps_addr_config ac;
    int err = rdps__verbs_transport_create(&vc, t);
    if (err < 0)
        fprintf(stderr, "transport: %s\n", rdps_last_error_message());
    assert_int_equal(err, 0);
    assert_int_equal(rdps__verbs_transport_info(*t, info), 0);
    memset(&ac, 0, sizeof(ac));
    ac.transport = *t;
    ac.cm_port = RDPS_ADDR_NO_LISTEN;
    err = rdps__addr_create(&ac, addr);
    if (err < 0)
        fprintf(stderr, "addr: %s\n", rdps_last_error_message());
    assert_int_equal(err, 0);
}

/* addr/ first: it retires its AHs through the transport. */
static inline void vt_close_with_addr(struct rdps_transport *t, struct rdps_addr *addr)
{
    rdps__addr_destroy(addr);
    t->ops->destroy(t);
}

#endif /* RDPS_TESTS_VERBS_ADDR_TEST_UTIL_H */
