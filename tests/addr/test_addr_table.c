/* SPDX-License-Identifier: BSD-2-Clause */
/* test_addr_table.c - peer/group bookkeeping: key normalization, refcounts, failure retry,
 * invalidation, deadlines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "rdps_addr_table.h"
#include "rdps_error.h"

static struct sockaddr_in v4(const char *ip, uint16_t port)
{
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    assert_int_equal(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
    return sin;
}

static void test_key_normalization(void **state)
{
    struct rdps_addr_key a, b;
    char text[64];
    (void)state;

    struct sockaddr_in x = v4("192.0.2.7", 0);
    struct sockaddr_in y = v4("192.0.2.7", 7471);
    memset(y.sin_zero, 0xaa, sizeof(y.sin_zero)); /* garbage padding must not split keys */
    assert_int_equal(rdps__addr_key_init(&a, (struct sockaddr *)&x, 7471, 0), 0);
    assert_int_equal(rdps__addr_key_init(&b, (struct sockaddr *)&y, 9999, 0), 0);
    assert_true(rdps__addr_key_equal(&a, &b)); /* port 0 took the default */
    assert_string_equal(rdps__addr_key_format(&a, text, sizeof(text)), "192.0.2.7:7471");
    assert_int_equal(rdps__addr_key_len(&a), sizeof(struct sockaddr_in));

    /* Another port, another address, another mode: other keys. */
    struct sockaddr_in z = v4("192.0.2.7", 7472);
    assert_int_equal(rdps__addr_key_init(&b, (struct sockaddr *)&z, 7471, 0), 0);
    assert_false(rdps__addr_key_equal(&a, &b));
    assert_int_equal(rdps__addr_key_init(&b, (struct sockaddr *)&y, 7471, 1), 0);
    assert_false(rdps__addr_key_equal(&a, &b));

    struct sockaddr_in6 s6;
    memset(&s6, 0, sizeof(s6));
    s6.sin6_family = AF_INET6;
    assert_int_equal(inet_pton(AF_INET6, "fe80::1", &s6.sin6_addr), 1);
    assert_int_equal(rdps__addr_key_init(&b, (struct sockaddr *)&s6, 7471, 0), 0);
    assert_string_equal(rdps__addr_key_format(&b, text, sizeof(text)), "[fe80::1]:7471");
    assert_int_equal(rdps__addr_key_len(&b), sizeof(struct sockaddr_in6));

    struct sockaddr bad = {.sa_family = AF_UNIX};
    assert_int_equal(rdps__addr_key_init(&b, &bad, 7471, 0), RDPS_EINVAL);
    assert_non_null(strstr(rdps_last_error_message(), "not IPv4 or IPv6"));
    assert_int_equal(rdps__addr_key_init(&b, NULL, 7471, 0), RDPS_EINVAL);

    /* Group addresses print without a port. */
    struct sockaddr_in g = v4("239.192.0.1", 0);
    assert_string_equal(rdps__sockaddr_format((struct sockaddr *)&g, text, sizeof(text)),
                        "239.192.0.1");
}

static void test_acquire_release_refcount(void **state)
{
    struct rdps_addr_table t;
    struct rdps_addr_entry e1, e2, e3;
    struct rdps_addr_key k1, k2;
    bool start;
    (void)state;

    rdps__addr_table_init(&t);
    struct sockaddr_in a = v4("192.0.2.1", 7471), b = v4("192.0.2.2", 7471);
    rdps__addr_key_init(&k1, (struct sockaddr *)&a, 7471, 0);
    rdps__addr_key_init(&k2, (struct sockaddr *)&b, 7471, 0);

    assert_ptr_equal(rdps__addr_table_acquire(&t, &k1, &e1, &start), &e1);
    assert_true(start);
    assert_int_equal(e1.refcount, 1);
    assert_int_equal(rdps__addr_entry_state(&e1), 0);

    /* The same peer again: same entry, no second resolve, fresh left alone. */
    memset(&e2, 0x5a, sizeof(e2));
    assert_ptr_equal(rdps__addr_table_acquire(&t, &k1, &e2, &start), &e1);
    assert_false(start);
    assert_int_equal(e1.refcount, 2);
    assert_int_equal(((unsigned char *)&e2)[0], 0x5a);
    assert_int_equal(t.count, 1);

    assert_ptr_equal(rdps__addr_table_acquire(&t, &k2, &e3, &start), &e3);
    assert_true(start);
    assert_int_equal(t.count, 2);

    assert_false(rdps__addr_table_release(&t, &e1));
    assert_ptr_equal(rdps__addr_table_find(&t, &k1), &e1);
    assert_true(rdps__addr_table_release(&t, &e1)); /* last reference: unlinked */
    assert_null(rdps__addr_table_find(&t, &k1));
    assert_int_equal(t.count, 1);
    assert_true(rdps__addr_table_release(&t, &e3));
    assert_null(t.head);
    assert_int_equal(t.count, 0);
}

