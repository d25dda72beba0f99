/* SPDX-License-Identifier: BSD-2-Clause */
/* test_pattern.c - pattern messages verify intact and every single-byte corruption is caught. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

static void test_sizes_deterministic_in_range(void **state)
{
    (void)state;
    for (uint64_t i = 0; i < 5000; i++) {
        size_t s = pattern_size(7, i, 1, 100000);
        assert_true(s >= 1 && s <= 100000);
        assert_int_equal(s, pattern_size(7, i, 1, 100000));
    }
    assert_int_equal(pattern_size(7, 3, 64, 64), 64);
}

static void test_round_trip_all_small_sizes(void **state)
{
    uint8_t buf[300];
    uint64_t index;
    (void)state;
    for (size_t len = 0; len < sizeof(buf); len++) {
        pattern_fill(42, 1000 + len, buf, len);
        /* Short messages are found near the hint; long ones name themselves. */
        assert_int_equal(pattern_check(42, buf, len, 1000 + len, &index), PATTERN_OK);
        if (len >= 2)
            assert_int_equal(index, 1000 + len);
    }
}

static void test_every_byte_flip_detected(void **state)
{
    size_t len = 5000;
    uint8_t *buf = malloc(len);
    uint64_t index;
    (void)state;
    pattern_fill(9, 77, buf, len);
    assert_int_equal(pattern_check(9, buf, len, 0, &index), PATTERN_OK);
    assert_int_equal(index, 77);
    for (size_t i = 0; i < len; i++) {
        buf[i] ^= 0x01;
        assert_int_equal(pattern_check(9, buf, len, 77, &index), PATTERN_CORRUPT);
        buf[i] ^= 0x01;
    }
    /* A truncated message fails its check word. */
    assert_int_equal(pattern_check(9, buf, len - 1, 77, &index), PATTERN_CORRUPT);
    /* The wrong seed fails. */
    assert_int_equal(pattern_check(10, buf, len, 77, &index), PATTERN_CORRUPT);
    free(buf);
}

static void test_index_beyond_32_bits(void **state)
{
    uint8_t buf[64];
    uint64_t index;
    (void)state;
    pattern_fill(1, 0x100000005ull, buf, sizeof(buf));
    assert_int_equal(pattern_check(1, buf, sizeof(buf), 0x100000000ull, &index), PATTERN_OK);
    assert_true(index == 0x100000005ull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_deterministic_in_range),
        cmocka_unit_test(test_round_trip_all_small_sizes),
        cmocka_unit_test(test_every_byte_flip_detected),
        cmocka_unit_test(test_index_beyond_32_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
