/* SPDX-License-Identifier: BSD-2-Clause */
/* test_topic.c - topic ids and group hashing are deterministic, in range, and reject bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "topic.h"

static void test_name_check(void **state)
{
    char long_name[RDPS_TOPIC_NAME_MAX + 2];
    (void)state;
    assert_int_equal(rdps__topic_name_check("md.ES.book"), 0);
    assert_int_equal(rdps__topic_name_check(""), RDPS_EINVAL);
    assert_int_equal(rdps__topic_name_check(NULL), RDPS_EINVAL);
    assert_int_equal(rdps__topic_name_check("has space"), RDPS_EINVAL);
    assert_int_equal(rdps__topic_name_check("tab\there"), RDPS_EINVAL);
    memset(long_name, 'a', sizeof(long_name));
    long_name[RDPS_TOPIC_NAME_MAX] = '\0';
    assert_int_equal(rdps__topic_name_check(long_name), 0);
    long_name[RDPS_TOPIC_NAME_MAX] = 'a';
    long_name[RDPS_TOPIC_NAME_MAX + 1] = '\0';
    assert_int_equal(rdps__topic_name_check(long_name), RDPS_EINVAL);
}

static void test_id_is_fnv1a_and_nonzero(void **state)
{
    (void)state;
    /* FNV-1a 32 reference values: "a" -> 0xe40c292c, "foobar" -> 0xbf9cf968. */
    assert_int_equal(rdps__topic_hash_id("a"), 0xe40c292cu);
    assert_int_equal(rdps__topic_hash_id("foobar"), 0xbf9cf968u);
    assert_int_equal(rdps_topic_id("foobar"), 0xbf9cf968u);
}

static void test_range_parse(void **state)
{
    struct rdps_group_range r;
    (void)state;
    assert_int_equal(rdps__group_range_parse("239.192.0.0/16", &r), 0);
    assert_int_equal(r.base, 0xefc00000u);
    assert_int_equal(r.size, 65536);
    assert_int_equal(rdps__group_range_parse("239.192.0.0/30", &r), 0);
    assert_int_equal(r.size, 4);
    assert_int_equal(rdps__group_range_parse("239.192.0.0", &r), RDPS_EINVAL);
    assert_int_equal(rdps__group_range_parse("10.0.0.0/8", &r), RDPS_EINVAL);
    assert_int_equal(rdps__group_range_parse("239.192.0.1/16", &r), RDPS_EINVAL);
    assert_int_equal(rdps__group_range_parse("239.192.0.0/31", &r), RDPS_EINVAL);
    assert_int_equal(rdps__group_range_parse("239.192.0.0/x", &r), RDPS_EINVAL);
    assert_int_equal(rdps__group_range_parse("224.0.0.0/3", &r), RDPS_EINVAL);
    assert_int_equal(rdps__group_range_parse(NULL, &r), RDPS_EINVAL);
}

static void test_group_hash_in_range_and_avoids(void **state)
{
    struct rdps_group_range r;
    uint32_t control, g;
    char name[32];
    (void)state;
    assert_int_equal(rdps__group_range_parse("239.192.0.0/30", &r), 0);
    assert_int_equal(rdps__mcast_addr_parse("239.192.0.1", &control), 0);
    /* A 4-address range leaves exactly one usable group beside the control group. */
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof(name), "topic-%d", i);
        g = rdps__topic_hash_group(name, &r, control);
        assert_int_equal(g, 0xefc00002u);
    }
    assert_int_equal(rdps__group_range_parse("239.192.0.0/16", &r), 0);
    unsigned distinct = 0;
    uint32_t first = rdps__topic_hash_group("topic-0", &r, control);
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof(name), "topic-%d", i);
        g = rdps__topic_hash_group(name, &r, control);
        assert_true(g > r.base && g < r.base + r.size - 1 && g != control);
        assert_int_equal(g, rdps__topic_hash_group(name, &r, control)); /* deterministic */
        distinct += g != first;
    }
    assert_true(distinct > 990);
}

static void test_mcast_parse_and_format(void **state)
{
    uint32_t a;
    char buf[16];
    (void)state;
    assert_int_equal(rdps__mcast_addr_parse("239.1.2.3", &a), 0);
    assert_string_equal(rdps__ipv4_format(a, buf, sizeof(buf)), "239.1.2.3");
    assert_int_equal(rdps__mcast_addr_parse("192.0.2.1", &a), RDPS_EINVAL);
    assert_int_equal(rdps__mcast_addr_parse("239.1.2", &a), RDPS_EINVAL);
    assert_int_equal(rdps__mcast_addr_parse(NULL, &a), RDPS_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name_check),
        cmocka_unit_test(test_id_is_fnv1a_and_nonzero),
        cmocka_unit_test(test_range_parse),
        cmocka_unit_test(test_group_hash_in_range_and_avoids),
        cmocka_unit_test(test_mcast_parse_and_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