static void test_state_transitions(void **state)
{
    struct rdps_addr_table t;
    struct rdps_addr_entry e, other;
    struct rdps_addr_key k;
    bool start;
    (void)state;

    rdps__addr_table_init(&t);
    struct sockaddr_in a = v4("192.0.2.9", 0);
    rdps__addr_key_init(&k, (struct sockaddr *)&a, 7471, 0);
    rdps__addr_table_acquire(&t, &k, &e, &start);
    uint32_t gen1 = rdps__addr_entry_start(&e, 1000);
    assert_int_equal(e.starts, 1);

    rdps__addr_entry_set_failed(&e, RDPS_EHOSTUNREACH, "192.0.2.9:7471: host unreachable");
    /* A later failure while already failed does not overwrite the first reason. */
    rdps__addr_entry_set_failed(&e, RDPS_ETIMEDOUT, "later");
    rdps__clear_err();
    assert_int_equal(rdps__addr_entry_state(&e), RDPS_EHOSTUNREACH);
    assert_string_equal(rdps_last_error_message(), "192.0.2.9:7471: host unreachable");

    /* A new resolve of a failed peer really retries. */
    assert_ptr_equal(rdps__addr_table_acquire(&t, &k, &other, &start), &e);
    assert_true(start);
    assert_int_equal(rdps__addr_entry_state(&e), 0);
    uint32_t gen2 = rdps__addr_entry_start(&e, 2000);
    assert_true(gen2 != gen1);

    rdps__addr_entry_set_ready(&e);
    assert_int_equal(rdps__addr_entry_state(&e), 1);
    /* A ready entry is shared without restarting. */
    assert_ptr_equal(rdps__addr_table_acquire(&t, &k, &other, &start), &e);
    assert_false(start);

    /* ADDR_CHANGE: back to pending, counted, new generation (stale events are ignored). */
    uint32_t gen3 = rdps__addr_entry_invalidate(&e, 3000);
    assert_int_equal(rdps__addr_entry_state(&e), 0);
    assert_int_equal(e.invalidations, 1);
    assert_int_equal(e.starts, 3);
    assert_true(gen3 != gen2);
    assert_int_equal(e.refcount, 3);
}

static void test_deadline(void **state)
{
    struct rdps_addr_entry e;
    (void)state;

    memset(&e, 0, sizeof(e));
    struct sockaddr_in a = v4("192.0.2.10", 7471);
    rdps__addr_key_init(&e.key, (struct sockaddr *)&a, 7471, 0);
    rdps__addr_entry_start(&e, 500);
    assert_false(rdps__addr_entry_check_deadline(&e, 499));
    assert_int_equal(rdps__addr_entry_state(&e), 0);
    assert_true(rdps__addr_entry_check_deadline(&e, 500));
    assert_int_equal(rdps__addr_entry_state(&e), RDPS_ETIMEDOUT);
    assert_non_null(strstr(rdps_last_error_message(), "192.0.2.10:7471"));
    /* Only a pending entry can time out. */
    assert_false(rdps__addr_entry_check_deadline(&e, 10000));
    rdps__addr_entry_start(&e, 600);
    rdps__addr_entry_set_ready(&e);
    assert_false(rdps__addr_entry_check_deadline(&e, 10000));
    assert_int_equal(rdps__addr_entry_state(&e), 1);
}

