/* SPDX-License-Identifier: BSD-2-Clause */
/* test_ranges.c - the gap range list: append, fill, split, trim and insert across sequence wrap,
 * and its cap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>

#include "rdps_ranges.h"

static void expect(const struct rdps_ranges *l, const uint32_t *pairs, unsigned n)
{
    assert_int_equal(l->count, n);
    for (unsigned i = 0; i < n; i++) {
        assert_int_equal(l->r[i].start, pairs[2 * i]);
        assert_int_equal(l->r[i].count, pairs[2 * i + 1]);
    }
}

static void test_append_merge_find_across_wrap(void **state)
{
    (void)state;
    struct rdps_gap_range store[4];
    struct rdps_ranges l;
    rdps__ranges_init(&l, store, 4);
    assert_int_equal(rdps__ranges_append(&l, 0xFFFFFFFEu, 1, 10, 20), 0);
    assert_int_equal(rdps__ranges_append(&l, 0xFFFFFFFFu, 3, 11, 21), 0); /* contiguous: merged */
    assert_int_equal(rdps__ranges_append(&l, 5, 1, 12, 22), 1);
    expect(&l, (const uint32_t[]){0xFFFFFFFEu, 4, 5, 1}, 2);
    assert_true(store[0].detect_ns == 10 && store[0].due_ns == 20); /* the older timers stay */
    assert_int_equal(rdps__ranges_find(&l, 0xFFFFFFFEu), 0);
    assert_int_equal(rdps__ranges_find(&l, 1), 0);
    assert_int_equal(rdps__ranges_find(&l, 2), -1);
    assert_int_equal(rdps__ranges_find(&l, 5), 1);
    assert_int_equal(rdps__ranges_find(&l, 0xFFFFFFF0u), -1);
    /* A NAKed range is not extended: its new part needs its own first NAK. */
    store[1].tries = 1;
    assert_int_equal(rdps__ranges_append(&l, 6, 2, 13, 23), 2);
    assert_int_equal(rdps__ranges_append(&l, 9, 1, 13, 23), 3);
    assert_int_equal(rdps__ranges_append(&l, 11, 1, 13, 23), -1); /* full */
    assert_int_equal(l.count, 4);
}

static void test_remove_seq_shrinks_and_splits(void **state)
{
    (void)state;
    struct rdps_gap_range store[3];
    struct rdps_ranges l;
    rdps__ranges_init(&l, store, 3);
    rdps__ranges_append(&l, 0xFFFFFFFCu, 8, 1, 2); /* ..FC .. 03 */
    assert_int_equal(rdps__ranges_remove_seq(&l, 0, 0xFFFFFFFCu), 0);
    assert_int_equal(rdps__ranges_remove_seq(&l, 0, 3), 0);
    expect(&l, (const uint32_t[]){0xFFFFFFFDu, 6}, 1);
    assert_int_equal(rdps__ranges_remove_seq(&l, 0, 0), 0); /* split across the wrap */
    expect(&l, (const uint32_t[]){0xFFFFFFFDu, 3, 1, 2}, 2);
    assert_true(store[1].detect_ns == 1 && store[1].due_ns == 2);
    assert_int_equal(rdps__ranges_remove_seq(&l, 0, 0xFFFFFFFEu), 0);
    expect(&l, (const uint32_t[]){0xFFFFFFFDu, 1, 0xFFFFFFFFu, 1, 1, 2}, 3);
    /* Full: a split fails and changes nothing. */
    rdps__ranges_init(&l, store, 3);
    rdps__ranges_append(&l, 10, 5, 0, 0);
    rdps__ranges_append(&l, 20, 1, 0, 0);
    rdps__ranges_append(&l, 30, 1, 0, 0);
    assert_int_equal(rdps__ranges_remove_seq(&l, 0, 12), -1);
    expect(&l, (const uint32_t[]){10, 5, 20, 1, 30, 1}, 3);
    assert_int_equal(rdps__ranges_remove_seq(&l, 1, 20), 0);
    expect(&l, (const uint32_t[]){10, 5, 30, 1}, 2);
}

static void test_trim_below_and_insert(void **state)
{
    (void)state;
    struct rdps_gap_range store[3];
    struct rdps_ranges l;
    rdps__ranges_init(&l, store, 3);
    rdps__ranges_append(&l, 0xFFFFFFF0u, 4, 0, 100);
    rdps__ranges_append(&l, 0xFFFFFFF8u, 16, 0, 100); /* ..F8 .. 07 */
    rdps__ranges_trim_below(&l, 0xFFFFFFFAu);
    expect(&l, (const uint32_t[]){0xFFFFFFFAu, 14}, 1);
    rdps__ranges_trim_below(&l, 8);
    assert_int_equal(l.count, 0);
    /* Insert in order, merging with neighbours; the merged range is due at the earlier time. */
    rdps__ranges_append(&l, 10, 2, 0, 100);
    rdps__ranges_append(&l, 20, 2, 0, 100);
    assert_true(rdps__ranges_insert(&l, 5, 1, 0, 50));
    expect(&l, (const uint32_t[]){5, 1, 10, 2, 20, 2}, 3);
    assert_true(rdps__ranges_insert(&l, 12, 8, 0, 40)); /* joins both sides */
    expect(&l, (const uint32_t[]){5, 1, 10, 12}, 2);
    assert_true(store[1].due_ns == 40);
    assert_true(rdps__ranges_insert(&l, 30, 1, 0, 60));
    /* Full: merged into the nearest range, reported as over-asking. */
    assert_false(rdps__ranges_insert(&l, 25, 1, 0, 60));
    expect(&l, (const uint32_t[]){5, 1, 10, 16, 30, 1}, 3);
    assert_false(rdps__ranges_insert(&l, 28, 1, 0, 60));
    expect(&l, (const uint32_t[]){5, 1, 10, 16, 28, 3}, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_merge_find_across_wrap),
        cmocka_unit_test(test_remove_seq_shrinks_and_splits),
        cmocka_unit_test(test_trim_below_and_insert),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
