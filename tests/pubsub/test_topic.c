/* SPDX-License-Identifier: BSD-2-Clause */
/* test_topic.c - topic ids and group hashing are deterministic, in range, and reject bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* The id is part of the wire format: pinned values, computed independently (in Python). */
static void test_id_is_fnv1a64_through_fmix64(void **state)
{
    (void)state;
    /* FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c, of "foobar" 0x85944171f73967e8 (the FNV
     * specification's test vectors); fmix64 of those: */
    assert_true(rdps__topic_hash_id("a") == 0x82a2a958a9bece5bull);
    assert_true(rdps__topic_hash_id("foobar") == 0x2c22194922d1672bull);
    assert_true(rdps_topic_id("foobar") == 0x2c22194922d1672bull);
    assert_true(rdps_topic_id("md.quotes.1539599") == 0x796e3d6704ce1757ull);
    assert_true(rdps_topic_id("md.quotes.1722382") == 0x2ef330a690dc3469ull);
    /* Names that break the rules have no id. */
    assert_true(rdps_topic_id(NULL) == 0);
    assert_true(rdps_topic_id("") == 0);
    assert_true(rdps_topic_id("has space") == 0);
}

/* 32-bit FNV-1a, the topic id of frame version 1 (and still the group hash's base). */
static uint32_t fnv1a32(const char *text)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

/*
 * Issue 27 row 2: these two names had the same 32-bit id, so a subscriber of one received the
 * other's messages. Their 64-bit ids differ; their group stays the one both always had.
 */
static void test_32bit_collision_pair_has_distinct_ids(void **state)
{
    (void)state;
    assert_int_equal(fnv1a32("md.quotes.1539599"), fnv1a32("md.quotes.1722382"));
    assert_true(rdps_topic_id("md.quotes.1539599") != rdps_topic_id("md.quotes.1722382"));
}

/*
 * Two names with the same 64-bit id exist (FNV is not collision resistant: this pair came from
 * a Pollard rho search with distinguished points over names "md.quotes.<11 chars>", about
 * 3 * 10^9 FNV-1a 64 evaluations, a minute on one core; fmix64 is a bijection, so equal FNV-1a
 * 64 means equal ids). The tests of RDPS_EEXIST and of RDPS_EVENT_TOPIC_COLLISION use it.
 */
static void test_known_64bit_collision_pair(void **state)
{
    (void)state;
    assert_true(rdps_topic_id("md.quotes.8MlN5CIm0nE") == rdps_topic_id("md.quotes.DceKDt0TJc6"));
    assert_true(rdps_topic_id("md.quotes.8MlN5CIm0nE") == 0x98b85ef895d69eadull);
}

/* Widening the id must not move a name's multicast group: receivers of both versions agree. */
static void test_groups_did_not_move(void **state)
{
    struct rdps_group_range r;
    uint32_t control;
    (void)state;
    assert_int_equal(rdps__group_range_parse("239.192.0.0/16", &r), 0);
    assert_int_equal(rdps__mcast_addr_parse("239.192.0.1", &control), 0);
    /* Values of the version 1 code (32-bit FNV-1a through murmur3's fmix32). */
    assert_int_equal(rdps__topic_hash_group("md.quotes.1539599", &r, control), 0xefc0380bu);
    assert_int_equal(rdps__topic_hash_group("md.quotes.1722382", &r, control), 0xefc0380bu);
    assert_int_equal(rdps__topic_hash_group("md.itch.42", &r, control), 0xefc03464u);
    assert_int_equal(rdps__topic_hash_group("md.feed.ch0", &r, control), 0xefc034b5u);
    assert_int_equal(rdps__topic_hash_group("stat.topic", &r, control), 0xefc07a4cu);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts ids[0..n) and counts adjacent equal pairs. */
static size_t equal_adjacent(uint64_t *ids, size_t n)
{
    qsort(ids, n, sizeof(*ids), cmp_u64);
    size_t equal = 0;
    for (size_t i = 1; i < n; i++)
        equal += ids[i] == ids[i - 1];
    return equal;
}

/*
 * The demo's topic shapes, md.quotes.N and md.itch.N for every N below 10^6: 2 * 10^6 names,
 * no two with the same id. The same count over the version 1 ids (32-bit FNV-1a) finds 228
 * colliding pairs, so the check can fail.
 */
static void test_demo_shapes_have_no_id_collision(void **state)
{
    (void)state;
    enum { PER_SHAPE = 1000000, N = 2 * PER_SHAPE };
    static const char *const shapes[] = {"md.quotes.", "md.itch."};
    uint64_t *ids = malloc(N * sizeof(*ids)), *old_ids = malloc(N * sizeof(*old_ids));
    assert_non_null(ids);
    assert_non_null(old_ids);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t n = 0;
    char name[32];
    for (unsigned k = 0; k < 2; k++) {
        for (unsigned i = 0; i < PER_SHAPE; i++, n++) {
            snprintf(name, sizeof(name), "%s%u", shapes[k], i);
            ids[n] = rdps__topic_hash_id(name);
            old_ids[n] = fnv1a32(name);
        }
    }
    size_t equal = equal_adjacent(ids, n);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    size_t old_equal = equal_adjacent(old_ids, n);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    print_message("%zu names: %zu equal 64-bit ids (%.2f s), %zu equal 32-bit FNV-1a ids\n", n,
                  equal, s, old_equal);
    assert_int_equal(equal, 0);
    assert_true(ids[0] != 0);
    assert_int_equal(old_equal, 228);
    free(ids);
    free(old_ids);
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
        cmocka_unit_test(test_id_is_fnv1a64_through_fmix64),
        cmocka_unit_test(test_32bit_collision_pair_has_distinct_ids),
        cmocka_unit_test(test_known_64bit_collision_pair),
        cmocka_unit_test(test_groups_did_not_move),
        cmocka_unit_test(test_demo_shapes_have_no_id_collision),
        cmocka_unit_test(test_range_parse),
        cmocka_unit_test(test_group_hash_in_range_and_avoids),
        cmocka_unit_test(test_mcast_parse_and_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