static void test_group_modes_are_separate(void **state)
{
    struct rdps_addr_table t;
    struct rdps_addr_entry full, send_only, again;
    struct rdps_addr_key kf, ks;
    bool start;
    (void)state;

    rdps__addr_table_init(&t);
    struct sockaddr_in g = v4("239.192.0.1", 0);
    rdps__addr_key_init(&kf, (struct sockaddr *)&g, 0, 1);
    rdps__addr_key_init(&ks, (struct sockaddr *)&g, 0, 2);
    rdps__addr_table_acquire(&t, &kf, &full, &start);
    assert_true(start);
    rdps__addr_table_acquire(&t, &ks, &send_only, &start);
    assert_true(start);
    assert_int_equal(t.count, 2);
    /* Two FULL joins, one leave: still joined. */
    assert_ptr_equal(rdps__addr_table_acquire(&t, &kf, &again, &start), &full);
    assert_false(start);
    assert_false(rdps__addr_table_release(&t, &full));
    assert_ptr_equal(rdps__addr_table_find(&t, &kf), &full);
    assert_true(rdps__addr_table_release(&t, &full));
    assert_null(rdps__addr_table_find(&t, &kf));
    assert_ptr_equal(rdps__addr_table_find(&t, &ks), &send_only);
}

static struct rdps_addr_entry entry_in(enum rdps_addr_entry_state st, uint64_t invalidations)
{
    struct rdps_addr_entry e;
    memset(&e, 0, sizeof(e));
    e.state = st;
    e.invalidations = invalidations;
    return e;
}

static void test_peer_event_actions(void **state)
{
    struct rdps_addr_entry pending = entry_in(RDPS_ENTRY_PENDING, 0);
    struct rdps_addr_entry ready = entry_in(RDPS_ENTRY_READY, 0);
    struct rdps_addr_entry failed = entry_in(RDPS_ENTRY_FAILED, 0);
    (void)state;

    /* The resolve steps advance only a pending entry. */
    assert_int_equal(rdps__addr_peer_action(&pending, RDPS_ADDR_EV_ADDR_RESOLVED),
                     RDPS_ADDR_ACT_NEXT_STEP);
    assert_int_equal(rdps__addr_peer_action(&pending, RDPS_ADDR_EV_ROUTE_RESOLVED),
                     RDPS_ADDR_ACT_NEXT_STEP);
    assert_int_equal(rdps__addr_peer_action(&pending, RDPS_ADDR_EV_ESTABLISHED),
                     RDPS_ADDR_ACT_READY);
    assert_int_equal(rdps__addr_peer_action(&pending, RDPS_ADDR_EV_ERROR), RDPS_ADDR_ACT_FAIL);
    /* Late events for an attempt that already ended change nothing. */
    assert_int_equal(rdps__addr_peer_action(&ready, RDPS_ADDR_EV_ESTABLISHED),
                     RDPS_ADDR_ACT_IGNORE);
    assert_int_equal(rdps__addr_peer_action(&ready, RDPS_ADDR_EV_ERROR), RDPS_ADDR_ACT_IGNORE);
    assert_int_equal(rdps__addr_peer_action(&failed, RDPS_ADDR_EV_ADDR_RESOLVED),
                     RDPS_ADDR_ACT_IGNORE);
    assert_int_equal(rdps__addr_peer_action(&failed, RDPS_ADDR_EV_ESTABLISHED),
                     RDPS_ADDR_ACT_IGNORE);
    /* ADDR_CHANGE re-resolves live entries; a failed one waits for the next resolve_start. */
    assert_int_equal(rdps__addr_peer_action(&ready, RDPS_ADDR_EV_ADDR_CHANGE),
                     RDPS_ADDR_ACT_RESTART);
    assert_int_equal(rdps__addr_peer_action(&pending, RDPS_ADDR_EV_ADDR_CHANGE),
                     RDPS_ADDR_ACT_RESTART);
    assert_int_equal(rdps__addr_peer_action(&failed, RDPS_ADDR_EV_ADDR_CHANGE),
                     RDPS_ADDR_ACT_IGNORE);
    assert_int_equal(rdps__addr_peer_action(&ready, RDPS_ADDR_EV_DEVICE_REMOVAL),
                     RDPS_ADDR_ACT_FAIL);
    assert_int_equal(rdps__addr_peer_action(&failed, RDPS_ADDR_EV_DEVICE_REMOVAL),
                     RDPS_ADDR_ACT_IGNORE);
    /* Multicast events never touch a unicast peer. */
    assert_int_equal(rdps__addr_peer_action(&pending, RDPS_ADDR_EV_MC_JOIN), RDPS_ADDR_ACT_IGNORE);
    assert_int_equal(rdps__addr_peer_action(&ready, RDPS_ADDR_EV_MC_ERROR), RDPS_ADDR_ACT_IGNORE);
    assert_int_equal(rdps__addr_peer_action(&pending, RDPS_ADDR_EV_OTHER), RDPS_ADDR_ACT_IGNORE);
}

static void test_group_event_actions(void **state)
{
    struct rdps_addr_entry pending = entry_in(RDPS_ENTRY_PENDING, 0);
    struct rdps_addr_entry rejoining = entry_in(RDPS_ENTRY_PENDING, 1);
    struct rdps_addr_entry ready = entry_in(RDPS_ENTRY_READY, 0);
    struct rdps_addr_entry failed = entry_in(RDPS_ENTRY_FAILED, 0);
    (void)state;

    assert_int_equal(rdps__addr_group_action(&pending, false, RDPS_ADDR_EV_MC_JOIN),
                     RDPS_ADDR_ACT_READY);
    assert_int_equal(rdps__addr_group_action(&ready, false, RDPS_ADDR_EV_MC_JOIN),
                     RDPS_ADDR_ACT_IGNORE);
    assert_int_equal(rdps__addr_group_action(&failed, false, RDPS_ADDR_EV_MC_JOIN),
                     RDPS_ADDR_ACT_IGNORE);
    /* The first send-only join erroring falls back to a full join, once. */
    assert_int_equal(rdps__addr_group_action(&pending, true, RDPS_ADDR_EV_MC_ERROR),
                     RDPS_ADDR_ACT_FALLBACK_FULL);
    assert_int_equal(rdps__addr_group_action(&pending, false, RDPS_ADDR_EV_MC_ERROR),
                     RDPS_ADDR_ACT_FAIL);
    /* A re-join that errors fails instead of looping. */
    assert_int_equal(rdps__addr_group_action(&rejoining, true, RDPS_ADDR_EV_MC_ERROR),
                     RDPS_ADDR_ACT_FAIL);
    assert_int_equal(rdps__addr_group_action(&rejoining, false, RDPS_ADDR_EV_MC_ERROR),
                     RDPS_ADDR_ACT_FAIL);
    /* A joined group that errors (SM restart, port event) is joined again. */
    assert_int_equal(rdps__addr_group_action(&ready, false, RDPS_ADDR_EV_MC_ERROR),
                     RDPS_ADDR_ACT_RESTART);
    assert_int_equal(rdps__addr_group_action(&ready, true, RDPS_ADDR_EV_MC_ERROR),
                     RDPS_ADDR_ACT_RESTART);
    assert_int_equal(rdps__addr_group_action(&failed, false, RDPS_ADDR_EV_MC_ERROR),
                     RDPS_ADDR_ACT_IGNORE);
    assert_int_equal(rdps__addr_group_action(&ready, false, RDPS_ADDR_EV_ADDR_CHANGE),
                     RDPS_ADDR_ACT_RESTART);
    assert_int_equal(rdps__addr_group_action(&pending, false, RDPS_ADDR_EV_ADDR_CHANGE),
                     RDPS_ADDR_ACT_RESTART);
    assert_int_equal(rdps__addr_group_action(&failed, false, RDPS_ADDR_EV_ADDR_CHANGE),
                     RDPS_ADDR_ACT_IGNORE);
    assert_int_equal(rdps__addr_group_action(&ready, false, RDPS_ADDR_EV_DEVICE_REMOVAL),
                     RDPS_ADDR_ACT_FAIL);
    /* Unicast events never touch a group. */
    assert_int_equal(rdps__addr_group_action(&pending, false, RDPS_ADDR_EV_ESTABLISHED),
                     RDPS_ADDR_ACT_IGNORE);
    assert_int_equal(rdps__addr_group_action(&pending, false, RDPS_ADDR_EV_ERROR),
                     RDPS_ADDR_ACT_IGNORE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_normalization),
        cmocka_unit_test(test_acquire_release_refcount),
        cmocka_unit_test(test_state_transitions),
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_group_modes_are_separate),
        cmocka_unit_test(test_peer_event_actions),
        cmocka_unit_test(test_group_event_actions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
